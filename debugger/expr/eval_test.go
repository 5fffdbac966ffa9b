package expr

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/rewind-debugger/rewind/dwarf"
)

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
