package expr

// Reaching into memory: addresses, dereference, members, indexing and
// gdb's x@n. Members and library containers are found by dwarf
// (FieldOf, Sequence), the one home of value navigation.

import (
	"errors"
	"fmt"

	"github.com/rewind-debugger/rewind/dwarf"
)

// address is a value used as an address: {T} a, the x command.
func (e *evaluator) address(v dwarf.Value) (uint64, error) {
	switch classOf(v.Type) {
	case cArray, cFunc:
		if v.Optimized {
			return 0, errOptimized
		}
		if !v.InMem {
			return 0, errNotInMemory
		}
		return v.Addr, nil
	case cInt, cPtr, cFloat:
		s, err := e.scalar(v)
		if err != nil {
			return 0, err
		}
		if s.cls == cFloat {
			return uint64(int64(s.f)), nil
		}
		return s.bits, nil
	}
	return 0, errors.New("Value can't be converted to integer.")
}

func (e *evaluator) addressOf(v dwarf.Value) (dwarf.Value, error) {
	if !v.InMem || v.Optimized {
		return dwarf.Value{}, errNotInMemory
	}
	return mkInt(pointerTo(v.Type), v.Addr), nil
}

// pointerValue reads the address a pointer or reference holds.
func (e *evaluator) pointerValue(v dwarf.Value) (uint64, error) {
	b, err := e.contents(v)
	if err != nil {
		return 0, err
	}
	return le(b, 8), nil
}

func (e *evaluator) deref(v dwarf.Value) (dwarf.Value, error) {
	st := strip(v.Type)
	switch classOf(st) {
	case cPtr, cRef:
		elem := st.Elem
		if strip(elem).Kind == dwarf.KindVoid {
			return dwarf.Value{}, errNotPointer
		}
		if v.Synthetic != nil {
			return e.pointee(v.Synthetic, elem)
		}
		addr, err := e.pointerValue(v)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.fromRef(dwarf.Value{Type: elem, Addr: addr, InMem: true})
	case cArray:
		return e.index(v, mkInt(e.cInt(4, false), 0))
	case cFunc:
		return v, nil
	case cInt:
		// gdb: "Allow * on an integer so we can cast it to whatever we
		// want": *0x601040 is the int there.
		if isBool(st) {
			break
		}
		s, err := e.scalar(v)
		if err != nil {
			return dwarf.Value{}, err
		}
		return dwarf.Value{Type: e.cInt(4, false), Addr: s.bits, InMem: true}, nil
	}
	return dwarf.Value{}, errNotPointer
}

// pointee is what a synthetic pointer points to, read as elem.
func (e *evaluator) pointee(p *dwarf.ImplicitPointer, elem *dwarf.Type) (dwarf.Value, error) {
	v, err := p.Deref(elem)
	if err != nil {
		return dwarf.Value{}, err
	}
	return e.fromRef(v)
}

// member is field access. Pointers (and references) are followed first,
// so s.f and p.f both work, as in gdb. A bitfield yields a computed value
// (Bytes holding the field's value in its declared type), not an lvalue.
func (e *evaluator) member(v dwarf.Value, name string, arrow bool) (dwarf.Value, error) {
	for i := 0; ; i++ {
		k := classOf(v.Type)
		if k != cPtr && k != cRef || i > 8 {
			break
		}
		var err error
		if v, err = e.deref(v); err != nil {
			return dwarf.Value{}, err
		}
	}
	st := strip(v.Type)
	if st.Kind != dwarf.KindStruct && st.Kind != dwarf.KindUnion {
		if arrow {
			return dwarf.Value{}, errors.New("Attempt to extract a component of a value that is not a structure pointer.")
		}
		return dwarf.Value{}, errors.New("Attempt to extract a component of a value that is not a structure.")
	}
	f, ok := dwarf.FieldOf(v, name, e.mem)
	switch {
	case !ok:
		return dwarf.Value{}, fmt.Errorf("There is no member named %s.", name)
	case v.Optimized || v.Err != nil:
		return dwarf.Value{Name: f.Name, Type: f.Type, Optimized: v.Optimized, Err: v.Err}, nil
	case f.Err != nil:
		return dwarf.Value{}, f.Err
	case f.Optimized:
		return f, nil
	}
	f.Name = name
	return e.fromRef(f)
}

// index is x[i] on arrays, pointers, Go slices and strings, Rust slices,
// Vec and String, and C++ std::vector, std::array and std::string
// (libstdc++). The library sequences are bounds-checked.
func (e *evaluator) index(x, i dwarf.Value) (dwarf.Value, error) {
	if classOf(x.Type) == cInt && (classOf(i.Type) == cPtr || classOf(i.Type) == cArray) {
		x, i = i, x // C's i[a]
	}
	st := strip(x.Type)
	switch classOf(st) {
	case cArray, cPtr, cStruct:
	default:
		return dwarf.Value{}, fmt.Errorf("cannot subscript something of type `%s'", typeName(x.Type))
	}
	if classOf(i.Type) != cInt {
		return dwarf.Value{}, fmt.Errorf("cannot subscript with a value of type `%s'", typeName(i.Type))
	}
	is, err := e.scalar(i)
	if err != nil {
		return dwarf.Value{}, err
	}
	n := int64(is.bits)
	switch st.Kind {
	case dwarf.KindArray:
		elem := st.Elem
		es := strip(elem).Size
		if es < 0 {
			return dwarf.Value{}, fmt.Errorf("Cannot index an array of %s: its size is unknown.", typeName(elem))
		}
		if (st.Lang == dwarf.LangGo || st.Lang == dwarf.LangRust) && st.Count >= 0 && (n < 0 || n >= st.Count) {
			return dwarf.Value{}, fmt.Errorf("index out of range [%d] with length %d", n, st.Count)
		}
		switch {
		case x.Optimized || x.Err != nil:
			return dwarf.Value{Type: elem, Optimized: x.Optimized, Err: x.Err}, nil
		case x.InMem:
			return e.fromRef(dwarf.Value{Type: elem, Addr: x.Addr + uint64(n*es), InMem: true})
		}
		if n < 0 || (n+1)*es > int64(len(x.Bytes)) {
			return dwarf.Value{}, errors.New("no such vector element")
		}
		return e.fromRef(dwarf.Value{Type: elem, Bytes: x.Bytes[n*es : (n+1)*es]})
	case dwarf.KindPointer:
		if strip(st.Elem).Kind == dwarf.KindVoid {
			return dwarf.Value{}, errNotPointer
		}
		es, err := e.elemSize(st)
		if err != nil {
			return dwarf.Value{}, err
		}
		if x.Synthetic != nil {
			return e.pointee(x.Synthetic.Add(n*es), st.Elem)
		}
		base, err := e.pointerValue(x)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.fromRef(dwarf.Value{Type: st.Elem, Addr: base + uint64(n*es), InMem: true})
	}
	c, ok, err := e.container(x)
	if err != nil {
		return dwarf.Value{}, err
	}
	if !ok {
		return dwarf.Value{}, fmt.Errorf("cannot subscript something of type `%s'", typeName(x.Type))
	}
	if c.Array != nil {
		return e.index(*c.Array, i)
	}
	if n < 0 || n >= c.Len {
		return dwarf.Value{}, fmt.Errorf("index out of range [%d] with length %d", n, c.Len)
	}
	es := strip(c.Elem).Size
	if es < 0 {
		return dwarf.Value{}, fmt.Errorf("Cannot index elements of %s: their size is unknown.", typeName(c.Elem))
	}
	return e.fromRef(dwarf.Value{Type: c.Elem, Addr: c.Data + uint64(n*es), InMem: true})
}

// container recognises the library sequences that are structs (see
// dwarf.Sequence), finding a Vec's element type by name in the scope.
func (e *evaluator) container(x dwarf.Value) (dwarf.Seq, bool, error) {
	var lookup dwarf.TypeLookup
	if e.sc != nil {
		lookup = e.sc.Type
	}
	c, ok, err := dwarf.Sequence(x, e.mem, lookup)
	// gdb reports an unreadable container as the address it could not
	// read, whatever part of the container held it.
	var me *dwarf.MemoryError
	if errors.As(err, &me) {
		err = me
	}
	return c, ok, err
}

// repeat is gdb's x@n: n objects like x starting where x is.
func (e *evaluator) repeat(x, n dwarf.Value) (dwarf.Value, error) {
	if !x.InMem || x.Optimized {
		return dwarf.Value{}, errors.New("Only values in memory can be extended with '@'.")
	}
	if classOf(n.Type) != cInt {
		return dwarf.Value{}, errors.New("Right operand of `@' must be an integer.")
	}
	s, err := e.scalar(n)
	if err != nil {
		return dwarf.Value{}, err
	}
	count := int64(s.bits)
	if count < 1 {
		return dwarf.Value{}, fmt.Errorf("Invalid number %d of repetitions.", count)
	}
	if strip(x.Type).Size < 0 {
		return dwarf.Value{}, fmt.Errorf("Cannot repeat a value of type %s: its size is unknown.", typeName(x.Type))
	}
	return dwarf.Value{Type: arrayOf(x.Type, count), Addr: x.Addr, InMem: true}, nil
}
