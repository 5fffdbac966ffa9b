package dwarf

// This file reads DWARF type entries into Type. It walks debug/dwarf's
// entries itself: Data.Type (and delve's godwarf) turn C++ references into
// UnsupportedType and drop Rust's DW_TAG_variant_part, which a debugger
// must see to print a Rust enum.

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Go's own attributes (cmd/internal/dwarf), which debug/dwarf does not name.
const (
	attrGoKind        dwarf.Attr = 0x2900
	attrGoKey         dwarf.Attr = 0x2901
	attrGoElem        dwarf.Attr = 0x2902
	attrGoRuntimeType dwarf.Attr = 0x2904
)

// The DW_ATE_* constants are in model.go, shared by the package.

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

// TypeAt reads (and caches, cycles safe: register the *Type in the cache
// before reading children) the type DIE at offset off of the image.
func (img *Image) TypeAt(off dwarf.Offset) (*Type, error) {
	d, err := img.DWARF()
	if err != nil {
		return nil, err
	}
	ix, err := img.typeIndex()
	if err != nil {
		return nil, err
	}
	img.typesMu.Lock()
	defer img.typesMu.Unlock()
	if img.types == nil {
		img.types = map[uint64]*Type{}
	}
	tr := &typeReader{img: img, d: d, ix: ix, r: d.Reader()}
	return tr.read(off)
}

// typeByRuntimeType finds the Go type whose runtime._type is at offset off
// from the image's runtime.types.
func (img *Image) typeByRuntimeType(off uint64) (*Type, error) {
	ix, err := img.typeIndex()
	if err != nil {
		return nil, err
	}
	die, ok := ix.rtypes[off]
	if !ok {
		return nil, fmt.Errorf("no Go type with runtime type offset %#x in %s", off, img.Path)
	}
	return img.TypeAt(die)
}

// typeReader reads entries with the image's type cache locked.
type typeReader struct {
	img *Image
	d   *dwarf.Data
	ix  *typeIndex
	r   *dwarf.Reader
}

// dieTree is an entry with its children, read before any recursion moves
// the shared reader elsewhere.
type dieTree struct {
	e    *dwarf.Entry
	kids []*dieTree
}

func (tr *typeReader) tree(off dwarf.Offset) (*dieTree, error) {
	tr.r.Seek(off)
	e, err := tr.r.Next()
	if err != nil {
		return nil, fmt.Errorf("type entry at %#x: %w", off, err)
	}
	if e == nil || e.Offset != off {
		return nil, fmt.Errorf("no type entry at %#x", off)
	}
	t := &dieTree{e: e}
	if e.Children {
		if err := tr.kids(t); err != nil {
			return nil, fmt.Errorf("children of type entry at %#x: %w", off, err)
		}
	}
	return t, nil
}

func (tr *typeReader) kids(t *dieTree) error {
	for {
		e, err := tr.r.Next()
		if err != nil {
			return err
		}
		if e == nil || e.Tag == 0 {
			return nil
		}
		k := &dieTree{e: e}
		t.kids = append(t.kids, k)
		if e.Children {
			switch e.Tag {
			case dwarf.TagSubprogram, dwarf.TagLexDwarfBlock:
				tr.r.SkipChildren()
			default:
				if err := tr.kids(k); err != nil {
					return err
				}
			}
		}
	}
}

var voidType = &Type{Kind: KindVoid, Name: "void", Size: 1}

func (tr *typeReader) read(off dwarf.Offset) (*Type, error) {
	if t, ok := tr.img.types[uint64(off)]; ok {
		return t, nil
	}
	n, err := tr.tree(off)
	if err != nil {
		return nil, err
	}
	e := n.e
	lang := tr.ix.langAt(off)
	name, _ := e.Val(dwarf.AttrName).(string)
	qname := tr.ix.scope[off] + name

	// A declaration ("struct node;" in a unit that never sees the body)
	// stands for the definition elsewhere.
	if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); decl && name != "" {
		key := qname
		if lang == LangC {
			key = tagKeyword(e.Tag) + " " + name
		}
		if def, ok := tr.ix.lookup(key); ok && def != off {
			if dn, err := tr.tree(def); err == nil {
				if d, _ := dn.e.Val(dwarf.AttrDeclaration).(bool); !d {
					t, err := tr.read(def)
					if err == nil {
						tr.img.types[uint64(off)] = t
					}
					return t, err
				}
			}
		}
	}

	t := &Type{Offset: uint64(off), Lang: lang, Size: -1}
	tr.img.types[uint64(off)] = t
	if sz, ok := e.Val(dwarf.AttrByteSize).(int64); ok {
		t.Size = sz
	}
	if k, ok := e.Val(attrGoKind).(int64); ok {
		t.GoKind = int(k)
	}
	if rt, ok := e.Val(attrGoRuntimeType).(uint64); ok {
		t.GoRuntimeType = rt
	}
	fail := func(err error) (*Type, error) {
		delete(tr.img.types, uint64(off))
		return nil, fmt.Errorf("type %q at %#x: %w", qname, off, err)
	}
	// elem reads the entry's DW_AT_type; nil when it has none (void).
	elem := func() (*Type, error) {
		ref, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
		if !ok {
			return nil, nil
		}
		return tr.read(ref)
	}
	// elemOrVoid is elem for the types whose missing DW_AT_type means void
	// (void *, const void, typedef void T).
	elemOrVoid := func() (*Type, error) {
		el, err := elem()
		if el == nil && err == nil {
			el = voidType
		}
		return el, err
	}
	if ref, ok := e.Val(attrGoKey).(dwarf.Offset); ok {
		if t.GoKey, err = tr.read(ref); err != nil {
			return fail(err)
		}
	}
	if ref, ok := e.Val(attrGoElem).(dwarf.Offset); ok {
		if t.GoElem, err = tr.read(ref); err != nil {
			return fail(err)
		}
	}

	switch e.Tag {
	case dwarf.TagBaseType:
		t.Kind = KindBase
		t.Name = qname
		if lang == LangC || lang == LangCPlusPlus {
			t.Name = gdbBaseName(qname)
		}
		if enc, ok := e.Val(dwarf.AttrEncoding).(int64); ok {
			t.Encoding = int(enc)
		}

	case dwarf.TagUnspecifiedType:
		t.Kind = KindVoid
		t.Name = qname
		if t.Size < 0 {
			t.Size = 1
			if name == "decltype(nullptr)" {
				t.Size = 8
			}
		}

	case dwarf.TagPointerType, dwarf.TagReferenceType, dwarf.TagRvalueReferenceType, dwarf.TagPtrToMemberType:
		t.Kind = KindPointer
		if e.Tag == dwarf.TagReferenceType || e.Tag == dwarf.TagRvalueReferenceType {
			t.Kind = KindReference
		}
		if t.Size < 0 {
			t.Size = 8
		}
		el, err := elemOrVoid()
		if err != nil {
			return fail(err)
		}
		t.Elem = el
		switch {
		case lang == LangRust:
			// gdb names every Rust pointer so, references and boxes
			// too, whatever name rustc gives it ("&mut T").
			t.Name = "*mut " + el.Name
		case name != "":
			t.Name = name
		case lang == LangGo:
			t.Name = "*" + el.Name
		default:
			sym := "*"
			if e.Tag == dwarf.TagReferenceType {
				sym = "&"
			} else if e.Tag == dwarf.TagRvalueReferenceType {
				sym = "&&"
			}
			t.Name = declName(t, "", sym)
		}

	case dwarf.TagConstType, dwarf.TagVolatileType, dwarf.TagRestrictType, dwarf.TagAtomicType:
		t.Kind = KindQualified
		el, err := elemOrVoid()
		if err != nil {
			return fail(err)
		}
		t.Elem = el
		if t.Size < 0 {
			t.Size = el.Size
		}
		t.Name = qualName(e.Tag, el)

	case dwarf.TagTypedef:
		t.Kind = KindTypedef
		t.Name = qname
		el, err := elemOrVoid()
		if err != nil {
			return fail(err)
		}
		t.Elem = el
		if t.Size < 0 {
			t.Size = el.Size
		}

	case dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType:
		t.Kind = KindStruct
		if e.Tag == dwarf.TagUnionType {
			t.Kind = KindUnion
		}
		t.Class = e.Tag == dwarf.TagClassType
		switch {
		case lang == LangC && name != "":
			t.Name = tagKeyword(e.Tag) + " " + name
		case lang == LangC:
			t.Name = tagKeyword(e.Tag) + " {...}"
		case name == "" && e.Tag == dwarf.TagUnionType:
			t.Name = "union {...}"
		case name == "":
			t.Name = "{...}"
		default:
			t.Name = qname
		}
		if err := tr.members(t, n); err != nil {
			return fail(err)
		}

	case dwarf.TagArrayType:
		t.Kind = KindArray
		el, err := elemOrVoid()
		if err != nil {
			return fail(err)
		}
		var dims []int64
		for _, k := range n.kids {
			if k.e.Tag == dwarf.TagSubrangeType || k.e.Tag == dwarf.TagEnumerationType {
				dims = append(dims, subrangeCount(k.e, lang))
			}
		}
		if len(dims) == 0 {
			dims = []int64{-1}
		}
		// int a[2][3] is one entry with two subranges: an array of two
		// arrays of three.
		inner := el
		for i := len(dims) - 1; i >= 1; i-- {
			a := &Type{Kind: KindArray, Lang: lang, Elem: inner, Count: dims[i], Size: -1}
			if dims[i] >= 0 && inner.Size >= 0 {
				a.Size = dims[i] * inner.Size
			}
			a.Name = arrayName(a, "")
			inner = a
		}
		t.Elem, t.Count = inner, dims[0]
		if t.Size < 0 && t.Count >= 0 && inner.Size >= 0 {
			t.Size = t.Count * inner.Size
		}
		if t.Size < 0 && t.Count < 0 {
			t.Size = 0 // a flexible array member takes no room, as sizeof says
		}
		if name != "" {
			t.Name = name
		} else {
			t.Name = arrayName(t, "")
		}

	case dwarf.TagEnumerationType:
		t.Kind = KindEnum
		t.Scoped, _ = e.Val(dwarf.AttrEnumClass).(bool)
		el, err := elem()
		if err != nil {
			return fail(err)
		}
		t.Elem = el
		negative := false
		for _, k := range n.kids {
			if k.e.Tag != dwarf.TagEnumerator {
				continue
			}
			en := Enumerator{}
			en.Name, _ = k.e.Val(dwarf.AttrName).(string)
			switch v := k.e.Val(dwarf.AttrConstValue).(type) {
			case int64:
				en.Value = v
			case uint64:
				en.Value = int64(v)
			}
			negative = negative || en.Value < 0
			t.Enumerators = append(t.Enumerators, en)
		}
		t.Encoding = ATEUnsigned
		if negative {
			t.Encoding = ATESigned
		}
		if el != nil {
			if u := stripType(el); u.Kind == KindBase {
				t.Encoding = u.Encoding
			}
			if t.Size < 0 {
				t.Size = el.Size
			}
		}
		switch {
		case lang == LangC && name != "":
			t.Name = "enum " + name
		case name == "":
			t.Name = "enum {...}"
		default:
			t.Name = qname
		}

	case dwarf.TagSubroutineType:
		t.Kind = KindFunc
		res, err := elem()
		if err != nil {
			return fail(err)
		}
		t.Result = res
		variadic := false
		for _, k := range n.kids {
			switch k.e.Tag {
			case dwarf.TagFormalParameter:
				ref, ok := k.e.Val(dwarf.AttrType).(dwarf.Offset)
				if !ok {
					continue
				}
				p, err := tr.read(ref)
				if err != nil {
					return fail(err)
				}
				t.Params = append(t.Params, p)
			case dwarf.TagUnspecifiedParameters:
				variadic = true
			}
		}
		if t.Size < 0 {
			t.Size = 1 // gdb's sizeof of a function, as GNU C's
		}
		switch {
		case name != "":
			t.Name = name
		case lang == LangRust && !variadic:
			t.Name = rustFuncName(t)
		default:
			proto, _ := e.Val(dwarf.AttrPrototyped).(bool)
			t.Variadic = variadic
			t.Name = funcName(t, "", variadic, proto || lang != LangC)
		}

	default:
		return fail(fmt.Errorf("%v is not a type", e.Tag))
	}
	return t, nil
}

// subrangeCount is the element count of one array dimension, -1 when it
// has no constant bound (a flexible array member, a VLA).
func subrangeCount(e *dwarf.Entry, lang Lang) int64 {
	if c, ok := e.Val(dwarf.AttrCount).(int64); ok {
		return c
	}
	ub, ok := e.Val(dwarf.AttrUpperBound).(int64)
	if !ok {
		return -1
	}
	lb, _ := e.Val(dwarf.AttrLowerBound).(int64)
	if ub < lb {
		// gcc writes int a[0] as an upper bound of -1, sometimes as an
		// unsigned all-ones constant that reads back as a huge number.
		return 0
	}
	return ub - lb + 1
}

// members reads the fields, base classes, Rust variant part and template
// parameters of a struct, class or union.
func (tr *typeReader) members(t *Type, n *dieTree) error {
	for _, k := range n.kids {
		switch k.e.Tag {
		case dwarf.TagMember, dwarf.TagInheritance:
			f, ok, err := tr.field(k.e)
			if err != nil {
				return err
			}
			if ok {
				t.Fields = append(t.Fields, f)
			}
		case dwarf.TagVariantPart:
			vp, err := tr.variantPart(k)
			if err != nil {
				return err
			}
			t.Variants = vp
		case dwarf.TagTemplateTypeParameter:
			if ref, ok := k.e.Val(dwarf.AttrType).(dwarf.Offset); ok {
				p, err := tr.read(ref)
				if err != nil {
					return err
				}
				t.TypeParams = append(t.TypeParams, p)
			}
		}
	}
	// gdb shows base classes first; DWARF usually lists them first already.
	sort.SliceStable(t.Fields, func(i, j int) bool { return t.Fields[i].Base && !t.Fields[j].Base })
	return nil
}

// field reads a DW_TAG_member or DW_TAG_inheritance; ok is false for a
// static member, which has no storage in the object.
func (tr *typeReader) field(e *dwarf.Entry) (Field, bool, error) {
	if d, _ := e.Val(dwarf.AttrDeclaration).(bool); d {
		return Field{}, false, nil
	}
	if x, _ := e.Val(dwarf.AttrExternal).(bool); x {
		return Field{}, false, nil
	}
	ref, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		return Field{}, false, nil
	}
	ft, err := tr.read(ref)
	if err != nil {
		return Field{}, false, err
	}
	f := Field{Type: ft, Base: e.Tag == dwarf.TagInheritance}
	f.Artificial, _ = e.Val(dwarf.AttrArtificial).(bool)
	f.Name, _ = e.Val(dwarf.AttrName).(string)
	if f.Base {
		f.Name = ft.Name
	}
	switch loc := e.Val(dwarf.AttrDataMemberLoc).(type) {
	case int64:
		f.Offset = loc
	case []byte:
		off, ok := memberLocExpr(loc)
		if !ok {
			// A virtual base's offset is read from the vtable at run time.
			return Field{}, false, nil
		}
		f.Offset = off
	}
	bitSize, ok := e.Val(dwarf.AttrBitSize).(int64)
	if !ok || bitSize <= 0 {
		return f, true, nil
	}
	f.BitSize = bitSize
	var bit int64 // from the least significant bit of the struct's first byte
	if dbo, ok := e.Val(dwarf.AttrDataBitOffset).(int64); ok {
		bit = dbo
	} else if bo, ok := e.Val(dwarf.AttrBitOffset).(int64); ok {
		// DWARF 2/3 count from the most significant bit of a storage unit
		// of DW_AT_byte_size bytes at the member location.
		storage, ok := e.Val(dwarf.AttrByteSize).(int64)
		if !ok {
			storage = ft.Size
		}
		bit = f.Offset*8 + storage*8 - bo - bitSize
	} else {
		bit = f.Offset * 8
	}
	f.Offset, f.BitOffset = bit/8, bit%8
	return f, true, nil
}

// memberLocExpr evaluates the simple location expressions compilers use for
// member offsets (DW_OP_plus_uconst N, DW_OP_constu N, DW_OP_litN).
func memberLocExpr(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	op := b[0]
	switch {
	case op == 0x23 || op == 0x10: // DW_OP_plus_uconst, DW_OP_constu
		v, n := binary.Uvarint(b[1:])
		if n <= 0 || 1+n != len(b) {
			return 0, false
		}
		return int64(v), true
	case op >= 0x30 && op <= 0x4f && len(b) == 1: // DW_OP_lit0..31
		return int64(op - 0x30), true
	}
	return 0, false
}

// variantPart reads a Rust enum's DW_TAG_variant_part: the discriminant
// member and, per variant, its discriminant value and payload member.
func (tr *typeReader) variantPart(n *dieTree) (*VariantPart, error) {
	vp := &VariantPart{}
	discr, hasDiscr := n.e.Val(dwarf.AttrDiscr).(dwarf.Offset)
	for _, k := range n.kids {
		switch k.e.Tag {
		case dwarf.TagMember:
			if hasDiscr && k.e.Offset == discr {
				f, ok, err := tr.field(k.e)
				if err != nil {
					return nil, err
				}
				if ok {
					vp.Discr = &f
				}
			}
		case dwarf.TagVariant:
			v := Variant{Default: true}
			switch dv := k.e.Val(dwarf.AttrDiscrValue).(type) {
			case int64:
				v.DiscrValue, v.Default = dv, false
			case uint64:
				v.DiscrValue, v.Default = int64(dv), false
			}
			for _, m := range k.kids {
				if m.e.Tag != dwarf.TagMember {
					continue
				}
				f, ok, err := tr.field(m.e)
				if err != nil {
					return nil, err
				}
				if ok {
					v.Field = f
					break
				}
			}
			vp.Variants = append(vp.Variants, v)
		}
	}
	return vp, nil
}

// Type names of derived C and C++ types are built the way C declares them:
// "int (*)(int, int)" is a pointer to a function, "int *[8]" an array of
// pointers.

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

// stripType removes typedefs and qualifiers, which change neither the
// layout nor the printing of a value.
func stripType(t *Type) *Type {
	for t != nil && (t.Kind == KindTypedef || t.Kind == KindQualified) && t.Elem != nil {
		t = t.Elem
	}
	return t
}

// PointerTo returns a (synthesised, size 8) pointer type to t.
func PointerTo(t *Type) *Type {
	p := &Type{Kind: KindPointer, Size: 8, Elem: t, Lang: t.Lang}
	switch t.Lang {
	case LangGo:
		p.Name = "*" + t.Name
		p.GoKind = GoKindPointer
	case LangRust:
		p.Name = "*mut " + t.Name
	default:
		p.Name = declName(p, "", "*")
	}
	return p
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
