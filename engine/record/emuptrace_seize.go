package record

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// What a tracer that seizes its tracees and follows their forks needs
// (strace: PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_LISTEN, the
// PTRACE_O_TRACEFORK/VFORK/CLONE options and PTRACE_GET_SYSCALL_INFO), on
// top of the emulation in emuptrace.go. Like every emulated stop, these
// stops are kept by the recorder at points of the log: an interrupt is
// taken at the tracee's next system call, a fork's event stop at the
// call's exit, a new child's first stop before its first instruction.

// ptraceEventStop is PTRACE_EVENT_STOP: the stop of PTRACE_INTERRUPT, of a
// group-stop under PTRACE_SEIZE, and of a followed child's start.
const ptraceEventStop = 128

// syscall stop messages (PTRACE_EVENTMSG_SYSCALL_ENTRY, _EXIT): what
// PTRACE_GETEVENTMSG answers at a syscall stop, and what tells
// PTRACE_GET_SYSCALL_INFO which stop it is.
const (
	eventMsgSyscallEntry = 1
	eventMsgSyscallExit  = 2
)

// eventStopStatus is the wait status of a PTRACE_EVENT_STOP with sig.
func eventStopStatus(sig int) int {
	return (sig|ptraceEventStop<<8)<<8 | stoppedStatus
}

// seizeStopped gives a thread seized while in a group-stop the stop the
// kernel reports then: the group-stop, as a PTRACE_EVENT_STOP.
func (r *Recorder) seizeStopped(x *thread) int64 {
	if x.state != stopped {
		return 0
	}
	if err := r.groupStopReport(x); err != nil {
		r.warnOnce("ptrace seize", "rewind: warning: %v\n", err)
		return errno(unix.ESRCH)
	}
	return 0
}

// groupStopReport puts x, stopped by job control, in the emulated stop
// that reports its group-stop to its tracer.
func (r *Recorder) groupStopReport(x *thread) error {
	// The recorder keeps it listening (jobctl.go), where no request
	// reaches it: an interrupt makes it trap, still in the group-stop.
	if err := ptrace.Interrupt(x.tid); err != nil {
		return err
	}
	st, _, err := ptrace.Wait(x.tid, false)
	if err != nil {
		return err
	}
	if st.Kind != ptrace.StopEvent && st.Kind != ptrace.StopGroup {
		return fmt.Errorf("tid %d: %v while bringing it out of its group-stop", x.tid, st)
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(x.tid, &regs); err != nil {
		return err
	}
	sig := x.groupSig
	if sig == 0 {
		sig = int(unix.SIGSTOP)
	}
	x.pt.sig, x.pt.sync, x.pt.event, x.pt.groupStop, x.pt.jobStopped = 0, false, true, true, true
	// What the kernel's trap tells: the stop signal, from the tracee.
	x.pt.info = eventSiginfo(sig | ptraceEventStop<<8)
	binary.LittleEndian.PutUint32(x.pt.info[0:], uint32(sig))
	binary.LittleEndian.PutUint32(x.pt.info[16:], uint32(x.tid))
	return r.enterPtraceStop(x, eventStopStatus(sig), &regs)
}

// interruptTracee does PTRACE_INTERRUPT: a stopped tracee stays so; one in
// a group-stop reports it; another stops at its next system call (the
// kernel stops it sooner, but need not: tracers wait for the stop).
func (r *Recorder) interruptTracee(x *thread) int64 {
	switch {
	case !x.pt.seized:
		return errno(unix.EIO)
	case x.pt.stopped:
		if x.pt.listening {
			// A listening tracee traps again.
			r.relisten(x)
		}
		return 0
	case x.state == stopped:
		if err := r.groupStopReport(x); err != nil {
			return errno(unix.ESRCH)
		}
		return 0
	}
	x.pt.interrupt = true
	return 0
}

// takeInterrupt gives t the stop a PTRACE_INTERRUPT asked for, at the
// entry of its next system call: the entry is undone, and t stops before
// the call, which it makes again once its tracer resumes it (the kernel
// would have stopped it sooner, in the code before: tracers wait for the
// stop, wherever it comes). It reports whether t stopped.
func (r *Recorder) takeInterrupt(t *thread) (bool, error) {
	if !t.pt.interrupt || t.pt.tracer == 0 || t.pt.entryDone {
		return false, nil
	}
	t.pt.interrupt = false
	if err := r.undoEntry(t); err != nil {
		return true, fmt.Errorf("interrupt of a tracee: %w", err)
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return true, err
	}
	t.pt.sig, t.pt.sync, t.pt.event = 0, false, true
	// Replay's tracee is not at this point either: nothing may change it.
	t.pt.syscallStop = true
	t.pt.info = eventSiginfo(int(unix.SIGTRAP) | ptraceEventStop<<8)
	return true, r.enterPtraceStop(t, eventStopStatus(int(unix.SIGTRAP)), &regs)
}

// listenTracee does PTRACE_LISTEN: a tracee in a group-stop stays stopped,
// its stop reported already, until a SIGCONT (or an interrupt) makes it
// trap again.
func (r *Recorder) listenTracee(x *thread) int64 {
	if !x.pt.seized || !x.pt.groupStop {
		return errno(unix.EIO)
	}
	x.pt.listening, x.pt.reported = true, true
	if x.pt.continued {
		r.relisten(x)
	}
	return 0
}

// relisten ends the listening of x with the PTRACE_EVENT_STOP (SIGTRAP) a
// listening tracee reports when woken.
func (r *Recorder) relisten(x *thread) {
	x.pt.listening, x.pt.continued, x.pt.groupStop = false, false, false
	x.pt.info = eventSiginfo(int(unix.SIGTRAP) | ptraceEventStop<<8)
	x.pt.status, x.pt.reported = eventStopStatus(int(unix.SIGTRAP)), false
	r.notifyTracer(x)
	r.wakeWaiters(x.pt.tracer)
	r.kickWaits(x.pt.tracer)
}

// ptraceContinued handles a SIGCONT for a thread waiting in an emulated
// stop of its group-stop: the kernel's PTRACE_EVENT_STOP when it woke it,
// or the program's kill (noteContinue) when the thread waits in a trap,
// where the kernel only notes it. It reports whether t was such a thread.
func (r *Recorder) ptraceContinued(t *thread) bool {
	if !t.pt.stopped || !t.pt.jobStopped {
		return false
	}
	t.pt.jobStopped = false
	if t.pt.listening {
		r.relisten(t)
	} else {
		t.pt.continued = true
	}
	return true
}

// eventOption is the option that makes a tracee's fork, vfork or clone
// event (as the kernel reports it to rewind) stop it and follow the child.
func eventOption(event int) uint64 {
	switch event {
	case unix.PTRACE_EVENT_FORK:
		return unix.PTRACE_O_TRACEFORK
	case unix.PTRACE_EVENT_VFORK:
		return unix.PTRACE_O_TRACEVFORK
	case unix.PTRACE_EVENT_CLONE:
		return unix.PTRACE_O_TRACECLONE
	}
	return 0
}

// followFork makes the child nt of tracee t a tracee of t's tracer, as the
// kernel does when the tracer asked for the event: nt stops as it starts
// (a SIGSTOP for a tracer that attached, a PTRACE_EVENT_STOP for one that
// seized), and t stops at the call's exit with the event.
func (r *Recorder) followFork(t, nt *thread, event int) error {
	if t.pt.tracer == 0 || t.pt.untraced || t.pt.options&eventOption(event) == 0 {
		return nil
	}
	nt.pt = ptraceState{tracer: t.pt.tracer, options: t.pt.options, seized: t.pt.seized}
	t.pt.exitEvent, t.pt.exitEventMsg = event, uint64(nt.tid)
	if t.pt.seized {
		nt.pt.birthStop = true
		return nil
	}
	// The kernel's SIGSTOP: its delivery is the stop, as for an attach.
	if err := ptrace.Tgkill(nt.proc.pid, nt.tid, int(unix.SIGSTOP)); err != nil {
		nt.pt = ptraceState{}
		return nil // gone already
	}
	return nil
}

// birthStop gives a child a seizing tracer follows its first stop, before
// it runs: it reports whether t stopped.
func (r *Recorder) birthStop(t *thread) (bool, error) {
	if !t.pt.birthStop || t.pt.tracer == 0 {
		return false, nil
	}
	t.pt.birthStop = false
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return true, err
	}
	t.pt.sig, t.pt.sync, t.pt.event = 0, false, true
	t.pt.info = eventSiginfo(int(unix.SIGTRAP) | ptraceEventStop<<8)
	return true, r.enterPtraceStop(t, eventStopStatus(int(unix.SIGTRAP)), &regs)
}

// ptraceEventStop gives a tracee the event stop of its call (a fork its
// tracer follows, an exec under PTRACE_O_TRACEEXEC) at the call's exit
// (logged already); the syscall-exit stop, if the tracer resumes it with
// PTRACE_SYSCALL, comes after it (resumeExit), as the kernel's does.
func (r *Recorder) ptraceEventStop(t *thread) (bool, error) {
	event := t.pt.exitEvent
	if event == 0 || t.pt.tracer == 0 {
		t.pt.exitEvent = 0
		return false, nil
	}
	t.pt.exitEvent = 0
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return true, err
	}
	status := int(unix.SIGTRAP) | event<<8
	t.pt.sig, t.pt.sync, t.pt.event = 0, false, true
	t.pt.info, t.pt.eventMsg, t.pt.exitPending = eventSiginfo(status), t.pt.exitEventMsg, true
	return true, r.enterPtraceStop(t, status<<8|stoppedStatus, &regs)
}

// resumeExit gives a tracee resumed from a fork's event stop the
// syscall-exit stop that follows it. It reports whether t stopped.
func (r *Recorder) resumeExit(t *thread) (bool, error) {
	if !t.pt.exitPending {
		return false, nil
	}
	t.pt.exitPending = false
	return r.ptraceSyscallStop(t, false)
}

// Offsets in struct ptrace_syscall_info.
const (
	syscallInfoOpNone, syscallInfoOpEntry, syscallInfoOpExit = 0, 1, 2
	syscallInfoHeader                                        = 24 // op, arch, ip, sp
	syscallInfoEntrySize                                     = syscallInfoHeader + 8 + 6*8
	syscallInfoExitSize                                      = syscallInfoHeader + 8 + 1
	auditArchX8664, auditArchI386                            = 0xc000003e, 0x40000003
)

// syscallInfo answers PTRACE_GET_SYSCALL_INFO: the struct is written to
// data, cut to size bytes, and its whole size returned, as the kernel does.
func (r *Recorder) syscallInfo(t, x *thread, size, data uint64) int64 {
	var regs trace.Regs
	if err := ptrace.GetRegs(x.tid, &regs); err != nil {
		return errno(unix.ESRCH)
	}
	b := make([]byte, syscallInfoEntrySize)
	arch := uint32(auditArchX8664)
	if x.i386 {
		arch = auditArchI386
	}
	binary.LittleEndian.PutUint32(b[4:], arch)
	binary.LittleEndian.PutUint64(b[8:], regs[trace.RIP])
	binary.LittleEndian.PutUint64(b[16:], regs[trace.RSP])
	n := syscallInfoHeader
	if x.pt.syscallStop && x.pt.info != nil && int32(binary.LittleEndian.Uint32(x.pt.info[8:])) == int32(unix.SIGTRAP|0x80) {
		if x.pt.eventMsg == eventMsgSyscallEntry {
			b[0] = syscallInfoOpEntry
			c := syscalls.FromRegs(&regs, x.i386)
			binary.LittleEndian.PutUint64(b[24:], regs[trace.OrigRAX]) // the number as made
			for i, a := range c.Args {
				binary.LittleEndian.PutUint64(b[32+8*i:], a)
			}
			n = syscallInfoEntrySize
		} else {
			b[0] = syscallInfoOpExit
			rval := int64(regs[trace.RAX])
			binary.LittleEndian.PutUint64(b[24:], uint64(rval))
			if rval < 0 && rval >= -4095 {
				b[32] = 1
			}
			n = syscallInfoExitSize
		}
	}
	out := b[:min(uint64(n), size)]
	if len(out) > 0 {
		if w, err := t.proc.mem.WriteAt(out, data); err != nil || w < len(out) {
			return errno(unix.EFAULT)
		}
	}
	return int64(n)
}

// noteContinue notes, at the exit of a kill, tkill or tgkill that sent
// SIGCONT to a process of the recording, that its threads in an emulated
// group-stop are continued (ptraceContinued).
func (r *Recorder) noteContinue(c *syscalls.Call) {
	var pid, sig int
	switch c.Nr {
	case unix.SYS_KILL, unix.SYS_TKILL:
		pid, sig = int(int32(c.Args[0])), int(int32(c.Args[1]))
	case unix.SYS_TGKILL:
		pid, sig = int(int32(c.Args[0])), int(int32(c.Args[2]))
	default:
		return
	}
	if c.Ret != 0 || sig != int(unix.SIGCONT) || pid <= 0 {
		return
	}
	for _, x := range r.threads {
		if x.proc.pid == pid || x.tid == pid {
			r.ptraceContinued(x)
		}
	}
}
