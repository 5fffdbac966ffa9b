package record

import (
	"fmt"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// refuseAtEntry keeps the kernel from executing t's call, seen at its entry,
// when the table refuses the call or this form of it (io_uring, a mapping
// of a perf ring buffer) or when rewind answers it
// itself (PR_SET_TSC); the program gets the chosen result. A refusal that
// changes what the program sees is told to the user once per call.
func (r *Recorder) refuseAtEntry(t *thread, c *syscalls.Call) error {
	if ret, ok := r.tscEntry(t, c); ok {
		return r.skipCall(t, c, ret)
	}
	if ret, ok := r.rseqEntry(t, c); ok {
		return r.skipCall(t, c, ret)
	}
	errno, why := syscalls.Refusal(c, r.tracee(t))
	if errno == 0 {
		return nil
	}
	if why != "" {
		r.warnOnce("refused "+syscalls.Label(c), "rewind: warning: %s at event %d fails with %s: %s\n",
			syscalls.Name(c.Nr), r.events(), syscalls.ErrnoName(int(errno)), why)
	}
	return r.skipCall(t, c, -int64(errno))
}

// skipCall makes the kernel skip t's call (an invalid number does nothing
// and answers ENOSYS; under a seccomp filter, see skipForm); completeSkipped
// gives it ret at its exit.
func (r *Recorder) skipCall(t *thread, c *syscalls.Call, ret int64) error {
	t.refused, t.refusedRet = true, ret
	regs := t.entry
	r.skipForm(t, c, &regs) // seccomp.go
	if err := ptrace.SetRegs(t.tid, &regs); err != nil {
		return fmt.Errorf("refuse %s: %w", syscalls.Name(c.Nr), err)
	}
	return nil
}

// completeSkipped sets the result of a call skipped at its entry, at its
// exit stop, before it is logged.
func (r *Recorder) completeSkipped(t *thread, exit *trace.Regs) error {
	if !t.refused {
		return nil
	}
	want := *exit
	want[trace.RAX] = uint64(t.refusedRet)
	restoreArgs(&want, &t.entry) // seccomp.go
	if want == *exit {
		return nil
	}
	*exit = want
	if err := ptrace.SetRegs(t.tid, exit); err != nil {
		return fmt.Errorf("set the result of refused %s: %w", syscalls.Name(t.nr), err)
	}
	return nil
}
