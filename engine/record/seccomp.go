package record

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// logSeccompKilled logs the call a thread died in when a seccomp filter
// killed that thread alone (SECCOMP_RET_KILL_THREAD while other threads
// live): the kernel ends it inside the call with do_exit(SIGSYS), so no exit
// stop reports the call. It is logged as the kernel leaves a call a filter
// refused, rolled back (its result register holds its number), which is
// how replay recognizes the verdict and has the kernel give it again
// (replay's seccomp.go). Other deaths inside a call (SIGKILL, another
// thread's exit_group) end a call already logged or one replay need not
// see.
func (r *Recorder) logSeccompKilled(t *thread, st ptrace.Status) error {
	if !t.inSyscall || st.Kind != ptrace.Killed || st.Sig != int(unix.SIGSYS) {
		return nil
	}
	t.inSyscall = false
	exit := t.entry
	exit[trace.RAX] = exit[trace.OrigRAX]
	e := &trace.Event{Kind: trace.KindSyscall, Flags: t.callFlags(), Tid: int32(t.tid), Syscall: int32(t.nr), Regs: t.entry, ExitRegs: exit, In: t.in}
	if t.split {
		// Its entry was logged (it may block): this is its end.
		e.Kind, e.Regs, e.In = trace.KindSyscallExit, trace.Regs{}, nil
	}
	return r.log(e)
}

// Registers of the x86-64 system call arguments, in order.
var argRegs = [...]int{trace.RDI, trace.RSI, trace.RDX, trace.R10, trace.R8, trace.R9}

// skipForm sets regs, t's registers at the entry of c, so that the kernel
// does nothing and fails: the call number -1 (ENOSYS). Under a seccomp
// filter of the program that number is what the filter judges, and a
// filter that allows only the calls it knows kills or traps on it where
// the program made an allowed call (glibc's clone3 and rseq in each
// pthread_create, which rewind refuses so that glibc falls back): there,
// the calls rewind refuses keep their number and get arguments the kernel
// rejects before doing anything, so that the filter judges the call the
// program made. completeSkipped gives the program the chosen result.
func (r *Recorder) skipForm(t *thread, c *syscalls.Call, regs *trace.Regs) {
	if !t.i386 && hasSeccompFilter(t.tid) {
		if arg, v, ok := failingArg(c); ok {
			regs[argRegs[arg]] = v
			return
		}
		r.warnOnce("seccomp skip "+syscalls.Name(c.Nr), "rewind: warning: the program's seccomp filter judges %s, which rewind refuses, as system call -1: its verdict on that applies\n", syscalls.Name(c.Nr))
	}
	regs[trace.OrigRAX] = ^uint64(0)
}

// restoreArgs gives regs the argument registers of entry: the kernel keeps
// them across a call, and skipForm may have changed one.
func restoreArgs(regs, entry *trace.Regs) {
	for _, r := range argRegs {
		regs[r] = entry[r]
	}
}

// failingArg returns an argument value that makes the kernel fail c before
// it has any effect, for the calls rewind refuses or answers itself.
func failingArg(c *syscalls.Call) (arg int, v uint64, ok bool) {
	switch c.Nr {
	case unix.SYS_RSEQ:
		return 2, 2, true // flags: an unknown one (EINVAL)
	case unix.SYS_CLONE3:
		return 1, 0, true // size: smaller than any struct clone_args (EINVAL)
	case unix.SYS_IO_URING_SETUP:
		return 0, 0, true // entries: none (EINVAL)
	case unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER:
		return 0, ^uint64(0), true // fd: -1 (EBADF)
	case unix.SYS_PRCTL:
		if uint32(c.Args[0]) == syscalls.PrctlSetTSC {
			return 1, 0, true // mode: neither PR_TSC_ENABLE nor PR_TSC_SIGSEGV (EINVAL)
		}
	}
	return 0, 0, false
}

// hasSeccompFilter tells whether thread tid runs under a seccomp filter
// (/proc's Seccomp: 2, SECCOMP_MODE_FILTER).
func hasSeccompFilter(tid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
			return strings.TrimSpace(v) == "2"
		}
	}
	return false
}
