package dwarf

// The library sequences are structs in DWARF: a Go slice or string, a
// Rust Vec, String, &[T] or &str, a libstdc++ std::vector, std::string or
// std::array. Sequence is the one place that knows their layouts, so that
// printing, indexing, len() and string comparison agree on them.

import (
	"errors"
	"fmt"
	"strings"
)

// Seq is where the elements of a sequence live: Len elements of type Elem
// from address Data, with room for Cap. A container that holds its
// elements in an array member (std::array) has Array set instead.
type Seq struct {
	Data uint64
	Len  int64
	// Cap is the capacity of a Go slice, a Vec or a std::vector, and
	// Len for containers that have none.
	Cap   int64
	Elem  *Type
	Array *Value
}

// TypeLookup finds a named type, for the element type of a Rust Vec that
// DWARF gives only in the Vec's name.
type TypeLookup func(name string) (*Type, bool)

// Sequence recognises the library sequences that are structs and reads
// where their elements are. ok is false for any other value; err is a
// container that cannot be read or whose fields do not make sense.
// lookup may be nil.
func Sequence(v Value, mem Memory, lookup TypeLookup) (s Seq, ok bool, err error) {
	r := stripType(v.Type)
	if r == nil || r.Kind != KindStruct || r.Variants != nil {
		return Seq{}, false, nil
	}
	name := r.Name
	switch {
	case (GoKindOf(v.Type) == GoKindSlice || r.Lang == LangGo && strings.HasPrefix(name, "[]")) && hasFields(r, "array", "len"):
		s, ok, err = ptrLen(v, r, mem, "array", "len", "cap")
		if ok && err == nil && (s.Len < 0 || s.Cap < s.Len || s.Elem.Size < 0) {
			return Seq{}, false, fmt.Errorf("corrupt slice (len %d, cap %d)", s.Len, s.Cap)
		}
		return s, ok, err
	case (GoKindOf(v.Type) == GoKindString || r.Lang == LangGo && name == "string") && hasFields(r, "str", "len"):
		s, ok, err = ptrLen(v, r, mem, "str", "len", "")
		if ok && err == nil && s.Len < 0 {
			return Seq{}, false, fmt.Errorf("string of negative length %d", s.Len)
		}
		return s, ok, err
	case hasFields(r, "data_ptr", "length"): // Rust &[T], &str
		return ptrLen(v, r, mem, "data_ptr", "length", "")
	case name == "alloc::string::String" && hasFields(r, "vec"):
		fl, _ := fieldByName(r, "vec")
		return Sequence(subValue(v, "vec", fl.Type, fl.Offset), mem, lookup)
	case (strings.HasPrefix(name, "alloc::vec::Vec<") || strings.HasPrefix(name, "Vec<")) && hasFields(r, "buf", "len"):
		return rustVec(v, r, mem, lookup)
	case strings.HasPrefix(name, "std::vector<") || strings.HasPrefix(name, "std::__debug::vector<"):
		return stdVector(v, mem)
	case strings.HasPrefix(name, "std::__cxx11::basic_string<") || strings.HasPrefix(name, "std::basic_string<") || name == "std::string":
		return stdString(v, mem)
	case strings.HasPrefix(name, "std::array<"):
		if a, ok := FieldOf(v, "_M_elems", mem); ok {
			return Seq{Array: &a}, true, nil
		}
	}
	return Seq{}, false, nil
}

// hasFields reports whether a struct has all the named direct fields.
func hasFields(r *Type, names ...string) bool {
	for _, n := range names {
		if _, ok := fieldByName(r, n); !ok {
			return false
		}
	}
	return true
}

// ptrLen reads a sequence laid out as a pointer to its elements and a
// length, and a capacity where capField names one.
func ptrLen(v Value, r *Type, mem Memory, ptrField, lenField, capField string) (Seq, bool, error) {
	pf, _ := fieldByName(r, ptrField)
	lf, _ := fieldByName(r, lenField)
	pt := stripType(pf.Type)
	if pt.Kind != KindPointer || pt.Elem == nil {
		return Seq{}, false, nil
	}
	p, err := uintValue(subValue(v, ptrField, pf.Type, pf.Offset), mem)
	if err != nil {
		return Seq{}, false, err
	}
	n, err := intValue(subValue(v, lenField, lf.Type, lf.Offset), mem)
	if err != nil {
		return Seq{}, false, err
	}
	s := Seq{Data: p, Len: n, Cap: n, Elem: pt.Elem}
	if cf, ok := fieldByName(r, capField); ok && capField != "" {
		if s.Cap, err = intValue(subValue(v, capField, cf.Type, cf.Offset), mem); err != nil {
			return Seq{}, false, err
		}
	}
	return s, true, nil
}

// rustVec reads a Vec<T>. Its buffer's pointer is found as the first
// pointer among the nested fields (buf.inner.ptr.pointer.pointer in
// recent std, buf.ptr.pointer before: names changed across versions,
// pointers did not). The buffer is untyped bytes in recent Rust, so T
// comes from the type parameters, failing those from the name, failing
// that from the pointer (which older Rust typed).
func rustVec(v Value, r *Type, mem Memory, lookup TypeLookup) (Seq, bool, error) {
	bf, _ := fieldByName(r, "buf")
	lf, _ := fieldByName(r, "len")
	p, ok := firstPointer(subValue(v, "buf", bf.Type, bf.Offset), 0)
	if !ok {
		return Seq{}, false, nil
	}
	data, err := uintValue(p, mem)
	if err != nil {
		return Seq{}, false, err
	}
	n, err := intValue(subValue(v, "len", lf.Type, lf.Offset), mem)
	if err != nil {
		return Seq{}, false, err
	}
	var elem *Type
	if len(r.TypeParams) > 0 {
		elem = r.TypeParams[0]
	} else if arg := firstTemplateArg(r.Name); arg != "" && lookup != nil {
		elem, _ = lookup(arg)
	}
	if elem == nil {
		elem = stripType(p.Type).Elem
	}
	s := Seq{Data: data, Len: n, Cap: n, Elem: elem}
	if c, ok := deepField(v, "cap", mem, 0); ok && stripType(c.Type).Kind == KindBase {
		if s.Cap, err = intValue(c, mem); err != nil {
			return Seq{}, false, err
		}
	}
	return s, true, nil
}

// firstPointer finds the first pointer among the (nested) fields of a
// struct: the buffer of a Rust RawVec.
func firstPointer(v Value, depth int) (Value, bool) {
	r := stripType(v.Type)
	if depth > 8 {
		return Value{}, false
	}
	for _, fl := range r.Fields {
		switch ft := stripType(fl.Type); ft.Kind {
		case KindPointer:
			return subValue(v, fl.Name, fl.Type, fl.Offset), true
		case KindStruct:
			if p, ok := firstPointer(subValue(v, fl.Name, fl.Type, fl.Offset), depth+1); ok {
				return p, true
			}
		}
	}
	return Value{}, false
}

// firstTemplateArg is "T" of "Vec<T, A>".
func firstTemplateArg(name string) string {
	i := strings.Index(name, "<")
	if i < 0 {
		return ""
	}
	depth := 0
	for j := i + 1; j < len(name); j++ {
		switch name[j] {
		case '<', '(', '[':
			depth++
		case '>', ')', ']':
			if depth == 0 {
				return strings.TrimSpace(name[i+1 : j])
			}
			depth--
		case ',':
			if depth == 0 {
				return strings.TrimSpace(name[i+1 : j])
			}
		}
	}
	return ""
}

// stdVector reads a libstdc++ std::vector's storage pointers, found by
// name through the _Vector_base and _Vector_impl(_data) layers.
func stdVector(v Value, mem Memory) (Seq, bool, error) {
	var ptrs [3]uint64
	var el *Type
	for i, name := range []string{"_M_start", "_M_finish", "_M_end_of_storage"} {
		pv, ok := deepField(v, name, mem, 0)
		if !ok {
			if i == 2 { // no capacity: as full as it is long
				ptrs[2] = ptrs[1]
				break
			}
			return Seq{}, false, nil
		}
		var err error
		if ptrs[i], err = uintValue(pv, mem); err != nil {
			return Seq{}, false, err
		}
		if i == 0 {
			el = stripType(pv.Type).Elem
		}
	}
	if el == nil || el.Size <= 0 || ptrs[1] < ptrs[0] || ptrs[2] < ptrs[1] {
		return Seq{}, false, errors.New("corrupt std::vector")
	}
	return Seq{Data: ptrs[0], Len: int64(ptrs[1]-ptrs[0]) / el.Size, Cap: int64(ptrs[2]-ptrs[0]) / el.Size, Elem: el}, true, nil
}

// stdString reads a libstdc++ std::basic_string: the C++11 ABI keeps the
// length in _M_string_length, the old copy-on-write one 24 bytes before
// the data.
func stdString(v Value, mem Memory) (Seq, bool, error) {
	pv, ok := deepField(v, "_M_p", mem, 0)
	if !ok {
		return Seq{}, false, nil
	}
	p, err := uintValue(pv, mem)
	if err != nil {
		return Seq{}, false, err
	}
	el := stripType(pv.Type).Elem
	if el == nil {
		return Seq{}, false, nil
	}
	var n uint64
	if lv, ok := deepField(v, "_M_string_length", mem, 0); ok {
		if n, err = uintValue(lv, mem); err != nil {
			return Seq{}, false, err
		}
	} else {
		b, err := readMem(mem, p-24, 8)
		if err != nil {
			return Seq{}, false, err
		}
		n = leUint(b)
	}
	return Seq{Data: p, Len: int64(n), Cap: int64(n), Elem: el}, true, nil
}

// Index returns element i of an array, pointer, or library sequence (see
// Sequence); the library sequences are bounds-checked.
func (t *Table) Index(v Value, i int64, mem Memory) (Value, error) {
	if v.Type == nil {
		return Value{}, errors.New("indexing a value without a type")
	}
	r := stripType(v.Type)
	name := fmt.Sprintf("%s[%d]", v.Name, i)
	outOfRange := func(n int64) error {
		return fmt.Errorf("index %d out of range [0, %d) of %s", i, n, v.Name)
	}
	s, ok, err := Sequence(v, mem, t.typeLookup)
	switch {
	case err != nil:
		return Value{}, fmt.Errorf("indexing %s: %w", v.Name, err)
	case ok && s.Array != nil:
		a := *s.Array
		a.Name = v.Name
		return t.Index(a, i, mem)
	case ok:
		if i < 0 || i >= s.Len {
			return Value{}, outOfRange(s.Len)
		}
		if s.Elem.Size < 0 {
			return Value{}, fmt.Errorf("indexing %s: elements of %s have no known size", v.Name, s.Elem.Name)
		}
		return atAddr(name, s.Elem, s.Data+uint64(i*s.Elem.Size)), nil
	}
	switch r.Kind {
	case KindArray:
		if r.Count >= 0 && (i < 0 || i >= r.Count) && r.Lang != LangC && r.Lang != LangCPlusPlus {
			return Value{}, outOfRange(r.Count)
		}
		// C lets an index run past the bound; gdb reads memory there.
		if v.InMem {
			return atAddr(name, r.Elem, v.Addr+uint64(i*r.Elem.Size)), nil
		}
		if i < 0 || i >= r.Count {
			return Value{}, outOfRange(r.Count)
		}
		return subValue(v, name, r.Elem, i*r.Elem.Size), nil
	case KindPointer:
		el := r.Elem
		if stripType(el).Kind == KindVoid || el.Size <= 0 {
			return Value{}, fmt.Errorf("cannot index a pointer to %s", el.Name)
		}
		p, err := uintValue(v, mem)
		if err != nil {
			return Value{}, err
		}
		return atAddr(name, el, p+uint64(i*el.Size)), nil
	case KindReference:
		d, err := t.Deref(v, mem)
		if err != nil {
			return Value{}, err
		}
		return t.Index(d, i, mem)
	}
	return Value{}, fmt.Errorf("cannot subscript %s of type %s", v.Name, v.Type.Name)
}

// typeLookup is TypeByName as a TypeLookup.
func (t *Table) typeLookup(name string) (*Type, bool) {
	if t == nil {
		return nil, false
	}
	typ, err := t.TypeByName(name)
	return typ, err == nil && typ != nil
}
