package expr

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/rewind-debugger/rewind/dwarf"
)

// fakeMem is memory made of regions: start address → bytes.
type fakeMem map[uint64][]byte

func (m fakeMem) ReadAt(p []byte, addr uint64) (int, error) {
	for i := range p {
		a := addr + uint64(i)
		found := false
		for base, b := range m {
			if a >= base && a < base+uint64(len(b)) {
				p[i] = b[a-base]
				found = true
				break
			}
		}
		if !found {
			return i, fmt.Errorf("unmapped address %#x", a)
		}
	}
	return len(p), nil
}

func (m fakeMem) put(addr uint64, b []byte) { m[addr] = b }

func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// fakeScope is a frame with hand-built variables and types.
type fakeScope struct {
	vars  map[string]dwarf.Value
	types map[string]*dwarf.Type
	regs  map[string]uint64
	conv  map[string]dwarf.Value
	mem   fakeMem
	lang  dwarf.Lang
}

func (s *fakeScope) Variable(name string) (dwarf.Value, bool, error) {
	v, ok := s.vars[name]
	return v, ok, nil
}
func (s *fakeScope) Type(name string) (*dwarf.Type, bool) { t, ok := s.types[name]; return t, ok }
func (s *fakeScope) Register(name string) (uint64, bool) {
	r, ok := s.regs[name]
	return r, ok
}
func (s *fakeScope) Memory() dwarf.Memory { return s.mem }
func (s *fakeScope) Lang() dwarf.Lang     { return s.lang }
func (s *fakeScope) Convenience(name string) (dwarf.Value, bool, error) {
	v, ok := s.conv[name]
	return v, ok, nil
}

// Types as gcc describes them for
//
//	struct node { char name[8]; struct node *next; int val; };
//	typedef struct node node_t; typedef int myint;
//	struct flags { unsigned a:3, b:5; int c:4; };
//	enum color { RED, GREEN = 5 };
var (
	tInt    = &dwarf.Type{Kind: dwarf.KindBase, Name: "int", Size: 4, Encoding: dwarf.ATESigned}
	tUInt   = &dwarf.Type{Kind: dwarf.KindBase, Name: "unsigned int", Size: 4, Encoding: dwarf.ATEUnsigned}
	tChar   = &dwarf.Type{Kind: dwarf.KindBase, Name: "char", Size: 1, Encoding: dwarf.ATESignedChar}
	tUChar  = &dwarf.Type{Kind: dwarf.KindBase, Name: "unsigned char", Size: 1, Encoding: dwarf.ATEUnsignedChar}
	tLong   = &dwarf.Type{Kind: dwarf.KindBase, Name: "long int", Size: 8, Encoding: dwarf.ATESigned}
	tULong  = &dwarf.Type{Kind: dwarf.KindBase, Name: "long unsigned int", Size: 8, Encoding: dwarf.ATEUnsigned}
	tDouble = &dwarf.Type{Kind: dwarf.KindBase, Name: "double", Size: 8, Encoding: dwarf.ATEFloat}
	tFloat  = &dwarf.Type{Kind: dwarf.KindBase, Name: "float", Size: 4, Encoding: dwarf.ATEFloat}
	tVoid   = &dwarf.Type{Kind: dwarf.KindVoid, Name: "void"}
	tNode   = &dwarf.Type{Kind: dwarf.KindStruct, Name: "struct node", Size: 24}
	tNodeP  = &dwarf.Type{Kind: dwarf.KindPointer, Name: "struct node *", Size: 8, Elem: tNode}
	tNodeT  = &dwarf.Type{Kind: dwarf.KindTypedef, Name: "node_t", Size: 24, Elem: tNode}
	tNodeTP = &dwarf.Type{Kind: dwarf.KindPointer, Name: "node_t *", Size: 8, Elem: tNodeT}
	tMyInt  = &dwarf.Type{Kind: dwarf.KindTypedef, Name: "myint", Size: 4, Elem: tInt}
	tCInt   = &dwarf.Type{Kind: dwarf.KindQualified, Name: "const int", Size: 4, Elem: tInt}
	tIntP   = &dwarf.Type{Kind: dwarf.KindPointer, Name: "int *", Size: 8, Elem: tInt}
	tCharP  = &dwarf.Type{Kind: dwarf.KindPointer, Name: "char *", Size: 8, Elem: tChar}
	tVoidP  = &dwarf.Type{Kind: dwarf.KindPointer, Name: "void *", Size: 8, Elem: tVoid}
	tNodePP = &dwarf.Type{Kind: dwarf.KindPointer, Name: "struct node **", Size: 8, Elem: tNodeP}
	tArr5   = &dwarf.Type{Kind: dwarf.KindArray, Name: "int [5]", Size: 20, Elem: tInt, Count: 5}
	tArr3   = &dwarf.Type{Kind: dwarf.KindArray, Name: "int [3]", Size: 12, Elem: tInt, Count: 3}
	tArr23  = &dwarf.Type{Kind: dwarf.KindArray, Name: "int [2][3]", Size: 24, Elem: tArr3, Count: 2}
	tChar8  = &dwarf.Type{Kind: dwarf.KindArray, Name: "char [8]", Size: 8, Elem: tChar, Count: 8}
	tColor  = &dwarf.Type{Kind: dwarf.KindEnum, Name: "enum color", Size: 4, Elem: tUInt,
		Enumerators: []dwarf.Enumerator{{Name: "RED", Value: 0}, {Name: "GREEN", Value: 5}}}
	tFlags = &dwarf.Type{Kind: dwarf.KindStruct, Name: "struct flags", Size: 4, Fields: []dwarf.Field{
		{Name: "a", Type: tUInt, Offset: 0, BitSize: 3, BitOffset: 0},
		{Name: "b", Type: tUInt, Offset: 0, BitSize: 5, BitOffset: 3},
		{Name: "c", Type: tInt, Offset: 0, BitSize: 4, BitOffset: 8},
	}}
	tIntRef = &dwarf.Type{Kind: dwarf.KindReference, Name: "int &", Size: 8, Elem: tInt}
	tBase   = &dwarf.Type{Kind: dwarf.KindStruct, Name: "Base", Size: 4, Fields: []dwarf.Field{{Name: "id", Type: tInt}}}
	tDerive = &dwarf.Type{Kind: dwarf.KindStruct, Name: "Derived", Size: 16, Fields: []dwarf.Field{
		{Name: "Base", Type: tBase, Base: true},
		{Name: "", Type: &dwarf.Type{Kind: dwarf.KindUnion, Size: 8, Fields: []dwarf.Field{{Name: "u", Type: tLong}, {Name: "w", Type: tInt}}}, Offset: 8},
	}}

	// std::vector<int> as libstdc++ lays it out.
	tImplData = &dwarf.Type{Kind: dwarf.KindStruct, Name: "std::_Vector_base<int, std::allocator<int> >::_Vector_impl_data", Size: 24, Fields: []dwarf.Field{
		{Name: "_M_start", Type: tIntP, Offset: 0}, {Name: "_M_finish", Type: tIntP, Offset: 8}, {Name: "_M_end_of_storage", Type: tIntP, Offset: 16}}}
	tImpl    = &dwarf.Type{Kind: dwarf.KindStruct, Name: "std::_Vector_base<int, std::allocator<int> >::_Vector_impl", Size: 24, Fields: []dwarf.Field{{Name: "_Vector_impl_data", Type: tImplData, Base: true}}}
	tVecBase = &dwarf.Type{Kind: dwarf.KindStruct, Name: "std::_Vector_base<int, std::allocator<int> >", Size: 24, Fields: []dwarf.Field{{Name: "_M_impl", Type: tImpl}}}
	tVector  = &dwarf.Type{Kind: dwarf.KindStruct, Name: "std::vector<int, std::allocator<int> >", Size: 24, Fields: []dwarf.Field{{Name: "std::_Vector_base<int, std::allocator<int> >", Type: tVecBase, Base: true}}}

	// Go's int, uint8, []int and string.
	tGoInt    = &dwarf.Type{Kind: dwarf.KindBase, Name: "int", Size: 8, Encoding: dwarf.ATESigned, Lang: dwarf.LangGo, GoKind: dwarf.GoKindInt}
	tGoUint8  = &dwarf.Type{Kind: dwarf.KindBase, Name: "uint8", Size: 1, Encoding: dwarf.ATEUnsigned, Lang: dwarf.LangGo, GoKind: dwarf.GoKindUint8}
	tGoIntP   = &dwarf.Type{Kind: dwarf.KindPointer, Name: "*int", Size: 8, Elem: tGoInt, Lang: dwarf.LangGo, GoKind: dwarf.GoKindPointer}
	tGoUint8P = &dwarf.Type{Kind: dwarf.KindPointer, Name: "*uint8", Size: 8, Elem: tGoUint8, Lang: dwarf.LangGo, GoKind: dwarf.GoKindPointer}
	tGoSlice  = &dwarf.Type{Kind: dwarf.KindStruct, Name: "[]int", Size: 24, Lang: dwarf.LangGo, GoKind: dwarf.GoKindSlice, Fields: []dwarf.Field{
		{Name: "array", Type: tGoIntP, Offset: 0}, {Name: "len", Type: tGoInt, Offset: 8}, {Name: "cap", Type: tGoInt, Offset: 16}}}
	tGoString = &dwarf.Type{Kind: dwarf.KindStruct, Name: "string", Size: 16, Lang: dwarf.LangGo, GoKind: dwarf.GoKindString, Fields: []dwarf.Field{
		{Name: "str", Type: tGoUint8P, Offset: 0}, {Name: "len", Type: tGoInt, Offset: 8}}}

	// Rust's &[i32].
	tI32      = &dwarf.Type{Kind: dwarf.KindBase, Name: "i32", Size: 4, Encoding: dwarf.ATESigned, Lang: dwarf.LangRust}
	tRustSlic = &dwarf.Type{Kind: dwarf.KindStruct, Name: "&[i32]", Size: 16, Lang: dwarf.LangRust, Fields: []dwarf.Field{
		{Name: "data_ptr", Type: &dwarf.Type{Kind: dwarf.KindPointer, Name: "*const i32", Size: 8, Elem: tI32, Lang: dwarf.LangRust}, Offset: 0},
		{Name: "length", Type: &dwarf.Type{Kind: dwarf.KindBase, Name: "usize", Size: 8, Encoding: dwarf.ATEUnsigned, Lang: dwarf.LangRust}, Offset: 8}}}
)

// Rust's Vec<i32> (1.80: the buffer is untyped bytes) and libstdc++'s
// std::string.
var (
	tU8P      = &dwarf.Type{Kind: dwarf.KindPointer, Name: "*const u8", Size: 8, Elem: &dwarf.Type{Kind: dwarf.KindBase, Name: "u8", Size: 1, Encoding: dwarf.ATEUnsigned, Lang: dwarf.LangRust}, Lang: dwarf.LangRust}
	tUsize    = &dwarf.Type{Kind: dwarf.KindBase, Name: "usize", Size: 8, Encoding: dwarf.ATEUnsigned, Lang: dwarf.LangRust}
	tNonNull  = &dwarf.Type{Kind: dwarf.KindStruct, Name: "core::ptr::non_null::NonNull<u8>", Size: 8, Lang: dwarf.LangRust, Fields: []dwarf.Field{{Name: "pointer", Type: tU8P}}}
	tUnique   = &dwarf.Type{Kind: dwarf.KindStruct, Name: "core::ptr::unique::Unique<u8>", Size: 8, Lang: dwarf.LangRust, Fields: []dwarf.Field{{Name: "pointer", Type: tNonNull}}}
	tRawInner = &dwarf.Type{Kind: dwarf.KindStruct, Name: "alloc::raw_vec::RawVecInner<alloc::alloc::Global>", Size: 16, Lang: dwarf.LangRust, Fields: []dwarf.Field{
		{Name: "ptr", Type: tUnique}, {Name: "cap", Type: tUsize, Offset: 8}}}
	tRawVec = &dwarf.Type{Kind: dwarf.KindStruct, Name: "alloc::raw_vec::RawVec<i32, alloc::alloc::Global>", Size: 16, Lang: dwarf.LangRust, Fields: []dwarf.Field{{Name: "inner", Type: tRawInner}}}
	tVec    = &dwarf.Type{Kind: dwarf.KindStruct, Name: "alloc::vec::Vec<i32, alloc::alloc::Global>", Size: 24, Lang: dwarf.LangRust, TypeParams: []*dwarf.Type{tI32}, Fields: []dwarf.Field{
		{Name: "buf", Type: tRawVec}, {Name: "len", Type: tUsize, Offset: 16}}}
	tHider = &dwarf.Type{Kind: dwarf.KindStruct, Name: "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_Alloc_hider", Size: 8, Lang: dwarf.LangCPlusPlus,
		Fields: []dwarf.Field{{Name: "_M_p", Type: &dwarf.Type{Kind: dwarf.KindTypedef, Name: "pointer", Size: 8, Elem: tCharP}}}}
	tString = &dwarf.Type{Kind: dwarf.KindStruct, Name: "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >", Size: 32, Lang: dwarf.LangCPlusPlus, Fields: []dwarf.Field{
		{Name: "_M_dataplus", Type: tHider}, {Name: "_M_string_length", Type: tULong, Offset: 8}}}
	tStdString = &dwarf.Type{Kind: dwarf.KindTypedef, Name: "std::string", Size: 32, Elem: tString, Lang: dwarf.LangCPlusPlus}
)

func init() {
	tNode.Fields = []dwarf.Field{
		{Name: "name", Type: tChar8, Offset: 0},
		{Name: "next", Type: tNodeP, Offset: 8},
		{Name: "val", Type: tInt, Offset: 16},
	}
}

func node(name string, next uint64, val int32) []byte {
	b := make([]byte, 24)
	copy(b, name)
	binary.LittleEndian.PutUint64(b[8:], next)
	binary.LittleEndian.PutUint32(b[16:], uint32(val))
	return b
}

func lv(name string, t *dwarf.Type, addr uint64) dwarf.Value {
	return dwarf.Value{Name: name, Type: t, Addr: addr, InMem: true}
}

func newScope(lang dwarf.Lang) *fakeScope {
	mem := fakeMem{}
	mem.put(0x1000, node("first", 0x2000, 10))
	mem.put(0x2000, node("second", 0, 20))
	mem.put(0x3000, u64(0x1000))
	arr := []byte{}
	for i := uint32(1); i <= 5; i++ {
		arr = append(arr, u32(i)...)
	}
	mem.put(0x4000, arr)
	mat := []byte{}
	for i := uint32(0); i < 6; i++ {
		mat = append(mat, u32(i)...)
	}
	mem.put(0x4100, mat)
	scalars := []byte{}
	scalars = append(scalars, u32(42)...)                         // 0x5000 x
	scalars = append(scalars, 200, 0, 0, 0)                       // 0x5004 uc
	scalars = append(scalars, u32(0xffffffff)...)                 // 0x5008 u
	scalars = append(scalars, u32(uint32(0xfffffff9))...)         // 0x500c neg = -7
	scalars = append(scalars, u64(uint64(0xfffffffffffffffb))...) // 0x5010 l = -5
	scalars = append(scalars, u64(math.Float64bits(2.5))...)      // 0x5018 d
	scalars = append(scalars, u32(math.Float32bits(1.5))...)      // 0x5020 f
	scalars = append(scalars, u32(3)...)                          // 0x5024 ci
	scalars = append(scalars, u64(0x2000)...)                     // 0x5028 np
	scalars = append(scalars, u64(0)...)                          // 0x5030 nul
	scalars = append(scalars, u64(0x3000)...)                     // 0x5038 pp
	scalars = append(scalars, u64(0x1000)...)                     // 0x5040 cp
	scalars = append(scalars, u64(0x4000)...)                     // 0x5048 vp
	scalars = append(scalars, u32(5)...)                          // 0x5050 c
	scalars = append(scalars, u32(5|17<<3|0xd<<8)...)             // 0x5054 fl
	scalars = append(scalars, u64(0x5000)...)                     // 0x5058 r
	scalars = append(scalars, u32(9)...)                          // 0x5060 mi
	scalars = append(scalars, u32(77)...)                         // 0x5064 ns::var
	scalars = append(scalars, u32(1)...)                          // 0x5068 dv.id
	scalars = append(scalars, u32(0)...)                          // padding
	scalars = append(scalars, u64(uint64(0xffffffff00000010))...) // 0x5070 dv.u
	mem.put(0x5000, scalars)
	mem.put(0x6000, append(append(u64(0x6100), u64(3)...), u64(4)...)) // Go []int
	mem.put(0x6018, append(u64(0x6200), u64(5)...))                    // Go string
	mem.put(0x6030, u64(99))                                           // main.counter
	mem.put(0x6100, append(append(append(u64(10), u64(20)...), u64(30)...), u64(40)...))
	mem.put(0x6200, []byte("hello"))
	mem.put(0x7000, append(u64(0x4000), u64(5)...))                              // Rust &[i32]
	mem.put(0x7100, append(append(u64(0x4000), u64(0x4014)...), u64(0x4014)...)) // std::vector<int>
	mem.put(0x7ffe0000, u64(0xdeadbeef))
	mem.put(0x7200, append(append(u64(0x4000), u64(5)...), u64(4)...))           // Rust Vec<i32>: ptr, cap, len
	mem.put(0x7300, append(append(u64(0x6200), u64(5)...), make([]byte, 16)...)) // std::string "hello"

	vars := map[string]dwarf.Value{
		"head":               lv("head", tNodeP, 0x3000),
		"arr":                lv("arr", tArr5, 0x4000),
		"matrix":             lv("matrix", tArr23, 0x4100),
		"x":                  lv("x", tInt, 0x5000),
		"uc":                 lv("uc", tUChar, 0x5004),
		"u":                  lv("u", tUInt, 0x5008),
		"neg":                lv("neg", tInt, 0x500c),
		"l":                  lv("l", tLong, 0x5010),
		"d":                  lv("d", tDouble, 0x5018),
		"f":                  lv("f", tFloat, 0x5020),
		"ci":                 lv("ci", tCInt, 0x5024),
		"np":                 lv("np", tNodeTP, 0x5028),
		"nul":                lv("nul", tIntP, 0x5030),
		"pp":                 lv("pp", tNodePP, 0x5038),
		"cp":                 lv("cp", tCharP, 0x5040),
		"vp":                 lv("vp", tVoidP, 0x5048),
		"c":                  lv("c", tColor, 0x5050),
		"fl":                 lv("fl", tFlags, 0x5054),
		"r":                  lv("r", tIntRef, 0x5058),
		"mi":                 lv("mi", tMyInt, 0x5060),
		"ns::var":            lv("ns::var", tInt, 0x5064),
		"dv":                 lv("dv", tDerive, 0x5068),
		"rv":                 {Name: "rv", Type: tInt, Bytes: u32(7)},
		"opt":                {Name: "opt", Type: tInt, Optimized: true},
		"s":                  lv("s", tGoSlice, 0x6000),
		"gs":                 lv("gs", tGoString, 0x6018),
		"main.counter":       lv("main.counter", tGoInt, 0x6030),
		"rs":                 lv("rs", tRustSlic, 0x7000),
		"vec":                lv("vec", tVector, 0x7100),
		"rvec":               lv("rvec", tVec, 0x7200),
		"str":                lv("str", tStdString, 0x7300),
		"file.c::st":         lv("file.c::st", tInt, 0x5000),
		"github.com/x/y.Var": lv("github.com/x/y.Var", tGoInt, 0x6030),
	}
	if lang == dwarf.LangCPlusPlus {
		vars["this"] = dwarf.Value{Name: "this", Type: tNodeP, Bytes: u64(0x1000)}
	}
	types := map[string]*dwarf.Type{
		"int": tInt, "unsigned int": tUInt, "char": tChar, "unsigned char": tUChar,
		"long int": tLong, "long unsigned int": tULong, "double": tDouble, "float": tFloat, "void": tVoid,
		"struct node": tNode, "node_t": tNodeT, "myint": tMyInt, "enum color": tColor,
		"uint8": tGoUint8, "i32": tI32,
	}
	if lang == dwarf.LangGo {
		types["int"] = tGoInt
	}
	return &fakeScope{
		vars:  vars,
		types: types,
		regs:  map[string]uint64{"rip": 0x401136, "rsp": 0x7ffe0000, "rbp": 0x7ffe0010, "rax": 0x1122334455667788},
		conv: map[string]dwarf.Value{
			"1": {Type: tInt, Bytes: u32(5)},
			"":  {Type: tInt, Bytes: u32(6)},
		},
		mem:  mem,
		lang: lang,
	}
}

// show renders a result as "TYPE VALUE", with " @ADDR" for lvalues.
func show(t *testing.T, v dwarf.Value, mem dwarf.Memory) string {
	t.Helper()
	var val string
	switch classOf(v.Type) {
	case cInt:
		n, unsigned, err := Int(v, mem)
		if err != nil {
			return "error reading: " + err.Error()
		}
		if unsigned {
			val = strconv.FormatUint(uint64(n), 10)
		} else {
			val = strconv.FormatInt(n, 10)
		}
	case cPtr:
		n, _, err := Int(v, mem)
		if err != nil {
			return "error reading: " + err.Error()
		}
		val = fmt.Sprintf("%#x", uint64(n))
	case cFloat:
		e := newEvaluator(mem, dwarf.LangC)
		s, err := e.scalar(v)
		if err != nil {
			return "error reading: " + err.Error()
		}
		val = strconv.FormatFloat(s.f, 'g', -1, 64)
	case cVoid:
		val = "void"
	default:
		if v.InMem {
			val = "{...}"
		} else {
			val = fmt.Sprintf("%q", v.Bytes)
		}
	}
	s := typeName(v.Type) + " " + val
	if v.InMem {
		s += fmt.Sprintf(" @%#x", v.Addr)
	}
	return s
}
