package dwarf

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// Hand-built types as the compilers describe them, for the containers and
// fields the formatter's copy of this code did not handle before the
// expression evaluator's was folded into it.
var (
	tcInt   = &Type{Kind: KindBase, Name: "int", Size: 4, Encoding: ATESigned, Lang: LangCPlusPlus}
	tcChar  = &Type{Kind: KindBase, Name: "char", Size: 1, Encoding: ATESignedChar, Lang: LangCPlusPlus}
	tcULong = &Type{Kind: KindBase, Name: "long unsigned int", Size: 8, Encoding: ATEUnsigned, Lang: LangCPlusPlus}
	tcCharP = &Type{Kind: KindPointer, Name: "char *", Size: 8, Elem: tcChar, Lang: LangCPlusPlus}
	tcIntP  = &Type{Kind: KindPointer, Name: "int *", Size: 8, Elem: tcInt, Lang: LangCPlusPlus}
	tcInt3  = &Type{Kind: KindArray, Name: "int [3]", Size: 12, Elem: tcInt, Count: 3, Lang: LangCPlusPlus}

	// std::array<int, 3>.
	tcArray = &Type{Kind: KindStruct, Name: "std::array<int, 3>", Size: 12, Lang: LangCPlusPlus,
		Fields: []Field{{Name: "_M_elems", Type: tcInt3}}}
	// std::string (C++11 ABI).
	tcHider = &Type{Kind: KindStruct, Name: "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_Alloc_hider", Size: 8, Lang: LangCPlusPlus,
		Fields: []Field{{Name: "_M_p", Type: tcCharP}}}
	tcString = &Type{Kind: KindStruct, Name: "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >", Size: 32, Lang: LangCPlusPlus,
		Fields: []Field{{Name: "_M_dataplus", Type: tcHider}, {Name: "_M_string_length", Type: tcULong, Offset: 8}}}
	// std::__debug::vector<int>: the vector is a base of the debug one.
	tcImpl = &Type{Kind: KindStruct, Name: "std::_Vector_base<int, std::allocator<int> >::_Vector_impl", Size: 24, Lang: LangCPlusPlus, Fields: []Field{
		{Name: "_M_start", Type: tcIntP}, {Name: "_M_finish", Type: tcIntP, Offset: 8}, {Name: "_M_end_of_storage", Type: tcIntP, Offset: 16}}}
	tcVecBase  = &Type{Kind: KindStruct, Name: "std::_Vector_base<int, std::allocator<int> >", Size: 24, Lang: LangCPlusPlus, Fields: []Field{{Name: "_M_impl", Type: tcImpl}}}
	tcDebugVec = &Type{Kind: KindStruct, Name: "std::__debug::vector<int, std::allocator<int> >", Size: 24, Lang: LangCPlusPlus, Fields: []Field{
		{Name: "std::__cxx1998::vector<int, std::allocator<int> >", Type: tcVecBase, Base: true}}}

	// Rust: Vec<i32> without DW_TAG_template_type_param, its buffer
	// untyped bytes; a tuple (i32, i32); an Option<i32>-like enum.
	trI32   = &Type{Kind: KindBase, Name: "i32", Size: 4, Encoding: ATESigned, Lang: LangRust}
	trU8P   = &Type{Kind: KindPointer, Name: "*const u8", Size: 8, Elem: &Type{Kind: KindBase, Name: "u8", Size: 1, Encoding: ATEUnsigned, Lang: LangRust}, Lang: LangRust}
	trUsize = &Type{Kind: KindBase, Name: "usize", Size: 8, Encoding: ATEUnsigned, Lang: LangRust}
	trRaw   = &Type{Kind: KindStruct, Name: "alloc::raw_vec::RawVec<i32, alloc::alloc::Global>", Size: 16, Lang: LangRust, Fields: []Field{
		{Name: "ptr", Type: trU8P}, {Name: "cap", Type: trUsize, Offset: 8}}}
	trVec = &Type{Kind: KindStruct, Name: "alloc::vec::Vec<i32, alloc::alloc::Global>", Size: 24, Lang: LangRust, Fields: []Field{
		{Name: "buf", Type: trRaw}, {Name: "len", Type: trUsize, Offset: 16}}}
	trTuple = &Type{Kind: KindStruct, Name: "(i32, i32)", Size: 8, Lang: LangRust, Fields: []Field{
		{Name: "__0", Type: trI32}, {Name: "__1", Type: trI32, Offset: 4}}}
	trSome = &Type{Kind: KindStruct, Name: "core::option::Option<i32>::Some", Size: 8, Lang: LangRust, Fields: []Field{
		{Name: "__0", Type: trI32, Offset: 4}}}
	trNone   = &Type{Kind: KindStruct, Name: "core::option::Option<i32>::None", Size: 8, Lang: LangRust}
	trOption = &Type{Kind: KindStruct, Name: "core::option::Option<i32>", Size: 8, Lang: LangRust, Variants: &VariantPart{
		Discr: &Field{Name: "<discr>", Type: &Type{Kind: KindBase, Name: "u32", Size: 4, Encoding: ATEUnsigned, Lang: LangRust}},
		Variants: []Variant{
			{DiscrValue: 0, Field: Field{Name: "None", Type: trNone}},
			{DiscrValue: 1, Field: Field{Name: "Some", Type: trSome}},
		}}}

	// Go: type Inner struct{ X int }; type Outer struct{ Inner; Y int }.
	tgInt   = &Type{Kind: KindBase, Name: "int", Size: 8, Encoding: ATESigned, Lang: LangGo, GoKind: GoKindInt}
	tgInner = &Type{Kind: KindStruct, Name: "main.Inner", Size: 8, Lang: LangGo, GoKind: GoKindStruct, Fields: []Field{{Name: "X", Type: tgInt}}}
	tgOuter = &Type{Kind: KindStruct, Name: "main.Outer", Size: 16, Lang: LangGo, GoKind: GoKindStruct, Fields: []Field{
		{Name: "Inner", Type: tgInner}, {Name: "Y", Type: tgInt, Offset: 8}}}
)

// containerMem lays out the values the tests read.
func containerMem() uwSliceMem {
	b := make([]byte, 0x100)
	le := binary.LittleEndian
	for i, v := range []uint32{10, 20, 30, 40} { // 0x1000: int/i32 elements
		le.PutUint32(b[4*i:], v)
	}
	copy(b[0x20:], "hello")                       // 0x1020: string bytes
	le.PutUint64(b[0x40:], 0x1020)                // 0x1040: std::string
	le.PutUint64(b[0x48:], 5)                     //
	le.PutUint64(b[0x60:], 0x1000)                // 0x1060: debug vector
	le.PutUint64(b[0x68:], 0x100c)                //
	le.PutUint64(b[0x70:], 0x1010)                //
	le.PutUint64(b[0x80:], 0x1000)                // 0x1080: Vec<i32>: ptr, cap, len
	le.PutUint64(b[0x88:], 4)                     //
	le.PutUint64(b[0x90:], 3)                     //
	le.PutUint32(b[0xa0:], 1)                     // 0x10a0: Some(7)
	le.PutUint32(b[0xa4:], 7)                     //
	le.PutUint64(b[0xb0:], 0x1234)                // 0x10b0: Outer{Inner{X: 0x1234}, Y: 5}
	le.PutUint64(b[0xb8:], 5)                     //
	le.PutUint32(b[0xc0:], 0xfffffff9)            // 0x10c0: a tuple (-7, 3)
	le.PutUint32(b[0xc4:], 3)                     //
	le.PutUint64(b[0xd0:], 0xa5a5_0000_0000_0000) // 0x10d0: a bitfield across 64 bits
	b[0xd8] = 0x03                                //
	return uwSliceMem{base: 0x1000, b: b}
}

// TestIndexLibraryContainers indexes the containers the formatter's Index
// missed: std::array, std::string, the debug-mode std::vector, and a Vec
// whose element type DWARF gives only in its name.
func TestIndexLibraryContainers(t *testing.T) {
	mem := containerMem()
	table := &Table{}
	lookup := func(name string) (*Type, bool) { return trI32, name == "i32" }
	for _, tc := range []struct {
		v    Value
		i    int64
		want uint64 // the element's address
		typ  string
	}{
		{atAddr("arr", tcArray, 0x1000), 2, 0x1008, "int"},
		{atAddr("s", tcString, 0x1040), 1, 0x1021, "char"},
		{atAddr("dv", tcDebugVec, 0x1060), 2, 0x1008, "int"},
	} {
		el, err := table.Index(tc.v, tc.i, mem)
		if err != nil || !el.InMem || el.Addr != tc.want || el.Type.Name != tc.typ {
			t.Errorf("Index(%s, %d) = %+v, %v; want a %s at %#x", tc.v.Name, tc.i, el, err, tc.typ, tc.want)
		}
	}
	if _, err := table.Index(atAddr("s", tcString, 0x1040), 5, mem); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("Index(s, 5) = %v, want out of range", err)
	}
	s, ok, err := Sequence(atAddr("v", trVec, 0x1080), mem, lookup)
	if err != nil || !ok || s.Data != 0x1000 || s.Len != 3 || s.Cap != 4 || s.Elem != trI32 {
		t.Errorf("Sequence(Vec<i32> without type parameters) = %+v, %v, %v; want 3 i32 at 0x1000, capacity 4", s, ok, err)
	}
	s, ok, err = Sequence(atAddr("dv", tcDebugVec, 0x1060), mem, nil)
	if err != nil || !ok || s.Len != 3 || s.Cap != 4 {
		t.Errorf("Sequence(std::__debug::vector) = %+v, %v, %v; want length 3, capacity 4", s, ok, err)
	}
}

// TestFieldOfEveryKind looks up the members the expression evaluator's
// copy of field lookup missed: a Go embedded struct's field, the active
// Rust variant's field, and a Rust tuple field by number.
func TestFieldOfEveryKind(t *testing.T) {
	mem := containerMem()
	table := &Table{}
	for _, tc := range []struct {
		v    Value
		name string
		want int64
	}{
		{atAddr("o", tgOuter, 0x10b0), "X", 0x1234},
		{atAddr("o", tgOuter, 0x10b0), "Y", 5},
		{atAddr("opt", trOption, 0x10a0), "__0", 7},
		{atAddr("t", trTuple, 0x10c0), "0", -7},
		{atAddr("t", trTuple, 0x10c0), "1", 3},
	} {
		fv, err := table.Field(tc.v, tc.name, mem)
		if err != nil {
			t.Errorf("Field(%s, %s): %v", tc.v.Name, tc.name, err)
			continue
		}
		if got, err := intValue(fv, mem); err != nil || got != tc.want {
			t.Errorf("Field(%s, %s) = %d, %v; want %d", tc.v.Name, tc.name, got, err, tc.want)
		}
	}
}

// TestBitfieldAcross64Bits reads a bitfield whose bits run past the
// eighth byte of its storage and a signed enum bitfield, which the
// formatter's copy of bitfield extraction got wrong.
func TestBitfieldAcross64Bits(t *testing.T) {
	mem := containerMem()
	tu64 := &Type{Kind: KindBase, Name: "unsigned long", Size: 8, Encoding: ATEUnsigned}
	tenum := &Type{Kind: KindEnum, Name: "enum sign", Size: 4, Enumerators: []Enumerator{{Name: "MINUS", Value: -1}, {Name: "PLUS", Value: 1}}}
	ts := &Type{Kind: KindStruct, Name: "struct wide", Size: 16, Fields: []Field{
		{Name: "w", Type: tu64, BitSize: 20, BitOffset: 48},
		{Name: "e", Type: tenum, Offset: 8, BitSize: 2, BitOffset: 0},
	}}
	v := atAddr("x", ts, 0x10d0)
	w, ok := FieldOf(v, "w", mem)
	if got, err := uintValue(w, mem); !ok || err != nil || got != 0x3a5a5 {
		t.Errorf("x.w = %#x, %v; want 0x3a5a5", got, err)
	}
	e, ok := FieldOf(v, "e", mem)
	if got, err := intValue(Value{Type: tcInt, Bytes: e.Bytes}, mem); !ok || err != nil || got != -1 {
		t.Errorf("x.e = %d, %v; want -1", got, err)
	}
	unreadable := atAddr("y", ts, 0x9000)
	if u, _ := FieldOf(unreadable, "w", mem); !errors.As(u.Err, new(*MemoryError)) {
		t.Errorf("y.w: error %v, want a *MemoryError", u.Err)
	}
}
