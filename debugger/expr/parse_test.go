package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/dwarf"
)

func TestParseString(t *testing.T) {
	tests := []struct{ src, want string }{
		{"a + b * c", "(a + (b * c))"},
		{"a * b + c", "((a * b) + c)"},
		{"a - b - c", "((a - b) - c)"},
		{"a << 1 @ 2 + 3", "(a << (1 @ (2 + 3)))"},
		{"*arr@5", "(*arr @ 5)"},
		{"a ? b : c ? d : e", "(a ? b : (c ? d : e))"},
		{"a || b && c", "(a || (b && c))"},
		{"a == b < c", "(a == (b < c))"},
		{"a & b == c", "(a & (b == c))"},
		{"a | b ^ c & d", "(a | (b ^ (c & d)))"},
		{"-a.b", "-a.b"},
		{"*p->next", "*p->next"},
		{"&a[1]", "&a[1]"},
		{"!*p", "!*p"},
		{"(int)x + 1", "((int)x + 1)"},
		{"(struct node *)p->next", "(struct node *)p->next"},
		{"sizeof x + 1", "(sizeof(x) + 1)"},
		{"sizeof(struct node) * 2", "(sizeof(struct node) * 2)"},
		{"{int} p + 1", "({int} p + 1)"},
		{"ns::var", "ns::var"},
		{"main.x.y", "main.x.y"},
		{"t.0", "t.0"},
		{"t.0.1", "t.0.1"},
		{"(std::vector<int> *)0", "(std::vector<int> *)0"},
		{"(std::map<int, std::vector<int>> *)0", "(std::map<int, std::vector<int> > *)0"},
		{"a < b > c", "((a < b) > c)"},
		{"(unsigned long)x", "(unsigned long)x"},
		{"(long unsigned int)x", "(unsigned long)x"},
		{"(unsigned)x", "(unsigned int)x"},
		{"(char const *)p", "(char *)p"},
		{"(const struct node * const *)p", "(struct node **)p"},
		{"(main.T)x", "(main.T)x"},
		{"(T)(x)", "(T)x"},
		{"$rip + 1", "($rip + 1)"},
		{"$$2", "$$2"},
		{"f(a, b)", "f(a, b)"},
		{"x[i][j]", "x[i][j]"},
		{"1 ? 2 : 3, 4", "((1 ? 2 : 3), 4)"},
		{`"a" "b"`, `"ab"`},
	}
	for _, tc := range tests {
		n, err := Parse(tc.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.src, err)
			continue
		}
		if got := n.String(); got != tc.want {
			t.Errorf("Parse(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
}

// TestAmbiguousCast: without a Scope, (T)-1 may be a cast or a
// subtraction; EvalNode decides with the Scope's names.
func TestAmbiguousCast(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"(myint)-1", "myint -1"},
		{"(x)-1", "int 41"},
		{"(x)*2", "int 84"},
		{"(myint)*&x", "myint 42"},
		{"(x)&1", "int 0"},
	} {
		n, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		sc := newScope(dwarf.LangC)
		v, err := EvalNode(n, sc)
		if err != nil {
			t.Errorf("EvalNode(%q): %v", tc.src, err)
			continue
		}
		if got := show(t, v, sc.mem); got != tc.want {
			t.Errorf("EvalNode(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
	// An unambiguous tree from Parse evaluates as it is.
	n, err := Parse("head->next->val + 1")
	if err != nil {
		t.Fatal(err)
	}
	sc := newScope(dwarf.LangC)
	if v, err := EvalNode(n, sc); err != nil || show(t, v, sc.mem) != "int 21" {
		t.Errorf("EvalNode(head->next->val + 1) = %v, %v", v, err)
	}
}

// TestParseErrorsEarly: Parse reports syntax errors without a Scope, as
// `break f if COND` needs.
func TestParseErrorsEarly(t *testing.T) {
	for _, src := range []string{"x ==", "a[1", "f(", "x ? 1", "sizeof(struct node", "{int 5", "(struct)x", "a->", "a.", "1 2"} {
		if _, err := Parse(src); err == nil || !strings.Contains(err.Error(), "syntax error") {
			t.Errorf("Parse(%q): %v, want a syntax error", src, err)
		}
	}
	for _, src := range []string{"x == 1", "p->next != 0 && p->val > 3", "(struct node *)p", "*arr@3", "{int} $sp", "$rip"} {
		if _, err := Parse(src); err != nil {
			t.Errorf("Parse(%q): %v", src, err)
		}
	}
}

// TestNesting: an expression nested deeper than maxNesting is an error,
// not a stack overflow of the parser or the evaluator; below the bound,
// nesting of every kind evaluates.
func TestNesting(t *testing.T) {
	for _, c := range []struct {
		name string
		src  func(n int) string
	}{
		{"parentheses", func(n int) string { return strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }},
		{"prefix operators", func(n int) string { return strings.Repeat("!", n) + "1" }},
		{"casts", func(n int) string { return strings.Repeat("(int)", n) + "1" }},
		{"conditionals", func(n int) string { return strings.Repeat("1 ? 1 : ", n) + "1" }},
		{"a chain of operators", func(n int) string { return strings.Repeat("1 + ", n) + "1" }},
		{"a chain of commas", func(n int) string { return strings.Repeat("1, ", n) + "1" }},
		{"a chain of subscripts", func(n int) string { return "arr" + strings.Repeat("[0]", n) }},
		{"sizeof", func(n int) string { return strings.Repeat("sizeof ", n) + "1" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			shallow := c.src(maxNesting - 10)
			if _, err := Parse(shallow); err != nil {
				t.Errorf("Parse at %d levels: %v", maxNesting-10, err)
			}
			if _, err := Eval(shallow, newScope(dwarf.LangC)); errors.Is(err, errTooDeep) {
				t.Errorf("Eval at %d levels: %v", maxNesting-10, err)
			}
			for _, n := range []int{maxNesting + 10, 10 * maxNesting} {
				if _, err := Parse(c.src(n)); !errors.Is(err, errTooDeep) {
					t.Errorf("Parse at %d levels: %v, want %v", n, err, errTooDeep)
				}
				if _, err := Eval(c.src(n), newScope(dwarf.LangC)); !errors.Is(err, errTooDeep) {
					t.Errorf("Eval at %d levels: %v, want %v", n, err, errTooDeep)
				}
			}
		})
	}
}
