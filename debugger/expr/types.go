package expr

// The types the evaluator computes with: the language's base types
// (C's int and long, Go's int, Rust's i32) found in the program or
// made up, classified for arithmetic and named in errors as gdb names
// them.

import (
	"fmt"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
)

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

// IsPointer says whether t is a pointer type, through typedefs and
// qualifiers (volatile long *).
func IsPointer(t *dwarf.Type) bool { return classOf(t) == cPtr }

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
	if t := e.goOrRust("long"); t != nil {
		return t
	}
	return e.cInt(8, false)
}

// sizeT is the type of sizeof: C's unsigned long.
func (e *evaluator) sizeT() *dwarf.Type {
	if t := e.goOrRust("size"); t != nil {
		return t
	}
	return e.cInt(8, true)
}

// intT is the language's int (len and cap in Go).
func (e *evaluator) intT() *dwarf.Type {
	if t := e.goOrRust("int"); t != nil {
		return t
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
	if t := e.goOrRust("char"); t != nil {
		return t
	}
	return e.base("char", 1, dwarf.ATESignedChar)
}

// spelling is a base type as one language names it.
type spelling struct {
	name string
	size int64
	enc  int
}

// goRustTypes are the Go and Rust spellings of the types the evaluator
// gives results, by their role (named after C's type in that role).
var goRustTypes = map[string][2]spelling{
	"long": {{"int", 8, dwarf.ATESigned}, {"i64", 8, dwarf.ATESigned}},
	"size": {{"uintptr", 8, dwarf.ATEUnsigned}, {"usize", 8, dwarf.ATEUnsigned}},
	"int":  {{"int", 8, dwarf.ATESigned}, {"usize", 8, dwarf.ATEUnsigned}},
	"char": {{"uint8", 1, dwarf.ATEUnsigned}, {"u8", 1, dwarf.ATEUnsigned}},
}

// goOrRust is the type of a role in Go or Rust; nil in other languages,
// whose callers spell it as C does.
func (e *evaluator) goOrRust(role string) *dwarf.Type {
	i := 0
	switch e.lang {
	case dwarf.LangGo:
	case dwarf.LangRust:
		i = 1
	default:
		return nil
	}
	s := goRustTypes[role][i]
	return e.base(s.name, s.size, s.enc)
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
