package expr

// Casts, sizeof, and the only calls a recording allows: conversions
// written as calls (T(x)) and Go's len and cap. The recorded process
// cannot run code.

import (
	"fmt"

	"github.com/rewind-debugger/rewind/dwarf"
)

// cast converts x to type t as C does. Scalars convert; an aggregate in
// memory is reinterpreted in place; a reference type gives the lvalue.
func (e *evaluator) cast(x dwarf.Value, t *dwarf.Type) (dwarf.Value, error) {
	dt := strip(t)
	switch classOf(dt) {
	case cVoid:
		return dwarf.Value{Type: t}, nil
	case cInt, cFloat, cPtr:
		switch classOf(x.Type) {
		case cArray, cFunc:
			var err error
			if x, err = e.decay(x); err != nil {
				return dwarf.Value{}, err
			}
		case cInt, cFloat, cPtr:
		default:
			return dwarf.Value{}, errInvalidCast
		}
		s, err := e.scalar(x)
		if err != nil {
			return dwarf.Value{}, err
		}
		if classOf(dt) == cFloat {
			return mkFloat(t, toFloat(s))
		}
		if classOf(dt) == cPtr && s.cls == cFloat {
			return dwarf.Value{}, errInvalidCast
		}
		v := mkInt(t, toBits(s, dt))
		if classOf(dt) == cPtr {
			v.Synthetic = x.Synthetic // (char *)p still points where p does
		}
		return v, nil
	case cStruct, cArray:
		if k := classOf(x.Type); k != cStruct && k != cArray {
			return dwarf.Value{}, errInvalidCast
		}
		switch {
		case x.Optimized:
			return dwarf.Value{}, errOptimized
		case x.InMem:
			return dwarf.Value{Name: x.Name, Type: t, Addr: x.Addr, InMem: true}, nil
		case dt.Size >= 0 && int64(len(x.Bytes)) == dt.Size:
			return dwarf.Value{Type: t, Bytes: x.Bytes}, nil
		}
		return dwarf.Value{}, errInvalidCast
	case cRef:
		if !x.InMem || x.Optimized {
			return dwarf.Value{}, errNotInMemory
		}
		return dwarf.Value{Name: x.Name, Type: dt.Elem, Addr: x.Addr, InMem: true}, nil
	}
	return dwarf.Value{}, errInvalidCast
}

// typeOfNode reads a node as a type, for conversions written as calls
// (Go's uint8(x) and (*main.T)(p)) and sizeof(name): a name that is a type
// and not a variable, or * of one.
func (e *evaluator) typeOfNode(n Node) (*dwarf.Type, bool) {
	if u, ok := n.(*Unary); ok && u.Op == "*" {
		if t, ok := e.typeOfNode(u.X); ok {
			return pointerTo(t), true
		}
		return nil, false
	}
	name, ok := dottedName(n)
	if !ok {
		return nil, false
	}
	if _, isVar, _ := e.sc.Variable(name); isVar {
		return nil, false
	}
	return e.sc.Type(name)
}

func (e *evaluator) call(n *Call) (dwarf.Value, error) {
	if id, ok := n.Fn.(*Ident); ok && (id.Name == "len" || id.Name == "cap") && len(n.Args) == 1 {
		if _, isVar, _ := e.sc.Variable(id.Name); !isVar {
			return e.lenCap(id.Name, n.Args[0])
		}
	}
	if len(n.Args) == 1 {
		if t, ok := e.typeOfNode(n.Fn); ok {
			x, err := e.eval(n.Args[0])
			if err != nil {
				return dwarf.Value{}, err
			}
			return e.cast(x, t)
		}
	}
	return dwarf.Value{}, errNoCalls
}

// lenCap is Go's len and cap on arrays, slices and strings.
func (e *evaluator) lenCap(fn string, arg Node) (dwarf.Value, error) {
	x, err := e.eval(arg)
	if err != nil {
		return dwarf.Value{}, err
	}
	st := strip(x.Type)
	if st.Kind == dwarf.KindArray && st.Count >= 0 {
		return mkInt(e.intT(), uint64(st.Count)), nil
	}
	if st.Kind == dwarf.KindStruct {
		c, ok, err := e.container(x)
		switch {
		case err != nil:
			return dwarf.Value{}, err
		case ok && c.Array != nil:
			return e.lenCap(fn, &valueNode{*c.Array})
		case ok && fn == "len":
			return mkInt(e.intT(), uint64(c.Len)), nil
		case ok && dwarf.GoKindOf(x.Type) == dwarf.GoKindSlice:
			return mkInt(e.intT(), uint64(c.Cap)), nil
		}
	}
	return dwarf.Value{}, fmt.Errorf("invalid argument to %s: a value of type %s", fn, typeName(x.Type))
}

// valueNode is an already evaluated operand.
type valueNode struct{ v dwarf.Value }

func (*valueNode) node() {}

func (n *valueNode) String() string { return "<value>" }

func (e *evaluator) sizeof(n *Sizeof) (dwarf.Value, error) {
	var t *dwarf.Type
	if n.Type != nil {
		var err error
		if t, err = e.resolveType(n.Type); err != nil {
			return dwarf.Value{}, err
		}
	} else if tt, ok := e.typeOfNode(n.X); ok {
		t = tt
	} else {
		v, err := e.eval(n.X)
		if err != nil {
			return dwarf.Value{}, err
		}
		t = v.Type
	}
	st := strip(t)
	size := st.Size
	switch {
	case st.Kind == dwarf.KindVoid || st.Kind == dwarf.KindFunc:
		size = 1
	case size < 0:
		return dwarf.Value{}, fmt.Errorf("Cannot determine the size of type %s.", typeName(t))
	}
	return mkInt(e.sizeT(), uint64(size)), nil
}
