package dwarf

// Types are found by name the way gdb finds them: one pass over an
// image's entries indexes the named types with the scope they are
// declared in, and a user's spelling of a C base type is made canonical
// ("unsigned long" is DWARF's "long unsigned int").

import (
	"debug/dwarf"
	"fmt"
	"sort"
	"strings"
)

// typeIndex is what one pass over an image's entries learns: the language
// of each unit, the scope ("ns::Class::") a nested type is declared in —
// an entry read by offset does not know its parents — the named types, and
// Go's runtime type offsets.
type typeIndex struct {
	units  []unitLang
	scope  map[dwarf.Offset]string
	names  map[string][]typeRef
	tags   map[string][]typeRef // C struct/union/enum tags without the keyword
	rtypes map[uint64]dwarf.Offset
}

type unitLang struct {
	off  dwarf.Offset
	lang Lang
}

type typeRef struct {
	off  dwarf.Offset
	decl bool
}

// typeIndex builds the image's type index once.
func (img *Image) typeIndex() (*typeIndex, error) {
	img.typeIdxOnce.Do(func() { img.typeIdx, img.typeIdxErr = buildTypeIndex(img) })
	return img.typeIdx, img.typeIdxErr
}

func isTypeTag(tag dwarf.Tag) bool {
	switch tag {
	case dwarf.TagBaseType, dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType,
		dwarf.TagEnumerationType, dwarf.TagTypedef, dwarf.TagUnspecifiedType,
		dwarf.TagPointerType, dwarf.TagArrayType, dwarf.TagSubroutineType:
		return true
	}
	return false
}

func buildTypeIndex(img *Image) (*typeIndex, error) {
	d, err := img.DWARF()
	if err != nil {
		return nil, err
	}
	ix := &typeIndex{scope: map[dwarf.Offset]string{}, names: map[string][]typeRef{},
		tags: map[string][]typeRef{}, rtypes: map[uint64]dwarf.Offset{}}
	r := d.Reader()
	var stack []string // scope prefix of each open entry with children
	lang := LangOther
	for {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("indexing types of %s: %w", img.DebugPath, err)
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		prefix := ""
		if len(stack) > 0 {
			prefix = stack[len(stack)-1]
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			code, _ := e.Val(dwarf.AttrLanguage).(int64)
			lang = langOf(code)
			ix.units = append(ix.units, unitLang{e.Offset, lang})
			if e.Children {
				stack = append(stack, "")
			}
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if prefix != "" && isTypeTag(e.Tag) {
			ix.scope[e.Offset] = prefix
		}
		if lang == LangGo {
			if off, ok := e.Val(attrGoRuntimeType).(uint64); ok && off != 0 {
				if _, dup := ix.rtypes[off]; !dup {
					ix.rtypes[off] = e.Offset
				}
			}
		}
		if name != "" && isTypeTag(e.Tag) {
			_, decl := e.Val(dwarf.AttrDeclaration).(bool)
			ref := typeRef{e.Offset, decl}
			full := prefix + name
			if lang == LangC {
				switch e.Tag {
				case dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagEnumerationType:
					ix.tags[name] = append(ix.tags[name], ref)
					full = tagKeyword(e.Tag) + " " + name
				}
			}
			ix.names[full] = append(ix.names[full], ref)
			if e.Tag == dwarf.TagBaseType {
				if c := canonCBase(name); c != "" && c != full {
					ix.names[c] = append(ix.names[c], ref)
				}
			}
		}
		if !e.Children {
			continue
		}
		// Types nest only in namespaces and, in C++ and Rust, in classes;
		// function bodies hold most entries and are skipped whole.
		switch {
		case e.Tag == dwarf.TagNamespace:
			if name == "" {
				name = "(anonymous namespace)"
			}
			stack = append(stack, prefix+name+"::")
		case (e.Tag == dwarf.TagStructType || e.Tag == dwarf.TagClassType || e.Tag == dwarf.TagUnionType) &&
			(lang == LangCPlusPlus || lang == LangRust):
			if name == "" {
				r.SkipChildren()
				continue
			}
			stack = append(stack, prefix+name+"::")
		default:
			r.SkipChildren()
		}
	}
	sort.Slice(ix.units, func(i, j int) bool { return ix.units[i].off < ix.units[j].off })
	return ix, nil
}

func tagKeyword(tag dwarf.Tag) string {
	switch tag {
	case dwarf.TagUnionType:
		return "union"
	case dwarf.TagEnumerationType:
		return "enum"
	case dwarf.TagClassType:
		return "class"
	}
	return "struct"
}

// langAt returns the language of the unit holding the entry at off.
func (ix *typeIndex) langAt(off dwarf.Offset) Lang {
	i := sort.Search(len(ix.units), func(i int) bool { return ix.units[i].off > off }) - 1
	if i < 0 {
		return LangOther
	}
	return ix.units[i].lang
}

// lookup picks the entry for a name, a definition before a declaration.
func (ix *typeIndex) lookup(name string) (dwarf.Offset, bool) {
	refs := ix.names[name]
	if len(refs) == 0 {
		if c := canonCBase(name); c != "" {
			refs = ix.names[c]
		}
	}
	if len(refs) == 0 {
		refs = ix.tags[name]
	}
	for _, r := range refs {
		if !r.decl {
			return r.off, true
		}
	}
	if len(refs) > 0 {
		return refs[0].off, true
	}
	return 0, false
}

// canonCBase spells a C integer or floating type the way gcc names it in
// DWARF ("unsigned long" is "long unsigned int"), so a user's spelling and
// clang's find gcc's; "" when name is not such a type.
func canonCBase(name string) string {
	var unsigned, signed, short, int_, char, float, double, bool_, i128 bool
	long := 0
	words := strings.Fields(name)
	if len(words) == 0 {
		return ""
	}
	for _, w := range words {
		switch w {
		case "unsigned":
			unsigned = true
		case "signed":
			signed = true
		case "short":
			short = true
		case "long":
			long++
		case "int":
			int_ = true
		case "char":
			char = true
		case "float":
			float = true
		case "double":
			double = true
		case "_Bool", "bool":
			bool_ = true
		case "__int128":
			i128 = true
		default:
			return ""
		}
	}
	_ = int_
	switch {
	case bool_:
		return "_Bool"
	case float:
		return "float"
	case double && long > 0:
		return "long double"
	case double:
		return "double"
	case char && unsigned:
		return "unsigned char"
	case char && signed:
		return "signed char"
	case char:
		return "char"
	case i128 && unsigned:
		return "__int128 unsigned"
	case i128:
		return "__int128"
	}
	base := "int"
	switch {
	case short:
		base = "short"
	case long == 1:
		base = "long"
	case long >= 2:
		base = "long long"
	}
	if unsigned {
		if base == "int" {
			return "unsigned int"
		}
		return base + " unsigned int"
	}
	if base == "int" {
		return "int"
	}
	return base + " int"
}

// gdbBaseName spells a C integer type as gdb prints it ("long" for gcc's
// "long int", "unsigned long" for "long unsigned int").
func gdbBaseName(name string) string {
	switch canonCBase(name) {
	case "short int":
		return "short"
	case "short unsigned int":
		return "unsigned short"
	case "long int":
		return "long"
	case "long unsigned int":
		return "unsigned long"
	case "long long int":
		return "long long"
	case "long long unsigned int":
		return "unsigned long long"
	case "__int128 unsigned":
		return "unsigned __int128"
	}
	return name
}

// TypeByName finds a named type in any image: "int", "struct node", "node"
// (C typedef or struct tag), "std::string", "main.Point" (Go), "unsigned
// long", "char"; pointer suffixes "struct node *" / "int**" are built from
// the base. Names are indexed lazily per image (one pass over the DIEs, top
// level and namespaces).
func (t *Table) TypeByName(name string) (*Type, error) {
	base := strings.TrimSpace(name)
	ptrs := 0
	for strings.HasSuffix(base, "*") {
		ptrs++
		base = strings.TrimSpace(strings.TrimSuffix(base, "*"))
	}
	typ, err := t.namedType(base)
	if err != nil && strings.HasPrefix(base, "*") {
		// A Go pointer type the compiler never emitted ("*main.T").
		for strings.HasPrefix(base, "*") {
			ptrs++
			base = base[1:]
		}
		typ, err = t.namedType(base)
	}
	if err != nil {
		for _, kw := range []string{"struct ", "class ", "union ", "enum "} {
			if strings.HasPrefix(base, kw) {
				if typ2, err2 := t.namedType(strings.TrimSpace(base[len(kw):])); err2 == nil {
					typ, err = typ2, nil
				}
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	for ; ptrs > 0; ptrs-- {
		typ = PointerTo(typ)
	}
	return typ, nil
}

func (t *Table) namedType(name string) (*Type, error) {
	var firstErr error
	for _, img := range t.Images {
		ix, err := img.typeIndex()
		if err != nil {
			continue // an image without debug information has no types
		}
		off, ok := ix.lookup(name)
		if !ok {
			continue
		}
		typ, err := img.TypeAt(off)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		return typ, nil
	}
	if firstErr != nil {
		return nil, fmt.Errorf("type %q: %w", name, firstErr)
	}
	return nil, fmt.Errorf("no type named %q", name)
}
