// Package expr parses and evaluates the C-like expressions of the
// debugger's print, watch, `break ... if`, history and x commands, with
// gdb's grammar and semantics: C precedence, integer promotions and the
// usual arithmetic conversions, pointer arithmetic, casts, sizeof, gdb's
// `@` (artificial arrays) and `{type} addr`, plus the Go, Rust and C++
// forms users type (pkg.Var, ns::var, slices, strings, references).
//
// Parse turns source text into a tree of Nodes; Eval and EvalNode evaluate
// a tree against a Scope (the variables, types, registers and memory of the
// selected frame) to a dwarf.Value. Values in memory stay lazy: an lvalue
// is returned as an address and a type, and memory is read only when an
// operator needs the contents.
package expr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Node is one node of a parsed expression. String renders it back with
// every binary and conditional operation in parentheses, which shows how
// the expression was grouped: Parse("1 + 2 * 3").String() is
// "(1 + (2 * 3))".
type Node interface {
	String() string
	node()
}

// Ident is a name: a variable, or a type name where one may stand
// (sizeof, Go conversions). C++ and Rust qualified names ("ns::var") are
// one Ident; Go's "pkg.Var" is a Member of an Ident, which the evaluator
// first tries as the variable "pkg.Var".
type Ident struct {
	Name string
}

// Dollar is `$name`: a register ($rip, $pc, $sp, $fp, $eax, ...), or a
// value of the history or a convenience variable ($, $1, $$2, $_, $foo)
// when the Scope implements Convenience.
type Dollar struct {
	Name string // without the '$'
}

// IntLit is an integer literal.
type IntLit struct {
	Text   string // as written
	Value  uint64
	Base   int    // 10, 16, 8 or 2
	Suffix string // "u", "l", "ul", "ll", "ull" (lower case), or a Rust suffix ("u8", "usize")
}

// FloatLit is a floating-point literal.
type FloatLit struct {
	Text   string
	Value  float64
	Suffix string // "f" for float, "l" for long double, or a Rust suffix ("f32")
}

// CharLit is a character literal ('a', '\n', '\0', '\x41', '\101').
type CharLit struct {
	Text  string
	Value rune
}

// StringLit is a string literal. It evaluates to a char array that is not
// in memory; == and != compare its contents with char arrays, char
// pointers and strings.
type StringLit struct {
	Value string
}

// Unary is a prefix operator: - + ! ~ * &.
type Unary struct {
	Op string
	X  Node
}

// Binary is a binary operator: * / % + - << >> < <= > >= == != & ^ | && ||,
// gdb's @ and the comma operator.
type Binary struct {
	Op   string
	X, Y Node
}

// Cond is the conditional operator c ? a : b.
type Cond struct {
	Cond, Then, Else Node
}

// Member is field access: X.Name, or X->Name when Arrow is set. Both work
// on structs and on pointers to structs, as in gdb.
type Member struct {
	X     Node
	Name  string
	Arrow bool
}

// Index is X[Index].
type Index struct {
	X, Index Node
}

// Call is Fn(Args...). The recorded process cannot run code, so the only
// calls evaluated are conversions written as calls (Go's uint8(x),
// (*main.T)(p), C++'s int(x)) and Go's len and cap.
type Call struct {
	Fn   Node
	Args []Node
}

// Cast is (Type)X.
type Cast struct {
	Type *TypeName
	X    Node
}

// Sizeof is sizeof(Type) or sizeof X; exactly one of Type and X is set.
type Sizeof struct {
	Type *TypeName
	X    Node
}

// TypeAt is gdb's {Type} Addr: the object of type Type at address Addr.
type TypeAt struct {
	Type *TypeName
	Addr Node
}

// TypeName is a type written in an expression: a base name and the
// pointer, reference and array declarators after it, applied left to
// right ("struct node *" is Name "struct node", Ops "*").
type TypeName struct {
	// Name is the base type as gdb spells it: "int", "unsigned long",
	// "struct node", "std::string", "main.T".
	Name string
	// Tag is "struct", "union", "enum" or "class" when the name was
	// written with one; Name then includes it.
	Tag string
	// Builtin marks a name made of C type keywords (int, unsigned long...).
	Builtin bool
	Ops     []TypeOp
}

// TypeOp is one declarator of a TypeName.
type TypeOp struct {
	Kind byte  // '*' pointer, '&' reference, '[' array
	N    int64 // the element count of an array
}

func (*Ident) node()     {}
func (*Dollar) node()    {}
func (*IntLit) node()    {}
func (*FloatLit) node()  {}
func (*CharLit) node()   {}
func (*StringLit) node() {}
func (*Unary) node()     {}
func (*Binary) node()    {}
func (*Cond) node()      {}
func (*Member) node()    {}
func (*Index) node()     {}
func (*Call) node()      {}
func (*Cast) node()      {}
func (*Sizeof) node()    {}
func (*TypeAt) node()    {}

func (n *Ident) String() string     { return n.Name }
func (n *Dollar) String() string    { return "$" + n.Name }
func (n *IntLit) String() string    { return n.Text }
func (n *FloatLit) String() string  { return n.Text }
func (n *CharLit) String() string   { return n.Text }
func (n *StringLit) String() string { return strconv.Quote(n.Value) }
func (n *Unary) String() string     { return n.Op + n.X.String() }
func (n *Binary) String() string {
	if n.Op == "," {
		return "(" + n.X.String() + ", " + n.Y.String() + ")"
	}
	return "(" + n.X.String() + " " + n.Op + " " + n.Y.String() + ")"
}
func (n *Cond) String() string {
	return "(" + n.Cond.String() + " ? " + n.Then.String() + " : " + n.Else.String() + ")"
}
func (n *Member) String() string {
	if n.Arrow {
		return n.X.String() + "->" + n.Name
	}
	return n.X.String() + "." + n.Name
}
func (n *Index) String() string { return n.X.String() + "[" + n.Index.String() + "]" }
func (n *Call) String() string {
	args := make([]string, len(n.Args))
	for i, a := range n.Args {
		args[i] = a.String()
	}
	return n.Fn.String() + "(" + strings.Join(args, ", ") + ")"
}
func (n *Cast) String() string   { return "(" + n.Type.String() + ")" + n.X.String() }
func (n *TypeAt) String() string { return "{" + n.Type.String() + "} " + n.Addr.String() }
func (n *Sizeof) String() string {
	if n.Type != nil {
		return "sizeof(" + n.Type.String() + ")"
	}
	return "sizeof(" + n.X.String() + ")"
}

// String renders the type as gdb does ("struct node *", "int **", "char [8]").
func (t *TypeName) String() string {
	var b strings.Builder
	b.WriteString(t.Name)
	for i, op := range t.Ops {
		switch op.Kind {
		case '*', '&':
			if i == 0 || t.Ops[i-1].Kind == '[' {
				b.WriteByte(' ')
			}
			b.WriteByte(op.Kind)
		case '[':
			if i == 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "[%d]", op.N)
		}
	}
	return b.String()
}

// ambiguous wraps a tree parsed without a Scope that holds a parenthesised
// name followed by * & - or +, as in (T)*p, which is a cast when T is a
// type and arithmetic when T is a variable. EvalNode parses the source
// again with the Scope's names.
type ambiguous struct {
	src string
	Node
}

// Parse parses an expression. Syntax errors are worded as gdb words them:
// "A syntax error in expression, near `...'.".
func Parse(src string) (Node, error) {
	p, err := newParser(src, nil)
	if err != nil {
		return nil, err
	}
	n, err := p.parse()
	if err != nil {
		return nil, err
	}
	if p.ambiguous {
		return &ambiguous{src: src, Node: n}, nil
	}
	return n, nil
}

// ---------------------------------------------------------------- lexer

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

// ---------------------------------------------------------------- parser

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
	a, err := p.parseComma()
	if err != nil {
		return nil, err
	}
	if err := p.expect(":"); err != nil {
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

// tryCast parses `(type) operand` at a '('. It reports false, with the
// position unchanged, when the parentheses hold an expression.
func (p *parser) tryCast() (Node, bool, error) {
	save := p.pos
	p.next() // (
	tn, ok := p.tryTypeName(true)
	if !ok || !p.is(")") {
		p.pos = save
		return nil, false, nil
	}
	cast := !tn.simple()
	if !cast {
		// A lone name: a cast only if it names a type.
		if p.isType != nil {
			cast = p.isType(tn.Name)
		} else {
			switch after := p.peekAt(1); after.kind {
			case tokIdent, tokInt, tokFloat, tokChar, tokString, tokDollar:
				cast = true
			case tokPunct:
				switch after.text {
				case "(", "!", "~", "{":
					cast = true
				case "*", "&", "-", "+":
					// (T)*p or (x)*p: decided by the Scope at evaluation.
					p.ambiguous = true
				}
			}
		}
	}
	if !cast {
		p.pos = save
		return nil, false, nil
	}
	p.next() // )
	x, err := p.parseUnary()
	if err != nil {
		return nil, true, err
	}
	return &Cast{Type: tn, X: x}, true, nil
}

// simple reports whether the type is a lone name, which may as well be a
// variable.
func (t *TypeName) simple() bool {
	if t.Tag != "" || t.Builtin || strings.Contains(t.Name, "<") {
		return false
	}
	for _, op := range t.Ops {
		if op.Kind != '[' { // (a*) and (a&) are no expressions; (a[3]) is
			return false
		}
	}
	return true
}

// cTypeWords are the keywords a C type name is made of.
var cTypeWords = map[string]bool{
	"signed": true, "unsigned": true, "short": true, "long": true, "int": true, "char": true,
	"float": true, "double": true, "void": true, "_Bool": true, "bool": true,
	"__int128": true, "wchar_t": true, "char16_t": true, "char32_t": true, "char8_t": true,
}

var typeQualifiers = map[string]bool{"const": true, "volatile": true, "restrict": true, "__restrict": true, "_Atomic": true}

// tryTypeName parses a type name at the current position; on failure the
// position is unchanged. allowName permits a plain (possibly qualified or
// templated) name as the base.
func (p *parser) tryTypeName(allowName bool) (*TypeName, bool) {
	save := p.pos
	fail := func() (*TypeName, bool) { p.pos = save; return nil, false }
	for p.peek().kind == tokIdent && typeQualifiers[p.peek().text] {
		p.next()
	}
	tn := &TypeName{}
	t := p.peek()
	if t.kind != tokIdent && !(t.kind == tokPunct && t.text == "::") {
		return fail()
	}
	switch {
	case t.text == "struct" || t.text == "union" || t.text == "enum" || t.text == "class":
		p.next()
		name, ok := p.qualifiedName(false, true)
		if !ok {
			return fail()
		}
		tn.Tag, tn.Name = t.text, t.text+" "+name
	case cTypeWords[t.text]:
		var words []string
		for p.peek().kind == tokIdent && (cTypeWords[p.peek().text] || typeQualifiers[p.peek().text]) {
			if w := p.next().text; cTypeWords[w] {
				words = append(words, w)
			}
		}
		name, ok := canonicalCType(words)
		if !ok {
			return fail()
		}
		tn.Name, tn.Builtin = name, true
	default:
		if !allowName || t.text == "sizeof" {
			return fail()
		}
		name, ok := p.qualifiedName(true, true)
		if !ok {
			return fail()
		}
		tn.Name = name
	}
	for p.peek().kind == tokIdent && typeQualifiers[p.peek().text] {
		p.next()
	}
	for {
		switch {
		case p.is("*"):
			p.next()
			tn.Ops = append(tn.Ops, TypeOp{Kind: '*'})
			for p.peek().kind == tokIdent && typeQualifiers[p.peek().text] {
				p.next()
			}
			continue
		case p.is("&"), p.is("&&"):
			p.next()
			tn.Ops = append(tn.Ops, TypeOp{Kind: '&'})
			continue
		}
		break
	}
	for p.is("[") {
		p.next()
		lit := p.peek()
		if lit.kind != tokInt {
			return fail()
		}
		p.next()
		v, _, _, err := parseIntText(lit.text, false)
		if err != nil || !p.accept("]") {
			return fail()
		}
		tn.Ops = append(tn.Ops, TypeOp{Kind: '[', N: int64(v)})
	}
	return tn, true
}

// qualifiedName reads name(::name)*, with Go's pkg.Name dots when dots is
// set and template arguments when templates is set (in types only: in an
// expression a<b is a comparison). A leading :: (the global scope) is
// dropped.
func (p *parser) qualifiedName(dots, templates bool) (string, bool) {
	var b strings.Builder
	p.accept("::")
	for {
		t := p.peek()
		if t.kind != tokIdent || typeQualifiers[t.text] || t.text == "sizeof" {
			return "", false
		}
		p.next()
		b.WriteString(t.text)
		if templates && p.is("<") {
			args, ok := p.templateArgs()
			if !ok {
				return "", false
			}
			b.WriteString(args)
		}
		switch {
		case p.is("::"):
			p.next()
			b.WriteString("::")
		case dots && p.is(".") && p.peekAt(1).kind == tokIdent:
			p.next()
			b.WriteString(".")
		default:
			return b.String(), true
		}
	}
}

// templateArgs reads a balanced <...> as gdb spells it ("<int, std::allocator<int> >").
func (p *parser) templateArgs() (string, bool) {
	var b strings.Builder
	depth := 0
	for {
		t := p.next()
		switch {
		case t.kind == tokEOF:
			return "", false
		case t.kind == tokPunct && t.text == "<":
			depth++
			b.WriteString("<")
		case t.kind == tokPunct && (t.text == ">" || t.text == ">>"):
			for range len(t.text) {
				if depth == 0 {
					return "", false
				}
				depth--
				if strings.HasSuffix(b.String(), ">") {
					b.WriteString(" ")
				}
				b.WriteString(">")
			}
			if depth == 0 {
				return b.String(), true
			}
		case t.kind == tokPunct && t.text == ",":
			b.WriteString(", ")
		case t.kind == tokPunct && (t.text == "*" || t.text == "&"):
			if s := b.String(); !strings.HasSuffix(s, "*") && !strings.HasSuffix(s, "&") {
				b.WriteString(" ")
			}
			b.WriteString(t.text)
		default:
			if s := b.String(); len(s) > 0 && (isIdentChar(s[len(s)-1])) && (t.kind == tokIdent || t.kind == tokInt) {
				b.WriteString(" ")
			}
			b.WriteString(t.text)
		}
	}
}

// canonicalCType spells a list of C type keywords as gdb does.
func canonicalCType(words []string) (string, bool) {
	count := map[string]int{}
	for _, w := range words {
		count[w]++
	}
	uns, sgn, longs, short := count["unsigned"] > 0, count["signed"] > 0, count["long"], count["short"] > 0
	pre := ""
	if uns {
		pre = "unsigned "
	}
	switch {
	case len(words) == 0 || uns && sgn || longs > 2:
		return "", false
	case count["char"] > 0:
		switch {
		case uns:
			return "unsigned char", true
		case sgn:
			return "signed char", true
		}
		return "char", true
	case count["double"] > 0:
		if longs > 0 {
			return "long double", true
		}
		return "double", true
	case count["float"] > 0:
		return "float", true
	case count["void"] > 0:
		return "void", true
	case count["_Bool"] > 0:
		return "_Bool", true
	case count["bool"] > 0:
		return "bool", true
	case count["__int128"] > 0:
		return pre + "__int128", true
	case count["wchar_t"] > 0, count["char16_t"] > 0, count["char32_t"] > 0, count["char8_t"] > 0:
		return words[len(words)-1], true
	case short:
		return pre + "short", true
	case longs == 2:
		return pre + "long long", true
	case longs == 1:
		return pre + "long", true
	}
	return pre + "int", true
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
			i, err := p.parseComma()
			if err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
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
			x, err := p.parseComma()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
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
			x, err := p.parseComma()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return x, nil
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
