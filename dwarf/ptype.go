package dwarf

import (
	"fmt"
	"strings"
)

// Ptype writes a type as gdb's ptype does: typedefs at the top resolved,
// and the struct, union, class or enum at the base of the declarator
// expanded one level (its members named, not expanded, except anonymous
// ones), followed by the declarator: "struct node {...} *". C++ classes
// list their bases and data members (not the compiler's vtable pointer),
// not their methods. Go and Rust types are written in their language's
// syntax.
func Ptype(t *Type) string {
	if t == nil {
		return "void"
	}
	if t.Lang == LangGo {
		// Go's typedefs are its named types (and map[K]V names a pointer
		// to the runtime's map): only a struct is expanded.
		return goPtype(t)
	}
	t = stripTypedefs(t)
	if t.Lang == LangRust {
		return rustPtype(t)
	}
	return cDecl(t, "", "", func(b *Type) string { return cBody(b, "") })
}

// Whatis is the type's name as declared; for a type name (not an
// expression's type), a typedef is unrolled one level, as gdb's whatis.
func Whatis(t *Type, typeName bool) string {
	if t == nil {
		return "void"
	}
	if typeName && t.Kind == KindTypedef && t.Elem != nil {
		return t.Elem.Name
	}
	return t.Name
}

// stripTypedefs resolves typedefs, keeping qualifiers.
func stripTypedefs(t *Type) *Type {
	for t.Kind == KindTypedef && t.Elem != nil {
		t = t.Elem
	}
	return t
}

// cBody writes a struct, union, class or enum with its members, indented
// by indent; other types by name.
func cBody(t *Type, indent string) string {
	t = stripTypedefs(t)
	var b strings.Builder
	switch t.Kind {
	case KindStruct, KindUnion:
		head := t.Name
		if t.Lang == LangCPlusPlus {
			kw := "struct"
			if t.Class {
				kw = "class"
			} else if t.Kind == KindUnion {
				kw = "union"
			}
			head = kw
			if t.Name != "" && t.Name != "{...}" && t.Name != "union {...}" {
				head += " " + t.Name
			}
		} else {
			head = strings.TrimSuffix(head, " {...}")
		}
		var bases []string
		for _, f := range t.Fields {
			if f.Base {
				bases = append(bases, "public "+f.Type.Name)
			}
		}
		if len(bases) > 0 {
			head += " : " + strings.Join(bases, ", ")
		}
		b.WriteString(head + " {\n")
		for _, f := range t.Fields {
			if f.Base || f.Artificial {
				continue
			}
			decl := cDecl(f.Type, f.Name, "", func(m *Type) string {
				switch {
				case !anonymous(m):
					return m.Name
				case indent != "":
					// gdb expands the members' anonymous types, not theirs.
					return elided(m)
				}
				return cBody(m, indent+"    ")
			})
			if f.BitSize > 0 {
				decl += fmt.Sprintf(" : %d", f.BitSize)
			}
			b.WriteString(indent + "    " + decl + ";\n")
		}
		b.WriteString(indent + "}")
		return b.String()
	case KindEnum:
		head := strings.TrimSuffix(t.Name, " {...}")
		if t.Lang == LangCPlusPlus {
			head = "enum"
			if t.Scoped {
				head += " class"
			}
			if t.Name != "" && t.Name != "{...}" {
				head += " " + t.Name
			}
		}
		var es []string
		next := int64(0)
		for _, e := range t.Enumerators {
			if e.Value != next {
				es = append(es, fmt.Sprintf("%s = %d", e.Name, e.Value))
			} else {
				es = append(es, e.Name)
			}
			next = e.Value + 1
		}
		return head + " {" + strings.Join(es, ", ") + "}"
	}
	return t.Name
}

// elided is an anonymous struct, union or enum as gdb writes it where it
// does not expand it: "struct {...}".
func elided(t *Type) string {
	if strings.HasPrefix(t.Name, "{") || t.Name == "" {
		switch t.Kind {
		case KindUnion:
			return "union {...}"
		case KindEnum:
			return "enum {...}"
		case KindStruct:
			if t.Class {
				return "class {...}"
			}
			return "struct {...}"
		}
	}
	return t.Name
}

// anonymous says whether a member's type is an unnamed struct, union or
// enum, which ptype expands in place.
func anonymous(t *Type) bool {
	switch t.Kind {
	case KindStruct, KindUnion, KindEnum:
		return t.Name == "" || strings.HasSuffix(t.Name, "{...}")
	}
	return false
}

// goPtype writes a Go type: a struct with its fields, one per line.
func goPtype(t *Type) string {
	st := stripTypedefs(t)
	// The first kind along the typedefs: error is an interface, made of
	// runtime.iface, a struct.
	kind := 0
	for u := t; u != nil && kind == 0; u = u.Elem {
		kind = u.GoKind
		if u.Kind != KindTypedef {
			break
		}
	}
	if st.Kind != KindStruct || kind != GoKindStruct {
		return t.Name
	}
	var b strings.Builder
	b.WriteString("struct " + st.Name + " {\n")
	for _, f := range st.Fields {
		fmt.Fprintf(&b, "    %s %s\n", f.Name, f.Type.Name)
	}
	b.WriteString("}")
	return b.String()
}

// rustPtype writes a Rust struct as gdb's Rust support does (two-space
// indent, trailing commas), and an enum by its variants.
func rustPtype(t *Type) string {
	if t.Kind != KindStruct {
		return t.Name
	}
	var b strings.Builder
	if t.Variants != nil {
		b.WriteString("enum " + t.Name + " {\n")
		for _, v := range t.Variants.Variants {
			fmt.Fprintf(&b, "  %s,\n", rustVariantDecl(v.Field))
		}
		b.WriteString("}")
		return b.String()
	}
	b.WriteString("struct " + t.Name + " {\n")
	for _, f := range t.Fields {
		fmt.Fprintf(&b, "  %s: %s,\n", f.Name, f.Type.Name)
	}
	b.WriteString("}")
	return b.String()
}

// rustVariantDecl writes an enum variant: Name, Name(T, U) for a tuple
// variant (fields __0, __1), Name{a: T} for one with named fields.
func rustVariantDecl(f Field) string {
	st := f.Type
	if st == nil || len(st.Fields) == 0 {
		return f.Name
	}
	var tuple, named []string
	for _, m := range st.Fields {
		tuple = append(tuple, m.Type.Name)
		named = append(named, m.Name+": "+m.Type.Name)
	}
	if strings.HasPrefix(st.Fields[0].Name, "__") {
		return f.Name + "(" + strings.Join(tuple, ", ") + ")"
	}
	return f.Name + "{" + strings.Join(named, ", ") + "}"
}
