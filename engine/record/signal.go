package record

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// siKernel is SI_KERNEL: the si_code of a SIGSEGV raised by a trapped rdtsc or cpuid.
const siKernel = 0x80

// trapTrace is TRAP_TRACE: the si_code of the SIGTRAP ending a single step.
const trapTrace = 2

// lostStep tells whether t's SIGTRAP of si_code TRAP_BRKPT at rip ended a
// single step (over a system call, or one whose DR6 the machine lost: nested
// virtual machines drop it now and then) rather than being the program's
// icebp (0xf1): DR6 has none of BS and B0-B3.
func (r *Recorder) lostStep(t *thread, rip uint64) bool {
	dr6, err := ptrace.GetDebugReg(t.tid, 6)
	if err != nil || dr6&0x400f != 0 {
		return false
	}
	var b [1]byte
	if _, err := r.memOf(t).ReadAt(b[:], rip-1); err == nil && b[0] == 0xf1 {
		return false
	}
	return true
}

// isSyncSignal reports whether the signal was caused by the instruction the
// thread stopped at, so that it recurs by itself in replay.
func isSyncSignal(sig int, info []byte) bool {
	switch unix.Signal(sig) {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGILL, unix.SIGFPE, unix.SIGTRAP:
		return ptrace.SiCode(info) > 0
	}
	return false
}

// onSignal handles a signal-delivery-stop.
func (r *Recorder) onSignal(t *thread, sig int) error {
	info, err := ptrace.GetSiginfo(t.tid)
	if err != nil {
		return err
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return err
	}
	// Waiting in the hook's read: the read is made again, traced, where
	// the signal is delivered as at any call that may block.
	if _, err := r.leaveHookWait(t, &regs); err != nil {
		return err
	}
	if sig == int(unix.SIGTRAP) && t.spin.active() && (t.spin.armed || ptrace.SiCode(info) == trapTrace ||
		ptrace.SiCode(info) == trapBrkpt && r.lostStep(t, regs[trace.RIP])) {
		return r.spinTrap(t, &regs)
	}
	if err := r.logUretprobe(t, sig, info, &regs); err != nil {
		return err
	}
	if t.injecting != nil && t.injecting.sig == sig && !isSyncSignal(sig, info) {
		// The signal we re-sent ourselves: it is that signal again, with
		// its original siginfo, whatever happens to it next (delivered,
		// or held once more by a step of the detector: an injection left
		// pending would keep every later one from being sent).
		info = t.injecting.info
		t.injecting = nil
		if err := ptrace.SetSiginfo(t.tid, info); err != nil {
			return err
		}
	}
	if t.pt.tracer != 0 && t.spin.active() && t.haveRegs && regs == t.resumeRegs {
		// Nothing ran since the last event (the detector's interrupt came
		// first): the stop the program's tracer gets is to be here, where
		// replay finds it, not wherever the held signal would go.
		r.cancelSpin(t)
	}
	if stepped, err := r.stepSignal(t, sig, info); stepped || err != nil {
		return err
	}
	if sig == int(unix.SIGSEGV) && ptrace.SiCode(info) == siKernel {
		if done, err := r.emulateTrap(t, &regs); done || err != nil {
			return err
		}
	}
	if sig == int(unix.SIGILL) {
		if done, err := r.emulateRand(t, &regs, info); done || err != nil {
			return err
		}
	}
	if isSyncSignal(sig, info) {
		if stopped, err := r.ptraceSignalStop(t, sig, info, &regs, true); stopped || err != nil {
			return err
		}
		e := &trace.Event{Kind: trace.KindSignal, Flags: trace.FlagSyncSignal, Tid: int32(t.tid),
			Regs: regs, Signo: int32(sig), Siginfo: info}
		t.resumeRegs, t.haveRegs = regs, true
		return r.deliver(t, e, sig)
	}
	r.sawSig[unix.Signal(sig)] = time.Now()
	if done, err := r.jobControl(t, sig); done || err != nil {
		return err
	}
	if t.haveRegs && regs == t.resumeRegs {
		// Nothing ran since the thread's last event: this point is
		// deterministic, deliver here.
		if stopped, err := r.ptraceSignalStop(t, sig, info, &regs, false); stopped || err != nil {
			return err
		}
		e := &trace.Event{Kind: trace.KindSignal, Tid: int32(t.tid), Regs: regs, Signo: int32(sig), Siginfo: info}
		return r.deliver(t, e, sig)
	}
	// Arrived in the middle of user code: hold it for the next system call
	// exit (or spin preemption) of this thread.
	r.hold(t, sig, info)
	return r.let(t, 0)
}

func (r *Recorder) hold(t *thread, sig int, info []byte) {
	if len(t.held) == 0 {
		t.spin.heldAt, t.spin.heldBlocked = time.Now(), false
	}
	if sig < 32 {
		for _, h := range t.held {
			if h.sig == sig {
				return // standard signals do not queue
			}
		}
	}
	t.held = append(t.held, heldSignal{sig: sig, info: info})
}

// injectHeld re-sends the first held signal the thread does not block, so
// that it is delivered as soon as the thread resumes.
func (r *Recorder) injectHeld(t *thread) error {
	if t.injecting != nil || len(t.held) == 0 || r.inHookNow(t) {
		return nil
	}
	r.dropDiscarded(t)
	blocked := r.waitBlocked(t)
	for i, h := range t.held {
		if blocked&(1<<(h.sig-1)) != 0 {
			continue
		}
		t.held = append(t.held[:i], t.held[i+1:]...)
		hh := h
		t.injecting = &hh
		return ptrace.Tgkill(t.proc.pid, t.tid, h.sig)
	}
	return nil
}

// waitBlocked returns the signals t blocks where a signal sent now finds
// it: in a call that waits with a mask of its own (sigsuspend, ppoll,
// pselect6, epoll_pwait), that mask, installed or about to be; elsewhere
// its own mask.
func (r *Recorder) waitBlocked(t *thread) uint64 {
	if t.inSyscall {
		c := t.call()
		if mask, ok := syscalls.WaitMask(&c, t.proc.mem); ok {
			return mask
		}
	}
	return ptrace.BlockedMask(t.proc.pid, t.tid)
}

// emulateTrap completes a trapped rdtsc, rdtscp or cpuid with the real
// answer (cpuid's masked) and logs it for replay.
func (r *Recorder) emulateTrap(t *thread, regs *trace.Regs) (bool, error) {
	var insn [3]byte
	if n, _ := t.proc.mem.ReadAt(insn[:], regs[trace.RIP]); n < 2 || programTrapsTSC(t, insn[:]) {
		return false, nil
	}
	e := &trace.Event{Kind: trace.KindRdtsc, Tid: int32(t.tid), Regs: *regs}
	switch {
	case insn[0] == 0x0f && insn[1] == 0x31:
		e.Value = rdtsc()
	case insn[0] == 0x0f && insn[1] == 0x01 && insn[2] == 0xf9:
		tsc, aux := rdtscp()
		e.Value, e.Aux, e.Flags = tsc, uint64(aux), trace.FlagRdtscp
	case insn[0] == 0x0f && insn[1] == 0xa2:
		e.Kind = trace.KindCpuid
		e.Value, e.Aux = r.cpuid(uint32(regs[trace.RAX]), uint32(regs[trace.RCX]))
	default:
		return false, nil
	}
	rip := regs[trace.RIP]
	e.ApplyTrap(regs)
	if k, ok := trapOf(e); ok {
		if err := r.patchTrap(t, e, k, rip, regs); err != nil {
			return true, err
		}
	}
	if err := ptrace.SetRegs(t.tid, regs); err != nil {
		return true, fmt.Errorf("complete %s at %#x: %w", e.TrapName(), rip, err)
	}
	if err := r.log(e); err != nil {
		return true, err
	}
	t.resumeRegs, t.haveRegs = *regs, true
	return true, r.resumeLogged(t)
}
