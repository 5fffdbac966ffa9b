package record

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The spin detector. When a thread runs user code past its slice while
// others wait (or while a signal is held for it), it is interrupted at some
// pc X; a breakpoint at X catches its next pass there. Identical registers
// and stack window at two consecutive passes mean it is spinning: nothing it
// computes changes, so stopping it at the first pass with that fingerprint
// (what replay does) is equivalent, and it is preempted there. Otherwise the
// thread is making progress and gets a longer slice; after maxBackoff
// doublings it is preempted anyway, at a fingerprint marked approximate.

type spinPhase int

const (
	spinNone         spinPhase = iota
	spinInterrupting           // PTRACE_INTERRUPT sent
	spinStepping               // single-stepping off X before arming the breakpoint
	spinWaitHit                // breakpoint armed at X
)

const (
	spinTries  = 3
	maxBackoff = 7
)

type spinState struct {
	phase    spinPhase
	starting bool // a new thread whose first stop has not arrived
	exiting  bool // the thread called exit: it is going away
	pc       uint64
	orig     byte
	armed    bool
	regs     trace.Regs
	hash     uint64
	tries    int
	backoff  int
}

func (s *spinState) active() bool { return s.phase != spinNone }

// deadline runs when the current thread used its slice while others wait or
// a signal is held for it.
func (r *Recorder) deadline() error {
	t := r.current
	t.sliceStart = time.Now()
	if t.spin.exiting || t.spin.starting {
		return nil
	}
	if t.inSyscall {
		// A system call we did not expect to block is taking long: let
		// others run meanwhile, as if it had been a blocking one.
		if len(t.held) > 0 {
			if err := r.injectHeld(t); err != nil {
				return err
			}
		}
		spec, known := syscalls.Lookup(t.nr)
		if len(r.ready) > 0 && !t.split && t.state == running && known && spec.Policy == syscalls.Emulate {
			// Already running in the kernel: log the entry and switch.
			if err := r.logEntry(t); err != nil {
				return err
			}
			return r.leaveInKernel(t)
		}
		return nil
	}
	if t.spin.phase != spinNone || t.state != running {
		return nil
	}
	t.spin.phase = spinInterrupting
	return ptrace.Interrupt(t.tid)
}

// onInterrupt handles the PTRACE_EVENT_STOP our interrupt caused.
func (r *Recorder) onInterrupt(t *thread) error {
	if t.spin.phase != spinInterrupting {
		// A late stop from an interrupt the detector no longer wants (the
		// thread reached a system call meanwhile): the thread may be blocked
		// in the kernel, so only let it go on, keeping its scheduling state.
		return ptrace.Syscall(t.tid, 0)
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return err
	}
	var insn [2]byte
	t.proc.mem.ReadAt(insn[:], regs[trace.RIP])
	if (insn[0] == 0x0f && insn[1] == 0x05) || (insn[0] == 0xcd && insn[1] == 0x80) {
		// About to make a system call: that is a switch point already.
		t.spin.phase = spinNone
		return r.resume(t, 0)
	}
	t.spin.pc = regs[trace.RIP]
	t.spin.regs = regs
	t.spin.hash = t.proc.mem.StackHash(regs[trace.RSP])
	t.spin.tries = 0
	var b [1]byte
	if _, err := t.proc.mem.ReadAt(b[:], t.spin.pc); err != nil {
		t.spin.phase = spinNone
		return r.resume(t, 0)
	}
	t.spin.orig = b[0]
	t.spin.phase = spinStepping
	return ptrace.Step(t.tid, 0)
}

// spinTrap handles the SIGTRAPs of the detector: the end of the step off X,
// then the breakpoint at X.
func (r *Recorder) spinTrap(t *thread, regs *trace.Regs) error {
	switch t.spin.phase {
	case spinStepping:
		if err := r.armSpin(t, true); err != nil {
			return err
		}
		t.spin.phase = spinWaitHit
		return r.resume(t, 0)
	case spinWaitHit:
		if regs[trace.RIP] != t.spin.pc+1 {
			// Not our breakpoint: the program's own trap.
			r.cancelSpin(t)
			return r.onSignal(t, int(unix.SIGTRAP))
		}
		regs[trace.RIP] = t.spin.pc
		if err := r.armSpin(t, false); err != nil {
			return err
		}
		if err := ptrace.SetRegs(t.tid, regs); err != nil {
			return fmt.Errorf("move back onto the spin breakpoint at %#x: %w", t.spin.pc, err)
		}
		hash := t.proc.mem.StackHash(regs[trace.RSP])
		if *regs == t.spin.regs && hash == t.spin.hash {
			return r.preempt(t, regs, hash, 0)
		}
		t.spin.tries++
		if t.spin.tries < spinTries {
			t.spin.regs, t.spin.hash = *regs, hash
			t.spin.phase = spinStepping
			return ptrace.Step(t.tid, 0)
		}
		t.spin.phase = spinNone
		t.spin.backoff++
		if t.spin.backoff > maxBackoff {
			return r.preempt(t, regs, hash, trace.FlagApprox)
		}
		t.sliceStart = time.Now()
		return r.resume(t, 0)
	}
	return r.resume(t, 0)
}

// armSpin writes or removes the breakpoint at the detector's pc.
func (r *Recorder) armSpin(t *thread, on bool) error {
	b := []byte{t.spin.orig}
	if on {
		b[0] = 0xcc
	}
	if _, err := t.proc.mem.WriteAt(b, t.spin.pc); err != nil {
		return err
	}
	t.spin.armed = on
	return nil
}

// cancelSpin abandons the detector (the thread reached a system call).
func (r *Recorder) cancelSpin(t *thread) {
	if t.spin.armed {
		r.armSpin(t, false)
	}
	t.spin.phase = spinNone
	t.spin.backoff = 0
}

// preempt logs a preemption of t at regs and gives the CPU to another thread
// (or delivers the held signal that caused it).
func (r *Recorder) preempt(t *thread, regs *trace.Regs, hash uint64, flags uint32) error {
	t.spin.phase = spinNone
	t.spin.backoff = 0
	e := &trace.Event{Kind: trace.KindPreempt, Flags: flags, Tid: int32(t.tid), Regs: *regs, StackHash: hash}
	if err := r.log(e); err != nil {
		return err
	}
	t.resumeRegs, t.haveRegs = *regs, true
	if len(r.ready) > 0 {
		r.parkReady(t, parkResume)
		next := r.ready[0]
		r.ready = r.ready[1:]
		return r.switchTo(next)
	}
	t.sliceStart = time.Now()
	return r.resumeLogged(t)
}
