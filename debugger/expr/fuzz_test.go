package expr

import (
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/dwarf"
)

// fuzzLangs are the frame languages FuzzExpr evaluates in.
var fuzzLangs = []dwarf.Lang{dwarf.LangC, dwarf.LangCPlusPlus, dwarf.LangGo, dwarf.LangRust}

// FuzzExpr parses and evaluates arbitrary source in the frames of the
// tests (every kind of type, memory with holes), in each language: an
// expression may fail, never panic, and a parsed one renders.
func FuzzExpr(f *testing.F) {
	for _, tc := range append(append([]evalCase{}, evalTests...), errorTests...) {
		f.Add(tc.src)
	}
	for _, src := range []string{
		// From docs/commands.md and the debugger's tests.
		"b->next", "*n", "(long)&b->next - (long)b", "*(int*)&counter", "$1 + $", "a->name[0]",
		"*arr@5", "{int} $sp", "(struct node *)p", "sizeof(struct node)", "std::vector<int, std::allocator<int> >",
		"(*main.T)(p)", "uint8(x)", "len(s)", "s[1:2]", "x ? 1 : 2, 3", "-(-(-x))", "&*&*head",
		"arr@1000000000", "*head@4294967296", "{char[99999999999]} 0", "(int[0x7fffffffffffffff])x",
		"x << 9999", "x >> -1", "-9223372036854775808 / -1", "1.0/0", "'\\777'", "'\\x'", `"\x"`,
		strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100),
		strings.Repeat("-", 100) + "1",
		strings.Repeat("1 ? 2 : ", 100) + "3",
		strings.Repeat("a[", 50) + "0" + strings.Repeat("]", 50),
	} {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if n, err := Parse(src); err == nil {
			_ = n.String()
		}
		for _, lang := range fuzzLangs {
			sc := newScope(lang)
			v, err := Eval(src, sc)
			if err != nil {
				continue
			}
			// The readers the debugger applies to a result.
			_, _ = Truth(v, sc.mem)
			_, _, _ = Int(v, sc.mem)
			_, _ = Address(v, sc.mem)
		}
	})
}
