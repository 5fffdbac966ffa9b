package dwarf

// Helpers that cut values into parts and decode their bytes, shared by
// the formatter, field and container lookup and the navigation of
// values for tree views.

import (
	"fmt"
)

// subValue is the part of v of type typ at byte offset off.
func subValue(v Value, name string, typ *Type, off int64) Value {
	c := Value{Name: name, Type: typ}
	switch {
	case v.Optimized:
		c.Optimized = true
	case v.Err != nil:
		c.Err = v.Err
	case v.InMem:
		c.Addr, c.InMem = v.Addr+uint64(off), true
	case typ.Size < 0 || off < 0 || off+typ.Size > int64(len(v.Bytes)):
		c.Err = fmt.Errorf("%s lies outside the value", name)
	default:
		c.Bytes = v.Bytes[off : off+typ.Size]
	}
	return c
}

// atAddr is a value of type typ in memory at addr.
func atAddr(name string, typ *Type, addr uint64) Value {
	return Value{Name: name, Type: typ, Addr: addr, InMem: true}
}

// leUint decodes a little-endian integer of up to 8 bytes.
func leUint(b []byte) uint64 {
	var x uint64
	for i := len(b) - 1; i >= 0 && i < 8; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x
}

func signExtend(x uint64, bits int) int64 {
	if bits >= 64 || bits <= 0 {
		return int64(x)
	}
	shift := 64 - bits
	return int64(x<<shift) >> shift
}

func isSignedEnc(enc int) bool {
	return enc == ATESigned || enc == ATESignedChar
}

// isCharType says whether t is a one-byte character type, whose arrays
// and pointers gdb prints as strings.
func isCharType(t *Type) bool {
	t = stripType(t)
	return t != nil && t.Kind == KindBase && t.Size == 1 &&
		(t.Encoding == ATESignedChar || t.Encoding == ATEUnsignedChar || t.Encoding == ATEUTF && t.Lang != LangRust)
}

// uintValue reads a scalar value (integer, pointer, enum, bool) of up to 8
// bytes as an unsigned number.
func uintValue(v Value, mem Memory) (uint64, error) {
	x, _, err := scalarBits(v, mem)
	return x, err
}

// scalarBits reads the first 8 bytes at most of a value, and how many
// bytes that is.
func scalarBits(v Value, mem Memory) (uint64, int, error) {
	b, err := v.Contents(mem)
	if err != nil {
		return 0, 0, err
	}
	if len(b) > 8 {
		b = b[:8]
	}
	return leUint(b), len(b), nil
}

// intValue reads an integer value, sign-extended when its type is signed.
func intValue(v Value, mem Memory) (int64, error) {
	x, n, err := scalarBits(v, mem)
	if err != nil {
		return 0, err
	}
	r := stripType(v.Type)
	if r != nil && isSignedEnc(r.Encoding) {
		return signExtend(x, 8*n), nil
	}
	return int64(x), nil
}
