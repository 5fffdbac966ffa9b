package debugger

import (
	"encoding/binary"
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// suspectWrite says why the write of cur by the instruction at writer in
// thread tid, just made, is suspicious ("" when it is not). The timeline
// is back at the write when it returns.
func (s *Session) suspectWrite(cur whyCursor, writer uint64, tid int32, read timeline.Moment, f *failure) string {
	at := s.tl.Now()
	defer func() {
		if s.tl.Now() != at {
			s.tl.Goto(at)
		}
	}()
	if why := s.belowStack(cur.addr, tid); why != "" {
		return why
	}
	if why := s.overran(cur.addr, writer, tid); why != "" {
		return why
	}
	if why := s.freedBlock(cur.addr, at); why != "" {
		return why
	}
	if why := s.raced(cur, tid, read, f); why != "" {
		return why
	}
	return ""
}

// belowStack: a write into thread tid's stack below its stack pointer
// (and its red zone) writes a frame that has returned.
func (s *Session) belowStack(addr uint64, tid int32) string {
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return ""
	}
	sp := regs[trace.RSP]
	if addr >= sp-128 {
		return ""
	}
	maps, err := s.tl.Session().Mappings()
	if err != nil || !s.inStackOf(tid, addr, maps) {
		return ""
	}
	return fmt.Sprintf("it writes %#x, %d bytes below the stack pointer of thread %d: into a stack frame that has returned", addr, sp-addr, tid)
}

// overran: the byte before the written objMember (or object) was last
// written by the same instruction, which so ran past that objMember's end.
func (s *Session) overran(addr, writer uint64, tid int32) string {
	if !s.userCode(writer) {
		return "" // the C library's copies write across members on purpose
	}
	o, ok := s.objectAt(tid, addr)
	if !ok {
		return ""
	}
	// The innermost objMember that starts past the object's first byte and
	// holds addr: the boundary the write may have crossed.
	for k := len(o.path) - 1; k >= 0; k-- {
		m := o.path[k]
		if strings.HasPrefix(m.name, "[") {
			continue // elements of one array are one run
		}
		before := m.start - 1
		st, err := s.tl.PreviousWrite(replay.Watchpoint{Addr: before, Len: 1})
		if err != nil || kernelWrote(st.Moment) {
			return ""
		}
		pc, err := s.pcOf(st.Moment.Tid)
		if err != nil || s.writerPC(pc) != writer {
			return ""
		}
		prev, ok := s.objectAt(tid, before)
		if !ok {
			return fmt.Sprintf("the same instruction wrote %#x just before: it ran past the end of what holds it into %s", before, o.upTo(k+1))
		}
		run := prev
		for j, pm := range prev.path {
			if !strings.HasPrefix(pm.name, "[") && j+1 < len(prev.path) && strings.HasPrefix(prev.path[j+1].name, "[") {
				run.path = prev.path[:j+1] // the array the run wrote
				break
			}
		}
		typ := ""
		if n := len(run.path); n > 0 && run.path[n-1].typ != "" {
			typ = " (" + run.path[n-1].typ + ")"
		}
		return fmt.Sprintf("out of bounds: the same instruction wrote %s just before, and ran past the end of %s%s into %s",
			prev, run, typ, o.upTo(k+1))
	}
	return ""
}

// freedBlock: addr is in a heap block that was freed before the write at
// and not allocated again since. Found backwards from the write: the
// last free of a block holding addr, or the last allocation that returned
// one, whichever is later.
func (s *Session) freedBlock(addr uint64, at timeline.Moment) string {
	maps, err := s.tl.Session().Mappings()
	if err != nil {
		return ""
	}
	heap := false
	for _, m := range maps {
		heap = heap || (addr >= m.Start && addr < m.End && m.Path == "[heap]")
	}
	if !heap {
		return ""
	}
	t := s.symbols()
	var frees, rets []uint64
	for _, sym := range t.LookupAll("free") {
		if sym.Func && sym.Addr != 0 {
			frees = append(frees, sym.Addr)
		}
	}
	for _, name := range []string{"malloc", "calloc", "realloc"} {
		for _, sym := range t.LookupAll(name) {
			if sym.Func && sym.Addr != 0 && sym.Size > 0 {
				rets = append(rets, s.returnsIn(sym.Addr, sym.Size)...)
			}
		}
	}
	if len(frees) == 0 || len(rets) == 0 {
		return ""
	}
	isFree := map[uint64]bool{}
	for _, a := range frees {
		isFree[a] = true
	}
	holds := func(p uint64) bool {
		if p == 0 || addr < p {
			return false
		}
		var hdr [8]byte
		if _, err := s.mem().ReadAt(hdr[:], p-8); err != nil {
			return false
		}
		size := binary.LittleEndian.Uint64(hdr[:]) &^ 7
		return size >= 16 && addr < p+size-8
	}
	accept := func(tid int32, pc uint64) bool {
		regs, err := s.tl.Session().Regs(tid)
		if err != nil {
			return false
		}
		if isFree[pc] {
			return holds(regs[trace.RDI])
		}
		return holds(regs[trace.RAX])
	}
	st, err := s.tl.ReverseContinueWith(append(frees, rets...), accept)
	if err != nil || st.Reason == timeline.ReasonStart {
		return ""
	}
	pc, err := s.pcOf(st.Moment.Tid)
	if err != nil || !isFree[pc] {
		return "" // allocated again: the write is to a live block
	}
	regs, _ := s.tl.Session().Regs(st.Moment.Tid)
	block := regs[trace.RDI]
	_, callPC := s.userFrame(st.Moment.Tid)
	var info StopInfo
	s.placeInfo(&info, callPC)
	where := info.Function
	if info.File != "" {
		where = fmt.Sprintf("%s at %s:%d", info.Function, info.File, info.Line)
	}
	return fmt.Sprintf("use after free: it writes into the heap block %#x, freed by %s [%s] and not allocated again since",
		block, where, s.tl.Now())
}

// returnsIn lists the return instructions of the function at [lo, lo+n).
func (s *Session) returnsIn(lo, n uint64) []uint64 {
	code := make([]byte, n)
	got, _ := s.mem().ReadAt(code, lo)
	code = code[:got]
	var out []uint64
	for off := 0; off < len(code); {
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil || inst.Len == 0 {
			off++
			continue
		}
		if inst.Op == x86asm.RET {
			out = append(out, lo+uint64(off))
		}
		off += inst.Len
	}
	return out
}
