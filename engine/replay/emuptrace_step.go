package replay

import (
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// A PTRACE_SINGLESTEP of the program's tracer was done for real by the
// recorder (record's emuptrace_step.go) and logged as the tracee's stop
// event: replay single-steps the tracee there too, so that it stands where
// the recorded one did for what its tracer changes next (SETREGS, POKE,
// /proc/PID/mem writes, redone where replay's tracee stands).

// applyPtraceStep replays the single step e of t.
func (s *Session) applyPtraceStep(t *rthread, e *trace.Event) error {
	sig := unix.Signal(e.Signo)
	if t.atExec || t.atEntry || t.pending != nil {
		return s.diverge(e, "single step of the program's tracer (%s) while the thread is not at a stop of user code", unix.SignalName(sig))
	}
	st, _, err := s.stepRaw(t)
	if err != nil {
		return err
	}
	if st.Kind != ptrace.StopSignal || st.Sig != int(sig) {
		return s.diverge(e, "expected the single step of the program's tracer to stop with %s, got %s", unix.SignalName(sig), describe(st))
	}
	if _, err := s.checkRegs(t, e, "after a single step of the program's tracer", &e.Regs); err != nil {
		return err
	}
	// The stop's signal is the tracer's to deliver: a delivery it asked
	// for is an event of its own.
	t.resumeSig = 0
	return nil
}
