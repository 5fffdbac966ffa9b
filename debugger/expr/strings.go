package expr

// String literals compare with the strings of each language by
// contents: C char arrays and pointers, Go strings, Rust &str and
// std::string.

import (
	"fmt"

	"github.com/rewind-debugger/rewind/dwarf"
)

// stringCompare compares a string literal with a char array, a char
// pointer, a Go string or a Rust &str by contents (C strings up to their
// NUL). ok is false when neither operand is a literal (a char array not
// in memory), or the other is no string.
func (e *evaluator) stringCompare(x, y dwarf.Value) (ok, eq bool, err error) {
	if !isStringLit(x) {
		x, y = y, x
	}
	if !isStringLit(x) {
		return false, false, nil
	}
	want := cString(x.Bytes)
	got, isStr, err := e.stringOf(y, len(want))
	if err != nil || !isStr {
		return isStr, false, err
	}
	return true, got == want, nil
}

// isStringLit reports whether v is a string literal: a char array not in
// memory.
func isStringLit(v dwarf.Value) bool {
	st := strip(v.Type)
	return st.Kind == dwarf.KindArray && !v.InMem && !v.Optimized && isCharType(st.Elem)
}

func isCharType(t *dwarf.Type) bool {
	st := strip(t)
	return st.Kind == dwarf.KindBase && st.Size == 1 && st.Encoding != dwarf.ATEBoolean
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// stringOf reads the string a value holds, for comparing with a literal
// of n bytes (a C string is read up to n+1 bytes).
func (e *evaluator) stringOf(v dwarf.Value, n int) (string, bool, error) {
	st := strip(v.Type)
	switch {
	case st.Kind == dwarf.KindArray && isCharType(st.Elem):
		b, err := e.contents(v)
		return cString(b), true, err
	case st.Kind == dwarf.KindPointer && isCharType(st.Elem):
		p, err := e.pointerValue(v)
		if err != nil {
			return "", true, err
		}
		b := make([]byte, n+1)
		if err := dwarf.ReadMemory(e.mem, p, b); err != nil {
			// Near the end of a mapping: read byte by byte up to the NUL.
			b = b[:0]
			for i := 0; i <= n; i++ {
				var c [1]byte
				if err := dwarf.ReadMemory(e.mem, p+uint64(i), c[:]); err != nil {
					return "", true, err
				}
				if b = append(b, c[0]); c[0] == 0 {
					break
				}
			}
		}
		return cString(b), true, nil
	case st.Kind == dwarf.KindStruct:
		c, ok, err := e.container(v)
		if err != nil || !ok || c.Array != nil || !isCharType(c.Elem) {
			return "", false, err
		}
		if c.Len != int64(n) {
			return "\x00", true, nil // unequal: the literal holds no NUL
		}
		return e.structString(v)
	}
	return "", false, nil
}

// structString reads a Go string or a Rust &str (a struct of a pointer to
// bytes and a length); ok is false for other values.
func (e *evaluator) structString(v dwarf.Value) (string, bool, error) {
	c, ok, err := e.container(v)
	if err != nil || !ok || c.Array != nil || !isCharType(c.Elem) {
		return "", false, err
	}
	if c.Len < 0 || c.Len > 1<<24 {
		return "", true, fmt.Errorf("string length %d is out of range", c.Len)
	}
	b := make([]byte, c.Len)
	if err := dwarf.ReadMemory(e.mem, c.Data, b); err != nil {
		return "", true, err
	}
	return string(b), true, nil
}
