package dwarf

// Values as a tree view walks them: the children of a value, and the
// pointee of a pointer.

import (
	"errors"
	"fmt"
	"strings"
)

// Children returns the expandable parts of a value for a tree view: struct
// fields (base classes first), array/slice/vector elements (capped at
// opts.MaxElements), map entries (Name = formatted key), the pointee of a
// pointer (one child named "*"), the payload of an enum variant; nil for
// scalars.
func (t *Table) Children(v Value, mem Memory, opts FormatOptions) []Value {
	if v.Optimized || v.Err != nil || v.Type == nil {
		return nil
	}
	f := t.newFormatter(mem, opts)
	r := stripType(v.Type)
	limit := int64(opts.elements())
	elems := func(base uint64, n int64, el *Type) []Value {
		var out []Value
		for i := int64(0); i < n && i < limit && el.Size >= 0; i++ {
			out = append(out, atAddr(fmt.Sprintf("[%d]", i), el, base+uint64(i*el.Size)))
		}
		return out
	}
	switch v.Type.Lang {
	case LangGo:
		switch GoKindOf(v.Type) {
		case GoKindString, GoKindChan, GoKindFunc, GoKindUnsafePointer:
			return nil
		case GoKindSlice:
			base, n, _, el, err := f.goSeq(v)
			if err != nil {
				return nil
			}
			return elems(base, n, el)
		case GoKindInterface:
			dyn, data, err := f.goIface(v)
			if err != nil || dyn == nil {
				return nil
			}
			return []Value{data}
		case GoKindMap:
			var out []Value
			_, _ = t.goMapEntries(v, f.mem, int(limit), func(k, val Value) bool {
				val.Name = f.goValue(k, goFlags{}, 1)
				out = append(out, val)
				return true
			})
			return out
		}
	case LangRust:
		if r.Kind == KindStruct && r.Variants != nil {
			_, payload, ok := rustVariant(v, r, f.mem)
			if !ok {
				return nil
			}
			return t.Children(payload, mem, opts)
		}
		if r.Kind == KindStruct && (strings.HasPrefix(r.Name, "alloc::vec::Vec<") || strings.HasPrefix(r.Name, "&[") || strings.HasPrefix(r.Name, "&mut [")) {
			if p, n, el, ok := f.rustSeq(v); ok {
				return elems(p, n, el)
			}
		}
		if r.Name == "&str" || r.Name == "alloc::string::String" {
			return nil
		}
	case LangCPlusPlus:
		if r.Kind == KindStruct && isStdString(r.Name) {
			return nil
		}
		if r.Kind == KindStruct && strings.HasPrefix(r.Name, "std::vector<") {
			if start, n, _, el, err := f.stdVector(v); err == nil {
				return elems(start, n, el)
			}
		}
	}
	switch r.Kind {
	case KindStruct, KindUnion:
		out := make([]Value, 0, len(r.Fields))
		for _, fl := range r.Fields {
			c := f.fieldValue(v, fl)
			if fl.Base {
				c.Name = "<" + fl.Type.Name + ">"
			}
			out = append(out, c)
		}
		return out
	case KindArray:
		if r.Count < 0 || r.Elem.Size < 0 {
			return nil
		}
		var out []Value
		for i := int64(0); i < r.Count && i < limit; i++ {
			out = append(out, subValue(v, fmt.Sprintf("[%d]", i), r.Elem, i*r.Elem.Size))
		}
		return out
	case KindPointer, KindReference:
		d, err := t.Deref(v, mem)
		if err != nil || stripType(d.Type).Kind == KindVoid || stripType(d.Type).Kind == KindFunc {
			return nil
		}
		if r.Kind == KindReference {
			return t.Children(d, mem, opts)
		}
		d.Name = "*"
		return []Value{d}
	}
	return nil
}

// Deref follows a pointer or reference.
func (t *Table) Deref(v Value, mem Memory) (Value, error) {
	if v.Type == nil {
		return Value{}, errors.New("dereferencing a value without a type")
	}
	r := stripType(v.Type)
	if r.Kind != KindPointer && r.Kind != KindReference {
		return Value{}, fmt.Errorf("attempt to take contents of a non-pointer value of type %s", v.Type.Name)
	}
	addr, err := uintValue(v, mem)
	if err != nil {
		return Value{}, fmt.Errorf("dereferencing %s: %w", v.Name, err)
	}
	if addr == 0 {
		return Value{}, fmt.Errorf("dereferencing %s: %w", v.Name, &MemoryError{Addr: 0, Err: errNullPointer})
	}
	return atAddr("*"+v.Name, r.Elem, addr), nil
}
