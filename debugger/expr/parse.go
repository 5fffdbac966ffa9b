package expr

// The parser: C's precedence climbing over the tokens, with gdb's
// additions ({T} addr, x@n). Nesting is bounded so that a hostile
// expression cannot exhaust the stack.

import (
	"fmt"
	"strconv"
	"strings"
)

type parser struct {
	src  string
	toks []token
	pos  int
	// isType says whether a name is a type (and not a variable) in the
	// Scope; nil when parsing without one.
	isType    func(name string) bool
	ambiguous bool
	// depth is the nesting of the node being parsed: its parentheses,
	// prefix operators and conditionals, and the operators chained
	// before it (a+b+c nests as ((a+b)+c)).
	depth int
}

// maxNesting bounds the nesting of an expression. The parser and the
// evaluator recurse once per level, and a stack overflow ends the whole
// process (an MCP server, the TUI) instead of failing the command.
const maxNesting = 1000

// errTooDeep is the error for an expression nested deeper than maxNesting.
var errTooDeep = fmt.Errorf("Expression nested too deeply (more than %d levels).", maxNesting)

// nest enters one more level; the caller restores p.depth on return.
func (p *parser) nest() error {
	p.depth++
	if p.depth > maxNesting {
		return errTooDeep
	}
	return nil
}

func newParser(src string, isType func(string) bool) (*parser, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	return &parser{src: src, toks: toks, isType: isType}, nil
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) peekAt(k int) token {
	if p.pos+k < len(p.toks) {
		return p.toks[p.pos+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *parser) is(text string) bool {
	t := p.toks[p.pos]
	return t.kind == tokPunct && t.text == text
}

func (p *parser) accept(text string) bool {
	if p.is(text) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) errHere() error { return syntaxError(p.src, p.peek().pos) }

func (p *parser) expect(text string) error {
	if !p.accept(text) {
		return p.errHere()
	}
	return nil
}

func (p *parser) parse() (Node, error) {
	if p.peek().kind == tokEOF {
		return nil, p.errHere()
	}
	n, err := p.parseComma()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF {
		return nil, p.errHere()
	}
	return n, nil
}

func (p *parser) parseComma() (Node, error) {
	defer func(depth int) { p.depth = depth }(p.depth)
	x, err := p.parseAssign()
	if err != nil {
		return nil, err
	}
	for p.accept(",") {
		if err := p.nest(); err != nil {
			return nil, err
		}
		y, err := p.parseAssign()
		if err != nil {
			return nil, err
		}
		x = &Binary{Op: ",", X: x, Y: y}
	}
	return x, nil
}

// parseUntil parses a comma expression that the token close ends: the
// inside of parentheses, brackets, or a conditional's middle.
func (p *parser) parseUntil(close string) (Node, error) {
	n, err := p.parseComma()
	if err != nil {
		return nil, err
	}
	if err := p.expect(close); err != nil {
		return nil, err
	}
	return n, nil
}

func (p *parser) parseAssign() (Node, error) {
	x, err := p.parseCond()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tokPunct {
		switch t.text {
		case "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=":
			return nil, fmt.Errorf("Assignment (%s) is not supported: the recorded execution cannot be changed.", t.text)
		}
	}
	return x, nil
}

func (p *parser) parseCond() (Node, error) {
	defer func(depth int) { p.depth = depth }(p.depth)
	c, err := p.parseBinary(1)
	if err != nil {
		return nil, err
	}
	if !p.accept("?") {
		return c, nil
	}
	if err := p.nest(); err != nil {
		return nil, err
	}
	a, err := p.parseUntil(":")
	if err != nil {
		return nil, err
	}
	b, err := p.parseCond()
	if err != nil {
		return nil, err
	}
	return &Cond{Cond: c, Then: a, Else: b}, nil
}

// binaryPrec is the precedence of the binary operators, as in gdb's
// c-exp.y (higher binds tighter); '@' sits between shifts and + -.
var binaryPrec = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5,
	"==": 6, "!=": 6,
	"<": 7, ">": 7, "<=": 7, ">=": 7,
	"<<": 8, ">>": 8,
	"@": 9,
	"+": 10, "-": 10,
	"*": 11, "/": 11, "%": 11,
}

func (p *parser) parseBinary(minPrec int) (Node, error) {
	defer func(depth int) { p.depth = depth }(p.depth)
	x, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		prec, ok := binaryPrec[t.text]
		if t.kind != tokPunct || !ok || prec < minPrec {
			return x, nil
		}
		if err := p.nest(); err != nil {
			return nil, err
		}
		p.next()
		y, err := p.parseBinary(prec + 1)
		if err != nil {
			return nil, err
		}
		x = &Binary{Op: t.text, X: x, Y: y}
	}
}

func (p *parser) parseUnary() (Node, error) {
	defer func(depth int) { p.depth = depth }(p.depth)
	if err := p.nest(); err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind == tokPunct {
		switch t.text {
		case "-", "+", "!", "~", "*", "&":
			p.next()
			x, err := p.parseUnary()
			if err != nil {
				return nil, err
			}
			return &Unary{Op: t.text, X: x}, nil
		case "++", "--":
			return nil, fmt.Errorf("Increment and decrement (%s) are not supported: the recorded execution cannot be changed.", t.text)
		case "(":
			if n, ok, err := p.tryCast(); ok || err != nil {
				return n, err
			}
		case "{":
			p.next()
			tn, ok := p.tryTypeName(true)
			if !ok {
				return nil, p.errHere()
			}
			if err := p.expect("}"); err != nil {
				return nil, err
			}
			x, err := p.parseUnary()
			if err != nil {
				return nil, err
			}
			return &TypeAt{Type: tn, Addr: x}, nil
		}
	}
	if t.kind == tokIdent && t.text == "sizeof" {
		p.next()
		if p.is("(") {
			save := p.pos
			p.next()
			if tn, ok := p.tryTypeName(true); ok && p.is(")") && (!tn.simple() || p.isType != nil && p.isType(tn.Name)) {
				p.next()
				return &Sizeof{Type: tn}, nil
			}
			p.pos = save
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return &Sizeof{X: x}, nil
	}
	return p.parsePostfix()
}

func (p *parser) parsePostfix() (Node, error) {
	defer func(depth int) { p.depth = depth }(p.depth)
	x, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	for {
		if err := p.nest(); err != nil {
			return nil, err
		}
		switch {
		case p.is("."), p.is("->"):
			arrow := p.next().text == "->"
			t := p.next()
			if t.kind != tokIdent && t.kind != tokInt {
				return nil, syntaxError(p.src, t.pos)
			}
			x = &Member{X: x, Name: t.text, Arrow: arrow}
		case p.is("["):
			p.next()
			i, err := p.parseUntil("]")
			if err != nil {
				return nil, err
			}
			x = &Index{X: x, Index: i}
		case p.is("("):
			p.next()
			var args []Node
			for !p.is(")") {
				a, err := p.parseAssign()
				if err != nil {
					return nil, err
				}
				args = append(args, a)
				if !p.accept(",") {
					break
				}
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			x = &Call{Fn: x, Args: args}
		case p.is("++"), p.is("--"):
			return nil, fmt.Errorf("Increment and decrement (%s) are not supported: the recorded execution cannot be changed.", p.peek().text)
		default:
			return x, nil
		}
	}
}

func (p *parser) parsePrimary() (Node, error) {
	t := p.peek()
	switch t.kind {
	case tokIdent:
		if t.quoted {
			p.next()
			name := t.text
			for p.is("::") && p.peekAt(1).kind == tokIdent {
				p.next()
				name += "::" + p.next().text
			}
			return &Ident{Name: name}, nil
		}
		if cTypeWords[t.text] || t.text == "struct" || t.text == "union" || t.text == "enum" || t.text == "class" {
			// A functional cast, C++'s int(x).
			tn, ok := p.tryTypeName(false)
			if !ok {
				return nil, p.errHere()
			}
			if !p.is("(") {
				if len(tn.Ops) == 0 && !strings.Contains(tn.Name, " ") {
					// A one-word type as an operand: Go's (*int)(p) or
					// sizeof int; an error anywhere else.
					return &Ident{Name: tn.Name}, nil
				}
				return nil, p.errHere()
			}
			p.next()
			x, err := p.parseUntil(")")
			if err != nil {
				return nil, err
			}
			return &Cast{Type: tn, X: x}, nil
		}
		name, ok := p.qualifiedName(false, false)
		if !ok {
			return nil, p.errHere()
		}
		return &Ident{Name: name}, nil
	case tokPunct:
		switch t.text {
		case "(":
			p.next()
			return p.parseUntil(")")
		case "::":
			name, ok := p.qualifiedName(false, false)
			if !ok {
				return nil, p.errHere()
			}
			return &Ident{Name: name}, nil
		}
	case tokInt:
		p.next()
		v, base, suffix, err := parseIntText(t.text, true)
		if err != nil {
			return nil, err
		}
		return &IntLit{Text: t.text, Value: v, Base: base, Suffix: suffix}, nil
	case tokFloat:
		p.next()
		text := strings.ReplaceAll(t.text, "_", "")
		for _, suffix := range []string{"f32", "f64", "f", "l", ""} {
			if len(text) <= len(suffix) || !strings.EqualFold(text[len(text)-len(suffix):], suffix) {
				continue
			}
			num := text[:len(text)-len(suffix)]
			if last := num[len(num)-1]; !isDigit(last) && last != '.' {
				continue
			}
			if f, err := strconv.ParseFloat(num, 64); err == nil {
				return &FloatLit{Text: t.text, Value: f, Suffix: suffix}, nil
			}
		}
		return nil, fmt.Errorf("Invalid number \"%s\".", t.text)
	case tokChar:
		p.next()
		return &CharLit{Text: t.text, Value: t.r}, nil
	case tokString:
		p.next()
		s := t.str
		for p.peek().kind == tokString { // "a" "b" concatenates
			s += p.next().str
		}
		return &StringLit{Value: s}, nil
	case tokDollar:
		p.next()
		return &Dollar{Name: t.str}, nil
	}
	return nil, p.errHere()
}

// parseIntText parses an integer literal with its suffix. withSuffix
// allows a suffix (C's u/l, Rust's u8/i64/usize).
func parseIntText(text string, withSuffix bool) (v uint64, base int, suffix string, err error) {
	bad := fmt.Errorf("Invalid number \"%s\".", text)
	s := text
	base = 10
	switch {
	case len(s) > 1 && s[0] == '0' && s[1]|0x20 == 'x':
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0' && s[1]|0x20 == 'b':
		base, s = 2, s[2:]
	case len(s) > 1 && s[0] == '0' && isDigit(s[1]):
		base, s = 8, s[1:]
	}
	end := 0
	for end < len(s) && (digitVal(s[end]) < base || s[end] == '_') {
		end++
	}
	digits := strings.ReplaceAll(s[:end], "_", "")
	suffix = strings.ToLower(s[end:])
	if digits == "" {
		return 0, 0, "", bad
	}
	if suffix != "" {
		if !withSuffix || !validIntSuffix(suffix) {
			return 0, 0, "", bad
		}
	}
	v, err = strconv.ParseUint(digits, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, 0, "", fmt.Errorf("Numeric constant too large.")
		}
		return 0, 0, "", bad
	}
	return v, base, suffix, nil
}

func digitVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c|0x20 && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return 99
}

func validIntSuffix(s string) bool {
	switch s {
	case "u", "l", "ul", "lu", "ll", "ull", "llu":
		return true
	case "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize":
		return true
	}
	return false
}
