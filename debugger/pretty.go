package debugger

import "strings"

// prettyText lays out a value printed on one line ({a = 1, b = {2, 3}})
// as gdb's set print pretty on does: each struct member on a line of its
// own, two spaces deeper than its struct; arrays stay on their line, and
// the structs in them open after the array's brace. A text that is not
// one brace group (a scalar, a function's {int (int)} 0x401136 <f>) is
// returned as it is.
func prettyText(s string) string {
	if !strings.HasPrefix(s, "{") || closing(s, 0) != len(s)-1 {
		return s
	}
	var b strings.Builder
	prettyValue(&b, s, 0)
	return b.String()
}

// closing is the index of the brace that closes the one at open (-1 if
// none), skipping strings and characters.
func closing(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			i = skipQuoted(s, i)
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// skipQuoted returns the index of the quote closing the one at i.
func skipQuoted(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		if s[j] == '\\' {
			j++
		} else if s[j] == q {
			return j
		}
	}
	return len(s) - 1
}

// items splits the inside of a brace group at its top-level commas.
func items(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			i = skipQuoted(s, i)
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// member splits "name = value" (ok false for an array element).
func member(item string) (string, string, bool) {
	i := strings.Index(item, " = ")
	if i < 0 || strings.ContainsAny(item[:i], "{\"'") {
		return "", item, false
	}
	return item[:i], item[i+3:], true
}

// prettyValue writes one value at an indentation.
func prettyValue(b *strings.Builder, v string, indent int) {
	if !strings.HasPrefix(v, "{") || closing(v, 0) != len(v)-1 {
		b.WriteString(v)
		return
	}
	its := items(v[1 : len(v)-1])
	named := false
	for _, it := range its {
		if _, _, ok := member(it); ok {
			named = true
		}
	}
	if !named {
		b.WriteByte('{')
		for i, it := range its {
			if i > 0 {
				b.WriteString(", ")
			}
			prettyValue(b, it, indent+2)
		}
		b.WriteByte('}')
		return
	}
	b.WriteString("{\n")
	for i, it := range its {
		name, val, _ := member(it)
		b.WriteString(strings.Repeat(" ", indent+2))
		if name != "" {
			b.WriteString(name + " = ")
		}
		prettyValue(b, val, indent+2)
		if i < len(its)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat(" ", indent) + "}")
}
