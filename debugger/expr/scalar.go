package expr

// Operands are read from the target into scalars (integer bits or a
// float) and results made back into values, in the operand type's own
// size and encoding (x87 extended and IEEE half and quad included).

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
)

// contents reads the bytes of a value.
func (e *evaluator) contents(v dwarf.Value) ([]byte, error) {
	switch {
	case v.Optimized:
		return nil, errOptimized
	case v.Err != nil:
		return nil, v.Err
	case !v.InMem:
		return v.Bytes, nil
	}
	size := strip(v.Type).Size
	if size < 0 {
		return nil, fmt.Errorf("Cannot read a value of type %s: its size is unknown.", typeName(v.Type))
	}
	buf := make([]byte, size)
	if err := dwarf.ReadMemory(e.mem, v.Addr, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// fromRef dereferences a C++ reference.
func (e *evaluator) fromRef(v dwarf.Value) (dwarf.Value, error) {
	st := strip(v.Type)
	if st.Kind != dwarf.KindReference {
		return v, nil
	}
	if v.Optimized || v.Err != nil {
		v.Type = st.Elem
		return v, nil
	}
	if v.Synthetic != nil {
		return e.pointee(v.Synthetic, st.Elem)
	}
	b, err := e.contents(v)
	if err != nil {
		return dwarf.Value{}, err
	}
	return dwarf.Value{Name: v.Name, Type: st.Elem, Addr: le(b, 8), InMem: true}, nil
}

// le reads a little-endian number of size bytes (at most 8 are used).
func le(b []byte, size int64) uint64 {
	var buf [8]byte
	copy(buf[:], b[:min(int64(len(b)), size, 8)])
	return binary.LittleEndian.Uint64(buf[:])
}

// scalar is a number read from a value.
type scalar struct {
	cls    class  // cInt, cFloat or cPtr
	bits   uint64 // integers and pointers, sign-extended for signed types
	f      float64
	signed bool
}

func (e *evaluator) scalar(v dwarf.Value) (scalar, error) {
	st := strip(v.Type)
	cls := classOf(st)
	if cls != cInt && cls != cFloat && cls != cPtr {
		return scalar{}, errNotNumber
	}
	b, err := e.contents(v)
	if err != nil {
		return scalar{}, err
	}
	size := st.Size
	if size <= 0 {
		size = int64(len(b))
	}
	if int64(len(b)) < size {
		b = append(append([]byte(nil), b...), make([]byte, size-int64(len(b)))...)
	}
	b = b[:size]
	if cls == cFloat {
		f, err := decodeFloat(b, st)
		return scalar{cls: cFloat, f: f, signed: true}, err
	}
	s := scalar{cls: cls, signed: cls == cInt && isSigned(st)}
	s.bits = normalize(le(b, size), size, s.signed)
	if isBool(st) && s.bits != 0 {
		s.bits = 1
	}
	return s, nil
}

// normalize truncates bits to size bytes and sign- or zero-extends them.
func normalize(bits uint64, size int64, signed bool) uint64 {
	if size <= 0 || size >= 8 {
		return bits
	}
	shift := 64 - 8*uint(size)
	if signed {
		return uint64(int64(bits<<shift) >> shift)
	}
	return bits << shift >> shift
}

// toBits converts a scalar to integer type t.
func toBits(s scalar, t *dwarf.Type) uint64 {
	st := strip(t)
	signed := classOf(st) == cInt && isSigned(st)
	bits := s.bits
	if s.cls == cFloat {
		if s.f < 0 || signed {
			bits = uint64(int64(s.f))
		} else {
			bits = uint64(s.f)
		}
	}
	if isBool(st) {
		if bits != 0 || s.cls == cFloat && s.f != 0 {
			return 1
		}
		return 0
	}
	return normalize(bits, st.Size, signed)
}

func toFloat(s scalar) float64 {
	switch {
	case s.cls == cFloat:
		return s.f
	case s.signed:
		return float64(int64(s.bits))
	}
	return float64(s.bits)
}

// mkInt makes a value of integer or pointer type t.
func mkInt(t *dwarf.Type, bits uint64) dwarf.Value {
	size := strip(t).Size
	if size <= 0 {
		size = 8
	}
	b := make([]byte, size)
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], bits)
	copy(b, buf[:])
	if size > 8 && int64(bits) < 0 && isSigned(t) {
		for i := 8; i < int(size); i++ {
			b[i] = 0xff
		}
	}
	return dwarf.Value{Type: t, Bytes: b}
}

// mkFloat makes a value of floating-point type t.
func mkFloat(t *dwarf.Type, f float64) (dwarf.Value, error) {
	st := strip(t)
	b, err := encodeFloat(f, st)
	if err != nil {
		return dwarf.Value{}, err
	}
	return dwarf.Value{Type: t, Bytes: b}, nil
}

func isQuad(t *dwarf.Type) bool {
	return strings.Contains(t.Name, "128") // _Float128, __float128, f128
}

func decodeFloat(b []byte, t *dwarf.Type) (float64, error) {
	switch len(b) {
	case 2:
		return halfToFloat(binary.LittleEndian.Uint16(b)), nil
	case 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), nil
	case 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	case 10, 12, 16:
		if len(b) == 16 && isQuad(t) {
			lo, hi := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
			sign := hi >> 63
			exp := int((hi >> 48) & 0x7fff)
			mant := hi<<16 | lo>>48 // the top 64 of the 112 fraction bits
			return finishExtended(sign, exp, mant, false), nil
		}
		mant := binary.LittleEndian.Uint64(b)
		se := binary.LittleEndian.Uint16(b[8:])
		return finishExtended(uint64(se>>15), int(se&0x7fff), mant, true), nil
	}
	return 0, fmt.Errorf("floating-point values of %d bytes are not supported", len(b))
}

// finishExtended builds a float64 from a 15-bit exponent and a 64-bit
// mantissa, with (x87) or without (IEEE quad) an explicit integer bit.
func finishExtended(sign uint64, exp int, mant uint64, explicit bool) float64 {
	var f float64
	switch {
	case exp == 0x7fff:
		if explicit && mant<<1 == 0 || !explicit && mant == 0 {
			f = math.Inf(1)
		} else {
			f = math.NaN()
		}
	case exp == 0 && mant == 0:
		f = 0
	case explicit:
		f = math.Ldexp(float64(mant), exp-16383-63)
	default:
		e := exp
		if e == 0 {
			e = 1 // subnormal
			f = math.Ldexp(float64(mant), e-16383-64)
		} else {
			f = math.Ldexp(1+math.Ldexp(float64(mant), -64), e-16383)
		}
	}
	if sign != 0 {
		f = -f
	}
	return f
}

func encodeFloat(f float64, t *dwarf.Type) ([]byte, error) {
	switch t.Size {
	case 4:
		b := make([]byte, 4)
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(f)))
		return b, nil
	case 8:
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, math.Float64bits(f))
		return b, nil
	case 10, 12, 16:
		if !isQuad(t) {
			b := make([]byte, t.Size)
			var se uint16
			var mant uint64
			if math.Signbit(f) {
				se = 0x8000
				f = -f
			}
			switch {
			case math.IsNaN(f):
				se |= 0x7fff
				mant = 0xc000000000000000
			case math.IsInf(f, 0):
				se |= 0x7fff
				mant = 1 << 63
			case f != 0:
				frac, exp := math.Frexp(f) // f = frac * 2^exp, frac in [0.5, 1)
				mant = uint64(math.Ldexp(frac, 64))
				se |= uint16(exp - 1 + 16383)
			}
			binary.LittleEndian.PutUint64(b, mant)
			binary.LittleEndian.PutUint16(b[8:], se)
			return b, nil
		}
	}
	return nil, fmt.Errorf("floating-point values of %d bytes are not supported", t.Size)
}

func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

func (e *evaluator) boolVal(b bool) dwarf.Value {
	if b {
		return mkInt(e.boolT(), 1)
	}
	return mkInt(e.boolT(), 0)
}
