package record

import (
	"fmt"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// PTRACE_SYSEMU of the program (a tracer that runs its tracee's system
// calls itself: user-mode kernels, sandboxes, other recorders). The
// tracee stops at the entry of its next call, which the kernel then skips
// however the tracer resumes it: the tracer reads the call, does what it
// wants, sets the result in the registers and resumes. The recorder skips
// the call for real and logs it as a call with FlagSkipped whose exit
// registers are those the tracer left, so that replay gives them to the
// thread without running anything; the tracer's own register changes at
// that stop are marked FlagNoRedo, replay not redoing them where its
// tracee stands (its last event, before the call).

// skipForTracer skips the call t stopped at under PTRACE_SYSEMU, once its
// tracer resumed it, logs it and lets t go on.
func (r *Recorder) skipForTracer(t *thread) error {
	t.pt.atEntry, t.pt.skipEntry = false, false
	var left trace.Regs
	if err := ptrace.GetRegs(t.tid, &left); err != nil {
		return err
	}
	if err := runSkipped(t.tid, left); err != nil {
		return fmt.Errorf("skip a call for the program's tracer: %w", err)
	}
	if err := ptrace.SetRegs(t.tid, &left); err != nil {
		return err
	}
	t.entry = t.pt.stopRegs
	t.i386 = r.madeWithInt80(t)
	c := t.call()
	e := &trace.Event{Kind: trace.KindSyscall, Flags: trace.FlagSkipped | t.callFlags(), Tid: int32(t.tid),
		Syscall: int32(c.Nr), Regs: t.entry, ExitRegs: left}
	if err := r.log(e); err != nil {
		return err
	}
	if debug {
		fmt.Fprintf(r.opts.Warn, "rec: tid %d: %s skipped for its tracer\n", t.tid, syscalls.Name(c.Nr))
	}
	t.resumeRegs, t.haveRegs = left, true
	if err := r.injectHeld(t); err != nil {
		return err
	}
	return r.resume(t, t.takeResumeSig())
}
