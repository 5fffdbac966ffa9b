package dwarf

import (
	"errors"
	"fmt"
	"io"
)

// MemoryError is a failed read of the target's memory. Its text is gdb's
// ("Cannot access memory at address 0x0"), so that the formatter, the
// expression evaluator and the servers all report an unreadable address
// in the words a gdb user knows; Err is the reader's own error.
type MemoryError struct {
	Addr uint64
	Err  error
}

// Error says which address could not be read, in gdb's words.
func (e *MemoryError) Error() string {
	return fmt.Sprintf("Cannot access memory at address %#x", e.Addr)
}

// Unwrap returns the reader's error.
func (e *MemoryError) Unwrap() error { return e.Err }

// errNoMemory stands for the reader when there is none (a value examined
// without a process), so that a MemoryError always says why.
var errNoMemory = errors.New("no memory to read")

// ReadMemory fills buf from the target at addr. Anything short of the
// whole buffer is a *MemoryError, so callers need not check counts.
func ReadMemory(mem Memory, addr uint64, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	if mem == nil {
		return &MemoryError{Addr: addr, Err: errNoMemory}
	}
	n, err := mem.ReadAt(buf, addr)
	if n < len(buf) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return &MemoryError{Addr: addr, Err: err}
	}
	return nil
}

// errNullPointer is the reader's error for following a null pointer,
// which is never read: address 0 is unmapped in every process we debug.
var errNullPointer = errors.New("null pointer")

// readMem reads n bytes. n comes from a type in untrusted debug
// information, so it is checked before anything is allocated.
func readMem(mem Memory, addr uint64, n int64) ([]byte, error) {
	if n < 0 {
		return nil, errors.New("value of unknown size")
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("value of %d bytes is too large to read", n)
	}
	buf := make([]byte, n)
	if err := ReadMemory(mem, addr, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// Contents returns the bytes of a value (reading memory for InMem values).
func (v Value) Contents(mem Memory) ([]byte, error) {
	switch {
	case v.Optimized:
		return nil, errors.New("value has been optimized out")
	case v.Err != nil:
		return nil, v.Err
	case v.Type == nil:
		return nil, errors.New("value has no type")
	case !v.InMem:
		if v.Type.Size >= 0 && int64(len(v.Bytes)) < v.Type.Size {
			return nil, fmt.Errorf("value of type %s has %d of its %d bytes", v.Type.Name, len(v.Bytes), v.Type.Size)
		}
		return v.Bytes, nil
	}
	b, err := readMem(mem, v.Addr, v.Type.Size)
	if err != nil {
		return nil, fmt.Errorf("value of type %s: %w", v.Type.Name, err)
	}
	return b, nil
}
