package dwarf

// The values on the DWARF expression stack: untyped address-sized
// integers, or typed by a DW_TAG_base_type (DWARF 5 section 2.5.1),
// with the arithmetic the typed operations define on them.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// baseType is the type of a typed DWARF stack entry; nil stands for the
// generic type (an address-sized integer of unspecified signedness).
type baseType struct {
	size int
	enc  int
}

// stackValue is one entry of the DWARF stack. Values up to 8 bytes live in
// v (floats as their IEEE bits); wider typed constants (long double,
// __int128) keep their bytes in wide and can only be moved, not computed
// with.
type stackValue struct {
	v    uint64
	t    *baseType
	wide []byte
}

func (s stackValue) size() int {
	if s.t == nil {
		return 8
	}
	return s.t.size
}

func (s stackValue) isFloat() bool { return s.t != nil && s.t.enc == ATEFloat }

// signed says whether arithmetic treats the value as signed: the generic
// type is signed for division and comparisons, as gdb does (DWARF 5
// section 2.5.1.4 defines those operations as signed).
func (s stackValue) signed() bool {
	return s.t == nil || s.t.enc == ATESigned || s.t.enc == ATESignedChar
}

// int returns the value sign- or zero-extended from its size.
func (s stackValue) int() int64 {
	n := s.size()
	if n >= 8 || n <= 0 {
		return int64(s.v)
	}
	shift := uint(64 - 8*n)
	if s.signed() {
		return int64(s.v<<shift) >> shift
	}
	return int64(s.v << shift >> shift)
}

func (s stackValue) float() float64 {
	if !s.isFloat() {
		if s.signed() {
			return float64(s.int())
		}
		return float64(uint64(s.int()))
	}
	if s.size() == 4 {
		return float64(math.Float32frombits(uint32(s.v)))
	}
	return math.Float64frombits(s.v)
}

// makeValue builds a value of type t from the low bits of v.
func makeValue(t *baseType, v uint64) stackValue {
	if t != nil && t.size < 8 && t.size > 0 {
		v &= 1<<(8*uint(t.size)) - 1
	}
	return stackValue{v: v, t: t}
}

func makeFloat(t *baseType, f float64) stackValue {
	if t.size == 4 {
		return stackValue{v: uint64(math.Float32bits(float32(f))), t: t}
	}
	return stackValue{v: math.Float64bits(f), t: t}
}

// bytes returns the value's little-endian representation in its size.
func (s stackValue) bytes() []byte {
	if s.wide != nil {
		return append([]byte(nil), s.wide...)
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], s.v)
	n := s.size()
	if n > 8 {
		return append(b[:], make([]byte, n-8)...)
	}
	return b[:n]
}

// valueFromBytes makes a typed value from little-endian bytes.
func valueFromBytes(b []byte, t *baseType) stackValue {
	if len(b) > 8 {
		var v [8]byte
		copy(v[:], b)
		return stackValue{v: binary.LittleEndian.Uint64(v[:]), t: t, wide: append([]byte(nil), b...)}
	}
	var v [8]byte
	copy(v[:], b)
	return makeValue(t, binary.LittleEndian.Uint64(v[:]))
}

func unary(op byte, a stackValue) stackValue {
	if a.isFloat() {
		f := a.float()
		switch op {
		case opAbs:
			return makeFloat(a.t, math.Abs(f))
		case opNeg:
			return makeFloat(a.t, -f)
		}
	}
	switch op {
	case opAbs:
		if a.signed() && a.int() < 0 {
			return makeValue(a.t, uint64(-a.int()))
		}
		return a
	case opNeg:
		return makeValue(a.t, uint64(-a.int()))
	}
	return makeValue(a.t, ^a.v)
}

func boolValue(b bool) stackValue {
	if b {
		return stackValue{v: 1}
	}
	return stackValue{}
}

// binaryOp applies an arithmetic, logical or comparison operation. The
// operands should share a type; when one is generic the other's type wins.
func binaryOp(op byte, a, b stackValue) (stackValue, error) {
	if a.wide != nil || b.wide != nil {
		return stackValue{}, errors.New("arithmetic on values wider than 8 bytes is unsupported")
	}
	t := a.t
	if t == nil {
		t = b.t
	}
	if a.isFloat() || b.isFloat() {
		if !a.isFloat() {
			t = b.t
		}
		x, y := a.float(), b.float()
		switch op {
		case opPlus:
			return makeFloat(t, x+y), nil
		case opMinus:
			return makeFloat(t, x-y), nil
		case opMul:
			return makeFloat(t, x*y), nil
		case opDiv:
			return makeFloat(t, x/y), nil
		case opEq, opNe, opLt, opLe, opGt, opGe:
			return boolValue(compareOp(op, x, y)), nil
		}
		return stackValue{}, fmt.Errorf("%s on floating-point values", opName(op))
	}
	signed := a.signed()
	x, y := a.int(), b.int()
	ux, uy := uint64(x), uint64(y)
	if !signed {
		ux, uy = a.v, b.v
	}
	switch op {
	case opPlus:
		return makeValue(t, ux+uy), nil
	case opMinus:
		return makeValue(t, ux-uy), nil
	case opMul:
		return makeValue(t, ux*uy), nil
	case opAnd:
		return makeValue(t, ux&uy), nil
	case opOr:
		return makeValue(t, ux|uy), nil
	case opXor:
		return makeValue(t, ux^uy), nil
	case opDiv:
		if y == 0 {
			return stackValue{}, errors.New("division by zero")
		}
		if signed {
			return makeValue(t, uint64(x/y)), nil
		}
		return makeValue(t, ux/uy), nil
	case opMod:
		if y == 0 {
			return stackValue{}, errors.New("division by zero")
		}
		// Untyped DW_OP_mod is unsigned, as in gdb.
		if signed && a.t != nil {
			return makeValue(t, uint64(x%y)), nil
		}
		return makeValue(t, a.v%b.v), nil
	case opShl:
		if b.v >= 64 {
			return makeValue(t, 0), nil
		}
		return makeValue(t, a.v<<b.v), nil
	case opShr:
		if b.v >= 64 {
			return makeValue(t, 0), nil
		}
		return makeValue(t, a.v>>b.v), nil
	case opShra:
		s := b.v
		if s > 63 {
			s = 63
		}
		v := a.int()
		if a.t != nil && !a.signed() {
			// Arithmetic shift of an unsigned typed value still shifts in
			// its sign bit.
			n := uint(64 - 8*a.size())
			v = int64(a.v<<n) >> n
		}
		return makeValue(t, uint64(v>>s)), nil
	}
	if signed {
		return boolValue(compareOp(op, x, y)), nil
	}
	return boolValue(compareOp(op, ux, uy)), nil
}

// compareOp is DW_OP_eq, ne, lt, le, gt or ge on two operands of one
// kind: floats, or integers compared as signed or unsigned as the
// operands' type says.
func compareOp[T int64 | uint64 | float64](op byte, x, y T) bool {
	switch op {
	case opEq:
		return x == y
	case opNe:
		return x != y
	case opLt:
		return x < y
	case opLe:
		return x <= y
	case opGt:
		return x > y
	case opGe:
		return x >= y
	}
	return false
}

// convert implements DW_OP_convert: integer widths, integer and float.
func convert(a stackValue, t *baseType) (stackValue, error) {
	if a.wide != nil || (t != nil && t.size > 8) {
		return stackValue{}, errors.New("conversion of values wider than 8 bytes is unsupported")
	}
	toFloat := t != nil && t.enc == ATEFloat
	switch {
	case a.isFloat() && toFloat:
		return makeFloat(t, a.float()), nil
	case a.isFloat():
		f := a.float()
		if t != nil && !(t.enc == ATESigned || t.enc == ATESignedChar) {
			return makeValue(t, uint64(f)), nil
		}
		return makeValue(t, uint64(int64(f))), nil
	case toFloat:
		return makeFloat(t, a.float()), nil
	}
	return makeValue(t, uint64(a.int())), nil
}
