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
)

// Go's own attributes (cmd/internal/dwarf), which debug/dwarf does not name.
const (
	attrGoKind        dwarf.Attr = 0x2900
	attrGoKey         dwarf.Attr = 0x2901
	attrGoElem        dwarf.Attr = 0x2902
	attrGoRuntimeType dwarf.Attr = 0x2904
)

// The DW_ATE_* constants are in model.go, shared by the package.

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
	// wrap makes t a wrapper of its element (a qualifier, a typedef),
	// as large as the element unless DWARF says otherwise.
	wrap := func() error {
		el, err := elemOrVoid()
		if err != nil {
			return err
		}
		t.Elem = el
		if t.Size < 0 {
			t.Size = el.Size
		}
		return nil
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
		if err := wrap(); err != nil {
			return fail(err)
		}
		t.Name = qualName(e.Tag, t.Elem)

	case dwarf.TagTypedef:
		t.Kind = KindTypedef
		t.Name = qname
		if err := wrap(); err != nil {
			return fail(err)
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
