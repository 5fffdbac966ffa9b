package expr

// Unary and binary operators with each language's rules: C's integer
// promotions and usual arithmetic conversions, Go's and Rust's
// same-typed operands, and pointer arithmetic.

import (
	"errors"
	"fmt"
	"math"

	"github.com/rewind-debugger/rewind/dwarf"
)

func (e *evaluator) unary(n *Unary) (dwarf.Value, error) {
	x, err := e.eval(n.X)
	if err != nil {
		return dwarf.Value{}, err
	}
	switch n.Op {
	case "*":
		return e.deref(x)
	case "&":
		return e.addressOf(x)
	case "!":
		t, err := e.truth(x)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.boolVal(!t), nil
	}
	if !isNumeric(classOf(x.Type)) {
		return dwarf.Value{}, errNotNumber
	}
	s, err := e.scalar(x)
	if err != nil {
		return dwarf.Value{}, err
	}
	t := e.promote(x.Type)
	if s.cls == cFloat {
		switch n.Op {
		case "-":
			return mkFloat(t, -s.f)
		case "+":
			return mkFloat(t, s.f)
		}
		return dwarf.Value{}, errors.New("Argument to complement operation not an integer, boolean.")
	}
	bits := toBits(s, t)
	switch n.Op {
	case "-":
		bits = -bits
	case "~":
		bits = ^bits
	}
	return mkInt(t, toBits(scalar{cls: cInt, bits: bits, signed: isSigned(t)}, t)), nil
}

// promote applies C's integer promotions: types narrower than int (and
// bools and enums) become int. Go and Rust do not promote.
func (e *evaluator) promote(t *dwarf.Type) *dwarf.Type {
	st := strip(t)
	if classOf(st) == cFloat || e.goLike() {
		return t
	}
	size, unsigned := st.Size, !isSigned(st)
	if isBool(st) || size < 4 {
		return e.cInt(4, false)
	}
	return e.cInt(size, unsigned)
}

// arithType is the type of a binary arithmetic operation, following
// gdb's binop_promote for C: the wider float; else both promoted, the
// wider integer, unsigned when the widths tie and one is unsigned. Go and
// Rust keep the operand types, a literal adopting the other's.
func (e *evaluator) arithType(a, b *dwarf.Type) *dwarf.Type {
	sa, sb := strip(a), strip(b)
	fa, fb := classOf(sa) == cFloat, classOf(sb) == cFloat
	if e.goLike() {
		switch {
		case e.untyped[a] && !e.untyped[b] && !(fa && !fb):
			return b
		case e.untyped[b] && !e.untyped[a] && !(fb && !fa):
			return a
		case fa != fb:
			if fa {
				return a
			}
			return b
		case sb.Size > sa.Size:
			return b
		}
		return a
	}
	if fa || fb {
		switch {
		case !fa:
			return b
		case !fb:
			return a
		case sb.Size > sa.Size:
			return b
		}
		return a
	}
	la, ua := sa.Size, !isSigned(sa)
	lb, ub := sb.Size, !isSigned(sb)
	if la < 4 || isBool(sa) {
		la, ua = 4, false
	}
	if lb < 4 || isBool(sb) {
		lb, ub = 4, false
	}
	switch {
	case la > lb:
		return e.cInt(la, ua)
	case lb > la:
		return e.cInt(lb, ub)
	}
	return e.cInt(la, ua || ub)
}

func (e *evaluator) binary(n *Binary) (dwarf.Value, error) {
	switch n.Op {
	case "&&", "||":
		tx, err := e.evalTruth(n.X)
		if err != nil {
			return dwarf.Value{}, err
		}
		if tx == (n.Op == "||") {
			return e.boolVal(tx), nil
		}
		ty, err := e.evalTruth(n.Y)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.boolVal(ty), nil
	case ",":
		if _, err := e.eval(n.X); err != nil {
			return dwarf.Value{}, err
		}
		return e.eval(n.Y)
	}
	x, y, err := e.evalPair(n.X, n.Y)
	if err != nil {
		return dwarf.Value{}, err
	}
	if n.Op == "@" {
		return e.repeat(x, y)
	}
	return e.binop(n.Op, x, y)
}

// evalTyped resolves the type a cast or {TYPE} ADDR names, then evaluates
// its operand.
func (e *evaluator) evalTyped(tn *TypeName, x Node) (*dwarf.Type, dwarf.Value, error) {
	t, err := e.resolveType(tn)
	if err != nil {
		return nil, dwarf.Value{}, err
	}
	v, err := e.eval(x)
	return t, v, err
}

// evalPair evaluates two operands, left first.
func (e *evaluator) evalPair(a, b Node) (x, y dwarf.Value, err error) {
	if x, err = e.eval(a); err != nil {
		return
	}
	y, err = e.eval(b)
	return
}

// scalars reads two operands' scalars, left first.
func (e *evaluator) scalars(x, y dwarf.Value) (sx, sy scalar, err error) {
	if sx, err = e.scalar(x); err != nil {
		return
	}
	sy, err = e.scalar(y)
	return
}

func isComparison(op string) bool {
	switch op {
	case "==", "!=", "<", ">", "<=", ">=":
		return true
	}
	return false
}

func compare[T int64 | uint64 | float64](op string, a, b T) bool {
	switch op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case ">":
		return a > b
	case "<=":
		return a <= b
	}
	return a >= b
}

func (e *evaluator) binop(op string, x, y dwarf.Value) (dwarf.Value, error) {
	if op == "==" || op == "!=" {
		if ok, eq, err := e.stringCompare(x, y); err != nil || ok {
			if err != nil {
				return dwarf.Value{}, err
			}
			return e.boolVal(eq == (op == "==")), nil
		}
	}
	if isStringLit(x) || isStringLit(y) {
		return dwarf.Value{}, errors.New("A string literal can only be compared (== or !=) with a char array, a char pointer or a string.")
	}
	cx, cy := classOf(x.Type), classOf(y.Type)
	if cx == cStruct && cy == cStruct && (op == "==" || op == "!=") {
		// Go strings and Rust &str compare by contents.
		if a, ok, err := e.structString(x); err != nil || ok {
			if err != nil {
				return dwarf.Value{}, err
			}
			b, ok, err := e.structString(y)
			if err != nil {
				return dwarf.Value{}, err
			}
			if ok {
				return e.boolVal((a == b) == (op == "==")), nil
			}
		}
	}
	if (cx == cStruct || cx == cArray) && cx == cy && (op == "==" || op == "!=") &&
		strip(x.Type).Size == strip(y.Type).Size && (!x.InMem || !y.InMem || cx == cStruct) {
		// gdb compares aggregates of the same size byte by byte.
		bx, err := e.contents(x)
		if err != nil {
			return dwarf.Value{}, err
		}
		by, err := e.contents(y)
		if err != nil {
			return dwarf.Value{}, err
		}
		return e.boolVal((string(bx) == string(by)) == (op == "==")), nil
	}
	var err error
	if cx == cArray || cx == cFunc {
		if x, err = e.decay(x); err != nil {
			return dwarf.Value{}, err
		}
		cx = cPtr
	}
	if cy == cArray || cy == cFunc {
		if y, err = e.decay(y); err != nil {
			return dwarf.Value{}, err
		}
		cy = cPtr
	}
	if cx == cPtr || cy == cPtr {
		return e.pointerOp(op, x, y, cx, cy)
	}
	if !isNumeric(cx) || !isNumeric(cy) {
		switch op {
		case "==", "!=":
			return dwarf.Value{}, errors.New("Invalid type combination in equality test.")
		case "<", ">", "<=", ">=":
			return dwarf.Value{}, errors.New("Invalid type combination in ordering comparison.")
		}
		return dwarf.Value{}, errNotNumber
	}
	sx, sy, err := e.scalars(x, y)
	if err != nil {
		return dwarf.Value{}, err
	}
	if op == "<<" || op == ">>" {
		if sx.cls == cFloat || sy.cls == cFloat {
			return dwarf.Value{}, errIntOnly
		}
		t := e.promote(x.Type)
		a := toBits(sx, t)
		n := int64(sy.bits)
		if !sy.signed && sy.bits > math.MaxInt64 {
			n = math.MaxInt64
		}
		width := strip(t).Size * 8
		var r uint64
		switch {
		case n < 0 || n >= width:
			if op == ">>" && isSigned(t) && int64(a) < 0 {
				r = ^uint64(0)
			}
		case op == "<<":
			r = a << uint(n)
		case isSigned(t):
			r = uint64(int64(a) >> uint(n))
		default:
			r = a >> uint(n)
		}
		return mkInt(t, normalize(r, strip(t).Size, isSigned(t))), nil
	}
	t := e.arithType(x.Type, y.Type)
	if classOf(t) == cFloat {
		a, b := toFloat(sx), toFloat(sy)
		if isComparison(op) {
			return e.boolVal(compare(op, a, b)), nil
		}
		r, ok := ringOp(op, a, b)
		switch {
		case op == "/":
			r = a / b
		case !ok:
			return dwarf.Value{}, errIntOnly
		}
		return mkFloat(t, r)
	}
	signed := isSigned(t)
	a, b := toBits(sx, t), toBits(sy, t)
	if isComparison(op) {
		if signed {
			return e.boolVal(compare(op, int64(a), int64(b))), nil
		}
		return e.boolVal(compare(op, a, b)), nil
	}
	r, ok := ringOp(op, a, b)
	switch {
	case ok: // +, - or *
	case op == "/" || op == "%":
		if b == 0 {
			return dwarf.Value{}, errDivZero
		}
		switch {
		case signed && op == "/":
			r = uint64(int64(a) / int64(b))
		case signed:
			r = uint64(int64(a) % int64(b))
		case op == "/":
			r = a / b
		default:
			r = a % b
		}
	case op == "&":
		r = a & b
	case op == "|":
		r = a | b
	case op == "^":
		r = a ^ b
	default:
		return dwarf.Value{}, fmt.Errorf("unknown operator %s", op)
	}
	return mkInt(t, toBits(scalar{cls: cInt, bits: r, signed: signed}, t)), nil
}

// ringOp is +, - or *, which integers (wrapping, so signedness does not
// matter) and floats share; ok is false for any other operator.
func ringOp[T uint64 | float64](op string, a, b T) (r T, ok bool) {
	switch op {
	case "+":
		return a + b, true
	case "-":
		return a - b, true
	case "*":
		return a * b, true
	}
	return 0, false
}

// pointerOp is arithmetic and comparison with a pointer operand.
func (e *evaluator) pointerOp(op string, x, y dwarf.Value, cx, cy class) (dwarf.Value, error) {
	sx, sy, err := e.scalars(x, y)
	if err != nil {
		return dwarf.Value{}, err
	}
	if isComparison(op) {
		if sx.cls == cFloat || sy.cls == cFloat {
			return dwarf.Value{}, errNotNumber
		}
		return e.boolVal(compare(op, sx.bits, sy.bits)), nil
	}
	switch {
	case op == "+" && cx == cPtr && cy == cInt:
		return e.pointerAdd(x, sx.bits, int64(sy.bits))
	case op == "+" && cy == cPtr && cx == cInt:
		return e.pointerAdd(y, sy.bits, int64(sx.bits))
	case op == "-" && cx == cPtr && cy == cInt:
		return e.pointerAdd(x, sx.bits, -int64(sy.bits))
	case op == "-" && cx == cPtr && cy == cPtr:
		ex, err := e.elemSize(strip(x.Type))
		if err != nil {
			return dwarf.Value{}, err
		}
		ey, err := e.elemSize(strip(y.Type))
		if err != nil {
			return dwarf.Value{}, err
		}
		if ex != ey {
			return dwarf.Value{}, errors.New("First argument of `-' is a pointer and second argument is neither\nan integer nor a pointer of the same type.")
		}
		return mkInt(e.longT(), uint64((int64(sx.bits)-int64(sy.bits))/ex)), nil
	}
	return dwarf.Value{}, errNotNumber
}

// elemSize is the size pointer arithmetic scales by: that of the target,
// 1 for void and functions (as gdb does).
func (e *evaluator) elemSize(ptr *dwarf.Type) (int64, error) {
	elem := strip(ptr.Elem)
	switch {
	case elem.Kind == dwarf.KindVoid || elem.Kind == dwarf.KindFunc:
		return 1, nil
	case elem.Size <= 0:
		return 0, fmt.Errorf("Cannot perform pointer math on incomplete type \"%s\", try casting to a known type, or void *.", typeName(ptr.Elem))
	}
	return elem.Size, nil
}

func (e *evaluator) pointerAdd(p dwarf.Value, addr uint64, n int64) (dwarf.Value, error) {
	size, err := e.elemSize(strip(p.Type))
	if err != nil {
		return dwarf.Value{}, err
	}
	v := mkInt(p.Type, addr+uint64(n*size))
	if p.Synthetic != nil {
		v.Synthetic = p.Synthetic.Add(n * size)
	}
	return v, nil
}

// decay turns an array or function in memory into a pointer to its first
// element or its code.
func (e *evaluator) decay(v dwarf.Value) (dwarf.Value, error) {
	if v.Optimized {
		return dwarf.Value{}, errOptimized
	}
	if !v.InMem {
		return dwarf.Value{}, errNotInMemory
	}
	st := strip(v.Type)
	if st.Kind == dwarf.KindArray {
		return mkInt(pointerTo(st.Elem), v.Addr), nil
	}
	return mkInt(pointerTo(v.Type), v.Addr), nil
}

// evalTruth evaluates an operand of && or || as a condition.
func (e *evaluator) evalTruth(n Node) (bool, error) {
	v, err := e.eval(n)
	if err != nil {
		return false, err
	}
	return e.truth(v)
}

func (e *evaluator) truth(v dwarf.Value) (bool, error) {
	switch classOf(v.Type) {
	case cArray, cFunc:
		if v.Optimized {
			return false, errOptimized
		}
		if !v.InMem {
			return false, errNotInMemory
		}
		return v.Addr != 0, nil
	case cInt, cPtr, cFloat:
		s, err := e.scalar(v)
		if err != nil {
			return false, err
		}
		if s.cls == cFloat {
			return s.f != 0, nil
		}
		return s.bits != 0, nil
	}
	return false, errNotNumber
}
