package expr

// The lexer: C's tokens, with the literals of C, Go and Rust (suffixes
// such as 5u8) and gdb's own ($reg, 'file.c'::name).

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokInt
	tokFloat
	tokChar
	tokString
	tokDollar
	tokPunct
)

type token struct {
	kind tokKind
	text string // the source text (an operator, a name, a literal as written)
	pos  int    // byte offset in the source
	str  string // the value of a string literal, the name of a $ token
	r    rune   // the value of a char literal
	// quoted marks a name written in single quotes, which is never a
	// keyword.
	quoted bool
}

// puncts are the operators, longest first.
var puncts = []string{
	"<<=", ">>=", "->", "::", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	"+", "-", "*", "/", "%", "<", ">", "=", "!", "~", "&", "|", "^", "?", ":", ".", ",",
	"(", ")", "[", "]", "{", "}", "@",
}

func syntaxError(src string, pos int) error {
	return fmt.Errorf("A syntax error in expression, near `%s'.", src[min(pos, len(src)):])
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
			i++
		}
		if i >= len(src) {
			toks = append(toks, token{kind: tokEOF, pos: i})
			return toks, nil
		}
		start, c := i, src[i]
		// After a '.' that accesses a member, digits are a tuple field
		// (Rust's x.0), not the start of a float.
		afterDot := len(toks) > 0 && toks[len(toks)-1].kind == tokPunct && toks[len(toks)-1].text == "."
		// A '.' directly after an operand is member access even when a
		// digit follows.
		afterOperand := false
		if len(toks) > 0 {
			switch last := toks[len(toks)-1]; last.kind {
			case tokIdent, tokInt, tokFloat, tokChar, tokString, tokDollar:
				afterOperand = true
			case tokPunct:
				afterOperand = last.text == ")" || last.text == "]"
			}
		}
		switch {
		case isIdentStart(c):
			for i < len(src) && isIdentChar(src[i]) {
				i++
			}
			toks = append(toks, token{kind: tokIdent, text: src[start:i], pos: start})
		case c == '$':
			i++
			for i < len(src) && (isIdentChar(src[i]) || src[i] == '$') {
				i++
			}
			toks = append(toks, token{kind: tokDollar, text: src[start:i], str: src[start+1 : i], pos: start})
		case isDigit(c) && afterDot:
			for i < len(src) && isDigit(src[i]) {
				i++
			}
			toks = append(toks, token{kind: tokInt, text: src[start:i], pos: start})
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]) && !afterOperand:
			kind := tokInt
			if c == '0' && i+1 < len(src) && (src[i+1]|0x20 == 'x' || src[i+1]|0x20 == 'b') {
				i += 2
				for i < len(src) && (isIdentChar(src[i])) {
					i++
				}
			} else {
				for i < len(src) && (isDigit(src[i]) || src[i] == '_') {
					i++
				}
				if i < len(src) && src[i] == '.' {
					kind = tokFloat
					i++
					for i < len(src) && (isDigit(src[i]) || src[i] == '_') {
						i++
					}
				}
				if i < len(src) && src[i]|0x20 == 'e' {
					j := i + 1
					if j < len(src) && (src[j] == '+' || src[j] == '-') {
						j++
					}
					if j < len(src) && isDigit(src[j]) {
						kind = tokFloat
						i = j
						for i < len(src) && isDigit(src[i]) {
							i++
						}
					}
				}
				for i < len(src) && isIdentChar(src[i]) { // suffix
					i++
				}
			}
			toks = append(toks, token{kind: kind, text: src[start:i], pos: start})
		case c == '\'':
			r, n, err := unquoteChar(src[i+1:], '\'')
			if err == nil && (i+1+n >= len(src) || src[i+1+n] != '\'') && src[i+1] != '\\' {
				// gdb's quoted symbol: 'file.c', 'github.com/x/y.Var',
				// 'ns::f(int)'.
				if j := strings.IndexByte(src[i+1:], '\''); j > 0 {
					toks = append(toks, token{kind: tokIdent, text: src[i+1 : i+1+j], pos: start, quoted: true})
					i += j + 2
					continue
				}
			}
			if err != nil {
				return nil, err
			}
			i += 1 + n
			if i >= len(src) || src[i] != '\'' {
				return nil, fmt.Errorf("Unmatched single quote.")
			}
			i++
			toks = append(toks, token{kind: tokChar, text: src[start:i], r: r, pos: start})
		case c == '"':
			var b strings.Builder
			i++
			for {
				if i >= len(src) {
					return nil, fmt.Errorf("Unterminated string in expression.")
				}
				if src[i] == '"' {
					i++
					break
				}
				r, n, err := unquoteChar(src[i:], '"')
				if err != nil {
					return nil, err
				}
				if r < 256 && n > 1 && src[i] == '\\' {
					b.WriteByte(byte(r)) // '\xff' is one byte, as in C
				} else {
					b.WriteRune(r)
				}
				i += n
			}
			toks = append(toks, token{kind: tokString, text: src[start:i], str: b.String(), pos: start})
		default:
			found := false
			for _, p := range puncts {
				if strings.HasPrefix(src[i:], p) {
					toks = append(toks, token{kind: tokPunct, text: p, pos: start})
					i += len(p)
					found = true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("Invalid character '%c' in expression.", c)
			}
		}
	}
}

// unquoteChar reads one character or escape sequence of a char or string
// literal and returns it with the number of bytes it took.
func unquoteChar(s string, quote byte) (rune, int, error) {
	if len(s) == 0 || s[0] == quote && quote == '\'' {
		if quote == '\'' {
			return 0, 0, fmt.Errorf("Empty character constant.")
		}
		return 0, 0, fmt.Errorf("Unterminated string in expression.")
	}
	if s[0] != '\\' {
		r, n := utf8.DecodeRuneInString(s)
		return r, n, nil
	}
	if len(s) < 2 {
		return 0, 0, fmt.Errorf("Unmatched single quote.")
	}
	switch s[1] {
	case 'n':
		return '\n', 2, nil
	case 't':
		return '\t', 2, nil
	case 'r':
		return '\r', 2, nil
	case 'a':
		return 7, 2, nil
	case 'b':
		return 8, 2, nil
	case 'f':
		return 12, 2, nil
	case 'v':
		return 11, 2, nil
	case 'e':
		return 27, 2, nil
	case '\\', '\'', '"', '?':
		return rune(s[1]), 2, nil
	case 'x':
		n := 2
		var v rune
		for n < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[n]) >= 0 {
			d, _ := strconv.ParseUint(s[n:n+1], 16, 8)
			v = v*16 + rune(d)
			n++
		}
		if n == 2 {
			return 0, 0, fmt.Errorf("\\x escape without a following hex digit")
		}
		return v, n, nil
	}
	if '0' <= s[1] && s[1] <= '7' {
		n := 1
		var v rune
		for n < len(s) && n < 4 && '0' <= s[n] && s[n] <= '7' {
			v = v*8 + rune(s[n]-'0')
			n++
		}
		return v, n, nil
	}
	r, n := utf8.DecodeRuneInString(s[1:])
	return r, 1 + n, nil
}
