package record

import (
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// System calls made with int $0x80 follow the i386 numbering and calling
// convention (see engine/syscalls/i386.go). The recorder asks the kernel
// at each entry which way the thread entered it, and logs those calls with
// FlagI386 and their x86-64 equivalent.

// madeWithInt80 reports whether t, at a system call entry, entered the
// kernel with int $0x80. A kernel too old to say (before 5.3) is taken to
// mean a syscall instruction.
func (r *Recorder) madeWithInt80(t *thread) bool {
	arch, err := ptrace.SyscallArch(t.tid)
	return err == nil && arch == syscalls.AuditArchI386
}

// call is the system call t is in, decoded from its entry registers.
func (t *thread) call() syscalls.Call { return syscalls.FromRegs(&t.entry, t.i386) }

// callFlags are the event flags that say how t made its call.
func (t *thread) callFlags() uint32 {
	if t.pt.noRedo {
		return trace.FlagNoRedo // a ptrace call: never made with int $0x80
	}
	if t.i386 {
		return trace.FlagI386
	}
	return 0
}
