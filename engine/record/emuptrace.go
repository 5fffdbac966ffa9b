package record

import (
	"encoding/binary"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The program's own ptrace, emulated (as rr does). rewind is the real
// tracer of every task of the recording, so a task of the program cannot
// trace another for real. Instead the recorder plays the kernel's part: a
// task of the recording that traces another (TRACEME, ATTACH, SEIZE) is its
// emulated tracer; the tracee's signal stops are kept by the recorder (the
// tracee is parked outside the scheduler) and reported to the tracer's
// wait4/waitid; the tracer's requests are skipped in the kernel and done by
// the recorder on the tracee, their results written in the tracer's memory
// and logged as the call's outputs. Replay emulates the tracer's calls from
// the trace and redoes on the tracee what changed it (POKE, SETREGS: see
// replay's emuptrace.go).

// ptrace requests and constants the emulation handles (linux/ptrace.h).
const (
	ptTraceMe     = 0
	ptPeekText    = 1
	ptPeekData    = 2
	ptPeekUser    = 3
	ptPokeText    = 4
	ptPokeData    = 5
	ptPokeUser    = 6
	ptCont        = 7
	ptKill        = 8
	ptSyscall     = 24
	ptSysemu      = 31
	ptGetRegs     = 12
	ptSetRegs     = 13
	ptGetFPRegs   = 14
	ptAttach      = 16
	ptDetach      = 17
	ptSetOptions  = 0x4200
	ptGetMsg      = 0x4201
	ptGetSiginfo  = 0x4202
	ptSetSiginfo  = 0x4203
	ptGetRegset   = 0x4204
	ptSeize       = 0x4206
	ptInterrupt   = 0x4207
	ptListen      = 0x4208
	ptSyscallInfo = 0x420e

	ntPRStatus = 1     // NT_PRSTATUS: the general registers' regset
	ntPRFPReg  = 2     // NT_PRFPREG: the FXSAVE area's regset
	ntXState   = 0x202 // NT_X86_XSTATE: the XSAVE area's regset

	userRegsBytes  = 27 * 8 // struct user_regs_struct
	userDebugRegs  = 848    // offsetof(struct user, u_debugreg)
	userStructSize = 912    // sizeof(struct user)

	cldExited, cldKilled, cldTrapped = 1, 2, 4 // CLD_EXITED, CLD_KILLED, CLD_TRAPPED
	pAll, pPid                       = 0, 1
	stoppedStatus                    = 0x7f // the low byte of a stopped wait status
)

// ptraceState is a thread's part in the emulation.
type ptraceState struct {
	// As a tracee: tracer is the pid of the emulated tracer's process (0:
	// not traced); options are what it set.
	tracer  int
	options uint64
	// stopped: in an emulated stop; status is the wait status it reports
	// and reported whether the tracer's wait took it already.
	stopped  bool
	reported bool
	status   int
	// sig is the signal whose delivery the stop holds (0 for an event
	// stop), sync whether the instruction raised it, info its siginfo and
	// regs where the thread stopped.
	sig  int
	sync bool
	info []byte
	regs trace.Regs
	// event: the stop is a PTRACE_EVENT stop, which a restart's signal
	// does not end with a delivery.
	event bool
	// eventMsg is what PTRACE_GETEVENTMSG answers.
	eventMsg uint64
	// execTrap: the SIGTRAP the kernel sends a tracee at its exec was
	// sent (ptraceExec) and not delivered yet.
	execTrap bool
	// resumeSig is the signal the thread gets when it runs again.
	resumeSig int
	// syscalls: resumed with PTRACE_SYSCALL, the tracee stops at its next
	// system call's entry or exit. atEntry: the stop is at an entry, whose
	// handling by the recorder waits for the tracee's resumption; then
	// entryDone keeps that entry from stopping it again.
	syscalls  bool
	atEntry   bool
	entryDone bool
	// syscallStop: the stop is a syscall stop, where the tracee is not at
	// a point of the log (nor replay's tracee, standing at its last event).
	syscallStop bool
	// logged: the stop is an event of the log (emuptrace_step.go), where
	// replay's tracee stands with the signal not delivered.
	logged bool
	// stepSyscall: single-stepped over a system call instruction, the
	// tracee stops at the call's exit (emuptrace_step.go), with the real
	// SIGTRAP then sent to it (stepTrap).
	stepSyscall bool
	stepTrap    bool

	// As a tracer: emulated says its current call was answered by the
	// recorder (its outputs are logged although the kernel skipped it);
	// waitRetry that its wait runs with WNOHANG added, and waiting that it
	// waits, outside the scheduler, for a tracee's stop or a child's end.
	emulated  bool
	waitRetry bool
	waiting   bool
	// sigWake: a signal came for the thread while it waited (pollWaits):
	// its wait goes to the kernel, where the signal interrupts it.
	sigWake bool
	// untraced: the current clone asked for CLONE_UNTRACED, which the
	// recorder took out of its flags.
	untraced bool

	// The tracee's side of PTRACE_SEIZE (emuptrace_seize.go): seized says
	// the tracer seized it (or a tracee it followed into a fork was);
	// interrupt that a PTRACE_INTERRUPT waits for its next system call;
	// groupStop that the stop reports a group-stop, and
	// jobStopped that the thread is in the kernel's group-stop too;
	// listening that the tracer let it listen (PTRACE_LISTEN) and
	// continued that a SIGCONT came meanwhile.
	seized     bool
	interrupt  bool
	groupStop  bool
	jobStopped bool
	listening  bool
	continued  bool
	// birthStop: a child the tracer follows (PTRACE_O_TRACEFORK...) stops
	// as it starts. exitEvent and exitEventMsg: the PTRACE_EVENT stop of a
	// fork or an exec, due at the call's exit; exitPending that the exit's
	// syscall stop still follows it.
	birthStop    bool
	exitEvent    int
	exitEventMsg uint64
	exitPending  bool

	// PTRACE_SYSEMU (sysemu.go): sysemu says the tracee was resumed with
	// it, sysemuStop that its stop is a syscall entry under it, skipEntry
	// that the call is to be skipped once resumed; stopRegs are the
	// registers at that entry, before the tracer changed them. As a
	// tracer: noRedo says its current request set registers at such a stop.
	sysemu     bool
	sysemuStop bool
	skipEntry  bool
	stopRegs   trace.Regs
	noRedo     bool
}

// cloneUntraced is CLONE_UNTRACED: the child would escape its parent's
// tracer. A sanitizer's leak check starts its tracer task so (to attach to
// the program's threads): that task must be recorded too, as everything in
// the tree is, and its attach emulated.
const cloneUntraced = 0x800000

// emulateEntry handles, at its entry, a call the emulation answers: the
// program's ptrace, and a tracer's wait. done says t was resumed already.
func (r *Recorder) emulateEntry(t *thread, c *syscalls.Call) (handled, done bool, err error) {
	t.pt.emulated, t.pt.waitRetry, t.pt.untraced, t.pt.noRedo = false, false, false, false
	switch c.Nr {
	case unix.SYS_CLONE:
		if c.Args[0]&cloneUntraced == 0 || t.i386 {
			return false, false, nil
		}
		regs := t.entry
		regs[trace.RDI] &^= cloneUntraced
		if err := ptrace.SetRegs(t.tid, &regs); err != nil {
			return true, false, fmt.Errorf("clone without CLONE_UNTRACED: %w", err)
		}
		t.pt.untraced = true
		return false, false, nil
	case unix.SYS_PTRACE:
		ret := r.ptraceRequest(t, c)
		t.pt.emulated = true
		return true, false, r.skipCall(t, c, ret)
	case unix.SYS_WAIT4, unix.SYS_WAITID:
		return r.waitEntry(t, c)
	}
	return false, false, nil
}

// errno is a call's result for a failure.
func errno(e unix.Errno) int64 { return -int64(e) }

// ptraceRequest does t's ptrace request and returns its result.
func (r *Recorder) ptraceRequest(t *thread, c *syscalls.Call) int64 {
	req, pid, addr, data := c.Args[0], int(int32(c.Args[1])), c.Args[2], c.Args[3]
	switch req {
	case ptTraceMe:
		if t.pt.tracer != 0 || r.procs[t.proc.parent] == nil {
			// Already traced, or the first process, whose parent is
			// rewind: what the kernel answers a traced process.
			return errno(unix.EPERM)
		}
		t.pt = ptraceState{tracer: t.proc.parent}
		r.kickWaits(t.proc.parent)
		return 0
	case ptAttach, ptSeize:
		x := r.threads[pid]
		if x == nil {
			if unix.Kill(pid, 0) == unix.ESRCH || pid <= 0 {
				return errno(unix.ESRCH)
			}
			// rewind cannot order the stops of a task it does not
			// record, nor be a second tracer of one.
			r.warnOnce("ptrace attach", "rewind: warning: ptrace at event %d fails with EPERM: attaching to a process outside the recording is refused\n", r.events())
			return errno(unix.EPERM)
		}
		if x.proc == t.proc || x.pt.tracer != 0 {
			return errno(unix.EPERM)
		}
		x.pt = ptraceState{tracer: t.proc.pid}
		r.kickWaits(t.proc.pid)
		if req == ptSeize {
			x.pt.options, x.pt.seized = data, true
			return r.seizeStopped(x)
		}
		// The stop comes as the kernel's does: a SIGSTOP, held by the
		// recorder until the target is at a point replay can find.
		if err := ptrace.Tgkill(x.proc.pid, x.tid, int(unix.SIGSTOP)); err != nil {
			x.pt = ptraceState{}
			return errno(unix.ESRCH)
		}
		return 0
	}
	x := r.threads[pid]
	if x == nil || x.pt.tracer != t.proc.pid || (!x.pt.stopped && req != ptKill && req != ptInterrupt) {
		return errno(unix.ESRCH)
	}
	m := t.proc.mem
	put := func(b []byte, at uint64) int64 {
		if n, err := m.WriteAt(b, at); err != nil || n < len(b) {
			return errno(unix.EFAULT)
		}
		return 0
	}
	word := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	switch req {
	case ptPokeUser, ptSetRegs:
		if x.pt.sysemuStop && (req == ptSetRegs || addr < userRegsBytes) {
			// The skipped call's event carries the registers (sysemu.go).
			t.pt.noRedo = true
			break
		}
		fallthrough
	case ptPokeText, ptPokeData, ptSetFPRegs, ptSetRegset:
		if x.pt.syscallStop {
			// Replay's tracee stands at its last event, before the user
			// code that led to the call: the change cannot be placed.
			return r.notEmulated(c, "changing a tracee at a syscall stop")
		}
	}
	switch req {
	case ptPeekText, ptPeekData:
		b := make([]byte, 8)
		if n, err := x.proc.mem.ReadAt(b, addr); err != nil || n < 8 {
			return errno(unix.EIO)
		}
		return put(b, data)
	case ptPeekUser:
		v, err := peekUser(x, addr)
		if err != nil {
			return errno(unix.EIO)
		}
		return put(word(v), data)
	case ptPokeText, ptPokeData:
		if n, err := x.proc.mem.WriteAt(word(data), addr); err != nil || n < 8 {
			return errno(unix.EIO)
		}
		return 0
	case ptPokeUser:
		if addr%8 != 0 || addr >= userStructSize {
			return errno(unix.EIO)
		}
		if addr >= userRegsBytes {
			return pokeDebugReg(x, addr, data) // emuptrace_regs.go
		}
		var regs trace.Regs
		if ptrace.GetRegs(x.tid, &regs) != nil {
			return errno(unix.ESRCH)
		}
		regs[addr/8] = data
		if ptrace.SetRegs(x.tid, &regs) != nil {
			return errno(unix.EIO)
		}
		return 0
	case ptGetRegs:
		var regs trace.Regs
		if ptrace.GetRegs(x.tid, &regs) != nil {
			return errno(unix.ESRCH)
		}
		return put(regsBytes(&regs), data)
	case ptSetRegs:
		b := make([]byte, userRegsBytes)
		if n, err := m.ReadAt(b, data); err != nil || n < len(b) {
			return errno(unix.EFAULT)
		}
		regs := bytesRegs(b) // emuptrace_regs.go
		if ptrace.SetRegs(x.tid, &regs) != nil {
			return errno(unix.EIO)
		}
		return 0
	case ptGetFPRegs:
		fp, err := ptrace.GetFPRegs(x.tid)
		if err != nil {
			return errno(unix.ESRCH)
		}
		return put(fp, data)
	case ptGetRegset:
		return r.getRegset(t, x, c, addr, data)
	case ptSetFPRegs:
		return r.setFPRegs(t, x, data) // emuptrace_regs.go
	case ptSetRegset:
		return r.setRegset(t, x, c, addr, data)
	case ptGetSiginfo:
		info := make([]byte, ptrace.SiginfoSize)
		copy(info, x.pt.info)
		return put(info, data)
	case ptSetSiginfo:
		b := make([]byte, ptrace.SiginfoSize)
		if n, err := m.ReadAt(b, data); err != nil || n < len(b) {
			return errno(unix.EFAULT)
		}
		x.pt.info = b
		return 0
	case ptSetOptions:
		x.pt.options = data
		return 0
	case ptGetMsg:
		return put(word(x.pt.eventMsg), data)
	case ptCont:
		if data >= 65 {
			return errno(unix.EIO)
		}
		return r.resumeTracee(x, int(data), false)
	case ptSyscall:
		if data >= 65 {
			return errno(unix.EIO)
		}
		ret := r.resumeTracee(x, int(data), false)
		x.pt.syscalls = ret == 0
		return ret
	case ptSysemu:
		if data >= 65 {
			return errno(unix.EIO)
		}
		ret := r.resumeTracee(x, int(data), false)
		x.pt.syscalls, x.pt.sysemu = ret == 0, ret == 0
		return ret
	case ptSingleStep:
		return r.singleStep(x, c, data)
	case ptDetach:
		if data >= 65 {
			return errno(unix.EIO)
		}
		return r.resumeTracee(x, int(data), true)
	case ptInterrupt:
		return r.interruptTracee(x)
	case ptListen:
		return r.listenTracee(x)
	case ptSyscallInfo:
		return r.syscallInfo(t, x, addr, data)
	case ptKill:
		if x.pt.stopped {
			x.pt = ptraceState{tracer: x.pt.tracer}
		}
		if err := ptrace.Tgkill(x.proc.pid, x.tid, int(unix.SIGKILL)); err != nil {
			return errno(unix.ESRCH)
		}
		return 0
	}
	return r.notEmulated(c, fmt.Sprintf("request %#x", req))
}

// notEmulated fails a request the emulation does not do (yet), saying so.
func (r *Recorder) notEmulated(c *syscalls.Call, what string) int64 {
	r.warnOnce(fmt.Sprintf("ptrace %#x", c.Args[0]), "rewind: warning: ptrace %s of the program at event %d fails with EIO: rewind does not emulate it\n", what, r.events())
	return errno(unix.EIO)
}

// peekUser reads a word of x's struct user: a register or a debug register.
func peekUser(x *thread, off uint64) (uint64, error) {
	if off%8 != 0 || off >= userStructSize {
		return 0, unix.EIO
	}
	switch {
	case off < userRegsBytes:
		var regs trace.Regs
		if err := ptrace.GetRegs(x.tid, &regs); err != nil {
			return 0, err
		}
		return regs[off/8], nil
	case off >= userDebugRegs:
		return ptrace.GetDebugReg(x.tid, int(off-userDebugRegs)/8)
	}
	return 0, nil
}

// regsBytes is regs as struct user_regs_struct.
func regsBytes(regs *trace.Regs) []byte {
	b := make([]byte, 0, userRegsBytes)
	for _, v := range regs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// getRegset answers PTRACE_GETREGSET for the general, FXSAVE and XSAVE regsets:
// the iovec at data says where and how much, and is shortened to what was
// written, as the kernel does.
func (r *Recorder) getRegset(t, x *thread, c *syscalls.Call, kind, iov uint64) int64 {
	var src []byte
	switch kind {
	case ntPRStatus:
		var regs trace.Regs
		if ptrace.GetRegs(x.tid, &regs) != nil {
			return errno(unix.ESRCH)
		}
		src = regsBytes(&regs)
	case ntPRFPReg:
		fp, err := ptrace.GetFPRegs(x.tid)
		if err != nil {
			return errno(unix.ESRCH)
		}
		src = fp
	case ntXState:
		xs, err := ptrace.GetXState(x.tid)
		if err != nil {
			return errno(unix.ESRCH)
		}
		src = xs
	default:
		return r.notEmulated(c, fmt.Sprintf("PTRACE_GETREGSET of regset %#x", kind))
	}
	vec, base, n, ok := readIovec(t, iov) // emuptrace_regs.go
	if !ok {
		return errno(unix.EFAULT)
	}
	n = min(n, uint64(len(src)))
	if w, err := t.proc.mem.WriteAt(src[:n], base); err != nil || w < int(n) {
		return errno(unix.EFAULT)
	}
	binary.LittleEndian.PutUint64(vec[8:], n)
	if w, err := t.proc.mem.WriteAt(vec, iov); err != nil || w < 16 {
		return errno(unix.EFAULT)
	}
	return 0
}

// resumeTracee ends x's emulated stop (CONT, DETACH): x is scheduled again
// and gets sig. A signal given is logged now, where x stopped, so that
// replay delivers it at the same point.
func (r *Recorder) resumeTracee(x *thread, sig int, detach bool) int64 {
	if debug {
		fmt.Fprintf(os.Stderr, "rec: tid %d resumed by its tracer with signal %d (detach %v)\n", x.tid, sig, detach)
	}
	// The tracer may have changed the registers (SETREGS, POKEUSER).
	if ptrace.GetRegs(x.tid, &x.pt.regs) != nil {
		return errno(unix.ESRCH)
	}
	if x.pt.event {
		sig = 0
	}
	if ret := r.logResumeSignal(x, sig); ret != 0 {
		return ret
	}
	// What outlives the stop: the tracer and its settings (not after a
	// detach), and what the thread still owes the point it stopped at.
	regs := x.pt.regs
	x.pt = ptraceState{tracer: x.pt.tracer, options: x.pt.options, seized: x.pt.seized, exitPending: x.pt.exitPending,
		resumeSig: sig, atEntry: x.pt.atEntry, execTrap: x.pt.execTrap, skipEntry: x.pt.sysemuStop, stopRegs: x.pt.stopRegs}
	if detach {
		x.pt.tracer, x.pt.options, x.pt.seized, x.pt.exitPending = 0, 0, false, false
	}
	// Where x stopped is a point of the log: a signal that comes before
	// x runs is delivered there (the kernel's order), not held.
	x.resumeRegs, x.haveRegs = regs, true
	r.parkReady(x, parkResume)
	return 0
}

// logResumeSignal logs the delivery of sig (not 0) that the tracer asks
// for as it resumes x from its stop, where x stopped, so that replay
// delivers it at the same point, and gives the real thread its siginfo.
func (r *Recorder) logResumeSignal(x *thread, sig int) int64 {
	if sig == 0 {
		return 0
	}
	e := &trace.Event{Kind: trace.KindSignal, Tid: int32(x.tid), Regs: x.pt.regs, Signo: int32(sig), Siginfo: x.pt.info}
	switch {
	case sig == x.pt.sig && x.pt.logged:
		// Replay's tracee stands at the logged stop, the signal not
		// delivered: it is sent there as any other, with its siginfo.
	case sig == x.pt.sig && x.pt.sync:
		e.Flags = trace.FlagSyncSignal
	case sig != x.pt.sig || len(e.Siginfo) < ptrace.SiginfoSize:
		e.Siginfo = tracerSiginfo(sig, x.pt.tracer)
	}
	if err := r.log(e); err != nil {
		r.warnOnce("ptrace log", "rewind: warning: %v\n", err)
		return errno(unix.EIO)
	}
	if e.Flags&trace.FlagSyncSignal == 0 {
		if err := ptrace.SetSiginfo(x.tid, e.Siginfo); err != nil {
			return errno(unix.ESRCH)
		}
	}
	return 0
}

// tracerSiginfo is the siginfo of a signal a tracer substitutes: the kernel
// makes it look sent by the tracer (SI_USER).
func tracerSiginfo(sig, tracer int) []byte {
	info := make([]byte, ptrace.SiginfoSize)
	binary.LittleEndian.PutUint32(info[0:], uint32(sig))
	binary.LittleEndian.PutUint32(info[16:], uint32(tracer))
	return info
}
