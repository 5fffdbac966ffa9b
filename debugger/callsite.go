package debugger

import (
	"strings"

	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Going back to the call that made a frame. Stepping back one instruction
// from a function's entry replays the previous call of the function whole,
// single-stepping it (seconds when the calls are long); a reverse search
// for the call instruction in the caller's frame traps only that
// instruction, once per call: the last time the caller stood there is the
// call that made the frame.

// callBefore returns the address of the call instruction that returns to
// ret, preferring a direct call to entry; 0 when none ends at ret.
func (s *Session) callBefore(ret, entry uint64) uint64 {
	t := s.symbols()
	found := uint64(0)
	for k := 2; k <= 15 && k < int(ret); k++ {
		insts, err := t.Disassemble(s.mem(), ret-uint64(k), k)
		// (Disassemble decodes on past the bytes asked for: the first
		// instruction is the one.)
		if err != nil || len(insts) == 0 || insts[0].Len != k || !strings.HasPrefix(insts[0].Text, "call") {
			continue
		}
		if insts[0].Target == entry {
			return insts[0].Addr
		}
		if found == 0 && insts[0].Target == 0 {
			found = insts[0].Addr // an indirect call: its target is not written
		}
	}
	return found
}

// backToCall goes back to the call, in the caller, that made the physical
// frame of frames[level]; ok is false when it cannot tell the call.
func (s *Session) backToCall(tid int32, level int) (st *timeline.Stop, ok bool, err error) {
	frames, err := s.stack(tid)
	if err != nil {
		return nil, false, nil
	}
	p := physicalFrame(frames, level)
	if p+1 >= len(frames) || frames[p].Function == nil {
		return nil, false, nil
	}
	caller := frames[p+1]
	call := s.callBefore(caller.PC, frames[p].Function.Low)
	if call == 0 {
		return nil, false, nil
	}
	key := s.frameKey(tid, caller.CFA)
	same := s.sameRunner(tid)
	// At the call, rsp is the callee's CFA to be: a register read per
	// trap, not an unwind. Go moves stacks: there the caller's frame is
	// told by unwinding.
	rsp := frames[p].CFA
	goProgram := s.isGo()
	// Watchpoints do not stop it: it is the end of a reverse-finish or of
	// a reverse step's instruction back, as before it.
	st, err = s.tl.ReverseContinueRun(timeline.Run{Temp: []uint64{call}, IgnoreWatchpoints: true, Accept: func(tt int32, _ uint64) bool {
		if !same(tt) {
			return false
		}
		if !goProgram {
			regs, err := s.tl.Session().Regs(tt)
			return err == nil && regs[trace.RSP] == rsp
		}
		c, err := s.cfaOf(tt)
		return err == nil && c == key
	}})
	return st, true, err
}

// straightTo says whether the code from a function's entry to pc runs
// straight (no jump, call or return before pc), as a prologue does: a
// thread at pc in that function came from its entry in this call.
func (s *Session) straightTo(entry, pc uint64) bool {
	if pc <= entry || pc-entry > 64 {
		return false
	}
	insts, err := s.symbols().Disassemble(s.mem(), entry, int(pc-entry))
	if err != nil {
		return false
	}
	for _, in := range insts {
		if in.Addr >= pc {
			return in.Addr == pc
		}
		if op := strings.Fields(in.Text); len(op) == 0 || strings.HasPrefix(op[0], "j") || strings.HasPrefix(op[0], "call") || strings.HasPrefix(op[0], "ret") || strings.HasPrefix(op[0], "loop") {
			return false
		}
	}
	return false
}
