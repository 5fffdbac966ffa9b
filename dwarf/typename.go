package dwarf

// Type names of derived C and C++ types are built the way C declares them:
// "int (*)(int, int)" is a pointer to a function, "int *[8]" an array of
// pointers.

import (
	"debug/dwarf"
	"strconv"
	"strings"
)

func qualName(tag dwarf.Tag, el *Type) string {
	q := "const"
	switch tag {
	case dwarf.TagVolatileType:
		q = "volatile"
	case dwarf.TagRestrictType:
		q = "restrict"
	case dwarf.TagAtomicType:
		q = "_Atomic"
	}
	if el.Kind == KindPointer || el.Kind == KindReference {
		if el.Lang == LangC || el.Lang == LangCPlusPlus {
			return el.Name + " " + q
		}
	}
	return q + " " + el.Name
}

// declName names t as the type of a declarator inner ("" for an abstract
// one). sym is the pointer symbol of t itself when t is a pointer or
// reference ("*", "&", "&&"), given while t is being read and has no name.
func declName(t *Type, inner, sym string) string {
	return cDecl(t, inner, sym, func(b *Type) string { return b.Name })
}

// cDecl writes a C declaration of inner with type t, as declName; base
// writes the type at the bottom of the declarator (ptype expands a struct
// there). Arrays, functions and qualified pointers are C and C++ syntax;
// in other languages t is named as it is.
func cDecl(t *Type, inner, sym string, base func(*Type) string) string {
	cLike := t.Lang == LangC || t.Lang == LangCPlusPlus
	switch t.Kind {
	case KindPointer, KindReference:
		if sym == "" {
			sym = "*"
			if t.Kind == KindReference {
				sym = "&"
				if strings.HasSuffix(t.Name, "&&") {
					sym = "&&"
				}
			}
		}
		d := sym + inner
		if t.Elem == nil {
			// A pointer still being read (a class whose methods take a
			// pointer to it): its target is named once reading completes.
			return "void " + d
		}
		if t.Elem.Kind == KindArray || t.Elem.Kind == KindFunc {
			d = "(" + d + ")"
		}
		return cDecl(t.Elem, d, "", base)
	case KindArray:
		if cLike {
			n := ""
			if t.Count >= 0 {
				n = strconv.FormatInt(t.Count, 10)
			}
			if t.Vector {
				return cDecl(t.Elem, inner+" __attribute__ ((vector_size("+n+")))", "", base)
			}
			return cDecl(t.Elem, inner+"["+n+"]", "", base)
		}
	case KindFunc:
		if cLike {
			var ps []string
			for _, p := range t.Params {
				ps = append(ps, p.Name)
			}
			if t.Variadic {
				ps = append(ps, "...")
			}
			if len(ps) == 0 {
				ps = []string{"void"}
			}
			res := t.Result
			if res == nil {
				res = voidType
			}
			return cDecl(res, inner+"("+strings.Join(ps, ", ")+")", "", base)
		}
	case KindQualified:
		if cLike && t.Elem != nil {
			q, _, _ := strings.Cut(t.Name, " ")
			if t.Elem.Kind == KindPointer || t.Elem.Kind == KindReference {
				// char *const p: the qualifier follows the star.
				q = t.Name[strings.LastIndexByte(t.Name, ' ')+1:]
				if inner != "" {
					inner = " " + strings.TrimPrefix(inner, " ")
				}
				return cDecl(t.Elem, " "+q+inner, "", base)
			}
			return q + " " + cDecl(t.Elem, inner, "", base)
		}
	}
	b := base(t)
	switch {
	case inner == "":
		return b
	case strings.HasPrefix(inner, " "):
		return b + inner
	}
	return b + " " + inner
}

func arrayName(t *Type, inner string) string {
	n := ""
	if t.Count >= 0 {
		n = strconv.FormatInt(t.Count, 10)
	}
	if t.Lang == LangRust && inner == "" {
		return "[" + t.Elem.Name + "; " + n + "]"
	}
	if t.Lang == LangGo && inner == "" {
		return "[" + n + "]" + t.Elem.Name
	}
	return declName(t.Elem, inner+"["+n+"]", "")
}

func funcName(t *Type, inner string, variadic, proto bool) string {
	var ps []string
	for _, p := range t.Params {
		ps = append(ps, p.Name)
	}
	if variadic {
		ps = append(ps, "...")
	}
	if len(ps) == 0 && proto {
		ps = []string{"void"}
	}
	d := inner + "(" + strings.Join(ps, ", ") + ")"
	res := t.Result
	if res == nil {
		res = voidType
	}
	return declName(res, d, "")
}

// rustFuncName is a Rust function type as gdb's Rust printer writes it:
// "fn ()", "fn (u64) -> u64".
func rustFuncName(t *Type) string {
	var ps []string
	for _, p := range t.Params {
		ps = append(ps, p.Name)
	}
	s := "fn (" + strings.Join(ps, ", ") + ")"
	if t.Result != nil && stripType(t.Result).Kind != KindVoid {
		s += " -> " + t.Result.Name
	}
	return s
}
