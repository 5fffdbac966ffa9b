package debugger

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/insn"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// faultFailure is a fault: the chain starts with the register that held
// the bad address (or divisor, or jump target).
func (s *Session) faultFailure(fe *failureEvents) (*failure, *whyCursor, error) {
	if err := s.tl.Goto(timeline.Moment{Event: fe.fault, Tid: fe.faultTid}); err != nil {
		return nil, nil, err
	}
	for {
		st, err := s.tl.Continue()
		if err != nil {
			return nil, nil, fmt.Errorf("go to the fault at event #%d: %w", fe.fault, err)
		}
		if st.Reason == timeline.ReasonSignal || s.tl.When() > fe.fault {
			break
		}
	}
	tid := fe.faultTid
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return nil, nil, err
	}
	sig := unix.SignalName(unix.Signal(fe.faultSig))
	f := &failure{WhyFailure: WhyFailure{Kind: "signal"}}
	s.failureAt(f, tid)
	pc := regs[trace.RIP]
	f.Place = s.place(tid, pc)
	inst, ok := s.decodeAt(pc)
	if !ok {
		// The pc itself is bad: the call, jump or return before it
		// brought it there.
		f.Description = fmt.Sprintf("%s: the program jumped to %#x, where there is no code", sig, pc)
		return s.badTarget(f, pc)
	}
	cur, desc := faultOperand(inst, &regs)
	f.Description = fmt.Sprintf("%s at %s (%s)", sig, placeWhere(f.Place), desc)
	if cur == nil {
		f.verdict = "The faulting instruction's operands hold no register to follow."
		return f, nil, nil
	}
	cur.tid = tid
	return f, cur, nil
}

// badTarget follows the value a call or return took the pc to. A fault
// at a pc with no code ran no instruction there: the call before it is
// found from the return address it pushed (stepping back from such a
// fault is not possible), a return from the slot it popped.
func (s *Session) badTarget(f *failure, target uint64) (*failure, *whyCursor, error) {
	regs, err := s.tl.Session().Regs(f.tid)
	if err != nil {
		return nil, nil, err
	}
	sp := regs[trace.RSP]
	var word [8]byte
	if _, err := s.mem().ReadAt(word[:], sp); err == nil {
		ret := binary.LittleEndian.Uint64(word[:])
		before := make([]byte, insn.MaxLen)
		if _, err := s.mem().ReadAt(before, ret-insn.MaxLen); err == nil {
			if k := insn.CallLenBefore(before); k > 0 {
				return s.badCall(f, ret-uint64(k), target)
			}
		}
	}
	// A return to the target: the slot below the stack pointer held it.
	if _, err := s.mem().ReadAt(word[:], sp-8); err == nil && binary.LittleEndian.Uint64(word[:]) == target {
		f.Description += " (a return popped it from the stack)"
		return f, &whyCursor{reg: -1, addr: sp - 8, size: 8, what: "the return address", tid: f.tid}, nil
	}
	f.verdict = fmt.Sprintf("The jump to %#x came from neither a call nor a return the stack shows: no value to follow.", target)
	return f, nil, nil
}

// badCall goes back to the call at pc that jumped to target and follows
// its operand.
func (s *Session) badCall(f *failure, pc, target uint64) (*failure, *whyCursor, error) {
	st, err := s.tl.ReverseContinueWith([]uint64{pc}, nil)
	if err != nil || st.Reason == timeline.ReasonStart {
		f.verdict = fmt.Sprintf("Could not go back to the call at %#x that jumped to %#x.", pc, target)
		return f, nil, nil
	}
	regs, err := s.tl.Session().Regs(f.tid)
	if err != nil {
		return nil, nil, err
	}
	inst, ok := s.decodeAt(pc)
	if !ok || inst.Op != x86asm.CALL {
		f.verdict = fmt.Sprintf("The instruction at %#x is not the call that jumped to %#x.", pc, target)
		return f, nil, nil
	}
	f.Place = s.place(f.tid, pc)
	f.Description += fmt.Sprintf(", called by %s at %s", x86asm.GNUSyntax(inst, pc, nil), placeWhere(f.Place))
	switch a := inst.Args[0].(type) {
	case x86asm.Reg:
		if r, ok := regIndex(a); ok {
			return f, &whyCursor{reg: r, what: "$" + trace.RegNames[r], tid: f.tid}, nil
		}
	case x86asm.Mem:
		addr := effectiveAddr(a, &regs, pc, inst.Len)
		return f, &whyCursor{reg: -1, addr: addr, size: 8, what: s.nameAddress(f.tid, addr), tid: f.tid}, nil
	}
	f.verdict = fmt.Sprintf("The call at %#x has no register or memory operand to follow.", pc)
	return f, nil, nil
}

// faultOperand is the location to follow from a faulting instruction: the
// base (or index) register of its memory operand, or a divisor.
func faultOperand(inst x86asm.Inst, regs *trace.Regs) (*whyCursor, string) {
	text := x86asm.GNUSyntax(inst, regs[trace.RIP], nil)
	if inst.Op == x86asm.DIV || inst.Op == x86asm.IDIV {
		switch a := inst.Args[0].(type) {
		case x86asm.Reg:
			if r, ok := regIndex(a); ok {
				return &whyCursor{reg: r, what: "$" + trace.RegNames[r]}, fmt.Sprintf("%s divides by %s = %#x", text, trace.RegNames[r], regs[r])
			}
		case x86asm.Mem:
			addr := effectiveAddr(a, regs, regs[trace.RIP], inst.Len)
			return &whyCursor{reg: -1, addr: addr, size: inst.MemBytes}, fmt.Sprintf("%s divides by the value at %#x", text, addr)
		}
	}
	for _, arg := range inst.Args {
		m, ok := arg.(x86asm.Mem)
		if !ok {
			continue
		}
		// The kernel says 0 for a non-canonical address: computed, it is
		// the one the instruction used.
		addr := effectiveAddr(m, regs, regs[trace.RIP], inst.Len)
		for _, r := range []x86asm.Reg{m.Base, m.Index} {
			if r == 0 || r == x86asm.RSP || r == x86asm.RBP || r == x86asm.RIP {
				continue
			}
			if i, ok := regIndex(r); ok {
				return &whyCursor{reg: i, what: "$" + trace.RegNames[i]},
					fmt.Sprintf("%s accesses %#x through %s = %#x", text, addr, trace.RegNames[i], regs[i])
			}
		}
		return nil, fmt.Sprintf("%s accesses %#x", text, addr)
	}
	return nil, text
}
