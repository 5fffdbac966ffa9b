package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The tracee's side of the emulated ptrace (emuptrace.go): its stops —
// signals, exec, system calls, exit — kept by the recorder and told to its
// tracer.

// takeResumeSig returns the signal t is to get as it runs again.
func (t *thread) takeResumeSig() int {
	sig := t.pt.resumeSig
	t.pt.resumeSig = 0
	return sig
}

// ptraceSignalStop turns the delivery of sig to t, traced by a task of the
// recording and at a point replay finds again (regs), into an emulated
// stop. It reports whether it did.
func (r *Recorder) ptraceSignalStop(t *thread, sig int, info []byte, regs *trace.Regs, sync bool) (bool, error) {
	if t.pt.tracer == 0 || sig == int(unix.SIGKILL) {
		return false, nil
	}
	t.pt.sig, t.pt.sync, t.pt.info, t.pt.event = sig, sync, info, false
	status := sig<<8 | stoppedStatus
	if t.stepTrapStop(sig) { // emuptrace_step.go
		return true, r.enterPtraceStop(t, status, regs)
	}
	if sig == int(unix.SIGTRAP) && t.pt.execTrap {
		// The kernel's own send_sig: SI_USER, from the task itself.
		t.pt.execTrap = false
		t.pt.info = tracerSiginfo(sig, t.proc.pid)
	}
	if sync {
		if err := r.logPtraceStop(t, sig, info, regs); err != nil {
			return true, err
		}
	}
	return true, r.enterPtraceStop(t, status, regs)
}

// ptraceExec gives a tracee that exec'd what the kernel gives it: with
// PTRACE_O_TRACEEXEC, the exec event at the call's exit (ptraceEventStop;
// its message is the tid the thread had, former); otherwise the SIGTRAP the
// kernel sends it, a real one, whose delivery, after the exec's exit, is
// the emulated stop.
func (r *Recorder) ptraceExec(t *thread, former int) error {
	if t.pt.tracer == 0 {
		return nil
	}
	if t.pt.options&unix.PTRACE_O_TRACEEXEC != 0 {
		t.pt.exitEvent, t.pt.exitEventMsg = unix.PTRACE_EVENT_EXEC, uint64(former)
		return nil
	}
	t.pt.execTrap = true
	if err := ptrace.Tgkill(t.proc.pid, t.tid, int(unix.SIGTRAP)); err != nil {
		return fmt.Errorf("the exec SIGTRAP of a tracee: %w", err)
	}
	return nil
}

// eventSiginfo is the siginfo of a PTRACE_EVENT stop.
func eventSiginfo(event int) []byte {
	info := make([]byte, ptrace.SiginfoSize)
	binary.LittleEndian.PutUint32(info[0:], uint32(unix.SIGTRAP))
	binary.LittleEndian.PutUint32(info[8:], uint32(event))
	return info
}

// ptraceSyscallStop gives a tracee resumed with PTRACE_SYSCALL its stop at
// the entry (entry set) or the exit of its system call. At the entry, the
// recorder handles the call only once the tracer resumes the tracee
// (resumeEntry); at the exit, the call is logged already.
func (r *Recorder) ptraceSyscallStop(t *thread, entry bool) (bool, error) {
	if !entry {
		if err := r.ptraceStepExit(t); err != nil { // emuptrace_step.go
			return true, err
		}
	}
	if entry && t.pt.entryDone {
		t.pt.entryDone = false
		return false, nil
	}
	if t.pt.tracer == 0 || !t.pt.syscalls {
		return false, nil
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return true, err
	}
	trap := int(unix.SIGTRAP)
	if t.pt.options&unix.PTRACE_O_TRACESYSGOOD != 0 {
		trap |= 0x80
	}
	t.pt.sysemuStop, t.pt.sysemu, t.pt.stopRegs = t.pt.sysemu && entry, false, regs
	t.pt.syscalls, t.pt.atEntry, t.pt.syscallStop = false, entry, true
	t.pt.sig, t.pt.sync, t.pt.event = 0, false, true
	t.pt.info, t.pt.eventMsg = eventSiginfo(trap), eventMsgSyscallExit
	if entry {
		t.pt.eventMsg = eventMsgSyscallEntry
	}
	return true, r.enterPtraceStop(t, trap<<8|stoppedStatus, &regs)
}

// resumeEntry goes on with the entry a syscall-entry stop held, once the
// tracer resumed the tracee. It reports whether t was at one.
func (r *Recorder) resumeEntry(t *thread) (bool, error) {
	if !t.pt.atEntry {
		return false, nil
	}
	if t.pt.skipEntry {
		return true, r.skipForTracer(t)
	}
	t.pt.atEntry, t.pt.entryDone, t.havePeek = false, true, false
	return true, r.onSyscallEntry(t)
}

// ptraceExitStop gives a tracer that asked for PTRACE_O_TRACEEXIT the stop
// of t's exit, at the entry of its (already logged) exit or exit_group.
func (r *Recorder) ptraceExitStop(t *thread, c *syscalls.Call) (bool, error) {
	if t.pt.tracer == 0 || t.pt.options&unix.PTRACE_O_TRACEEXIT == 0 || c.Nr == unix.SYS_EXIT && r.othersLive(t) {
		return false, nil
	}
	event := int(unix.SIGTRAP) | unix.PTRACE_EVENT_EXIT<<8
	t.pt.sig, t.pt.sync, t.pt.event = 0, false, true
	t.pt.info = eventSiginfo(event)
	t.pt.eventMsg = (c.Args[0] & 0xff) << 8
	return true, r.enterPtraceStop(t, event<<8|stoppedStatus, &t.entry)
}

// enterPtraceStop parks t, outside the scheduler, until its tracer resumes
// it, and wakes the tracer if it waits.
func (r *Recorder) enterPtraceStop(t *thread, status int, regs *trace.Regs) error {
	if debug {
		fmt.Fprintf(os.Stderr, "rec: tid %d emulated ptrace stop %#x for %d\n", t.tid, status, t.pt.tracer)
	}
	t.pt.stopped, t.pt.reported, t.pt.status, t.pt.regs = true, false, status, *regs
	t.pt.stepSyscall = false // any stop ends a step
	t.state, t.park = parked, parkResume
	r.dropReady(t)
	r.notifyTracer(t)
	r.wakeWaiters(t.pt.tracer)
	r.kickWaits(t.pt.tracer)
	return r.scheduleIdle()
}

// trappedSiginfo is the SIGCHLD siginfo of x's stop (CLD_TRAPPED), as
// waitid and the tracer's SIGCHLD see it.
func trappedSiginfo(x *thread) []byte {
	b := make([]byte, ptrace.SiginfoSize)
	binary.LittleEndian.PutUint32(b[0:], uint32(unix.SIGCHLD))
	binary.LittleEndian.PutUint32(b[8:], cldTrapped)
	binary.LittleEndian.PutUint32(b[16:], uint32(x.tid))
	binary.LittleEndian.PutUint32(b[20:], uint32(unix.Getuid()))
	binary.LittleEndian.PutUint32(b[24:], uint32(x.pt.status>>8))
	return b
}

// notifyTracer sends the tracer of x, which just stopped, the SIGCHLD the
// kernel sends (CLD_TRAPPED): debuggers sleep in sigsuspend until it comes.
// A thread blocked in the kernel gets it now (its call is interrupted as
// by any signal), another at its next system call, like any signal held
// for a point replay finds again.
func (r *Recorder) notifyTracer(x *thread) {
	w := r.threads[x.pt.tracer]
	if w == nil {
		for _, o := range r.threads {
			if o.proc.pid == x.pt.tracer {
				w = o
				break
			}
		}
	}
	if w == nil {
		return
	}
	info := trappedSiginfo(x)
	if w.state == inKernel && w.injecting == nil {
		w.injecting = &heldSignal{sig: int(unix.SIGCHLD), info: info}
		if ptrace.Tgkill(w.proc.pid, w.tid, int(unix.SIGCHLD)) == nil {
			return
		}
		w.injecting = nil
	}
	r.hold(w, int(unix.SIGCHLD), info)
}

// kickWaits interrupts the waits that threads of process pid, which just
// became a tracer, have in the kernel: the kernel does not know of the
// emulated tracees, so such a wait would never see their stops. The
// interrupted call ends with a restart code and starts again (the kernel
// restarts it, and replay does as it does for any such call); this time the
// emulation answers it (waitEntry).
func (r *Recorder) kickWaits(pid int) {
	for _, w := range r.threads {
		if w.proc.pid != pid || !w.inSyscall || w.state == parked || (w.nr != unix.SYS_WAIT4 && w.nr != unix.SYS_WAITID) {
			continue
		}
		if err := ptrace.Interrupt(w.tid); err != nil && !errors.Is(err, unix.ESRCH) {
			r.warnOnce("ptrace kick", "rewind: warning: cannot interrupt the wait of tid %d for the program's ptrace: %v\n", w.tid, err)
		}
	}
}

// wakeWaiters makes the threads of process pid that wait for a tracee or a
// child ready: they enter their wait again.
func (r *Recorder) wakeWaiters(pid int) {
	for _, w := range r.threads {
		if w.proc.pid == pid && w.pt.waiting {
			w.pt.waiting = false
			r.parkReady(w, parkResume)
		}
	}
}

// ptraceProcessGone lets the tracees of a process that ended go (the
// kernel detaches them) and wakes its parent's waiters.
func (r *Recorder) ptraceProcessGone(p *process) {
	for _, x := range r.threads {
		if x.pt.tracer != p.pid {
			continue
		}
		stopped, regs := x.pt.stopped, x.pt.regs
		x.pt = ptraceState{}
		if stopped {
			x.resumeRegs, x.haveRegs = regs, true
			r.parkReady(x, parkResume)
		}
	}
	r.wakeWaiters(p.parent)
}
