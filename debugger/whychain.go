package debugger

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/arch/x86/x86asm"

	"github.com/rewind-debugger/rewind/engine/insn"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// whyCursor is the location that holds the bad value at the current
// moment: a register of thread tid, or memory.
type whyCursor struct {
	reg  int // a trace.Regs index, -1 for memory
	addr uint64
	size int
	what string
	tid  int32
}

// followChain follows the bad value back from start, at most max links,
// and says what it found.
func (s *Session) followChain(f *failure, start whyCursor, max int) (links []WhyLink, suspect int, verdict string) {
	cur := start
	suspect = -1
	for len(links) < max {
		s.whyDeadline = time.Now().Add(whyLinkBudget)
		var link *WhyLink
		var next *whyCursor
		var stop string
		var err error
		if cur.reg >= 0 {
			link, next, stop, err = s.followRegisterLink(cur)
		} else {
			link, next, stop, err = s.followMemory(cur, f)
		}
		if errors.Is(err, timeline.ErrCancelled) {
			return links, suspect, fmt.Sprintf("Stopped following %s: its search took over %v (a long run without system calls is searched a trap or a step at a time).", cur.what, whyLinkBudget)
		}
		if err != nil {
			return links, suspect, fmt.Sprintf("Stopped following %s: %v.", cur.what, err)
		}
		if link != nil {
			links = append(links, *link)
			if link.Suspicion != "" {
				return links, len(links) - 1, fmt.Sprintf("Suspicious write: %s at %s [%s]: %s.",
					link.What, placeWhere(link.WhyPlace), link.Moment, link.Suspicion)
			}
		}
		if next == nil {
			return links, suspect, stop
		}
		cur = *next
	}
	return links, suspect, fmt.Sprintf("Followed %d links without finding a suspicious write (why N follows more).", max)
}

// followRegisterLink finds the instruction that set cur's register, and what
// it set it from. It leaves the timeline just before that instruction.
func (s *Session) followRegisterLink(cur whyCursor) (*WhyLink, *whyCursor, string, error) {
	name := "$" + trace.RegNames[cur.reg]
	s.thread = cur.tid
	usePC, _ := s.pcOf(cur.tid)
	rw, err := s.previousRegisterWrite(cur.reg)
	if errors.Is(err, timeline.ErrNoWrite) {
		return nil, nil, fmt.Sprintf("%s was set by the system call or event before %s, not by an instruction: %v.", name, s.tl.Now(), err), nil
	}
	if err != nil {
		return nil, nil, "", err
	}
	link := &WhyLink{Kind: "register", What: name, Value: fmt.Sprintf("%#x", rw.New), Old: fmt.Sprintf("%#x", rw.Old)}
	link.WhyPlace = s.place(cur.tid, rw.PC)
	// The instruction's operands are read before it ran.
	if _, err := s.tl.ReverseStepInstruction(); err != nil {
		return link, nil, "", err
	}
	regs, err := s.tl.Session().Regs(cur.tid)
	if err != nil || regs[trace.RIP] != rw.PC {
		return link, nil, fmt.Sprintf("Could not stand before the instruction at %#x to read its operands.", rw.PC), nil
	}
	inst, ok := s.decodeAt(rw.PC)
	if !ok {
		return link, nil, fmt.Sprintf("The instruction at %#x could not be decoded.", rw.PC), nil
	}
	if fn, use := s.FunctionAt(rw.PC), s.FunctionAt(usePC); fn != use && fn != "" && use != "" && !isLoad(inst) {
		link.Note = fmt.Sprintf("returned by %s", fn)
		return link, nil, fmt.Sprintf("%s is what %s returned (set at %s): the chain stops at the call.", name, fn, placeWhere(link.WhyPlace)), nil
	}
	switch {
	case isLoad(inst):
		m, _ := memArg(inst)
		addr := effectiveAddr(m, &regs, rw.PC, inst.Len)
		size := inst.MemBytes
		if inst.Op == x86asm.POP {
			addr, size = regs[trace.RSP], 8
		}
		what := s.nameAddress(cur.tid, addr)
		link.Note = "loaded from " + what
		return link, &whyCursor{reg: -1, addr: addr, size: size, what: what, tid: cur.tid}, "", nil
	case inst.Op == x86asm.MOV || inst.Op == x86asm.MOVSXD || inst.Op == x86asm.MOVZX || inst.Op == x86asm.MOVSX:
		switch a := inst.Args[1].(type) {
		case x86asm.Reg:
			if r, ok := regIndex(a); ok {
				link.Note = "copied from $" + trace.RegNames[r]
				return link, &whyCursor{reg: r, what: "$" + trace.RegNames[r], tid: cur.tid}, "", nil
			}
		case x86asm.Imm:
			link.Note = "a constant"
			return link, nil, fmt.Sprintf("%s was set to the constant %#x at %s.", name, uint64(a), placeWhere(link.WhyPlace)), nil
		}
	case inst.Op == x86asm.LEA:
		link.Note = "computed as an address"
		return link, nil, fmt.Sprintf("%s is an address computed at %s (%s).", name, placeWhere(link.WhyPlace), link.Instruction), nil
	case inst.Op == x86asm.XOR && inst.Args[0] == inst.Args[1]:
		link.Note = "zeroed"
		return link, nil, fmt.Sprintf("%s was zeroed at %s.", name, placeWhere(link.WhyPlace)), nil
	}
	if r, ok := inst.Args[0].(x86asm.Reg); ok {
		if i, ok := regIndex(r); ok && i == cur.reg && inst.Args[1] != nil {
			link.Note = "computed from its own previous value"
			return link, &whyCursor{reg: cur.reg, what: name, tid: cur.tid}, "", nil
		}
	}
	link.Note = "computed by " + link.Instruction
	return link, nil, fmt.Sprintf("%s was computed at %s (%s): the chain does not follow arithmetic further.", name, placeWhere(link.WhyPlace), link.Instruction), nil
}

// previousRegisterWrite is the engine's register origin, also from the
// start of a segment (a fault's moment), where the instruction before is
// the one to look at first.
func (s *Session) previousRegisterWrite(reg int) (*timeline.RegisterWrite, error) {
	now := s.tl.Now()
	if now.Hits > 0 || now.Steps > 0 {
		return s.tl.PreviousRegisterWrite(reg, maxRegisterSteps)
	}
	regs, err := s.tl.Session().Regs(now.Tid)
	if err != nil {
		return nil, err
	}
	if _, err := s.tl.ReverseStepInstruction(); err != nil {
		return nil, err
	}
	before, err := s.tl.Session().Regs(now.Tid)
	if err != nil {
		return nil, err
	}
	if before[reg] != regs[reg] {
		rw := &timeline.RegisterWrite{Moment: now, PC: before[trace.RIP], Old: before[reg], New: regs[reg]}
		if err := s.tl.Goto(now); err != nil {
			return nil, err
		}
		return rw, nil
	}
	return s.tl.PreviousRegisterWrite(reg, maxRegisterSteps)
}

// followMemory finds the write that gave cur's memory its value, checks
// whether it is suspicious, and what it stored from.
func (s *Session) followMemory(cur whyCursor, f *failure) (*WhyLink, *whyCursor, string, error) {
	wp := replay.Watchpoint{Addr: cur.addr, Len: cur.size}
	if cur.size != 1 && cur.size != 2 && cur.size != 4 && cur.size != 8 || cur.addr%uint64(cur.size) != 0 {
		wp.Len = 1
	}
	read := s.tl.Now() // the moment cur.tid reads the location
	st, err := s.tl.PreviousWrite(wp)
	if errors.Is(err, timeline.ErrNoWrite) {
		return nil, nil, fmt.Sprintf("Nothing wrote %s before: it holds what the program was loaded with.", cur.what), nil
	}
	if err != nil {
		return nil, nil, "", err
	}
	tid := st.Moment.Tid
	if tid == 0 {
		tid = cur.tid
	}
	link := &WhyLink{Kind: "write", What: cur.what, Value: fmt.Sprintf("%#x", st.New), Old: fmt.Sprintf("%#x", st.Old)}
	if kernelWrote(st.Moment) {
		link.Kind = "syscall"
		link.WhyPlace = s.place(tid, 0)
		call := ""
		ReadEvents(s.path, st.Moment.Event-1, st.Moment.Event, func(_ int64, _ *trace.Event, text string) { call = text })
		link.Note = "written by " + call
		return link, nil, fmt.Sprintf("The value came from outside the program: %s.", call), nil
	}
	pc, err := s.pcOf(tid)
	if err != nil {
		return nil, nil, "", err
	}
	writer := s.writerPC(pc)
	link.WhyPlace = s.place(tid, writer)
	link.Suspicion = s.suspectWrite(cur, writer, tid, read, f)
	if link.Suspicion != "" {
		return link, nil, "", nil
	}
	// The stored value is read before the instruction ran.
	if _, err := s.tl.ReverseStepInstruction(); err != nil {
		return link, nil, "", err
	}
	regs, err := s.tl.Session().Regs(tid)
	if err != nil || regs[trace.RIP] != writer {
		return link, nil, fmt.Sprintf("Could not stand before the write at %#x to read what it stored.", writer), nil
	}
	inst, ok := s.decodeAt(writer)
	if !ok {
		return link, nil, fmt.Sprintf("The instruction at %#x could not be decoded.", writer), nil
	}
	if !s.userCode(writer) {
		level, callPC := s.userFrame(tid)
		link.Note = fmt.Sprintf("copied by %s", s.FunctionAt(writer))
		if level > 0 {
			var info StopInfo
			s.placeInfo(&info, callPC)
			link.Note += fmt.Sprintf(", called from %s at %s:%d", info.Function, info.File, info.Line)
		}
		return link, nil, fmt.Sprintf("%s was written by %s, code without debug information.", cur.what, link.Note[len("copied by "):]), nil
	}
	switch inst.Op {
	case x86asm.MOV, x86asm.MOVQ, x86asm.MOVD:
		switch a := inst.Args[1].(type) {
		case x86asm.Reg:
			if r, ok := regIndex(a); ok {
				link.Note = "stored from $" + trace.RegNames[r]
				return link, &whyCursor{reg: r, what: "$" + trace.RegNames[r], tid: tid}, "", nil
			}
		case x86asm.Imm:
			link.Note = "a constant"
			return link, nil, fmt.Sprintf("%s was set to the constant %#x at %s.", cur.what, uint64(a), placeWhere(link.WhyPlace)), nil
		}
	case x86asm.ADD, x86asm.SUB, x86asm.INC, x86asm.DEC, x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.NEG, x86asm.NOT, x86asm.SHL, x86asm.SHR, x86asm.SAR:
		link.Note = "updated in place"
		next := cur
		next.tid = tid
		return link, &next, "", nil
	}
	link.Note = "written by " + link.Instruction
	return link, nil, fmt.Sprintf("%s was written at %s by %s, which the chain does not follow.", cur.what, placeWhere(link.WhyPlace), link.Instruction), nil
}

// decodeAt decodes the instruction at pc as the program has it.
func (s *Session) decodeAt(pc uint64) (x86asm.Inst, bool) {
	code := make([]byte, insn.MaxLen)
	n, _ := s.mem().ReadAt(code, pc)
	if n == 0 {
		return x86asm.Inst{}, false
	}
	inst, err := x86asm.Decode(code[:n], 64)
	return inst, err == nil
}

// isLoad says whether inst reads memory into its register operand.
func isLoad(inst x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.POP:
		_, ok := inst.Args[0].(x86asm.Reg)
		return ok
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.MOVQ, x86asm.MOVD:
		_, toReg := inst.Args[0].(x86asm.Reg)
		_, fromMem := inst.Args[1].(x86asm.Mem)
		return toReg && fromMem
	}
	return false
}

// memArg is inst's memory operand.
func memArg(inst x86asm.Inst) (x86asm.Mem, bool) {
	for _, a := range inst.Args {
		if m, ok := a.(x86asm.Mem); ok {
			return m, true
		}
	}
	return x86asm.Mem{}, false
}

// effectiveAddr computes a memory operand's address from the registers
// before the instruction (at pc, of length n) ran.
func effectiveAddr(m x86asm.Mem, regs *trace.Regs, pc uint64, n int) uint64 {
	addr := uint64(m.Disp)
	if m.Base == x86asm.RIP {
		addr += pc + uint64(n)
	} else if i, ok := regIndex(m.Base); ok {
		addr += regs[i]
	}
	if i, ok := regIndex(m.Index); ok {
		addr += regs[i] * uint64(m.Scale)
	}
	if m.Segment == x86asm.FS {
		addr += regs[trace.FSBase]
	}
	return addr
}

// regIndex maps a general register of any width to the trace.Regs index of
// its 64-bit register.
func regIndex(r x86asm.Reg) (int, bool) {
	num := -1
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		num = int(r - x86asm.RAX)
	case r >= x86asm.EAX && r <= x86asm.R15L:
		num = int(r - x86asm.EAX)
	case r >= x86asm.AX && r <= x86asm.R15W:
		num = int(r - x86asm.AX)
	case r >= x86asm.AL && r <= x86asm.BL:
		num = int(r - x86asm.AL)
	case r >= x86asm.AH && r <= x86asm.BH:
		num = int(r - x86asm.AH)
	case r >= x86asm.SPB && r <= x86asm.R15B:
		num = 4 + int(r-x86asm.SPB)
	}
	if num < 0 {
		return 0, false
	}
	return trace.ByX86Number[num], true
}
