package debugger

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/debugger/expr"
	"github.com/rewind-debugger/rewind/dwarf"
)

// echoText is gdb's echo: C escapes (\n, \t, \", \\, \a, \NNN octal...),
// a trailing backslash meaning no newline; the text as is, no newline
// added.
func echoText(args string) string {
	var b strings.Builder
	for i := 0; i < len(args); i++ {
		c := args[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(args) {
			break // a trailing backslash: nothing, not even a newline
		}
		r, n := unescape(args[i+1:])
		b.WriteString(r)
		i += n
	}
	return b.String()
}

// unescape reads one C escape after its backslash: what it stands for and
// how many bytes it took.
func unescape(s string) (string, int) {
	switch s[0] {
	case 'n':
		return "\n", 1
	case 't':
		return "\t", 1
	case 'r':
		return "\r", 1
	case 'a':
		return "\a", 1
	case 'b':
		return "\b", 1
	case 'f':
		return "\f", 1
	case 'v':
		return "\v", 1
	case 'e':
		return "\x1b", 1
	}
	if s[0] >= '0' && s[0] <= '7' {
		n := 0
		v := 0
		for n < 3 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
			v = v*8 + int(s[n]-'0')
			n++
		}
		return string([]byte{byte(v)}), n
	}
	return s[:1], 1 // \\ \" \' and any other: the character itself
}

// printfArgs splits printf's arguments: the quoted format, then the
// expressions separated by top-level commas.
func printfArgs(args string) (string, []string, error) {
	args = strings.TrimSpace(args)
	if !strings.HasPrefix(args, `"`) {
		return "", nil, errors.New("Bad format string")
	}
	end := -1
	for i := 1; i < len(args); i++ {
		if args[i] == '\\' {
			i++
			continue
		}
		if args[i] == '"' {
			end = i
			break
		}
	}
	if end < 0 {
		return "", nil, errors.New("Bad format string, non-terminated '\"'")
	}
	format := echoText(args[1:end])
	rest := strings.TrimSpace(args[end+1:])
	if rest == "" {
		return format, nil, nil
	}
	if rest[0] != ',' {
		return "", nil, errors.New("Invalid argument syntax")
	}
	return format, items(rest[1:]), nil
}

// printfValue is what a printf argument gives a conversion: its integer,
// its float, or (for %s) the string it points to.
type printfValue interface {
	integer() (uint64, error)
	float() (float64, error)
	str() (string, error)
}

// sessionValue is a printf argument evaluated in the session.
type sessionValue struct {
	s *Session
	v dwarf.Value
}

func (a sessionValue) integer() (uint64, error) {
	return expr.Address(a.v, a.s.mem())
}

func (a sessionValue) float() (float64, error) {
	t := a.v.Type
	for t != nil && (t.Kind == dwarf.KindTypedef || t.Kind == dwarf.KindQualified) {
		t = t.Elem
	}
	if t != nil && t.Kind == dwarf.KindBase && t.Encoding == dwarf.ATEFloat {
		f, err := strconv.ParseFloat(a.s.format(a.v, 0), 64)
		if err == nil {
			return f, nil
		}
	}
	n, err := a.integer()
	return float64(int64(n)), err
}

func (a sessionValue) str() (string, error) {
	addr, err := a.integer()
	if err != nil {
		return "", err
	}
	out, _, err := dwarf.CString(a.s.mem(), addr, maxPrintfString)
	if err != nil {
		return "", fmt.Errorf("Cannot access memory at address %#x", addr)
	}
	return string(out), nil
}

// maxPrintfString bounds what printf's %s reads of a string.
const maxPrintfString = 1 << 20

// cmdPrintf implements printf "FORMAT", ARGS... with gdb's conversions.
func (s *Session) cmdPrintf(args string, res *Result) error {
	format, exprs, err := printfArgs(args)
	if err != nil {
		return err
	}
	vals := make([]printfValue, len(exprs))
	for i, e := range exprs {
		if hasAssignment(e) {
			return errCannotChange(e)
		}
		v, err := s.eval(e)
		if err != nil {
			return err
		}
		vals[i] = sessionValue{s, v}
	}
	out, err := formatPrintf(format, vals)
	if err != nil {
		return err
	}
	res.Text, res.Value, res.unterminated = out, out, true
	return nil
}

// formatPrintf renders gdb's printf: %d %i %u %x %X %o %c %s %f %e %g %p
// and %%, with flags, width, precision and the h/l/ll/z length modifiers.
func formatPrintf(format string, vals []printfValue) (string, error) {
	var b strings.Builder
	n := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0123456789.", format[j]) >= 0 {
			j++
		}
		spec := format[i+1 : j]
		size := 4
		for j < len(format) && strings.IndexByte("hlLqjzt", format[j]) >= 0 {
			switch format[j] {
			case 'h':
				size /= 2
			case 'l', 'L', 'q', 'j', 'z', 't':
				size = 8
			}
			j++
		}
		if j >= len(format) {
			return "", errors.New("Bad format string")
		}
		conv := format[j]
		i = j
		if conv == '%' {
			b.WriteByte('%')
			continue
		}
		if n >= len(vals) {
			return "", errors.New("Bad format string, missing '\"'")
		}
		v := vals[n]
		n++
		switch conv {
		case 'd', 'i':
			x, err := v.integer()
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%"+spec+"d", signExtend(x, size))
		case 'u', 'x', 'X', 'o':
			x, err := v.integer()
			if err != nil {
				return "", err
			}
			if size < 8 {
				x &= 1<<(8*uint(max(size, 1))) - 1
			}
			verb := string(conv)
			if conv == 'u' {
				verb = "d"
			}
			fmt.Fprintf(&b, "%"+spec+verb, x)
		case 'c':
			x, err := v.integer()
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%"+spec+"s", string([]byte{byte(x)}))
		case 's':
			str, err := v.str()
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%"+spec+"s", str)
		case 'f', 'F', 'e', 'E', 'g', 'G':
			f, err := v.float()
			if err != nil {
				return "", err
			}
			if !strings.Contains(spec, ".") && (conv == 'f' || conv == 'F' || conv == 'e' || conv == 'E') {
				spec += ".6" // C's default precision
			}
			fmt.Fprintf(&b, "%"+spec+string(conv), f)
		case 'p':
			x, err := v.integer()
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%"+spec+"s", fmt.Sprintf("%#x", x))
		default:
			return "", fmt.Errorf("Unrecognized format specifier '%c' in printf", conv)
		}
	}
	if n < len(vals) {
		return "", errors.New("Wrong number of arguments for specified format-string")
	}
	return b.String(), nil
}

// signExtend reads the low size bytes of x as a signed integer.
func signExtend(x uint64, size int) int64 {
	if size >= 8 {
		return int64(x)
	}
	shift := uint(64 - 8*max(size, 1))
	return int64(x<<shift) >> shift
}
