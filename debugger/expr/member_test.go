package expr

import (
	"testing"

	"github.com/rewind-debugger/rewind/dwarf"
)

// TestMembersThroughDwarf evaluates the member accesses that the
// evaluator's own field lookup missed before it used dwarf.FieldOf: a Go
// embedded struct's field and the active variant of a Rust enum (also
// by tuple number), with std::array indexing, now dwarf.Sequence's.
func TestMembersThroughDwarf(t *testing.T) {
	tInner := &dwarf.Type{Kind: dwarf.KindStruct, Name: "main.Inner", Size: 8, Lang: dwarf.LangGo, GoKind: dwarf.GoKindStruct,
		Fields: []dwarf.Field{{Name: "X", Type: tGoInt}}}
	tOuter := &dwarf.Type{Kind: dwarf.KindStruct, Name: "main.Outer", Size: 16, Lang: dwarf.LangGo, GoKind: dwarf.GoKindStruct,
		Fields: []dwarf.Field{{Name: "Inner", Type: tInner}, {Name: "Y", Type: tGoInt, Offset: 8}}}
	tSome := &dwarf.Type{Kind: dwarf.KindStruct, Name: "core::option::Option<i32>::Some", Size: 8, Lang: dwarf.LangRust,
		Fields: []dwarf.Field{{Name: "__0", Type: tI32, Offset: 4}}}
	tNone := &dwarf.Type{Kind: dwarf.KindStruct, Name: "core::option::Option<i32>::None", Size: 8, Lang: dwarf.LangRust}
	tOption := &dwarf.Type{Kind: dwarf.KindStruct, Name: "core::option::Option<i32>", Size: 8, Lang: dwarf.LangRust, Variants: &dwarf.VariantPart{
		Discr: &dwarf.Field{Name: "<discr>", Type: &dwarf.Type{Kind: dwarf.KindBase, Name: "u32", Size: 4, Encoding: dwarf.ATEUnsigned, Lang: dwarf.LangRust}},
		Variants: []dwarf.Variant{
			{DiscrValue: 0, Field: dwarf.Field{Name: "None", Type: tNone}},
			{DiscrValue: 1, Field: dwarf.Field{Name: "Some", Type: tSome}},
		}}}
	tStdArray := &dwarf.Type{Kind: dwarf.KindStruct, Name: "std::array<int, 5>", Size: 20, Lang: dwarf.LangCPlusPlus,
		Fields: []dwarf.Field{{Name: "_M_elems", Type: tArr5}}}

	for _, tc := range []evalCase{
		{dwarf.LangGo, "o.X", "int 4660 @0x8000"},
		{dwarf.LangGo, "o.Y + o.X", "int 4665"},
		{dwarf.LangRust, "opt.__0", "i32 7 @0x8014"},
		{dwarf.LangRust, "opt.0 + 1", "i32 8"},
		{dwarf.LangCPlusPlus, "sa[3]", "int 4 @0x400c"},
		{dwarf.LangCPlusPlus, "sa[1] + sa[2]", "int 5"},
	} {
		sc := newScope(tc.lang)
		sc.mem.put(0x8000, append(u64(0x1234), u64(5)...))
		sc.mem.put(0x8010, append(u32(1), u32(7)...))
		sc.vars["o"] = lv("o", tOuter, 0x8000)
		sc.vars["opt"] = lv("opt", tOption, 0x8010)
		sc.vars["sa"] = lv("sa", tStdArray, 0x4000)
		checkEval(t, sc, tc)
	}
}
