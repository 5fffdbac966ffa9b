package debugger

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/arch/x86/x86asm"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// objectRef names an address by the object DWARF says holds it: a local,
// an argument, a global, or what a pointer among those points to.
type objectRef struct {
	name string // the object: "n", "*p", "r"
	// path is the members from the object down to the address, outermost
	// first ("name", "[7]").
	path  []objMember
	deref bool // reached through a pointer: members are written ->
	lang  dwarf.Lang
}

// objMember is one step into an object: a field or an element.
type objMember struct {
	name       string
	start, end uint64 // its bytes
	typ        string
}

// String writes the reference as the language would (n->name[7]).
func (o objectRef) String() string { return o.upTo(len(o.path)) }

// upTo writes the reference down to the first n members.
func (o objectRef) upTo(n int) string {
	var b strings.Builder
	b.WriteString(o.name)
	for i, m := range o.path[:n] {
		switch {
		case strings.HasPrefix(m.name, "["):
		case i == 0 && o.deref && (o.lang == dwarf.LangC || o.lang == dwarf.LangCPlusPlus):
			b.WriteString("->")
		default:
			b.WriteString(".")
		}
		b.WriteString(m.name)
	}
	return b.String()
}

// nameAddress names addr for the chain: an object's objMember, or the
// address itself.
func (s *Session) nameAddress(tid int32, addr uint64) string {
	if o, ok := s.objectAt(tid, addr); ok {
		return o.String()
	}
	return fmt.Sprintf("*%#x", addr)
}

// objectAt finds the object holding addr at the current moment: the
// variables of thread tid's frames (in memory, or pointing to a struct or
// array that holds it), then the globals.
func (s *Session) objectAt(tid int32, addr uint64) (objectRef, bool) {
	t := s.symbols()
	frames, _ := s.stack(tid)
	var pointed *objectRef
	for level := range frames {
		if frames[level].Function == nil {
			continue
		}
		args, locals, err := t.FrameVariables(frames, level, s.mem())
		if err != nil {
			continue
		}
		for _, v := range append(args, locals...) {
			if v.Optimized || v.Type == nil {
				continue
			}
			lang := v.Type.Lang
			if v.InMem && addr >= v.Addr && addr < v.Addr+uint64(max(v.Type.Size, 0)) {
				return objectRef{name: v.Name, path: members(v.Type, v.Addr, addr), lang: lang}, true
			}
			if pointed != nil {
				continue
			}
			pt := resolveType(v.Type)
			if pt == nil || (pt.Kind != dwarf.KindPointer && pt.Kind != dwarf.KindReference) || pt.Elem == nil {
				continue
			}
			raw := v.Bytes
			if len(raw) < 8 && v.InMem {
				raw = make([]byte, 8)
				if n, _ := s.mem().ReadAt(raw, v.Addr); n < 8 {
					continue
				}
			}
			if len(raw) < 8 {
				continue
			}
			el := resolveType(pt.Elem)
			if el == nil || (el.Kind != dwarf.KindStruct && el.Kind != dwarf.KindArray) || el.Size <= 0 {
				continue
			}
			p := binary.LittleEndian.Uint64(raw)
			if addr >= p && addr < p+uint64(el.Size) {
				pointed = &objectRef{name: v.Name, path: members(pt.Elem, p, addr), deref: pt.Kind == dwarf.KindPointer, lang: lang}
			}
		}
	}
	if pointed != nil {
		return *pointed, true
	}
	if sym, _, ok := t.At(addr); ok && !sym.Func {
		if g, ok := t.Global(sym.Name, nil, s.mem()); ok && g.Type != nil && g.InMem &&
			addr >= g.Addr && addr < g.Addr+uint64(max(g.Type.Size, 0)) {
			return objectRef{name: sym.Name, path: members(g.Type, g.Addr, addr), lang: g.Type.Lang}, true
		}
	}
	return objectRef{}, false
}

// resolveType strips typedefs and qualifiers.
func resolveType(t *dwarf.Type) *dwarf.Type {
	for t != nil && (t.Kind == dwarf.KindTypedef || t.Kind == dwarf.KindQualified) {
		t = t.Elem
	}
	return t
}

// members descends from an object of type t at base to addr.
func members(t *dwarf.Type, base, addr uint64) []objMember {
	var out []objMember
	for depth := 0; depth < 16; depth++ {
		t = resolveType(t)
		if t == nil {
			break
		}
		switch t.Kind {
		case dwarf.KindStruct, dwarf.KindUnion:
			found := false
			for _, f := range t.Fields {
				ft := resolveType(f.Type)
				if ft == nil || ft.Size <= 0 || f.BitSize != 0 {
					continue
				}
				start := base + uint64(f.Offset)
				if addr >= start && addr < start+uint64(ft.Size) {
					out = append(out, objMember{name: f.Name, start: start, end: start + uint64(ft.Size), typ: f.Type.Name})
					t, base, found = f.Type, start, true
					break
				}
			}
			if !found {
				return out
			}
		case dwarf.KindArray:
			el := resolveType(t.Elem)
			if el == nil || el.Size <= 0 {
				return out
			}
			i := (addr - base) / uint64(el.Size)
			start := base + i*uint64(el.Size)
			out = append(out, objMember{name: fmt.Sprintf("[%d]", i), start: start, end: start + uint64(el.Size), typ: t.Elem.Name})
			t, base = t.Elem, start
		default:
			return out
		}
	}
	return out
}

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

// raced: the location is shared (in no thread's stack), and another
// thread's access of it held no mutex in common with this write (a lockset
// check, as Eraser's: orderings such as a condition variable or an atomic
// flag are not seen). The other access is the last write by another
// thread (two unlocked increments: a lost update), or the read the chain
// came from, unless its thread read after the writer ended (a join).
func (s *Session) raced(cur whyCursor, writer int32, read timeline.Moment, f *failure) string {
	if writer == 0 || s.inAnyStack(cur.addr) {
		return ""
	}
	at := s.tl.Now()
	defer s.tl.Goto(at)
	wlocks := s.heldMutexes(writer)
	common := func(other []uint64) bool {
		for _, l := range wlocks {
			if slices.Contains(other, l) {
				return true
			}
		}
		return false
	}
	held := func(ls []uint64) string {
		if len(ls) == 0 {
			return "holding no mutex"
		}
		return fmt.Sprintf("holding the mutex at %#x", ls[0])
	}
	// The write before this one, by another thread still running.
	wp := replay.Watchpoint{Addr: cur.addr, Len: cur.size}
	if cur.size != 1 && cur.size != 2 && cur.size != 4 && cur.size != 8 || cur.addr%uint64(cur.size) != 0 {
		wp.Len = 1
	}
	if o := s.otherWriter(wp, writer); o != nil {
		if plocks := s.heldMutexes(o.tid); !common(plocks) {
			when := fmt.Sprintf("at [%s]", o.moment.Portable())
			if !o.exact {
				when = fmt.Sprintf("in its run before event #%d (holding it at that run's end)", o.moment.Event-1)
			}
			return fmt.Sprintf("written by thread %d %s over what thread %d wrote %s %s: no mutex in common, a data race",
				writer, held(wlocks), o.tid, held(plocks), when)
		}
	}
	// The read the chain came from, by another thread still running.
	reader := cur.tid
	if reader == 0 || reader == writer || s.endedBefore(f, writer, read) {
		return ""
	}
	if err := s.tl.Goto(read); err != nil {
		return ""
	}
	if rlocks := s.heldMutexes(reader); !common(rlocks) {
		return fmt.Sprintf("written by thread %d %s, read by thread %d %s: no mutex in common, a data race",
			writer, held(wlocks), reader, held(rlocks))
	}
	return ""
}

// maxOtherWriterSegments bounds the segments otherWriter looks back
// through, and otherWriterBudget the time it spends finding the exact
// write in the segment it found (a segment that ends in a preemption
// takes no arrival counter: each write there is a trap).
const (
	maxOtherWriterSegments = 256
	otherWriterBudget      = 2 * time.Second
)

// otherWrite is the last write by another thread than the writer.
type otherWrite struct {
	tid    int32
	moment timeline.Moment
	// exact: moment is the write; else the end of the run that made it
	// (too many writes to trap within the budget).
	exact bool
}

// otherWriter finds the last run before now of another thread than writer
// that changed wp's bytes (a run between two events is one thread's: the
// value at the runs' starts tells which changed it, without a trap), then
// the write itself in it when that is quick. The timeline moves.
func (s *Session) otherWriter(wp replay.Watchpoint, writer int32) *otherWrite {
	read := func() ([]byte, bool) {
		b := make([]byte, wp.Len)
		n, err := s.mem().ReadAt(b, wp.Addr)
		return b, err == nil && n == wp.Len
	}
	idx := s.tl.Index()
	end := s.tl.Now().Event
	if s.tl.Goto(timeline.Moment{Event: end, Tid: idx.TidAt(end)}) != nil {
		return nil
	}
	after, ok := read()
	if !ok {
		return nil
	}
	for k := end - 1; k >= idx.First && k > end-maxOtherWriterSegments; k-- {
		if s.tl.Goto(timeline.Moment{Event: k, Tid: idx.TidAt(k)}) != nil {
			return nil
		}
		before, ok := read()
		if !ok {
			return nil
		}
		if string(before) == string(after) || idx.TidAt(k) == writer {
			after = before
			continue
		}
		// Run k (to event k) changed it, by another thread.
		tid := idx.TidAt(k)
		runEnd := timeline.Moment{Event: k + 1, Tid: idx.TidAt(k + 1)}
		if s.tl.Goto(runEnd) != nil {
			return nil
		}
		deadline := time.Now().Add(otherWriterBudget)
		progress := s.tl.Progress
		s.tl.Progress = func(done, total int64) bool {
			return time.Now().Before(deadline) && (progress == nil || progress(done, total))
		}
		st, err := s.tl.PreviousWrite(wp)
		s.tl.Progress = progress
		if err == nil && !kernelWrote(st.Moment) && st.Moment.Event == k && st.Moment.Tid == tid {
			return &otherWrite{tid: tid, moment: st.Moment, exact: true}
		}
		if s.tl.Goto(runEnd) != nil {
			return nil
		}
		return &otherWrite{tid: tid, moment: runEnd}
	}
	return nil
}

// endedBefore says whether thread tid had ended before moment m.
func (s *Session) endedBefore(f *failure, tid int32, m timeline.Moment) bool {
	end, ok := f.threadEnds[tid]
	return ok && end < m.Event
}

// inAnyStack says whether addr is in a thread's stack: a local variable,
// private to its thread (the mapping of a thread's stack pointer).
func (s *Session) inAnyStack(addr uint64) bool {
	maps, err := s.tl.Session().Mappings()
	if err != nil {
		return false
	}
	for _, info := range s.ThreadInfos() {
		regs, err := s.tl.Session().Regs(info.Tid)
		if err != nil {
			continue
		}
		sp := regs[trace.RSP]
		for _, m := range maps {
			if sp >= m.Start && sp < m.End && addr >= m.Start && addr < m.End {
				return true
			}
		}
	}
	return false
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
	if err != nil {
		return ""
	}
	for _, m := range maps {
		if sp >= m.Start && sp < m.End {
			if addr >= m.Start && addr < m.End {
				return fmt.Sprintf("it writes %#x, %d bytes below the stack pointer of thread %d: into a stack frame that has returned", addr, sp-addr, tid)
			}
			break
		}
	}
	return ""
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

// heldMutexes lists the addresses of the pthread mutexes thread tid holds
// now: in the program's writable data and its heap, a locked mutex records
// its owner's thread id.
func (s *Session) heldMutexes(tid int32) []uint64 {
	maps, err := s.tl.Session().Mappings()
	if err != nil {
		return nil
	}
	var held []uint64
	const budget = 64 << 20
	scanned := 0
	for _, m := range maps {
		// The program's data, its heap and anonymous memory, not the
		// libraries' (the C library keeps its own locks).
		if !strings.Contains(m.Perms, "w") || strings.Contains(m.Path, "/lib") ||
			(strings.HasPrefix(m.Path, "[") && m.Path != "[heap]") {
			continue
		}
		size := m.End - m.Start
		if scanned+int(size) > budget {
			break
		}
		scanned += int(size)
		buf := make([]byte, size)
		n, _ := s.mem().ReadAt(buf, m.Start)
		for off := 0; off+20 <= n; off += 4 {
			lock := binary.LittleEndian.Uint32(buf[off:])
			owner := int32(binary.LittleEndian.Uint32(buf[off+8:]))
			users := binary.LittleEndian.Uint32(buf[off+12:])
			if owner == tid && (lock == 1 || lock == 2) && users >= 1 && users < 1<<16 {
				held = append(held, m.Start+uint64(off))
			}
		}
	}
	return held
}
