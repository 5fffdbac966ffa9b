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
