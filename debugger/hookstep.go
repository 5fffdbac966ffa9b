package debugger

import (
	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

// A site patched to go through the hook page (engine/hook) is, for the
// program, one instruction: a system call. stepi and reverse-stepi pass
// over the hook's code as gdb passes over a syscall instruction. A patched
// cpuid's window (the cpuid and the instructions around it its jump
// covers) is stepped over as one instruction too.

// maxHookSteps bounds the instructions a forward stepi runs through the
// hook (its calls take a few hundred).
const maxHookSteps = 20000

// inHook reports whether thread tid stands in the hook page or a stub,
// and where the jump that replaced the patched site's code is.
func (s *Session) inHook(tid int32) (uint64, bool) {
	if s.tl.Session().Header().Hook == "" {
		return 0, false
	}
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return 0, false
	}
	raw := regs
	if !hook.UserView(&regs, s.mem()) {
		return 0, false
	}
	return hook.PatchJump(raw, s.mem()), true
}

// stepiOverHook is stepi in thread tid: through the hook to the patched
// site's return when the instruction enters it.
func (s *Session) stepiOverHook(tid int32) (*timeline.Stop, error) {
	st, err := s.tl.StepThreadInstruction(tid)
	for i := 0; err == nil && st != nil && st.Reason == timeline.ReasonStep && i < maxHookSteps; i++ {
		if _, in := s.inHook(tid); !in {
			break
		}
		st, err = s.tl.StepThreadInstruction(tid)
	}
	return st, err
}

// reverseStepiOverHook is reverse-stepi in thread tid: back to the
// patched site's jump when the instruction before was the hook's return.
func (s *Session) reverseStepiOverHook(tid int32) (*timeline.Stop, error) {
	st, err := s.tl.ReverseStepThreadInstruction(tid)
	if err != nil || st == nil || st.Reason != timeline.ReasonStep {
		return st, err
	}
	jump, in := s.inHook(tid)
	if !in {
		return st, nil
	}
	// Back to the jump that replaced the site's code.
	return s.tl.ReverseContinueWith([]uint64{jump}, nil)
}
