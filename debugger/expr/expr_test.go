package expr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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

// evalCase is an expression, the language of its frame, and its value (as
// show renders it) or error.
type evalCase struct {
	lang dwarf.Lang
	src  string
	want string
}

// evalTests are expressions and their values; FuzzExpr starts from them.
var evalTests = []evalCase{
	// Precedence and associativity.
	{0, "1 + 2 * 3", "int 7"},
	{0, "(1 + 2) * 3", "int 9"},
	{0, "1 << 2 + 1", "int 8"},
	{0, "10 - 3 - 2", "int 5"},
	{0, "100 / 10 / 5", "int 2"},
	{0, "-2 * 3", "int -6"},
	{0, "2 + 3 == 5", "int 1"},
	{0, "1 | 2 ^ 3 & 1", "int 3"},
	{0, "!0 + 1", "int 2"},
	{0, "~0", "int -1"},
	{0, "1 ? 2 : 3", "int 2"},
	{0, "0 ? 2 : 0 ? 3 : 4", "int 4"},
	{0, "1 && 0 || 1", "int 1"},
	{0, "5 % 3", "int 2"},
	{0, "-7 / 2", "int -3"},
	{0, "-7 % 2", "int -1"},
	{0, "x > 40 && x < 50", "int 1"},
	{0, "1, 2", "int 2"},
	{0, "+x", "int 42"},
	{0, "- -x", "int 42"},

	// Literals.
	{0, "2147483648", "long 2147483648"},
	{0, "0xffffffff", "unsigned int 4294967295"},
	{0, "4294967295", "long 4294967295"},
	{0, "010", "int 8"},
	{0, "0x10", "int 16"},
	{0, "0b101", "int 5"},
	{0, "10u", "unsigned int 10"},
	{0, "10l", "long 10"},
	{0, "10UL", "unsigned long 10"},
	{0, "10ll", "long long 10"},
	{0, "18446744073709551615", "unsigned long 18446744073709551615"},
	{0, "'a'", "char 97"},
	{0, `'\n'`, "char 10"},
	{0, `'\0'`, "char 0"},
	{0, `'\x41'`, "char 65"},
	{0, `'\101'`, "char 65"},
	{0, `'\''`, "char 39"},
	{0, "'a' + 1", "int 98"},
	{0, "1.5 + 1", "double 2.5"},
	{0, "1.5f", "float 1.5"},
	{0, "1e3", "double 1000"},
	{0, ".5", "double 0.5"},
	{0, "2.5e-1", "double 0.25"},

	// Integer promotions and the usual arithmetic conversions.
	{0, "uc", "unsigned char 200 @0x5004"},
	{0, "uc + uc", "int 400"},
	{0, "-uc", "int -200"},
	{0, "u + 1", "unsigned int 0"},
	{0, "-1 < 1u", "int 0"},
	{0, "-1 < 1", "int 1"},
	{0, "-1 < 1ul", "int 0"},
	{0, "u * 2UL", "unsigned long 8589934590"},
	{0, "l * 2", "long -10"},
	{0, "l + u", "long 4294967290"},
	{0, "neg + u", "unsigned int 4294967288"},
	{0, "2147483647 + 1", "int -2147483648"},
	{0, "(-9223372036854775807L - 1) / -1", "long -9223372036854775808"},
	{0, "(-9223372036854775807L - 1) % -1", "long 0"},
	{0, "neg >> 1", "int -4"},
	{0, "u >> 28", "unsigned int 15"},
	{0, "1 << 40", "int 0"},
	{0, "1L << 40", "long 1099511627776"},
	{0, "7 / 2", "int 3"},
	{0, "7 / 2.0", "double 3.5"},
	{0, "d * 2", "double 5"},
	{0, "f + f", "float 3"},
	{0, "f + d", "double 4"},
	{0, "d > 2", "int 1"},
	{0, "d == 2.5", "int 1"},
	{0, "-d", "double -2.5"},
	{0, "!d", "int 0"},

	// Casts.
	{0, "(char)321", "char 65"},
	{0, "(unsigned char)-1", "unsigned char 255"},
	{0, "(signed char)200", "signed char -56"},
	{0, "(long)head", "long int 4096"},
	{0, "(int)2.9", "int 2"},
	{0, "(int)-2.9", "int -2"},
	{0, "(_Bool)5", "_Bool 1"},
	{0, "(unsigned long)-1", "long unsigned int 18446744073709551615"},
	{0, "(unsigned)x", "unsigned int 42"},
	{0, "(short)70000", "short 4464"},
	{0, "(double)7 / 2", "double 3.5"},
	{0, "(float)1 / 3", "float 0.3333333432674408"},
	{0, "(struct node *)0x2000", "struct node * 0x2000"},
	{0, "((struct node *)0x2000)->val", "int 20 @0x2010"},
	{0, "(long)head->next", "long int 8192"},
	{0, "*(int*)&x", "int 42 @0x5000"},
	{0, "*(unsigned char *)&x", "unsigned char 42 @0x5000"},
	{0, "(node_t *)head", "node_t * 0x1000"},
	{0, "((node_t*)head)->next->val", "int 20 @0x2010"},
	{0, "(int **)0", "int ** 0x0"},
	{0, "(char const *)cp", "char * 0x1000"},
	{0, "(myint)-1", "myint -1"},
	{0, "(myint)x", "myint 42"},
	{0, "(x)-1", "int 41"},
	{0, "(x) + (x)", "int 84"},
	{0, "(struct node)*head", "struct node {...} @0x1000"},
	{0, "(void)x", "void void"},
	{0, "int(2.5)", "int 2"},
	{0, "(long double)1.5 * 2", "long double 3"},

	// Variables, structs, pointers, typedefs and qualifiers.
	{0, "x", "int 42 @0x5000"},
	{0, "head", "struct node * 0x1000 @0x3000"},
	{0, "*head", "struct node {...} @0x1000"},
	{0, "head->val", "int 10 @0x1010"},
	{0, "head.val", "int 10 @0x1010"},
	{0, "(*head).val", "int 10 @0x1010"},
	{0, "(*head)->val", "int 10 @0x1010"},
	{0, "head->next->val", "int 20 @0x2010"},
	{0, "head->next->next", "struct node * 0x0 @0x2008"},
	{0, "(*pp)->val", "int 10 @0x1010"},
	{0, "pp->val", "int 10 @0x1010"},
	{0, "**pp", "struct node {...} @0x1000"},
	{0, "head->name", "char [8] {...} @0x1000"},
	{0, "head->name[1]", "char 105 @0x1001"},
	{0, "*head->name", "char 102 @0x1000"},
	{0, "np->val", "int 20 @0x2010"},
	{0, "np->next", "struct node * 0x0 @0x2008"},
	{0, "*np", "node_t {...} @0x2000"},
	{0, "ci", "const int 3 @0x5024"},
	{0, "ci + 1", "int 4"},
	{0, "mi * 2", "int 18"},
	{0, "c", "enum color 5 @0x5050"},
	{0, "c == 5", "int 1"},
	{0, "c + 1", "unsigned int 6"},
	{0, "dv.id", "int 1 @0x5068"},
	{0, "dv.u", "long int -4294967280 @0x5070"},
	{0, "dv.w", "int 16 @0x5070"},
	{0, "rv", "int 7"},
	{0, "rv * 2", "int 14"},
	{0, "ns::var", "int 77 @0x5064"},
	{0, "::ns::var + 1", "int 78"},

	// Address-of and pointer arithmetic.
	{0, "&x", "int * 0x5000"},
	{0, "*&x", "int 42 @0x5000"},
	{0, "&head->val", "int * 0x1010"},
	{0, "&*head", "struct node * 0x1000"},
	{0, "&head", "struct node ** 0x3000"},
	{0, "&vp", "void ** 0x5048"},
	{0, "&matrix[1]", "int (*)[3] 0x410c"},
	{0, "&matrix", "int (*)[2][3] 0x4100"},
	{0, "&arr", "int (*)[5] 0x4000"},
	{0, "&head->name", "char (*)[8] 0x1000"},
	{0, "head + 1", "struct node * 0x1018"},
	{0, "1 + head", "struct node * 0x1018"},
	{0, "np - 1", "node_t * 0x1fe8"},
	{0, "&head->next->val - &head->val", "long 1024"},
	{0, "arr", "int [5] {...} @0x4000"},
	{0, "arr[2]", "int 3 @0x4008"},
	{0, "2[arr]", "int 3 @0x4008"},
	{0, "arr + 1", "int * 0x4004"},
	{0, "*(arr + 4)", "int 5 @0x4010"},
	{0, "*arr", "int 1 @0x4000"},
	{0, "&arr[3] - &arr[0]", "long 3"},
	{0, "&arr[3] - arr", "long 3"},
	{0, "arr[1] + arr[2]", "int 5"},
	{0, "arr[-1 + 2]", "int 2 @0x4004"},
	{0, "matrix[1][2]", "int 5 @0x4114"},
	{0, "matrix[1]", "int [3] {...} @0x410c"},
	{0, "*matrix[1]", "int 3 @0x410c"},
	{0, "vp + 1", "void * 0x4001"},
	{0, "*(int *)vp", "int 1 @0x4000"},
	{0, "((int *)vp)[4]", "int 5 @0x4010"},
	{0, "cp[1]", "char 105 @0x1001"},
	{0, "head == np", "int 0"},
	{0, "head->next == np", "int 1"},
	{0, "head < np", "int 1"},
	{0, "head != 0", "int 1"},
	{0, "nul == 0", "int 1"},
	{0, "!nul", "int 1"},
	{0, "head && head->val == 10", "int 1"},
	{0, "nul && *nul", "int 0"},
	{0, "!nul || *nul", "int 1"},
	{0, "arr == &arr[0]", "int 1"},

	// Strings.
	{0, `head->name == "first"`, "int 1"},
	{0, `head->name != "first"`, "int 0"},
	{0, `np->name == "second"`, "int 1"},
	{0, `head->name == "firs"`, "int 0"},
	{0, `cp == "first"`, "int 1"},
	{0, `"first" == cp`, "int 1"},
	{0, `cp == "firs"`, "int 0"},
	{0, `cp == "first!"`, "int 0"},
	{0, `"ab"`, `char [3] "ab\x00"`},

	// gdb's @ and {type} addr.
	{0, "*arr@3", "int [3] {...} @0x4000"},
	{0, "arr[1]@2", "int [2] {...} @0x4004"},
	{0, "(*arr@3)[2]", "int 3 @0x4008"},
	{0, "sizeof(*arr@3)", "unsigned long 12"},
	{0, "*head@2", "struct node [2] {...} @0x1000"},
	{0, "{int} 0x4004", "int 2 @0x4004"},
	{0, "{int}arr", "int 1 @0x4000"},
	{0, "{struct node} head", "struct node {...} @0x1000"},
	{0, "({struct node} 0x2000).val", "int 20 @0x2010"},
	{0, "{int} 0x4004 + 1", "int 3"},
	{0, "{node_t *} 0x3000", "node_t * 0x1000 @0x3000"},

	// sizeof.
	{0, "sizeof(struct node)", "unsigned long 24"},
	{0, "sizeof(int)", "unsigned long 4"},
	{0, "sizeof x", "unsigned long 4"},
	{0, "sizeof(head)", "unsigned long 8"},
	{0, "sizeof(*head)", "unsigned long 24"},
	{0, "sizeof *head", "unsigned long 24"},
	{0, "sizeof(node_t)", "unsigned long 24"},
	{0, "sizeof(myint)", "unsigned long 4"},
	{0, "sizeof(unsigned long)", "unsigned long 8"},
	{0, "sizeof(char*)", "unsigned long 8"},
	{0, "sizeof(char)", "unsigned long 1"},
	{0, "sizeof arr / sizeof arr[0]", "unsigned long 5"},
	{0, "sizeof matrix", "unsigned long 24"},
	{0, "sizeof(matrix[0])", "unsigned long 12"},
	{0, "sizeof(((struct node *)0)->val)", "unsigned long 4"},
	{0, "sizeof(arr[1])", "unsigned long 4"},
	{0, "sizeof(int[10])", "unsigned long 40"},
	{0, "sizeof x + 1", "unsigned long 5"},

	// Bitfields: values, not lvalues.
	{0, "fl.a", "unsigned int 5"},
	{0, "fl.b", "unsigned int 17"},
	{0, "fl.c", "int -3"},
	{0, "fl.a + fl.b", "unsigned int 22"},

	// References are dereferenced.
	{dwarf.LangCPlusPlus, "r", "int 42 @0x5000"},
	{dwarf.LangCPlusPlus, "r + 1", "int 43"},
	{dwarf.LangCPlusPlus, "&r", "int * 0x5000"},
	{dwarf.LangCPlusPlus, "(int&)x", "int 42 @0x5000"},
	{dwarf.LangCPlusPlus, "1 == 1", "bool 1"},
	{dwarf.LangCPlusPlus, "!x", "bool 0"},
	{dwarf.LangCPlusPlus, "val", "int 10 @0x1010"}, // this->val
	{dwarf.LangCPlusPlus, "true + 1", "int 2"},
	{dwarf.LangCPlusPlus, "nullptr == nul", "bool 1"},
	{dwarf.LangCPlusPlus, "vec[2]", "int 3 @0x4008"},
	{dwarf.LangCPlusPlus, "vec[4]", "int 5 @0x4010"},

	// Registers and convenience variables.
	{0, "$rip", "void (*)() 0x401136"},
	{0, "$pc", "void (*)() 0x401136"},
	{0, "$sp", "void * 0x7ffe0000"},
	{0, "$fp", "void * 0x7ffe0010"},
	{0, "$rax", "long 1234605616436508552"},
	{0, "$eax", "int 1432778632"},
	{0, "$ax", "short 30600"},
	{0, "$al", "signed char -120"},
	{0, "$ah", "signed char 119"},
	{0, "$rsp + 8", "void * 0x7ffe0008"},
	{0, "*(long *)$sp", "long int 3735928559 @0x7ffe0000"},
	{0, "$pc + 4", "void (*)() 0x40113a"},
	{0, "$rax & 0xff", "long 136"},
	{0, "$foo", "void void"},
	{0, "$1", "int 5"},
	{0, "$", "int 6"},
	{0, "$1 * 2", "int 10"},

	// Go.
	{dwarf.LangGo, "main.counter", "int 99 @0x6030"},
	{dwarf.LangGo, "main.counter + 1", "int 100"},
	{dwarf.LangGo, "main.counter > 1", "bool 1"},
	{dwarf.LangGo, "s.len", "int 3 @0x6008"},
	{dwarf.LangGo, "s.len * 2", "int 6"},
	{dwarf.LangGo, "s[1]", "int 20 @0x6108"},
	{dwarf.LangGo, "s[0] + s[2]", "int 40"},
	{dwarf.LangGo, "len(s)", "int 3"},
	{dwarf.LangGo, "cap(s)", "int 4"},
	{dwarf.LangGo, "gs[1]", "uint8 101 @0x6201"},
	{dwarf.LangGo, "len(gs)", "int 5"},
	{dwarf.LangGo, `gs == "hello"`, "bool 1"},
	{dwarf.LangGo, `gs == "hell"`, "bool 0"},
	{dwarf.LangGo, "uint8(main.counter)", "uint8 99"},
	{dwarf.LangGo, "*s.array", "int 10 @0x6100"},
	{dwarf.LangGo, "&main.counter", "*int 0x6030"},
	{dwarf.LangGo, "1 + 2", "int 3"},
	{dwarf.LangGo, "gs[0] + 1", "uint8 105"},
	{dwarf.LangGo, "gs[0] + 200", "uint8 48"},
	{dwarf.LangGo, "(*int)(0x6100)", "*int 0x6100"},
	{dwarf.LangGo, "*(*int)(0x6100)", "int 10 @0x6100"},
	{dwarf.LangGo, "int(gs[1])", "int 101"},
	{dwarf.LangGo, "gs == gs", "bool 1"},
	{dwarf.LangGo, "gs != gs", "bool 0"},

	// Rust.
	{dwarf.LangRust, "rs[4]", "i32 5 @0x4010"},
	{dwarf.LangRust, "rs.length", "usize 5 @0x7008"},
	{dwarf.LangRust, "rs[0] + 1", "i32 2"},
	{dwarf.LangRust, "rvec[3]", "i32 4 @0x400c"},
	{dwarf.LangRust, "5u8 + 1", "u8 6"},
	{dwarf.LangRust, "1.5 * 2", "f64 3"},
	{dwarf.LangRust, "'a'", "char 97"},
	{dwarf.LangGo, "s.len * 1.5", "float64 4.5"},
	{dwarf.LangRust, "len(rvec)", "usize 4"},
	{dwarf.LangCPlusPlus, `str == "hello"`, "bool 1"},
	{dwarf.LangCPlusPlus, `str != "help!"`, "bool 1"},
	{dwarf.LangCPlusPlus, "str[1]", "char 101 @0x6201"},
	{dwarf.LangCPlusPlus, "str == str", "bool 1"},
	{0, "'file.c'::st", "int 42 @0x5000"},
	{dwarf.LangGo, "'github.com/x/y.Var' + 1", "int 100"},
}

func TestEval(t *testing.T) {
	for _, tc := range evalTests {
		checkEval(t, newScope(tc.lang), tc)
	}
}

// checkEval evaluates one case in sc and compares what show renders.
func checkEval(t *testing.T, sc *fakeScope, tc evalCase) {
	t.Helper()
	v, err := Eval(tc.src, sc)
	if err != nil {
		t.Errorf("Eval(%q): %v", tc.src, err)
		return
	}
	if got := show(t, v, sc.mem); got != tc.want {
		t.Errorf("Eval(%q) = %s, want %s", tc.src, got, tc.want)
	}
}

// errorTests are expressions and their errors; FuzzExpr starts from them.
var errorTests = []evalCase{
	{0, "nosuch", `No symbol "nosuch" in current context.`},
	{0, "nosuch + 1", `No symbol "nosuch" in current context.`},
	{0, "a.b.c", `No symbol "a.b.c" in current context.`},
	{0, "head->bar", "There is no member named bar."},
	{0, "head.bar", "There is no member named bar."},
	{0, "&rv", "Attempt to take address of value not located in memory."},
	{0, "&1", "Attempt to take address of value not located in memory."},
	{0, "&(x + 1)", "Attempt to take address of value not located in memory."},
	{0, "&fl.a", "Attempt to take address of value not located in memory."},
	{0, "*nul", "Cannot access memory at address 0x0"},
	{0, "nul[0] + 1", "Cannot access memory at address 0x0"},
	{0, "head->next->next->val", "Cannot access memory at address 0x10"},
	{0, "*x", "Cannot access memory at address 0x2a"},
	{0, "1 / 0", "Division by zero"},
	{0, "x % 0", "Division by zero"},
	{0, "x / (u - u)", "Division by zero"},
	{0, "1 +", "A syntax error in expression, near `'."},
	{0, "1 + )", "A syntax error in expression, near `)'."},
	{0, "(1", "A syntax error in expression, near `'."},
	{0, "", "A syntax error in expression, near `'."},
	{0, "x y", "A syntax error in expression, near `y'."},
	{0, "(nosuch_t) 1", "A syntax error in expression, near `1'."},
	{0, "x = 1", "Assignment (=) is not supported: the recorded execution cannot be changed."},
	{0, "x += 1", "Assignment (+=) is not supported: the recorded execution cannot be changed."},
	{0, "x++", "Increment and decrement (++) are not supported: the recorded execution cannot be changed."},
	{0, "f(1)", "Function calls are not supported: the recorded process cannot run code."},
	{0, "*d", "Attempt to take contents of a non-pointer value."},
	{0, "*vp", "Attempt to take contents of a non-pointer value."},
	{0, "x.y", "Attempt to extract a component of a value that is not a structure."},
	{0, "x->y", "Attempt to extract a component of a value that is not a structure pointer."},
	{0, "x[0]", "cannot subscript something of type `int'"},
	{0, "head + head", "Argument to arithmetic operation not a number or boolean."},
	{0, "*head + 1", "Argument to arithmetic operation not a number or boolean."},
	{0, "-head", "Argument to arithmetic operation not a number or boolean."},
	{0, "*head == 1", "Invalid type combination in equality test."},
	{0, "*head < *np", "Invalid type combination in ordering comparison."},
	{0, "d % 2", "Integer only operation."},
	{0, "opt + 1", "value has been optimized out"},
	{0, "1@2", "Only values in memory can be extended with '@'."},
	{0, "x@0", "Invalid number 0 of repetitions."},
	{0, "(struct nosuch *)0", "No struct type named nosuch."},
	{0, "sizeof(struct nosuch)", "No struct type named nosuch."},
	{0, "(union node *)0", "No union type named node."},
	{0, "myint", "Attempt to use a type name as an expression"},
	{0, "int", "Attempt to use a type name as an expression"},
	{0, "unsigned long x", "A syntax error in expression, near `x'."},
	{0, "'a", "Unmatched single quote."},
	{0, `"abc`, "Unterminated string in expression."},
	{0, "08", `Invalid number "08".`},
	{0, "1.5q", `Invalid number "1.5q".`},
	{0, "99999999999999999999", "Numeric constant too large."},
	{0, `x == "abc"`, "A string literal can only be compared (== or !=) with a char array, a char pointer or a string."},
	{0, "$7", "History has not yet reached $7."},
	{0, "(struct node)x", "Invalid cast."},
	{0, "(int *)1.5", "Invalid cast."},
	{0, "x # 1", "Invalid character '#' in expression."},
	{dwarf.LangGo, "s[3]", "index out of range [3] with length 3"},
	{dwarf.LangGo, "main.nosuch", `No symbol "main.nosuch" in current context.`},
	{dwarf.LangRust, "rs[5]", "index out of range [5] with length 5"},
	{dwarf.LangRust, "rvec[4]", "index out of range [4] with length 4"},
	{dwarf.LangCPlusPlus, "vec[5]", "index out of range [5] with length 5"},
}

func TestErrors(t *testing.T) {
	for _, tc := range errorTests {
		sc := newScope(tc.lang)
		v, err := Eval(tc.src, sc)
		if err == nil {
			t.Errorf("Eval(%q) = %s, want error %q", tc.src, show(t, v, sc.mem), tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Eval(%q): error %q, want %q", tc.src, err, tc.want)
		}
	}
}

func TestMemoryErrorWraps(t *testing.T) {
	sc := newScope(dwarf.LangC)
	_, err := Eval("*nul", sc)
	var me *dwarf.MemoryError
	if !errors.As(err, &me) || me.Addr != 0 || me.Err == nil {
		t.Fatalf("Eval(*nul): %v, want a *dwarf.MemoryError at 0 wrapping the reader's error", err)
	}
}

func TestOptimizedOut(t *testing.T) {
	sc := newScope(dwarf.LangC)
	v, err := Eval("opt", sc)
	if err != nil || !v.Optimized {
		t.Fatalf("Eval(opt) = %+v, %v; want an optimized-out value", v, err)
	}
}

func TestParseString(t *testing.T) {
	tests := []struct{ src, want string }{
		{"a + b * c", "(a + (b * c))"},
		{"a * b + c", "((a * b) + c)"},
		{"a - b - c", "((a - b) - c)"},
		{"a << 1 @ 2 + 3", "(a << (1 @ (2 + 3)))"},
		{"*arr@5", "(*arr @ 5)"},
		{"a ? b : c ? d : e", "(a ? b : (c ? d : e))"},
		{"a || b && c", "(a || (b && c))"},
		{"a == b < c", "(a == (b < c))"},
		{"a & b == c", "(a & (b == c))"},
		{"a | b ^ c & d", "(a | (b ^ (c & d)))"},
		{"-a.b", "-a.b"},
		{"*p->next", "*p->next"},
		{"&a[1]", "&a[1]"},
		{"!*p", "!*p"},
		{"(int)x + 1", "((int)x + 1)"},
		{"(struct node *)p->next", "(struct node *)p->next"},
		{"sizeof x + 1", "(sizeof(x) + 1)"},
		{"sizeof(struct node) * 2", "(sizeof(struct node) * 2)"},
		{"{int} p + 1", "({int} p + 1)"},
		{"ns::var", "ns::var"},
		{"main.x.y", "main.x.y"},
		{"t.0", "t.0"},
		{"t.0.1", "t.0.1"},
		{"(std::vector<int> *)0", "(std::vector<int> *)0"},
		{"(std::map<int, std::vector<int>> *)0", "(std::map<int, std::vector<int> > *)0"},
		{"a < b > c", "((a < b) > c)"},
		{"(unsigned long)x", "(unsigned long)x"},
		{"(long unsigned int)x", "(unsigned long)x"},
		{"(unsigned)x", "(unsigned int)x"},
		{"(char const *)p", "(char *)p"},
		{"(const struct node * const *)p", "(struct node **)p"},
		{"(main.T)x", "(main.T)x"},
		{"(T)(x)", "(T)x"},
		{"$rip + 1", "($rip + 1)"},
		{"$$2", "$$2"},
		{"f(a, b)", "f(a, b)"},
		{"x[i][j]", "x[i][j]"},
		{"1 ? 2 : 3, 4", "((1 ? 2 : 3), 4)"},
		{`"a" "b"`, `"ab"`},
	}
	for _, tc := range tests {
		n, err := Parse(tc.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.src, err)
			continue
		}
		if got := n.String(); got != tc.want {
			t.Errorf("Parse(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
}

// TestAmbiguousCast: without a Scope, (T)-1 may be a cast or a
// subtraction; EvalNode decides with the Scope's names.
func TestAmbiguousCast(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"(myint)-1", "myint -1"},
		{"(x)-1", "int 41"},
		{"(x)*2", "int 84"},
		{"(myint)*&x", "myint 42"},
		{"(x)&1", "int 0"},
	} {
		n, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		sc := newScope(dwarf.LangC)
		v, err := EvalNode(n, sc)
		if err != nil {
			t.Errorf("EvalNode(%q): %v", tc.src, err)
			continue
		}
		if got := show(t, v, sc.mem); got != tc.want {
			t.Errorf("EvalNode(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
	// An unambiguous tree from Parse evaluates as it is.
	n, err := Parse("head->next->val + 1")
	if err != nil {
		t.Fatal(err)
	}
	sc := newScope(dwarf.LangC)
	if v, err := EvalNode(n, sc); err != nil || show(t, v, sc.mem) != "int 21" {
		t.Errorf("EvalNode(head->next->val + 1) = %v, %v", v, err)
	}
}

func TestTruthIntAddress(t *testing.T) {
	sc := newScope(dwarf.LangC)
	eval := func(src string) dwarf.Value {
		t.Helper()
		v, err := Eval(src, sc)
		if err != nil {
			t.Fatalf("Eval(%q): %v", src, err)
		}
		return v
	}
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"nul", false}, {"head", true}, {"d", true}, {"d - 2.5", false}, {"x", true},
		{"x - 42", false}, {"arr", true}, {"c", true}, {"fl.a", true}, {"head->next->next", false},
	} {
		got, err := Truth(eval(tc.src), sc.mem)
		if err != nil || got != tc.want {
			t.Errorf("Truth(%s) = %v, %v; want %v", tc.src, got, err, tc.want)
		}
	}
	if _, err := Truth(eval("*head"), sc.mem); err == nil {
		t.Errorf("Truth(*head): no error for a struct")
	}
	if _, err := Truth(dwarf.Value{Type: tInt, Optimized: true}, sc.mem); err == nil || err.Error() != "value has been optimized out" {
		t.Errorf("Truth(optimized out): %v", err)
	}
	// References given straight from a Scope are followed.
	if got, err := Truth(sc.vars["r"], sc.mem); err != nil || !got {
		t.Errorf("Truth(r) = %v, %v", got, err)
	}

	for _, tc := range []struct {
		src      string
		n        int64
		unsigned bool
	}{
		{"neg", -7, false}, {"u", 0xffffffff, true}, {"head", 0x1000, true}, {"uc", 200, true},
		{"c", 5, true}, {"'a'", 97, false}, {"d", 2, false}, {"(_Bool)7", 1, true}, {"l", -5, false},
	} {
		n, unsigned, err := Int(eval(tc.src), sc.mem)
		if err != nil || n != tc.n || unsigned != tc.unsigned {
			t.Errorf("Int(%s) = %d, %v, %v; want %d, %v", tc.src, n, unsigned, err, tc.n, tc.unsigned)
		}
	}
	if _, _, err := Int(eval("*head"), sc.mem); err == nil {
		t.Errorf("Int(*head): no error for a struct")
	}

	for _, tc := range []struct {
		src  string
		want uint64
	}{
		{"arr", 0x4000}, {"head", 0x1000}, {"x", 42}, {"&x", 0x5000}, {"$sp", 0x7ffe0000}, {"head->name", 0x1000},
	} {
		got, err := Address(eval(tc.src), sc.mem)
		if err != nil || got != tc.want {
			t.Errorf("Address(%s) = %#x, %v; want %#x", tc.src, got, err, tc.want)
		}
	}
	if _, err := Address(eval("*head"), sc.mem); err == nil {
		t.Errorf("Address(*head): no error for a struct")
	}
}

// TestParseErrorsEarly: Parse reports syntax errors without a Scope, as
// `break f if COND` needs.
func TestParseErrorsEarly(t *testing.T) {
	for _, src := range []string{"x ==", "a[1", "f(", "x ? 1", "sizeof(struct node", "{int 5", "(struct)x", "a->", "a.", "1 2"} {
		if _, err := Parse(src); err == nil || !strings.Contains(err.Error(), "syntax error") {
			t.Errorf("Parse(%q): %v, want a syntax error", src, err)
		}
	}
	for _, src := range []string{"x == 1", "p->next != 0 && p->val > 3", "(struct node *)p", "*arr@3", "{int} $sp", "$rip"} {
		if _, err := Parse(src); err != nil {
			t.Errorf("Parse(%q): %v", src, err)
		}
	}
}

// TestNesting: an expression nested deeper than maxNesting is an error,
// not a stack overflow of the parser or the evaluator; below the bound,
// nesting of every kind evaluates.
func TestNesting(t *testing.T) {
	for _, c := range []struct {
		name string
		src  func(n int) string
	}{
		{"parentheses", func(n int) string { return strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }},
		{"prefix operators", func(n int) string { return strings.Repeat("!", n) + "1" }},
		{"casts", func(n int) string { return strings.Repeat("(int)", n) + "1" }},
		{"conditionals", func(n int) string { return strings.Repeat("1 ? 1 : ", n) + "1" }},
		{"a chain of operators", func(n int) string { return strings.Repeat("1 + ", n) + "1" }},
		{"a chain of commas", func(n int) string { return strings.Repeat("1, ", n) + "1" }},
		{"a chain of subscripts", func(n int) string { return "arr" + strings.Repeat("[0]", n) }},
		{"sizeof", func(n int) string { return strings.Repeat("sizeof ", n) + "1" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			shallow := c.src(maxNesting - 10)
			if _, err := Parse(shallow); err != nil {
				t.Errorf("Parse at %d levels: %v", maxNesting-10, err)
			}
			if _, err := Eval(shallow, newScope(dwarf.LangC)); errors.Is(err, errTooDeep) {
				t.Errorf("Eval at %d levels: %v", maxNesting-10, err)
			}
			for _, n := range []int{maxNesting + 10, 10 * maxNesting} {
				if _, err := Parse(c.src(n)); !errors.Is(err, errTooDeep) {
					t.Errorf("Parse at %d levels: %v, want %v", n, err, errTooDeep)
				}
				if _, err := Eval(c.src(n), newScope(dwarf.LangC)); !errors.Is(err, errTooDeep) {
					t.Errorf("Eval at %d levels: %v, want %v", n, err, errTooDeep)
				}
			}
		})
	}
}

func TestFloatEncodings(t *testing.T) {
	ld := &dwarf.Type{Kind: dwarf.KindBase, Name: "long double", Size: 16, Encoding: dwarf.ATEFloat}
	for _, f := range []float64{0, 1, -1.5, 3.14159, 1e300, -1e-300, math.Inf(1)} {
		b, err := encodeFloat(f, ld)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeFloat(b, ld)
		if err != nil || got != f {
			t.Errorf("long double %g: round trip gives %g, %v", f, got, err)
		}
	}
	// 1.0 as x87 extended: mantissa 0x8000000000000000, exponent 0x3fff.
	one, _ := encodeFloat(1, ld)
	if binary.LittleEndian.Uint64(one) != 1<<63 || binary.LittleEndian.Uint16(one[8:]) != 0x3fff {
		t.Errorf("1.0 as long double = % x", one)
	}
	q := &dwarf.Type{Kind: dwarf.KindBase, Name: "_Float128", Size: 16, Encoding: dwarf.ATEFloat}
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b[8:], 0x3fff8000_00000000) // 1.5
	if got, _ := decodeFloat(b, q); got != 1.5 {
		t.Errorf("_Float128 1.5 decodes as %g", got)
	}
	if got := halfToFloat(0x3e00); got != 1.5 {
		t.Errorf("half 0x3e00 = %g", got)
	}
}
