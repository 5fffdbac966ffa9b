package debugger

import (
	"errors"
	"strings"
	"testing"
)

func TestPrettyText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"12", "12"},
		{"{int (int)} 0x401136 <f>", "{int (int)} 0x401136 <f>"},
		{"{1, 2, 3}", "{1, 2, 3}"},
		{"{x = 1, y = 2}", "{\n  x = 1,\n  y = 2\n}"},
		{`{name = 0x4 "a, {b} = c", v = {1, 2}}`, "{\n  name = 0x4 \"a, {b} = c\",\n  v = {1, 2}\n}"},
		{"{{x = 1, y = 2}, {x = 4, y = 6}}", "{{\n    x = 1,\n    y = 2\n  }, {\n    x = 4,\n    y = 6\n  }}"},
		{"{p = {q = 1}, c = 'x'}", "{\n  p = {\n    q = 1\n  },\n  c = 'x'\n}"},
	}
	for _, tc := range tests {
		if got := prettyText(tc.in); got != tc.want {
			t.Errorf("prettyText(%q) =\n%s\nwant\n%s", tc.in, got, tc.want)
		}
	}
}

func TestEchoText(t *testing.T) {
	tests := []struct{ in, want string }{
		{`hi`, "hi"},
		{`a\nb\tc`, "a\nb\tc"},
		{`\101\102`, "AB"},
		{`quote \" and \\`, `quote " and \`},
		{`no newline\`, "no newline"},
	}
	for _, tc := range tests {
		if got := echoText(tc.in); got != tc.want {
			t.Errorf("echoText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// literal is a printf argument with known values, to test the formatter
// apart from a recording (the e2e tests compare it with gdb's).
type literal struct {
	n   uint64
	f   float64
	s   string
	err error
}

func (l literal) integer() (uint64, error) { return l.n, l.err }
func (l literal) float() (float64, error)  { return l.f, l.err }
func (l literal) str() (string, error)     { return l.s, l.err }

func TestFormatPrintf(t *testing.T) {
	neg := literal{n: 0xffffffff}
	tests := []struct {
		format string
		args   []printfValue
		want   string
		err    string
	}{
		{"%d %u %x\n", []printfValue{neg, neg, neg}, "-1 4294967295 ffffffff\n", ""},
		{"%ld %lu", []printfValue{literal{n: ^uint64(0)}, literal{n: ^uint64(0)}}, "-1 18446744073709551615", ""},
		{"%5d|%-4s|%c|%%", []printfValue{literal{n: 42}, literal{s: "ab"}, literal{n: 65}}, "   42|ab  |A|%", ""},
		{"%f %e %p", []printfValue{literal{f: 12.5}, literal{f: 12.5}, literal{n: 0x4010}}, "12.500000 1.250000e+01 0x4010", ""},
		{"%hhx %hd", []printfValue{literal{n: 0x1ff}, literal{n: 0xffff}}, "ff -1", ""},
		{"%d %d", []printfValue{literal{n: 1}}, "", "Bad format string, missing '\"'"},
		{"%d", []printfValue{literal{n: 1}, literal{n: 2}}, "", "Wrong number of arguments for specified format-string"},
		{"%y", []printfValue{literal{n: 1}}, "", "Unrecognized format specifier 'y' in printf"},
		{"%s", []printfValue{literal{err: errors.New("Cannot access memory at address 0x0")}}, "", "Cannot access memory at address 0x0"},
	}
	for _, tc := range tests {
		got, err := formatPrintf(tc.format, tc.args)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("printf %q: error %v, want %q", tc.format, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("printf %q = %q, %v; want %q", tc.format, got, err, tc.want)
		}
	}
}

func TestPrintfArgs(t *testing.T) {
	tests := []struct {
		in, format string
		exprs      []string
		bad        bool
	}{
		{`"x=%d\n", a[1], f(b, c)`, "x=%d\n", []string{"a[1]", "f(b, c)"}, false},
		{`"s, %s", "a,b"`, "s, %s", []string{`"a,b"`}, false},
		{`"only"`, "only", nil, false},
		{`no quotes`, "", nil, true},
		{`"open`, "", nil, true},
	}
	for _, tc := range tests {
		f, exprs, err := printfArgs(tc.in)
		if (err != nil) != tc.bad || f != tc.format || strings.Join(exprs, "|") != strings.Join(tc.exprs, "|") {
			t.Errorf("printfArgs(%q) = %q %q %v", tc.in, f, exprs, err)
		}
	}
}

func TestHasAssignment(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"x = 3", true}, {"x=3", true}, {"a[i] += 2", true}, {"i++", true}, {"--i", true},
		{"x == 3", false}, {"x <= 3", false}, {"x >= 3", false}, {"x != 3", false},
		{`s == "a = b"`, false}, {"c == '='", false}, {"p->next", false}, {"a - -1", false},
	}
	for _, tc := range tests {
		if got := hasAssignment(tc.in); got != tc.want {
			t.Errorf("hasAssignment(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestCutFull(t *testing.T) {
	tests := []struct {
		in, rest string
		full     bool
	}{
		{"full", "", true}, {"-full 3", "3", true}, {"3 full", "3", true}, {"3", "3", false}, {"", "", false},
	}
	for _, tc := range tests {
		rest, full := cutFull(tc.in)
		if rest != tc.rest || full != tc.full {
			t.Errorf("cutFull(%q) = %q %v, want %q %v", tc.in, rest, full, tc.rest, tc.full)
		}
	}
}
