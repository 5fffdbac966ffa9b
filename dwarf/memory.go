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
