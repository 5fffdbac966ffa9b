package dwarf

// DWARF numbers the x86-64 registers in its own order (rax, rdx, rcx,
// rbx, ...); the trace keeps them in the kernel's user_regs_struct order.
// The names live once, in the trace package, and this table maps the
// DWARF numbers onto them.

import (
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/regnum"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// TraceIndex gives the index in trace.Regs of each general register by
// its DWARF number.
var TraceIndex = [NumRegs]int{trace.RAX, trace.RDX, trace.RCX, trace.RBX, trace.RSI, trace.RDI, trace.RBP, trace.RSP,
	trace.R8, trace.R9, trace.R10, trace.R11, trace.R12, trace.R13, trace.R14, trace.R15, trace.RIP}

// RegName names a register by its DWARF number as gdb does ("rax",
// "rip", "xmm0").
func RegName(n uint64) string {
	if n < NumRegs {
		return trace.RegNames[TraceIndex[n]]
	}
	return strings.ToLower(regnum.AMD64ToName(n))
}
