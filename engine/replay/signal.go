package replay

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// applySignal replays a signal delivery. A synchronous signal recurs by
// itself; an asynchronous one is sent again so that it is delivered at the
// same point, before the thread runs any instruction, with the recorded siginfo.
func (s *Session) applySignal(t *rthread, e *trace.Event) error {
	if e.Flags&trace.FlagSingleStep != 0 {
		return s.applyPtraceStep(t, e) // emuptrace_step.go
	}
	sig := int(e.Signo)
	sync := e.Flags&trace.FlagSyncSignal != 0
	if !sync && t.injected != sig {
		if err := s.sendSignal(t, sig); err != nil {
			return err
		}
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
	want := sig
	if !sync {
		want = carrier(sig)
	}
	if st.Kind != ptrace.StopSignal || st.Sig != want {
		return s.diverge(e, "expected signal %s, got %s", unix.SignalName(unix.Signal(sig)), describe(st))
	}
	if _, err := s.checkRegs(t, e, "at signal "+unix.SignalName(unix.Signal(sig)), &e.Regs); err != nil {
		return err
	}
	if !sync && len(e.Siginfo) >= ptrace.SiginfoSize {
		if err := ptrace.SetSiginfo(t.real, e.Siginfo); err != nil {
			return err
		}
	}
	t.resumeSig = sig
	if e.Flags&trace.FlagPtraceStop != 0 {
		// A stop for the program's tracer: the thread waits there, the
		// signal undelivered (a delivery the tracer asks for is an event
		// of its own).
		t.resumeSig = 0
	}
	if !sync && ptrace.StopsProcess(t.proc.real, sig) {
		// A job control stop: the recording's process stayed stopped
		// until a SIGCONT, and its threads' next events come after that
		// in the log. Here the thread only waits for them: stopping the
		// process for real would send its parent a SIGCHLD (and a wait
		// status) that the recording has at its own point.
		t.resumeSig = 0
	}
	t.frame = nil
	if len(e.Mem) > 0 && t.resumeSig != 0 {
		// Delivered when t next runs: until then it stands where the
		// signal came, as the debugger shows it.
		t.frame = e
	}
	return nil
}

// takeFrame returns the signal to deliver as t is resumed and, if its
// frame is recorded, the event that holds it; both are consumed.
func (t *rthread) takeFrame() (sig int, frame *trace.Event) {
	sig, frame = t.resumeSig, t.frame
	t.resumeSig, t.frame = 0, nil
	if frame != nil && sig != int(frame.Signo) {
		frame = nil
	}
	return sig, frame
}

// enterHandler delivers sig, whose recorded frame e holds
// (record/sigframe.go), by a single step, which stops t at the handler's
// first instruction, and writes the frame there.
func (s *Session) enterHandler(t *rthread, e *trace.Event, sig int) error {
	if err := ptrace.Step(t.real, sig); err != nil {
		return err
	}
	st, err := s.waitFor(t)
	if err != nil {
		return err
	}
	return s.writeFrame(t, e, st)
}

// writeFrame writes the frame of e, recorded at its handler's entry, over
// the one the kernel built here, t having stopped (st) at that entry: the
// last fault's trap number, error code and address in it are this run's,
// and what the program later reads of that stale stack must be the
// recording's.
func (s *Session) writeFrame(t *rthread, e *trace.Event, st ptrace.Status) error {
	sig := unix.SignalName(unix.Signal(e.Signo))
	if st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGTRAP) {
		return s.diverge(e, "expected to enter the handler of %s, got %s", sig, describe(st))
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.real, &regs); err != nil {
		return err
	}
	mems := e.Mem
	if len(mems) > 0 {
		frame, err := s.fitFrame(t, &mems[0], &regs)
		if err != nil {
			return s.diverge(e, "the handler of %s got its frame at %#x, recorded at %#x: %v", sig, regs[trace.RSP], mems[0].Addr, err)
		}
		mems = append([]trace.Mem{frame}, mems[1:]...)
	}
	for _, m := range mems {
		if _, err := t.proc.mem.WriteAt(m.Data, m.Addr); err != nil {
			return fmt.Errorf("write the frame of %s: %w", sig, err)
		}
	}
	return nil
}

// fitFrame returns the recorded frame rec to write where the kernel built
// its own, at regs' rsp. On a CPU of the recording's XSAVE layout, the two
// lie at the same place, and rec is written as it is. On another, the
// kernel's frame is longer or shorter, so it lies lower or higher: the
// handler is moved to the recorded place (regs: its stack pointer and
// arguments), and the recorded frame there gets this CPU's FPU state in
// place of the recording's, which rt_sigreturn could not restore here.
func (s *Session) fitFrame(t *rthread, rec *trace.Mem, regs *trace.Regs) (trace.Mem, error) {
	at := regs[trace.RSP]
	rOff, rOK := ptrace.FrameFPState(rec.Data, rec.Addr)
	if at == rec.Addr && (!rOK || s.frameFP != nil && ptrace.SameFPLayout(s.frameFP, rec.Data[rOff:])) {
		return *rec, nil // this kernel's layout, known: no need to read its frame
	}
	built, err := ptrace.SignalFrame(t.proc.mem, at)
	if err != nil {
		return trace.Mem{}, err
	}
	bOff, bOK := ptrace.FrameFPState(built, at)
	if bOK && s.frameFP == nil {
		s.frameFP = slices.Clone(built[bOff:])
	}
	alike := !bOK || !rOK || ptrace.SameFPLayout(built[bOff:], rec.Data[rOff:])
	switch {
	case at == rec.Addr && alike:
		return *rec, nil
	case alike:
		return trace.Mem{}, errors.New("the same FPU state layout, the stack elsewhere")
	case bOff != rOff:
		return trace.Mem{}, errors.New("the frames differ beyond their FPU state")
	}
	st, err := ptrace.FitFPState(built[bOff:], len(rec.Data)-rOff, xsaveComponent)
	if err != nil {
		return trace.Mem{}, err
	}
	s.fpFull = len(built) - bOff
	if at != rec.Addr {
		regs[trace.RSP] = rec.Addr
		regs[trace.RSI] = rec.Addr + ptrace.FrameInfoOff
		regs[trace.RDX] = rec.Addr + ptrace.FrameUCOff
		if err := ptrace.SetRegs(t.real, regs); err != nil {
			return trace.Mem{}, err
		}
	}
	return trace.Mem{Addr: rec.Addr, Data: append(slices.Clone(rec.Data[:rOff]), st...)}, nil
}

// xsaveComponent is where this CPU's XSAVE standard format keeps state
// component i, and its size.
func xsaveComponent(i uint32) (off, size uint32) {
	size, off, _, _ = machine.CPUID(0xd, i)
	return off, size
}

// applyTrap replays a trapped rdtsc, rdtscp or cpuid with the recorded answer.
func (s *Session) applyTrap(t *rthread, e *trace.Event) error {
	what := e.TrapName()
	var regs trace.Regs
	if e.Flags&trace.FlagBuffered != 0 {
		// An rdtsc the hook read, replayed alone: the hook, given no
		// record, has the stub run its own, which traps.
		if err := s.runToStubTrap(t, e, &regs); err != nil {
			return err
		}
	} else if e.Kind == trace.KindCpuid && (s.hdr.CpuidPatched || e.Flags&trace.FlagXgetbv != 0) {
		// A cpuid the recorder found in the code and trapped (no CPUID
		// faulting where it recorded), or an xgetbv: replay trapped the
		// same site, and puts the cpuid back where the recorder patched
		// it further.
		if err := s.runToTrap(t, e, unix.SIGILL, &regs); err != nil {
			return err
		}
		if len(e.Hooks) > 0 {
			t.proc.code.Untrap(t.proc.mem, e.Regs[trace.RIP])
		}
	} else if e.Kind == trace.KindCpuid && s.emulatesCpuid() {
		if err := s.runToCpuid(t, e, &regs); err != nil { // cpuid.go
			return err
		}
	} else if err := s.runToTrap(t, e, unix.SIGSEGV, &regs); err != nil {
		return err
	}
	e.ApplyTrap(&regs)
	for _, h := range e.Hooks {
		// The instruction the recorder patched as it trapped (patchTrap).
		w, err := s.patchTrap(t, e, h, nil)
		if err != nil {
			return err
		}
		regs[trace.RIP] = hook.TrapResume(w, h.Stub, regs[trace.RIP])
	}
	if err := ptrace.SetRegs(t.real, &regs); err != nil {
		return fmt.Errorf("complete %s at %#x: %w", what, e.Regs[trace.RIP], err)
	}
	return nil
}

// runToTrap runs t to the instruction e trapped at, which faults with sig
// (rdtsc and cpuid made to fault, a patched rdrand's ud2), and reads its
// registers there, checked against the recording's.
func (s *Session) runToTrap(t *rthread, e *trace.Event, sig unix.Signal, regs *trace.Regs) error {
	what := e.TrapName()
	st, err := s.run(t)
	if err != nil {
		return err
	}
	if st.Kind != ptrace.StopSignal || st.Sig != int(sig) {
		return s.diverge(e, "expected %s at %#x, got %s", what, e.Regs[trace.RIP], describe(st))
	}
	if err := ptrace.GetRegs(t.real, regs); err != nil {
		return err
	}
	return s.compareTrapRegs(e, regs)
}

// compareTrapRegs checks the registers at the instruction e trapped,
// except those it only writes (Event.TrapOutputs).
func (s *Session) compareTrapRegs(e *trace.Event, live *trace.Regs) error {
	got := *live
	for _, r := range e.TrapOutputs() {
		got[r] = e.Regs[r]
	}
	return s.compareRegs(e, "at "+e.TrapName(), &e.Regs, &got)
}

// runToStubTrap runs t to the rdtsc of the stub of the site of e, a
// buffered rdtsc, and reads its registers there.
func (s *Session) runToStubTrap(t *rthread, e *trace.Event, regs *trace.Regs) error {
	st, err := s.run(t)
	if err != nil {
		return err
	}
	if st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGSEGV) {
		return s.diverge(e, "expected the rdtsc at %#x, got %s", e.Regs[trace.RIP], describe(st))
	}
	if err := ptrace.GetRegs(t.real, regs); err != nil {
		return err
	}
	if site, ok := hook.TrapSiteAt(t.proc.mem, regs[trace.RIP]); !ok || site != e.Regs[trace.RIP] {
		return s.diverge(e, "expected the rdtsc at %#x, got a trap at rip %#x", e.Regs[trace.RIP], regs[trace.RIP])
	}
	return nil
}

// siKernel is SI_KERNEL, the si_code of an int3 breakpoint trap.
const siKernel = 0x80

// deliverFatal lets a signal that ends the process be delivered, when the
// next events are the deaths it causes (t's first): the thread that took it
// waits at its delivery stop with resumeSig set, and would otherwise only be
// resumed by its own next event, after the deaths it causes. That thread is
// t if t has a signal to deliver, else one whose signal is the one the
// recording says the process died of.
func (s *Session) deliverFatal(t *rthread) error {
	victim := t
	if t.resumeSig == 0 {
		victim = nil
		for i := 0; i < lookahead && victim == nil; i++ {
			e, err := s.peek(i)
			if err != nil || e == nil {
				return err
			}
			if e.Kind == trace.KindThreadExit {
				continue
			}
			if ws := unix.WaitStatus(e.Status); e.Kind == trace.KindExit && ws.Signaled() {
				if x := s.threads[e.Tid]; x == nil || x.proc != t.proc {
					break // another process's end
				}
				for _, o := range s.threads {
					if !o.dead && o.proc == t.proc && o.resumeSig == int(ws.Signal()) {
						victim = o
					}
				}
			}
			break
		}
	}
	if victim == nil {
		return nil
	}
	sig := victim.resumeSig
	victim.resumeSig = 0
	if err := ptrace.Cont(victim.real, sig); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("deliver %s: %w", unix.SignalName(unix.Signal(sig)), err)
	}
	return nil
}

// signalAfterCall returns the signal event that ends t's system call e (the
// thread's next event, or the one after the exit of e when e is the entry
// of a call left blocking), or nil.
func (s *Session) signalAfterCall(t *rthread, e *trace.Event) *trace.Event {
	skip := e.Kind == trace.KindSyscallEntry
	for i := 1; i < lookahead; i++ {
		n, err := s.peek(i)
		if err != nil || n == nil {
			return nil
		}
		if n.Tid != t.rec {
			continue
		}
		if skip && n.Kind == trace.KindSyscallExit {
			skip = false
			continue
		}
		if n.Kind == trace.KindSignal {
			return n
		}
		return nil
	}
	return nil
}
