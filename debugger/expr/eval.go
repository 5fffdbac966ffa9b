package expr

import (
	"errors"
	"fmt"

	"github.com/rewind-debugger/rewind/dwarf"
)

// Scope is where names are looked up during evaluation.
type Scope interface {
	// Variable finds a variable visible at the current frame (locals
	// innermost first, then args, globals, Go package-qualified names
	// "main.x" or "pkg.Var").
	Variable(name string) (dwarf.Value, bool, error)
	// Type finds a named type ("int", "struct node", "node", "unsigned
	// long", "std::string", "main.T").
	Type(name string) (*dwarf.Type, bool)
	// Register returns a register of the current frame by gdb name
	// without '$' (rip, rsp, rax, eax, pc, sp, fp).
	Register(name string) (uint64, bool)
	Memory() dwarf.Memory
	Lang() dwarf.Lang
}

// Convenience is implemented by a Scope that keeps gdb's value history and
// convenience variables. Name is what follows the '$': "" for $ (the last
// value), "$" for $$ (the one before), "$2" for $$2 (two before the last),
// "1" for $1, and "_" or "foo" for convenience variables. Registers are
// looked up first. Without a Convenience, $N is an error and an unknown
// $foo is void, as in gdb. err is for a variable that exists but cannot
// be read now ($_siginfo where there is no signal); v then still has its
// type, for ptype and whatis.
type Convenience interface {
	Convenience(name string) (v dwarf.Value, ok bool, err error)
}

// noSymbolError is gdb's error for an unknown name.
type noSymbolError struct{ name string }

func (e *noSymbolError) Error() string {
	return fmt.Sprintf("No symbol \"%s\" in current context.", e.name)
}

var (
	errNotNumber   = errors.New("Argument to arithmetic operation not a number or boolean.")
	errNotInMemory = errors.New("Attempt to take address of value not located in memory.")
	errNotPointer  = errors.New("Attempt to take contents of a non-pointer value.")
	errDivZero     = errors.New("Division by zero")
	errOptimized   = errors.New("value has been optimized out")
	errInvalidCast = errors.New("Invalid cast.")
	errIntOnly     = errors.New("Integer only operation.")
	errNoCalls     = errors.New("Function calls are not supported: the recorded process cannot run code.")
)

// voidType stands for a missing type (a typedef of void, a void pointer's
// target).
var voidType = &dwarf.Type{Kind: dwarf.KindVoid, Name: "void", Size: 1}

// Eval parses and evaluates an expression. Names in parentheses are
// resolved with the Scope, so (T)*p is a cast when T is a type.
//
// The result is lazy: an lvalue (a variable, *p, s.f, a[i], {T} a, x@n)
// is returned as InMem with Addr, and is read by whoever prints it; only
// the first bytes are checked to be readable, so `print *p` with a null p
// fails with gdb's "Cannot access memory at address 0x0". Computed values
// (literals, arithmetic, casts, &x, registers, bitfields) carry Bytes.
// C++ references are dereferenced: no result has a reference type.
func Eval(src string, sc Scope) (dwarf.Value, error) {
	n, err := parseIn(src, sc)
	if err != nil {
		return dwarf.Value{}, err
	}
	return EvalNode(n, sc)
}

// parseIn parses an expression, asking sc which names are types.
func parseIn(src string, sc Scope) (Node, error) {
	p, err := newParser(src, typeOracle(sc))
	if err != nil {
		return nil, err
	}
	return p.parse()
}

// EvalNode evaluates a parsed expression, as Eval does.
func EvalNode(n Node, sc Scope) (dwarf.Value, error) {
	return evalNode(n, sc, false)
}

// evalNode is EvalNode, for a value's type only when typeOnly is set.
func evalNode(n Node, sc Scope, typeOnly bool) (dwarf.Value, error) {
	if a, ok := n.(*ambiguous); ok {
		p, err := newParser(a.src, typeOracle(sc))
		if err != nil {
			return dwarf.Value{}, err
		}
		if n, err = p.parse(); err != nil {
			return dwarf.Value{}, err
		}
	}
	e := newEvaluator(sc.Memory(), sc.Lang())
	e.sc, e.typeOnly = sc, typeOnly
	v, err := e.eval(n)
	if err != nil {
		return dwarf.Value{}, err
	}
	if v.InMem && !v.Optimized && v.Err == nil {
		if size := strip(v.Type).Size; size > 0 {
			if err := dwarf.ReadMemory(e.mem, v.Addr, make([]byte, min(size, 8))); err != nil {
				return dwarf.Value{}, err
			}
		}
	}
	return v, nil
}

// Truth says whether a value is non-zero, as a condition: integers,
// chars, bools, enums, floats and pointers compare with zero; an array or
// function in memory is true.
func Truth(v dwarf.Value, mem dwarf.Memory) (bool, error) {
	e := newEvaluator(mem, langOf(v))
	v, err := e.fromRef(v)
	if err != nil {
		return false, err
	}
	return e.truth(v)
}

// Int reads an integer, char, bool, enum or pointer value (a float is
// truncated). n holds the value sign-extended to 64 bits for a signed
// type and zero-extended for an unsigned type or a pointer, which
// unsigned reports; use uint64(n) for unsigned values.
func Int(v dwarf.Value, mem dwarf.Memory) (n int64, unsigned bool, err error) {
	e := newEvaluator(mem, langOf(v))
	if v, err = e.fromRef(v); err != nil {
		return 0, false, err
	}
	s, err := e.scalar(v)
	if err != nil {
		return 0, false, err
	}
	if s.cls == cFloat {
		return int64(s.f), false, nil
	}
	return int64(s.bits), !s.signed, nil
}

// Address reads a value used as an address, as the x command does: a
// pointer or an integer is its value, an array or a function in memory is
// where it is.
func Address(v dwarf.Value, mem dwarf.Memory) (uint64, error) {
	e := newEvaluator(mem, langOf(v))
	v, err := e.fromRef(v)
	if err != nil {
		return 0, err
	}
	return e.address(v)
}

func langOf(v dwarf.Value) dwarf.Lang {
	if v.Type != nil {
		return v.Type.Lang
	}
	return dwarf.LangC
}

// typeOracle says whether a name is a type and not a variable in sc.
func typeOracle(sc Scope) func(string) bool {
	return func(name string) bool {
		if _, ok := sc.Type(name); !ok {
			return false
		}
		_, isVar, _ := sc.Variable(name)
		return !isVar
	}
}

type evaluator struct {
	sc   Scope
	mem  dwarf.Memory
	lang dwarf.Lang
	// types holds the base types made up for results, by name.
	types map[string]*dwarf.Type
	// untyped marks the types of Go and Rust literals, which take the
	// type of the other operand.
	untyped map[*dwarf.Type]bool
	// typeOnly is set for ptype and whatis, which need the type of a
	// value that cannot be read now ($_siginfo where there is no signal).
	typeOnly bool
}

func newEvaluator(mem dwarf.Memory, lang dwarf.Lang) *evaluator {
	return &evaluator{mem: mem, lang: lang, types: map[string]*dwarf.Type{}, untyped: map[*dwarf.Type]bool{}}
}

func (e *evaluator) goLike() bool { return e.lang == dwarf.LangGo || e.lang == dwarf.LangRust }

func (e *evaluator) eval(n Node) (dwarf.Value, error) {
	switch n := n.(type) {
	case *ambiguous:
		return e.eval(n.Node)
	case *valueNode:
		return n.v, nil
	case *Ident:
		return e.ident(n.Name)
	case *Dollar:
		return e.dollar(n.Name)
	case *IntLit:
		return e.intLit(n), nil
	case *FloatLit:
		return e.floatLit(n)
	case *CharLit:
		return e.charLit(n), nil
	case *StringLit:
		elem := e.charT()
		b := []byte(n.Value)
		if !e.goLike() {
			b = append(b, 0)
		}
		return dwarf.Value{Type: arrayOf(elem, int64(len(b))), Bytes: b}, nil
	case *Unary:
		return e.unary(n)
	case *Binary:
		return e.binary(n)
	case *Cond:
		t, err := e.evalTruth(n.Cond)
		if err != nil {
			return dwarf.Value{}, err
		}
		if t {
			return e.eval(n.Then)
		}
		return e.eval(n.Else)
	case *Member:
		return e.evalMember(n)
	case *Index:
		x, i, err := e.evalPair(n.X, n.Index)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.index(x, i)
	case *Call:
		return e.call(n)
	case *Cast:
		t, x, err := e.evalTyped(n.Type, n.X)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.cast(x, t)
	case *Sizeof:
		return e.sizeof(n)
	case *TypeAt:
		t, a, err := e.evalTyped(n.Type, n.Addr)
		if err != nil {
			return dwarf.Value{}, err
		}
		addr, err := e.address(a)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.fromRef(dwarf.Value{Type: t, Addr: addr, InMem: true})
	}
	return dwarf.Value{}, fmt.Errorf("cannot evaluate %T", n)
}

// TypeOf returns the type src names or, when src is an expression, the
// type of its value: gdb's whatis and ptype take either. isType reports a
// type name: anything written as a type ("struct node", "int *",
// "char[4]"), or a lone name that is a type and no variable in scope.
func TypeOf(src string, sc Scope) (t *dwarf.Type, isType bool, err error) {
	p, err := newParser(src, typeOracle(sc))
	if err != nil {
		return nil, false, err
	}
	if tn, ok := p.tryTypeName(true); ok && p.peek().kind == tokEOF && (!tn.simple() || p.isType(tn.Name)) {
		e := newEvaluator(sc.Memory(), sc.Lang())
		e.sc = sc
		t, err := e.resolveType(tn)
		return t, true, err
	}
	n, err := parseIn(src, sc)
	if err != nil {
		return nil, false, err
	}
	v, err := evalNode(n, sc, true)
	if err != nil {
		return nil, false, err
	}
	return v.Type, false, nil
}
