package replay

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// applySignal replays a signal delivery. A synchronous signal recurs by
// itself; an asynchronous one is sent again so that it is delivered at the
// same point, before the thread runs any instruction, with the recorded siginfo.
func (s *Session) applySignal(t *rthread, e *trace.Event) error {
	sig := int(e.Signo)
	sync := e.Flags&trace.FlagSyncSignal != 0
	if !sync && t.injected != sig {
		if err := ptrace.Tgkill(t.proc.real, t.real, sig); err != nil {
			return err
		}
		t.injected = sig
	}
	var st ptrace.Status
	var err error
	if t.atExec || t.atEntry {
		return s.diverge(e, "signal %s while the thread is inside a system call", unix.SignalName(unix.Signal(sig)))
	}
	if st, err = s.run(t); err != nil {
		return err
	}
	t.injected = 0
	if st.Kind != ptrace.StopSignal || st.Sig != sig {
		return s.diverge(e, "expected signal %s, got %s", unix.SignalName(unix.Signal(sig)), describe(st))
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.real, &regs); err != nil {
		return err
	}
	if err := s.compareRegs(e, "at signal "+unix.SignalName(unix.Signal(sig)), &e.Regs, &regs); err != nil {
		return err
	}
	if !sync && len(e.Siginfo) >= ptrace.SiginfoSize {
		if err := ptrace.SetSiginfo(t.real, e.Siginfo); err != nil {
			return err
		}
	}
	t.resumeSig = sig
	return nil
}

// applyTrap replays a trapped rdtsc, rdtscp or cpuid with the recorded answer.
func (s *Session) applyTrap(t *rthread, e *trace.Event) error {
	what := e.TrapName()
	st, err := s.run(t)
	if err != nil {
		return err
	}
	if st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGSEGV) {
		return s.diverge(e, "expected %s at %#x, got %s", what, e.Regs[trace.RIP], describe(st))
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.real, &regs); err != nil {
		return err
	}
	if err := s.compareRegs(e, "at "+what, &e.Regs, &regs); err != nil {
		return err
	}
	e.ApplyTrap(&regs)
	if err := ptrace.SetRegs(t.real, &regs); err != nil {
		return fmt.Errorf("complete %s at %#x: %w", what, e.Regs[trace.RIP], err)
	}
	return nil
}

// applyPreempt runs t to the first time it reaches the recorded pc with the
// recorded registers and stack window: a breakpoint at the pc is checked at
// each pass.
func (s *Session) applyPreempt(t *rthread, e *trace.Event) error {
	pc := e.Regs[trace.RIP]
	s.preemptPC = pc
	defer func() { s.preemptPC = 0 }()
	for passes := 0; ; passes++ {
		st, err := s.run(t)
		if err != nil {
			return err
		}
		var regs trace.Regs
		if err := ptrace.GetRegs(t.real, &regs); err != nil {
			return err
		}
		if st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGTRAP) || regs[trace.RIP] != pc {
			return s.diverge(e, "expected to reach the preemption point %#x, got %s after %d passes", pc, describe(st), passes)
		}
		if regs == e.Regs && t.proc.mem.StackHash(regs[trace.RSP]) == e.StackHash {
			return nil
		}
		if _, ok := s.bps[pc]; ok {
			return s.userStop(t, StopBreakpoint, pc, 0)
		}
		// Not this pass: step over the breakpoint and go on.
		st, stepped, err := s.stepRaw(t)
		if err != nil {
			return err
		}
		if !stepped {
			return s.diverge(e, "stepping over %#x: got %s", pc, describe(st))
		}
	}
}

// siKernel is SI_KERNEL, the si_code of an int3 breakpoint trap.
const siKernel = 0x80
