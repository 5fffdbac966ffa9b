package replay

import (
	"fmt"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// unsupported is the error replay stops with at a system call the
// recording flagged: it succeeded in a way rewind cannot reproduce, and the
// recorder said so. entry holds the call's arguments.
func unsupported(e *trace.Event, entry *trace.Regs) error {
	c := callOf(e, entry)
	c.Ret = int64(e.ExitRegs[trace.RAX])
	why := syscalls.WhyUnsupported(&c)
	if why == "" {
		why = "the recording could not tell what it wrote"
	}
	return fmt.Errorf("system call %s is not supported: %s; replay cannot go past it (the recording warned about it)",
		syscalls.Label(&c), why)
}
