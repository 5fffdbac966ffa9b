package expr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
)

// Scope is where names are looked up during evaluation.
type Scope interface {
	// Variable finds a variable visible at the current frame (locals
	// innermost first, then args, globals, Go package-qualified names
	// "main.x" or "pkg.Var").
	Variable(name string) (dwarf.Value, bool, error)
	// Type finds a named type ("int", "struct node", "node", "unsigned
	// long", "std::string", "main.T").
	Type(name string) (*dwarf.Type, bool)
	// Register returns a register of the current frame by gdb name
	// without '$' (rip, rsp, rax, eax, pc, sp, fp).
	Register(name string) (uint64, bool)
	Memory() dwarf.Memory
	Lang() dwarf.Lang
}

// Convenience is implemented by a Scope that keeps gdb's value history and
// convenience variables. Name is what follows the '$': "" for $ (the last
// value), "$" for $$ (the one before), "$2" for $$2 (two before the last),
// "1" for $1, and "_" or "foo" for convenience variables. Registers are
// looked up first. Without a Convenience, $N is an error and an unknown
// $foo is void, as in gdb. err is for a variable that exists but cannot
// be read now ($_siginfo where there is no signal); v then still has its
// type, for ptype and whatis.
type Convenience interface {
	Convenience(name string) (v dwarf.Value, ok bool, err error)
}

// noSymbolError is gdb's error for an unknown name.
type noSymbolError struct{ name string }

func (e *noSymbolError) Error() string {
	return fmt.Sprintf("No symbol \"%s\" in current context.", e.name)
}

var (
	errNotNumber   = errors.New("Argument to arithmetic operation not a number or boolean.")
	errNotInMemory = errors.New("Attempt to take address of value not located in memory.")
	errNotPointer  = errors.New("Attempt to take contents of a non-pointer value.")
	errDivZero     = errors.New("Division by zero")
	errOptimized   = errors.New("value has been optimized out")
	errInvalidCast = errors.New("Invalid cast.")
	errIntOnly     = errors.New("Integer only operation.")
	errNoCalls     = errors.New("Function calls are not supported: the recorded process cannot run code.")
)

// voidType stands for a missing type (a typedef of void, a void pointer's
// target).
var voidType = &dwarf.Type{Kind: dwarf.KindVoid, Name: "void", Size: 1}

// Eval parses and evaluates an expression. Names in parentheses are
// resolved with the Scope, so (T)*p is a cast when T is a type.
//
// The result is lazy: an lvalue (a variable, *p, s.f, a[i], {T} a, x@n)
// is returned as InMem with Addr, and is read by whoever prints it; only
// the first bytes are checked to be readable, so `print *p` with a null p
// fails with gdb's "Cannot access memory at address 0x0". Computed values
// (literals, arithmetic, casts, &x, registers, bitfields) carry Bytes.
// C++ references are dereferenced: no result has a reference type.
func Eval(src string, sc Scope) (dwarf.Value, error) {
	n, err := parseIn(src, sc)
	if err != nil {
		return dwarf.Value{}, err
	}
	return EvalNode(n, sc)
}

// parseIn parses an expression, asking sc which names are types.
func parseIn(src string, sc Scope) (Node, error) {
	p, err := newParser(src, typeOracle(sc))
	if err != nil {
		return nil, err
	}
	return p.parse()
}

// EvalNode evaluates a parsed expression, as Eval does.
func EvalNode(n Node, sc Scope) (dwarf.Value, error) {
	return evalNode(n, sc, false)
}

// evalNode is EvalNode, for a value's type only when typeOnly is set.
func evalNode(n Node, sc Scope, typeOnly bool) (dwarf.Value, error) {
	if a, ok := n.(*ambiguous); ok {
		p, err := newParser(a.src, typeOracle(sc))
		if err != nil {
			return dwarf.Value{}, err
		}
		if n, err = p.parse(); err != nil {
			return dwarf.Value{}, err
		}
	}
	e := newEvaluator(sc.Memory(), sc.Lang())
	e.sc, e.typeOnly = sc, typeOnly
	v, err := e.eval(n)
	if err != nil {
		return dwarf.Value{}, err
	}
	if v.InMem && !v.Optimized && v.Err == nil {
		if size := strip(v.Type).Size; size > 0 {
			if err := dwarf.ReadMemory(e.mem, v.Addr, make([]byte, min(size, 8))); err != nil {
				return dwarf.Value{}, err
			}
		}
	}
	return v, nil
}

// Truth says whether a value is non-zero, as a condition: integers,
// chars, bools, enums, floats and pointers compare with zero; an array or
// function in memory is true.
func Truth(v dwarf.Value, mem dwarf.Memory) (bool, error) {
	e := newEvaluator(mem, langOf(v))
	v, err := e.fromRef(v)
	if err != nil {
		return false, err
	}
	return e.truth(v)
}

// Int reads an integer, char, bool, enum or pointer value (a float is
// truncated). n holds the value sign-extended to 64 bits for a signed
// type and zero-extended for an unsigned type or a pointer, which
// unsigned reports; use uint64(n) for unsigned values.
func Int(v dwarf.Value, mem dwarf.Memory) (n int64, unsigned bool, err error) {
	e := newEvaluator(mem, langOf(v))
	if v, err = e.fromRef(v); err != nil {
		return 0, false, err
	}
	s, err := e.scalar(v)
	if err != nil {
		return 0, false, err
	}
	if s.cls == cFloat {
		return int64(s.f), false, nil
	}
	return int64(s.bits), !s.signed, nil
}

// Address reads a value used as an address, as the x command does: a
// pointer or an integer is its value, an array or a function in memory is
// where it is.
func Address(v dwarf.Value, mem dwarf.Memory) (uint64, error) {
	e := newEvaluator(mem, langOf(v))
	v, err := e.fromRef(v)
	if err != nil {
		return 0, err
	}
	return e.address(v)
}

func langOf(v dwarf.Value) dwarf.Lang {
	if v.Type != nil {
		return v.Type.Lang
	}
	return dwarf.LangC
}

// typeOracle says whether a name is a type and not a variable in sc.
func typeOracle(sc Scope) func(string) bool {
	return func(name string) bool {
		if _, ok := sc.Type(name); !ok {
			return false
		}
		_, isVar, _ := sc.Variable(name)
		return !isVar
	}
}

// ---------------------------------------------------------------- types

// strip looks through typedefs and qualifiers.
func strip(t *dwarf.Type) *dwarf.Type {
	for i := 0; t != nil && (t.Kind == dwarf.KindTypedef || t.Kind == dwarf.KindQualified) && i < 64; i++ {
		t = t.Elem
	}
	if t == nil {
		return voidType
	}
	return t
}

type class int

const (
	cVoid   class = iota
	cInt          // integers, chars, bools, enums
	cFloat        // floating point
	cPtr          // pointers
	cArray        // arrays
	cFunc         // functions
	cStruct       // structs, classes and unions
	cRef          // C++ references
	cOther        // complex numbers and what else is not understood
)

func classOf(t *dwarf.Type) class {
	t = strip(t)
	switch t.Kind {
	case dwarf.KindBase:
		switch t.Encoding {
		case dwarf.ATEFloat:
			return cFloat
		case dwarf.ATEComplexFloat:
			return cOther
		}
		return cInt
	case dwarf.KindEnum:
		return cInt
	case dwarf.KindPointer:
		return cPtr
	case dwarf.KindReference:
		return cRef
	case dwarf.KindArray:
		return cArray
	case dwarf.KindFunc:
		return cFunc
	case dwarf.KindStruct, dwarf.KindUnion:
		return cStruct
	case dwarf.KindVoid:
		return cVoid
	}
	return cOther
}

func isNumeric(c class) bool { return c == cInt || c == cFloat }

// isSigned reports whether an integer type is signed. An enum follows its
// underlying type, or is signed when an enumerator is negative.
func isSigned(t *dwarf.Type) bool {
	t = strip(t)
	switch t.Kind {
	case dwarf.KindBase:
		switch t.Encoding {
		case dwarf.ATESigned, dwarf.ATESignedChar, dwarf.ATESignedFixed, dwarf.ATEFloat:
			return true
		}
	case dwarf.KindEnum:
		if t.Elem != nil {
			return isSigned(t.Elem)
		}
		for _, en := range t.Enumerators {
			if en.Value < 0 {
				return true
			}
		}
	}
	return false
}

func isBool(t *dwarf.Type) bool {
	t = strip(t)
	return t.Kind == dwarf.KindBase && t.Encoding == dwarf.ATEBoolean
}

// typeName is how errors name a type.
func typeName(t *dwarf.Type) string {
	switch {
	case t == nil:
		return "void"
	case t.Name != "":
		return t.Name
	case t.Kind == dwarf.KindPointer:
		return pointerName(t.Elem)
	case t.Kind == dwarf.KindTypedef || t.Kind == dwarf.KindQualified:
		return typeName(t.Elem)
	}
	return "<unnamed type>"
}

// pointerName spells a pointer to t as its language does.
func pointerName(t *dwarf.Type) string {
	if t == nil {
		t = voidType
	}
	name := typeName(t)
	switch t.Lang {
	case dwarf.LangGo:
		return "*" + name
	case dwarf.LangRust:
		return "*mut " + name
	}
	switch strip(t).Kind {
	case dwarf.KindArray:
		if i := strings.Index(name, "["); i >= 0 {
			return strings.TrimRight(name[:i], " ") + " (*)" + name[i:]
		}
	case dwarf.KindFunc:
		if i := strings.Index(name, "("); i >= 0 {
			return strings.TrimRight(name[:i], " ") + " (*)" + name[i:]
		}
	}
	if strings.HasSuffix(name, "*") {
		return name + "*"
	}
	return name + " *"
}

// pointerTo makes the type of a pointer to t, named as the dwarf
// package names types ("char (*)[8]", "*main.T").
func pointerTo(t *dwarf.Type) *dwarf.Type {
	if t == nil {
		t = voidType
	}
	for d := t; d.Kind == dwarf.KindPointer || d.Kind == dwarf.KindReference || d.Kind == dwarf.KindArray; d = d.Elem {
		if d.Elem == nil {
			// dwarf.PointerTo needs every declarator to have a target.
			return &dwarf.Type{Kind: dwarf.KindPointer, Name: pointerName(t), Size: 8, Elem: t, Lang: t.Lang}
		}
	}
	return dwarf.PointerTo(t)
}

// arrayOf makes the type of an array of n elements of t.
func arrayOf(t *dwarf.Type, n int64) *dwarf.Type {
	name := typeName(t)
	switch t.Lang {
	case dwarf.LangGo:
		name = fmt.Sprintf("[%d]%s", n, name)
	case dwarf.LangRust:
		name = fmt.Sprintf("[%s; %d]", name, n)
	default:
		if i := strings.Index(name, " ["); i >= 0 && strip(t).Kind == dwarf.KindArray {
			name = fmt.Sprintf("%s [%d]%s", name[:i], n, name[i+1:])
		} else {
			name = fmt.Sprintf("%s [%d]", name, n)
		}
	}
	size := int64(-1)
	if es := strip(t).Size; es >= 0 {
		size = es * n
	}
	return &dwarf.Type{Kind: dwarf.KindArray, Name: name, Size: size, Elem: t, Count: n, Lang: t.Lang}
}

// ---------------------------------------------------------------- evaluator

type evaluator struct {
	sc   Scope
	mem  dwarf.Memory
	lang dwarf.Lang
	// types holds the base types made up for results, by name.
	types map[string]*dwarf.Type
	// untyped marks the types of Go and Rust literals, which take the
	// type of the other operand.
	untyped map[*dwarf.Type]bool
	// typeOnly is set for ptype and whatis, which need the type of a
	// value that cannot be read now ($_siginfo where there is no signal).
	typeOnly bool
}

func newEvaluator(mem dwarf.Memory, lang dwarf.Lang) *evaluator {
	return &evaluator{mem: mem, lang: lang, types: map[string]*dwarf.Type{}, untyped: map[*dwarf.Type]bool{}}
}

func (e *evaluator) goLike() bool { return e.lang == dwarf.LangGo || e.lang == dwarf.LangRust }

// base makes up a base type.
func (e *evaluator) base(name string, size int64, enc int) *dwarf.Type {
	key := fmt.Sprintf("%s/%d/%d", name, size, enc)
	if t, ok := e.types[key]; ok {
		return t
	}
	t := &dwarf.Type{Kind: dwarf.KindBase, Name: name, Size: size, Encoding: enc, Lang: e.lang}
	if name == "void" {
		t.Kind = dwarf.KindVoid
	}
	e.types[key] = t
	return t
}

// cInt is the C integer type gdb gives a result of that size and
// signedness: int, unsigned int, long, unsigned long.
func (e *evaluator) cInt(size int64, unsigned bool) *dwarf.Type {
	enc := dwarf.ATESigned
	pre := ""
	if unsigned {
		enc, pre = dwarf.ATEUnsigned, "unsigned "
	}
	switch {
	case size <= 4:
		return e.base(pre+"int", 4, enc)
	case size <= 8:
		return e.base(pre+"long", 8, enc)
	}
	return e.base(pre+"__int128", 16, enc)
}

// intN is the integer type of a size in the evaluator's language.
func (e *evaluator) intN(size int64, unsigned bool) *dwarf.Type {
	enc := dwarf.ATESigned
	if unsigned {
		enc = dwarf.ATEUnsigned
	}
	switch e.lang {
	case dwarf.LangGo:
		p := "int"
		if unsigned {
			p = "uint"
		}
		return e.base(fmt.Sprintf("%s%d", p, size*8), size, enc)
	case dwarf.LangRust:
		p := "i"
		if unsigned {
			p = "u"
		}
		return e.base(fmt.Sprintf("%s%d", p, size*8), size, enc)
	}
	if size == 1 {
		if unsigned {
			return e.base("unsigned char", 1, dwarf.ATEUnsignedChar)
		}
		return e.base("signed char", 1, dwarf.ATESignedChar)
	}
	if size == 2 {
		if unsigned {
			return e.base("unsigned short", 2, enc)
		}
		return e.base("short", 2, enc)
	}
	return e.cInt(size, unsigned)
}

// longT is the type of pointer differences and registers: C's long.
func (e *evaluator) longT() *dwarf.Type {
	switch e.lang {
	case dwarf.LangGo:
		return e.base("int", 8, dwarf.ATESigned)
	case dwarf.LangRust:
		return e.base("i64", 8, dwarf.ATESigned)
	}
	return e.cInt(8, false)
}

// sizeT is the type of sizeof: C's unsigned long.
func (e *evaluator) sizeT() *dwarf.Type {
	switch e.lang {
	case dwarf.LangGo:
		return e.base("uintptr", 8, dwarf.ATEUnsigned)
	case dwarf.LangRust:
		return e.base("usize", 8, dwarf.ATEUnsigned)
	}
	return e.cInt(8, true)
}

// intT is the language's int (len and cap in Go).
func (e *evaluator) intT() *dwarf.Type {
	switch e.lang {
	case dwarf.LangGo:
		return e.base("int", 8, dwarf.ATESigned)
	case dwarf.LangRust:
		return e.base("usize", 8, dwarf.ATEUnsigned)
	}
	return e.cInt(4, false)
}

// boolT is the type of comparisons: int in C, bool elsewhere.
func (e *evaluator) boolT() *dwarf.Type {
	if e.lang == dwarf.LangC || e.lang == dwarf.LangOther {
		return e.cInt(4, false)
	}
	return e.base("bool", 1, dwarf.ATEBoolean)
}

func (e *evaluator) floatT(size int64) *dwarf.Type {
	switch e.lang {
	case dwarf.LangGo:
		return e.base(fmt.Sprintf("float%d", size*8), size, dwarf.ATEFloat)
	case dwarf.LangRust:
		return e.base(fmt.Sprintf("f%d", size*8), size, dwarf.ATEFloat)
	}
	switch size {
	case 4:
		return e.base("float", 4, dwarf.ATEFloat)
	case 16:
		return e.base("long double", 16, dwarf.ATEFloat)
	}
	return e.base("double", 8, dwarf.ATEFloat)
}

// charT is the element type of string literals.
func (e *evaluator) charT() *dwarf.Type {
	switch e.lang {
	case dwarf.LangGo:
		return e.base("uint8", 1, dwarf.ATEUnsigned)
	case dwarf.LangRust:
		return e.base("u8", 1, dwarf.ATEUnsigned)
	}
	return e.base("char", 1, dwarf.ATESignedChar)
}

// untypedT is the type of a Go or Rust literal: it adopts the type of the
// other operand of a binary operation.
func (e *evaluator) untypedT(name string, size int64, enc int) *dwarf.Type {
	t := e.base(name, size, enc)
	e.untyped[t] = true
	return t
}

// cTypes are the C base types a cast may name when the program's debug
// information does not have them, with the spellings gcc gives them.
var cTypes = map[string]struct {
	size    int64
	enc     int
	gccName string
}{
	"char":               {1, dwarf.ATESignedChar, ""},
	"signed char":        {1, dwarf.ATESignedChar, ""},
	"unsigned char":      {1, dwarf.ATEUnsignedChar, ""},
	"short":              {2, dwarf.ATESigned, "short int"},
	"unsigned short":     {2, dwarf.ATEUnsigned, "short unsigned int"},
	"int":                {4, dwarf.ATESigned, ""},
	"unsigned int":       {4, dwarf.ATEUnsigned, ""},
	"long":               {8, dwarf.ATESigned, "long int"},
	"unsigned long":      {8, dwarf.ATEUnsigned, "long unsigned int"},
	"long long":          {8, dwarf.ATESigned, "long long int"},
	"unsigned long long": {8, dwarf.ATEUnsigned, "long long unsigned int"},
	"__int128":           {16, dwarf.ATESigned, ""},
	"unsigned __int128":  {16, dwarf.ATEUnsigned, "__int128 unsigned"},
	"float":              {4, dwarf.ATEFloat, ""},
	"double":             {8, dwarf.ATEFloat, ""},
	"long double":        {16, dwarf.ATEFloat, ""},
	"_Bool":              {1, dwarf.ATEBoolean, ""},
	"bool":               {1, dwarf.ATEBoolean, ""},
	"wchar_t":            {4, dwarf.ATESigned, ""},
	"char8_t":            {1, dwarf.ATEUnsignedChar, ""},
	"char16_t":           {2, dwarf.ATEUTF, ""},
	"char32_t":           {4, dwarf.ATEUTF, ""},
	"void":               {1, 0, ""},
}

// resolveType finds the type a TypeName names.
func (e *evaluator) resolveType(tn *TypeName) (*dwarf.Type, error) {
	t, err := e.baseType(tn)
	if err != nil {
		return nil, err
	}
	for _, op := range tn.Ops {
		switch op.Kind {
		case '*':
			t = pointerTo(t)
		case '&':
			t = &dwarf.Type{Kind: dwarf.KindReference, Name: typeName(t) + " &", Size: 8, Elem: t, Lang: t.Lang}
		case '[':
			t = arrayOf(t, op.N)
		}
	}
	return t, nil
}

func (e *evaluator) baseType(tn *TypeName) (*dwarf.Type, error) {
	if e.sc != nil {
		if t, ok := e.sc.Type(tn.Name); ok {
			return t, nil
		}
	}
	switch {
	case tn.Tag != "":
		bare := strings.TrimSpace(strings.TrimPrefix(tn.Name, tn.Tag))
		want := dwarf.KindStruct
		switch tn.Tag {
		case "union":
			want = dwarf.KindUnion
		case "enum":
			want = dwarf.KindEnum
		}
		if e.sc != nil {
			if tn.Tag == "class" {
				if t, ok := e.sc.Type("struct " + bare); ok {
					return t, nil
				}
			}
			if t, ok := e.sc.Type(bare); ok && strip(t).Kind == want {
				return t, nil
			}
		}
		tag := tn.Tag
		if tag == "class" {
			tag = "struct"
		}
		return nil, fmt.Errorf("No %s type named %s.", tag, bare)
	case tn.Builtin:
		c, ok := cTypes[tn.Name]
		if !ok {
			return nil, &noSymbolError{tn.Name}
		}
		if c.gccName != "" && e.sc != nil {
			if t, ok := e.sc.Type(c.gccName); ok {
				return t, nil
			}
		}
		if tn.Name == "void" {
			return voidType, nil
		}
		t := e.base(tn.Name, c.size, c.enc)
		return t, nil
	}
	return nil, &noSymbolError{tn.Name}
}

// ---------------------------------------------------------------- memory

// contents reads the bytes of a value.
func (e *evaluator) contents(v dwarf.Value) ([]byte, error) {
	switch {
	case v.Optimized:
		return nil, errOptimized
	case v.Err != nil:
		return nil, v.Err
	case !v.InMem:
		return v.Bytes, nil
	}
	size := strip(v.Type).Size
	if size < 0 {
		return nil, fmt.Errorf("Cannot read a value of type %s: its size is unknown.", typeName(v.Type))
	}
	buf := make([]byte, size)
	if err := dwarf.ReadMemory(e.mem, v.Addr, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// fromRef dereferences a C++ reference.
func (e *evaluator) fromRef(v dwarf.Value) (dwarf.Value, error) {
	st := strip(v.Type)
	if st.Kind != dwarf.KindReference {
		return v, nil
	}
	if v.Optimized || v.Err != nil {
		v.Type = st.Elem
		return v, nil
	}
	if v.Synthetic != nil {
		return e.pointee(v.Synthetic, st.Elem)
	}
	b, err := e.contents(v)
	if err != nil {
		return dwarf.Value{}, err
	}
	return dwarf.Value{Name: v.Name, Type: st.Elem, Addr: le(b, 8), InMem: true}, nil
}

// le reads a little-endian number of size bytes (at most 8 are used).
func le(b []byte, size int64) uint64 {
	var buf [8]byte
	copy(buf[:], b[:min(int64(len(b)), size, 8)])
	return binary.LittleEndian.Uint64(buf[:])
}

// ---------------------------------------------------------------- scalars

// scalar is a number read from a value.
type scalar struct {
	cls    class  // cInt, cFloat or cPtr
	bits   uint64 // integers and pointers, sign-extended for signed types
	f      float64
	signed bool
}

func (e *evaluator) scalar(v dwarf.Value) (scalar, error) {
	st := strip(v.Type)
	cls := classOf(st)
	if cls != cInt && cls != cFloat && cls != cPtr {
		return scalar{}, errNotNumber
	}
	b, err := e.contents(v)
	if err != nil {
		return scalar{}, err
	}
	size := st.Size
	if size <= 0 {
		size = int64(len(b))
	}
	if int64(len(b)) < size {
		b = append(append([]byte(nil), b...), make([]byte, size-int64(len(b)))...)
	}
	b = b[:size]
	if cls == cFloat {
		f, err := decodeFloat(b, st)
		return scalar{cls: cFloat, f: f, signed: true}, err
	}
	s := scalar{cls: cls, signed: cls == cInt && isSigned(st)}
	s.bits = normalize(le(b, size), size, s.signed)
	if isBool(st) && s.bits != 0 {
		s.bits = 1
	}
	return s, nil
}

// normalize truncates bits to size bytes and sign- or zero-extends them.
func normalize(bits uint64, size int64, signed bool) uint64 {
	if size <= 0 || size >= 8 {
		return bits
	}
	shift := 64 - 8*uint(size)
	if signed {
		return uint64(int64(bits<<shift) >> shift)
	}
	return bits << shift >> shift
}

// toBits converts a scalar to integer type t.
func toBits(s scalar, t *dwarf.Type) uint64 {
	st := strip(t)
	signed := classOf(st) == cInt && isSigned(st)
	bits := s.bits
	if s.cls == cFloat {
		if s.f < 0 || signed {
			bits = uint64(int64(s.f))
		} else {
			bits = uint64(s.f)
		}
	}
	if isBool(st) {
		if bits != 0 || s.cls == cFloat && s.f != 0 {
			return 1
		}
		return 0
	}
	return normalize(bits, st.Size, signed)
}

func toFloat(s scalar) float64 {
	switch {
	case s.cls == cFloat:
		return s.f
	case s.signed:
		return float64(int64(s.bits))
	}
	return float64(s.bits)
}

// mkInt makes a value of integer or pointer type t.
func mkInt(t *dwarf.Type, bits uint64) dwarf.Value {
	size := strip(t).Size
	if size <= 0 {
		size = 8
	}
	b := make([]byte, size)
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], bits)
	copy(b, buf[:])
	if size > 8 && int64(bits) < 0 && isSigned(t) {
		for i := 8; i < int(size); i++ {
			b[i] = 0xff
		}
	}
	return dwarf.Value{Type: t, Bytes: b}
}

// mkFloat makes a value of floating-point type t.
func mkFloat(t *dwarf.Type, f float64) (dwarf.Value, error) {
	st := strip(t)
	b, err := encodeFloat(f, st)
	if err != nil {
		return dwarf.Value{}, err
	}
	return dwarf.Value{Type: t, Bytes: b}, nil
}

func isQuad(t *dwarf.Type) bool {
	return strings.Contains(t.Name, "128") // _Float128, __float128, f128
}

func decodeFloat(b []byte, t *dwarf.Type) (float64, error) {
	switch len(b) {
	case 2:
		return halfToFloat(binary.LittleEndian.Uint16(b)), nil
	case 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), nil
	case 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	case 10, 12, 16:
		if len(b) == 16 && isQuad(t) {
			lo, hi := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
			sign := hi >> 63
			exp := int((hi >> 48) & 0x7fff)
			mant := hi<<16 | lo>>48 // the top 64 of the 112 fraction bits
			return finishExtended(sign, exp, mant, false), nil
		}
		mant := binary.LittleEndian.Uint64(b)
		se := binary.LittleEndian.Uint16(b[8:])
		return finishExtended(uint64(se>>15), int(se&0x7fff), mant, true), nil
	}
	return 0, fmt.Errorf("floating-point values of %d bytes are not supported", len(b))
}

// finishExtended builds a float64 from a 15-bit exponent and a 64-bit
// mantissa, with (x87) or without (IEEE quad) an explicit integer bit.
func finishExtended(sign uint64, exp int, mant uint64, explicit bool) float64 {
	var f float64
	switch {
	case exp == 0x7fff:
		if explicit && mant<<1 == 0 || !explicit && mant == 0 {
			f = math.Inf(1)
		} else {
			f = math.NaN()
		}
	case exp == 0 && mant == 0:
		f = 0
	case explicit:
		f = math.Ldexp(float64(mant), exp-16383-63)
	default:
		e := exp
		if e == 0 {
			e = 1 // subnormal
			f = math.Ldexp(float64(mant), e-16383-64)
		} else {
			f = math.Ldexp(1+math.Ldexp(float64(mant), -64), e-16383)
		}
	}
	if sign != 0 {
		f = -f
	}
	return f
}

func encodeFloat(f float64, t *dwarf.Type) ([]byte, error) {
	switch t.Size {
	case 4:
		b := make([]byte, 4)
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(f)))
		return b, nil
	case 8:
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, math.Float64bits(f))
		return b, nil
	case 10, 12, 16:
		if !isQuad(t) {
			b := make([]byte, t.Size)
			var se uint16
			var mant uint64
			if math.Signbit(f) {
				se = 0x8000
				f = -f
			}
			switch {
			case math.IsNaN(f):
				se |= 0x7fff
				mant = 0xc000000000000000
			case math.IsInf(f, 0):
				se |= 0x7fff
				mant = 1 << 63
			case f != 0:
				frac, exp := math.Frexp(f) // f = frac * 2^exp, frac in [0.5, 1)
				mant = uint64(math.Ldexp(frac, 64))
				se |= uint16(exp - 1 + 16383)
			}
			binary.LittleEndian.PutUint64(b, mant)
			binary.LittleEndian.PutUint16(b[8:], se)
			return b, nil
		}
	}
	return nil, fmt.Errorf("floating-point values of %d bytes are not supported", t.Size)
}

func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

func (e *evaluator) boolVal(b bool) dwarf.Value {
	if b {
		return mkInt(e.boolT(), 1)
	}
	return mkInt(e.boolT(), 0)
}

// ---------------------------------------------------------------- evaluation

func (e *evaluator) eval(n Node) (dwarf.Value, error) {
	switch n := n.(type) {
	case *ambiguous:
		return e.eval(n.Node)
	case *valueNode:
		return n.v, nil
	case *Ident:
		return e.ident(n.Name)
	case *Dollar:
		return e.dollar(n.Name)
	case *IntLit:
		return e.intLit(n), nil
	case *FloatLit:
		return e.floatLit(n)
	case *CharLit:
		return e.charLit(n), nil
	case *StringLit:
		elem := e.charT()
		b := []byte(n.Value)
		if !e.goLike() {
			b = append(b, 0)
		}
		return dwarf.Value{Type: arrayOf(elem, int64(len(b))), Bytes: b}, nil
	case *Unary:
		return e.unary(n)
	case *Binary:
		return e.binary(n)
	case *Cond:
		c, err := e.eval(n.Cond)
		if err != nil {
			return dwarf.Value{}, err
		}
		t, err := e.truth(c)
		if err != nil {
			return dwarf.Value{}, err
		}
		if t {
			return e.eval(n.Then)
		}
		return e.eval(n.Else)
	case *Member:
		return e.evalMember(n)
	case *Index:
		x, err := e.eval(n.X)
		if err != nil {
			return dwarf.Value{}, err
		}
		i, err := e.eval(n.Index)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.index(x, i)
	case *Call:
		return e.call(n)
	case *Cast:
		t, err := e.resolveType(n.Type)
		if err != nil {
			return dwarf.Value{}, err
		}
		x, err := e.eval(n.X)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.cast(x, t)
	case *Sizeof:
		return e.sizeof(n)
	case *TypeAt:
		t, err := e.resolveType(n.Type)
		if err != nil {
			return dwarf.Value{}, err
		}
		a, err := e.eval(n.Addr)
		if err != nil {
			return dwarf.Value{}, err
		}
		addr, err := e.address(a)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.fromRef(dwarf.Value{Type: t, Addr: addr, InMem: true})
	}
	return dwarf.Value{}, fmt.Errorf("cannot evaluate %T", n)
}

func (e *evaluator) variable(name string) (dwarf.Value, bool, error) {
	v, ok, err := e.sc.Variable(name)
	if err != nil {
		return dwarf.Value{}, false, fmt.Errorf("%s: %w", name, err)
	}
	if !ok {
		return dwarf.Value{}, false, nil
	}
	v, err = e.fromRef(v)
	return v, err == nil, err
}

func (e *evaluator) ident(name string) (dwarf.Value, error) {
	if v, ok, err := e.variable(name); ok || err != nil {
		return v, err
	}
	// In a C++ method, a member of *this.
	if e.lang == dwarf.LangCPlusPlus && name != "this" {
		if this, ok, err := e.sc.Variable("this"); err == nil && ok {
			if v, err := e.member(this, name, true); err == nil {
				return v, nil
			}
		}
	}
	switch name {
	case "true", "false":
		return e.boolVal(name == "true"), nil
	case "nullptr", "nil", "NULL":
		return mkInt(pointerTo(voidType), 0), nil
	}
	if _, ok := e.sc.Type(name); ok {
		return dwarf.Value{}, errors.New("Attempt to use a type name as an expression")
	}
	return dwarf.Value{}, &noSymbolError{name}
}

// dottedName spells a chain of `.` member accesses on a name as one name
// ("main.x", "pkg.Var", "a.b.c"); ok is false for other nodes.
func dottedName(n Node) (string, bool) {
	switch n := n.(type) {
	case *Ident:
		return n.Name, true
	case *Member:
		if n.Arrow || n.Name == "" || !isIdentStart(n.Name[0]) {
			return "", false
		}
		if x, ok := dottedName(n.X); ok {
			return x + "." + n.Name, true
		}
	}
	return "", false
}

func (e *evaluator) evalMember(n *Member) (dwarf.Value, error) {
	dotted, isName := dottedName(n)
	if isName {
		if v, ok, err := e.variable(dotted); ok || err != nil {
			return v, err
		}
	}
	x, err := e.eval(n.X)
	if err != nil {
		var ns *noSymbolError
		if isName && errors.As(err, &ns) {
			return dwarf.Value{}, &noSymbolError{dotted}
		}
		return dwarf.Value{}, err
	}
	return e.member(x, n.Name, n.Arrow)
}

// registerTypes are the registers whose values are pointers, as in gdb.
func (e *evaluator) registerType(name string) *dwarf.Type {
	switch name {
	case "pc", "rip":
		lang := e.lang
		if lang == dwarf.LangGo {
			// gdb prints Go's $pc as C's code pointer; Go's
			// formatter would follow it into the code.
			lang = dwarf.LangC
		}
		fn := &dwarf.Type{Kind: dwarf.KindFunc, Name: "void ()", Size: 1, Lang: lang}
		return &dwarf.Type{Kind: dwarf.KindPointer, Name: "void (*)()", Size: 8, Elem: fn, Lang: lang}
	case "sp", "rsp", "fp", "rbp":
		return pointerTo(voidType)
	}
	return e.longT()
}

// subRegister is a part of a 64-bit register: size bytes from bit shift.
type subRegister struct {
	full  string
	shift uint
	size  int64
}

// subRegisters are the parts of the 64-bit registers gdb names.
var subRegisters = func() map[string]subRegister {
	m := map[string]subRegister{}
	for _, r := range []string{"a", "b", "c", "d"} {
		full := "r" + r + "x"
		m["e"+r+"x"] = subRegister{full, 0, 4}
		m[r+"x"] = subRegister{full, 0, 2}
		m[r+"l"] = subRegister{full, 0, 1}
		m[r+"h"] = subRegister{full, 8, 1}
	}
	for _, r := range []string{"si", "di", "bp", "sp"} {
		full := "r" + r
		m["e"+r] = subRegister{full, 0, 4}
		m[r] = subRegister{full, 0, 2}
		m[r+"l"] = subRegister{full, 0, 1}
	}
	delete(m, "sp") // $sp is the stack pointer, not the low half of rsp
	for i := 8; i <= 15; i++ {
		full := "r" + strconv.Itoa(i)
		m[full+"d"] = subRegister{full, 0, 4}
		m[full+"w"] = subRegister{full, 0, 2}
		m[full+"l"] = subRegister{full, 0, 1}
	}
	return m
}()

// registerAliases are gdb's generic register names.
var registerAliases = map[string]string{"pc": "rip", "sp": "rsp", "fp": "rbp"}

// isHistoryName reports whether $name is a value of the history: $, $$,
// $N, $$N.
func isHistoryName(name string) bool {
	s := strings.TrimPrefix(name, "$")
	if s == "" {
		return true
	}
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

func (e *evaluator) dollar(name string) (dwarf.Value, error) {
	if !isHistoryName(name) {
		if r, ok := e.sc.Register(name); ok {
			return mkInt(e.registerType(name), r), nil
		}
		if alias, ok := registerAliases[name]; ok {
			if r, ok := e.sc.Register(alias); ok {
				return mkInt(e.registerType(name), r), nil
			}
		}
		if sub, ok := subRegisters[name]; ok {
			if r, ok := e.sc.Register(sub.full); ok {
				return mkInt(e.intN(sub.size, false), normalize(r>>sub.shift, sub.size, true)), nil
			}
		}
	}
	if c, ok := e.sc.(Convenience); ok {
		if v, ok, err := c.Convenience(name); err != nil {
			if !e.typeOnly || !ok || v.Type == nil {
				return dwarf.Value{}, err
			}
			return v, nil
		} else if ok {
			return e.fromRef(v)
		}
	}
	if isHistoryName(name) {
		if name == "" || name == "$" {
			return dwarf.Value{}, errors.New("History is empty.")
		}
		return dwarf.Value{}, fmt.Errorf("History has not yet reached $%s.", name)
	}
	return dwarf.Value{Name: "$" + name, Type: voidType}, nil // gdb: an unset convenience variable is void
}

func (e *evaluator) intLit(n *IntLit) dwarf.Value {
	v := n.Value
	if e.lang == dwarf.LangRust && (strings.HasPrefix(n.Suffix, "i") || strings.HasPrefix(n.Suffix, "u")) {
		// 5u8, 1usize: a literal of that type.
		if t, ok := e.sc.Type(n.Suffix); ok {
			return mkInt(t, v)
		}
		size := int64(8)
		if bits, err := strconv.Atoi(n.Suffix[1:]); err == nil {
			size = int64(bits / 8)
		}
		enc := dwarf.ATEUnsigned
		if n.Suffix[0] == 'i' {
			enc = dwarf.ATESigned
		}
		return mkInt(e.base(n.Suffix, size, enc), v)
	}
	switch e.lang {
	case dwarf.LangGo:
		return mkInt(e.untypedT("int", 8, dwarf.ATESigned), v)
	case dwarf.LangRust:
		if v <= math.MaxInt32 {
			return mkInt(e.untypedT("i32", 4, dwarf.ATESigned), v)
		}
		return mkInt(e.untypedT("i64", 8, dwarf.ATESigned), v)
	}
	u := strings.Contains(n.Suffix, "u")
	longs := strings.Count(n.Suffix, "l")
	long := func(unsigned bool) *dwarf.Type {
		if longs == 2 {
			if unsigned {
				return e.base("unsigned long long", 8, dwarf.ATEUnsigned)
			}
			return e.base("long long", 8, dwarf.ATESigned)
		}
		return e.cInt(8, unsigned)
	}
	switch {
	case longs == 0 && !u && v <= math.MaxInt32:
		return mkInt(e.cInt(4, false), v)
	case longs == 0 && (u || n.Base != 10) && v <= math.MaxUint32:
		return mkInt(e.cInt(4, true), v)
	case !u && v <= math.MaxInt64:
		return mkInt(long(false), v)
	}
	return mkInt(long(true), v)
}

func (e *evaluator) floatLit(n *FloatLit) (dwarf.Value, error) {
	var t *dwarf.Type
	switch {
	case n.Suffix == "f32" || n.Suffix == "f":
		t = e.floatT(4)
	case n.Suffix == "f64":
		t = e.floatT(8)
	case n.Suffix == "l":
		t = e.floatT(16)
	case e.goLike():
		name := "float64"
		if e.lang == dwarf.LangRust {
			name = "f64"
		}
		t = e.untypedT(name, 8, dwarf.ATEFloat)
	default:
		t = e.floatT(8)
	}
	return mkFloat(t, n.Value)
}

func (e *evaluator) charLit(n *CharLit) dwarf.Value {
	r := n.Value
	switch e.lang {
	case dwarf.LangGo:
		return mkInt(e.untypedT("int32", 4, dwarf.ATESigned), uint64(r))
	case dwarf.LangRust:
		return mkInt(e.base("char", 4, dwarf.ATEUTF), uint64(r))
	}
	if r > 0xff {
		return mkInt(e.cInt(4, false), uint64(r))
	}
	return mkInt(e.base("char", 1, dwarf.ATESignedChar), normalize(uint64(r), 1, true))
}

// ---------------------------------------------------------------- operators

func (e *evaluator) unary(n *Unary) (dwarf.Value, error) {
	x, err := e.eval(n.X)
	if err != nil {
		return dwarf.Value{}, err
	}
	switch n.Op {
	case "*":
		return e.deref(x)
	case "&":
		return e.addressOf(x)
	case "!":
		t, err := e.truth(x)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.boolVal(!t), nil
	}
	if !isNumeric(classOf(x.Type)) {
		return dwarf.Value{}, errNotNumber
	}
	s, err := e.scalar(x)
	if err != nil {
		return dwarf.Value{}, err
	}
	t := e.promote(x.Type)
	if s.cls == cFloat {
		switch n.Op {
		case "-":
			return mkFloat(t, -s.f)
		case "+":
			return mkFloat(t, s.f)
		}
		return dwarf.Value{}, errors.New("Argument to complement operation not an integer, boolean.")
	}
	bits := toBits(s, t)
	switch n.Op {
	case "-":
		bits = -bits
	case "~":
		bits = ^bits
	}
	return mkInt(t, toBits(scalar{cls: cInt, bits: bits, signed: isSigned(t)}, t)), nil
}

// promote applies C's integer promotions: types narrower than int (and
// bools and enums) become int. Go and Rust do not promote.
func (e *evaluator) promote(t *dwarf.Type) *dwarf.Type {
	st := strip(t)
	if classOf(st) == cFloat || e.goLike() {
		return t
	}
	size, unsigned := st.Size, !isSigned(st)
	if isBool(st) || size < 4 {
		return e.cInt(4, false)
	}
	return e.cInt(size, unsigned)
}

// arithType is the type of a binary arithmetic operation, following
// gdb's binop_promote for C: the wider float; else both promoted, the
// wider integer, unsigned when the widths tie and one is unsigned. Go and
// Rust keep the operand types, a literal adopting the other's.
func (e *evaluator) arithType(a, b *dwarf.Type) *dwarf.Type {
	sa, sb := strip(a), strip(b)
	fa, fb := classOf(sa) == cFloat, classOf(sb) == cFloat
	if e.goLike() {
		switch {
		case e.untyped[a] && !e.untyped[b] && !(fa && !fb):
			return b
		case e.untyped[b] && !e.untyped[a] && !(fb && !fa):
			return a
		case fa != fb:
			if fa {
				return a
			}
			return b
		case sb.Size > sa.Size:
			return b
		}
		return a
	}
	if fa || fb {
		switch {
		case !fa:
			return b
		case !fb:
			return a
		case sb.Size > sa.Size:
			return b
		}
		return a
	}
	la, ua := sa.Size, !isSigned(sa)
	lb, ub := sb.Size, !isSigned(sb)
	if la < 4 || isBool(sa) {
		la, ua = 4, false
	}
	if lb < 4 || isBool(sb) {
		lb, ub = 4, false
	}
	switch {
	case la > lb:
		return e.cInt(la, ua)
	case lb > la:
		return e.cInt(lb, ub)
	}
	return e.cInt(la, ua || ub)
}

func (e *evaluator) binary(n *Binary) (dwarf.Value, error) {
	switch n.Op {
	case "&&", "||":
		x, err := e.eval(n.X)
		if err != nil {
			return dwarf.Value{}, err
		}
		tx, err := e.truth(x)
		if err != nil {
			return dwarf.Value{}, err
		}
		if tx == (n.Op == "||") {
			return e.boolVal(tx), nil
		}
		y, err := e.eval(n.Y)
		if err != nil {
			return dwarf.Value{}, err
		}
		ty, err := e.truth(y)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.boolVal(ty), nil
	case ",":
		if _, err := e.eval(n.X); err != nil {
			return dwarf.Value{}, err
		}
		return e.eval(n.Y)
	}
	x, err := e.eval(n.X)
	if err != nil {
		return dwarf.Value{}, err
	}
	y, err := e.eval(n.Y)
	if err != nil {
		return dwarf.Value{}, err
	}
	if n.Op == "@" {
		return e.repeat(x, y)
	}
	return e.binop(n.Op, x, y)
}

func isComparison(op string) bool {
	switch op {
	case "==", "!=", "<", ">", "<=", ">=":
		return true
	}
	return false
}

func compare[T int64 | uint64 | float64](op string, a, b T) bool {
	switch op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case ">":
		return a > b
	case "<=":
		return a <= b
	}
	return a >= b
}

func (e *evaluator) binop(op string, x, y dwarf.Value) (dwarf.Value, error) {
	if op == "==" || op == "!=" {
		if ok, eq, err := e.stringCompare(x, y); err != nil || ok {
			if err != nil {
				return dwarf.Value{}, err
			}
			return e.boolVal(eq == (op == "==")), nil
		}
	}
	if isStringLit(x) || isStringLit(y) {
		return dwarf.Value{}, errors.New("A string literal can only be compared (== or !=) with a char array, a char pointer or a string.")
	}
	cx, cy := classOf(x.Type), classOf(y.Type)
	if cx == cStruct && cy == cStruct && (op == "==" || op == "!=") {
		// Go strings and Rust &str compare by contents.
		if a, ok, err := e.structString(x); err != nil || ok {
			if err != nil {
				return dwarf.Value{}, err
			}
			b, ok, err := e.structString(y)
			if err != nil {
				return dwarf.Value{}, err
			}
			if ok {
				return e.boolVal((a == b) == (op == "==")), nil
			}
		}
	}
	if (cx == cStruct || cx == cArray) && cx == cy && (op == "==" || op == "!=") &&
		strip(x.Type).Size == strip(y.Type).Size && (!x.InMem || !y.InMem || cx == cStruct) {
		// gdb compares aggregates of the same size byte by byte.
		bx, err := e.contents(x)
		if err != nil {
			return dwarf.Value{}, err
		}
		by, err := e.contents(y)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.boolVal((string(bx) == string(by)) == (op == "==")), nil
	}
	var err error
	if cx == cArray || cx == cFunc {
		if x, err = e.decay(x); err != nil {
			return dwarf.Value{}, err
		}
		cx = cPtr
	}
	if cy == cArray || cy == cFunc {
		if y, err = e.decay(y); err != nil {
			return dwarf.Value{}, err
		}
		cy = cPtr
	}
	if cx == cPtr || cy == cPtr {
		return e.pointerOp(op, x, y, cx, cy)
	}
	if !isNumeric(cx) || !isNumeric(cy) {
		switch op {
		case "==", "!=":
			return dwarf.Value{}, errors.New("Invalid type combination in equality test.")
		case "<", ">", "<=", ">=":
			return dwarf.Value{}, errors.New("Invalid type combination in ordering comparison.")
		}
		return dwarf.Value{}, errNotNumber
	}
	sx, err := e.scalar(x)
	if err != nil {
		return dwarf.Value{}, err
	}
	sy, err := e.scalar(y)
	if err != nil {
		return dwarf.Value{}, err
	}
	if op == "<<" || op == ">>" {
		if sx.cls == cFloat || sy.cls == cFloat {
			return dwarf.Value{}, errIntOnly
		}
		t := e.promote(x.Type)
		a := toBits(sx, t)
		n := int64(sy.bits)
		if !sy.signed && sy.bits > math.MaxInt64 {
			n = math.MaxInt64
		}
		width := strip(t).Size * 8
		var r uint64
		switch {
		case n < 0 || n >= width:
			if op == ">>" && isSigned(t) && int64(a) < 0 {
				r = ^uint64(0)
			}
		case op == "<<":
			r = a << uint(n)
		case isSigned(t):
			r = uint64(int64(a) >> uint(n))
		default:
			r = a >> uint(n)
		}
		return mkInt(t, normalize(r, strip(t).Size, isSigned(t))), nil
	}
	t := e.arithType(x.Type, y.Type)
	if classOf(t) == cFloat {
		a, b := toFloat(sx), toFloat(sy)
		if isComparison(op) {
			return e.boolVal(compare(op, a, b)), nil
		}
		var r float64
		switch op {
		case "+":
			r = a + b
		case "-":
			r = a - b
		case "*":
			r = a * b
		case "/":
			r = a / b
		default:
			return dwarf.Value{}, errIntOnly
		}
		return mkFloat(t, r)
	}
	signed := isSigned(t)
	a, b := toBits(sx, t), toBits(sy, t)
	if isComparison(op) {
		if signed {
			return e.boolVal(compare(op, int64(a), int64(b))), nil
		}
		return e.boolVal(compare(op, a, b)), nil
	}
	var r uint64
	switch op {
	case "+":
		r = a + b
	case "-":
		r = a - b
	case "*":
		r = a * b
	case "/", "%":
		if b == 0 {
			return dwarf.Value{}, errDivZero
		}
		switch {
		case signed && op == "/":
			r = uint64(int64(a) / int64(b))
		case signed:
			r = uint64(int64(a) % int64(b))
		case op == "/":
			r = a / b
		default:
			r = a % b
		}
	case "&":
		r = a & b
	case "|":
		r = a | b
	case "^":
		r = a ^ b
	default:
		return dwarf.Value{}, fmt.Errorf("unknown operator %s", op)
	}
	return mkInt(t, toBits(scalar{cls: cInt, bits: r, signed: signed}, t)), nil
}

// pointerOp is arithmetic and comparison with a pointer operand.
func (e *evaluator) pointerOp(op string, x, y dwarf.Value, cx, cy class) (dwarf.Value, error) {
	sx, err := e.scalar(x)
	if err != nil {
		return dwarf.Value{}, err
	}
	sy, err := e.scalar(y)
	if err != nil {
		return dwarf.Value{}, err
	}
	if isComparison(op) {
		if sx.cls == cFloat || sy.cls == cFloat {
			return dwarf.Value{}, errNotNumber
		}
		return e.boolVal(compare(op, sx.bits, sy.bits)), nil
	}
	switch {
	case op == "+" && cx == cPtr && cy == cInt:
		return e.pointerAdd(x, sx.bits, int64(sy.bits))
	case op == "+" && cy == cPtr && cx == cInt:
		return e.pointerAdd(y, sy.bits, int64(sx.bits))
	case op == "-" && cx == cPtr && cy == cInt:
		return e.pointerAdd(x, sx.bits, -int64(sy.bits))
	case op == "-" && cx == cPtr && cy == cPtr:
		ex, err := e.elemSize(strip(x.Type))
		if err != nil {
			return dwarf.Value{}, err
		}
		ey, err := e.elemSize(strip(y.Type))
		if err != nil {
			return dwarf.Value{}, err
		}
		if ex != ey {
			return dwarf.Value{}, errors.New("First argument of `-' is a pointer and second argument is neither\nan integer nor a pointer of the same type.")
		}
		return mkInt(e.longT(), uint64((int64(sx.bits)-int64(sy.bits))/ex)), nil
	}
	return dwarf.Value{}, errNotNumber
}

// elemSize is the size pointer arithmetic scales by: that of the target,
// 1 for void and functions (as gdb does).
func (e *evaluator) elemSize(ptr *dwarf.Type) (int64, error) {
	elem := strip(ptr.Elem)
	switch {
	case elem.Kind == dwarf.KindVoid || elem.Kind == dwarf.KindFunc:
		return 1, nil
	case elem.Size <= 0:
		return 0, fmt.Errorf("Cannot perform pointer math on incomplete type \"%s\", try casting to a known type, or void *.", typeName(ptr.Elem))
	}
	return elem.Size, nil
}

func (e *evaluator) pointerAdd(p dwarf.Value, addr uint64, n int64) (dwarf.Value, error) {
	size, err := e.elemSize(strip(p.Type))
	if err != nil {
		return dwarf.Value{}, err
	}
	v := mkInt(p.Type, addr+uint64(n*size))
	if p.Synthetic != nil {
		v.Synthetic = p.Synthetic.Add(n * size)
	}
	return v, nil
}

// decay turns an array or function in memory into a pointer to its first
// element or its code.
func (e *evaluator) decay(v dwarf.Value) (dwarf.Value, error) {
	if v.Optimized {
		return dwarf.Value{}, errOptimized
	}
	if !v.InMem {
		return dwarf.Value{}, errNotInMemory
	}
	st := strip(v.Type)
	if st.Kind == dwarf.KindArray {
		return mkInt(pointerTo(st.Elem), v.Addr), nil
	}
	return mkInt(pointerTo(v.Type), v.Addr), nil
}

func (e *evaluator) truth(v dwarf.Value) (bool, error) {
	switch classOf(v.Type) {
	case cArray, cFunc:
		if v.Optimized {
			return false, errOptimized
		}
		if !v.InMem {
			return false, errNotInMemory
		}
		return v.Addr != 0, nil
	case cInt, cPtr, cFloat:
		s, err := e.scalar(v)
		if err != nil {
			return false, err
		}
		if s.cls == cFloat {
			return s.f != 0, nil
		}
		return s.bits != 0, nil
	}
	return false, errNotNumber
}

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

func (*valueNode) node()            {}
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

// stringCompare compares a string literal with a char array, a char
// pointer, a Go string or a Rust &str by contents (C strings up to their
// NUL). ok is false when neither operand is a literal (a char array not
// in memory), or the other is no string.
func (e *evaluator) stringCompare(x, y dwarf.Value) (ok, eq bool, err error) {
	if !isStringLit(x) {
		x, y = y, x
	}
	if !isStringLit(x) {
		return false, false, nil
	}
	want := cString(x.Bytes)
	got, isStr, err := e.stringOf(y, len(want))
	if err != nil || !isStr {
		return isStr, false, err
	}
	return true, got == want, nil
}

// isStringLit reports whether v is a string literal: a char array not in
// memory.
func isStringLit(v dwarf.Value) bool {
	st := strip(v.Type)
	return st.Kind == dwarf.KindArray && !v.InMem && !v.Optimized && isCharType(st.Elem)
}

func isCharType(t *dwarf.Type) bool {
	st := strip(t)
	return st.Kind == dwarf.KindBase && st.Size == 1 && st.Encoding != dwarf.ATEBoolean
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// stringOf reads the string a value holds, for comparing with a literal
// of n bytes (a C string is read up to n+1 bytes).
func (e *evaluator) stringOf(v dwarf.Value, n int) (string, bool, error) {
	st := strip(v.Type)
	switch {
	case st.Kind == dwarf.KindArray && isCharType(st.Elem):
		b, err := e.contents(v)
		return cString(b), true, err
	case st.Kind == dwarf.KindPointer && isCharType(st.Elem):
		p, err := e.pointerValue(v)
		if err != nil {
			return "", true, err
		}
		b := make([]byte, n+1)
		if err := dwarf.ReadMemory(e.mem, p, b); err != nil {
			// Near the end of a mapping: read byte by byte up to the NUL.
			b = b[:0]
			for i := 0; i <= n; i++ {
				var c [1]byte
				if err := dwarf.ReadMemory(e.mem, p+uint64(i), c[:]); err != nil {
					return "", true, err
				}
				if b = append(b, c[0]); c[0] == 0 {
					break
				}
			}
		}
		return cString(b), true, nil
	case st.Kind == dwarf.KindStruct:
		c, ok, err := e.container(v)
		if err != nil || !ok || c.Array != nil || !isCharType(c.Elem) {
			return "", false, err
		}
		if c.Len != int64(n) {
			return "\x00", true, nil // unequal: the literal holds no NUL
		}
		return e.structString(v)
	}
	return "", false, nil
}

// structString reads a Go string or a Rust &str (a struct of a pointer to
// bytes and a length); ok is false for other values.
func (e *evaluator) structString(v dwarf.Value) (string, bool, error) {
	c, ok, err := e.container(v)
	if err != nil || !ok || c.Array != nil || !isCharType(c.Elem) {
		return "", false, err
	}
	if c.Len < 0 || c.Len > 1<<24 {
		return "", true, fmt.Errorf("string length %d is out of range", c.Len)
	}
	b := make([]byte, c.Len)
	if err := dwarf.ReadMemory(e.mem, c.Data, b); err != nil {
		return "", true, err
	}
	return string(b), true, nil
}

// TypeOf returns the type src names or, when src is an expression, the
// type of its value: gdb's whatis and ptype take either. isType reports a
// type name: anything written as a type ("struct node", "int *",
// "char[4]"), or a lone name that is a type and no variable in scope.
func TypeOf(src string, sc Scope) (t *dwarf.Type, isType bool, err error) {
	p, err := newParser(src, typeOracle(sc))
	if err != nil {
		return nil, false, err
	}
	if tn, ok := p.tryTypeName(true); ok && p.peek().kind == tokEOF && (!tn.simple() || p.isType(tn.Name)) {
		e := newEvaluator(sc.Memory(), sc.Lang())
		e.sc = sc
		t, err := e.resolveType(tn)
		return t, true, err
	}
	n, err := parseIn(src, sc)
	if err != nil {
		return nil, false, err
	}
	v, err := evalNode(n, sc, true)
	if err != nil {
		return nil, false, err
	}
	return v.Type, false, nil
}
