package replay

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/insn"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Finding a preemption point. The recording says: thread T was stopped at
// pc X with registers R, stack window S, FPU/SSE state F and executable data
// D, at no system call. Replay runs T to the first pass at X where all of
// them match. With a breakpoint at X that costs a ptrace stop (~50µs) per
// pass, and a hot loop passes X millions of times between two events.
//
// So the instruction at X is moved to a trampoline, in a page mapped for the
// time of the search next to it, and replaced by a jump there. The
// trampoline compares the general registers with R in the tracee itself
// (a dozen instructions per pass), runs the moved instruction and jumps
// back; only when all of them match does it stop on an int3, and the
// replayer checks the rest (flags, segment bases, S, F, D). A pass that
// matches the registers and not the rest is stepped over; a run that
// reaches anything else first is a divergence. The recorder chooses X among
// the instructions that can be moved (insn.CanMove) when it can; otherwise
// replay falls back to the breakpoint.

// searchLimit bounds one preemption search (applyPreempt).
var searchLimit = 60 * time.Second

// refuseFirstTrampoline, set by tests, has every search start without a
// trampoline, as one must where its thread stands with a stop already
// taken: the first pass gets it one.
var refuseFirstTrampoline bool

// debugSearch prints each pass of a preemption search that reaches the
// point, with what differs from the recording (REWIND_DEBUG=1).
var debugSearch = os.Getenv("REWIND_DEBUG") != ""

// trampoline is a run of moved instructions and the code that compares
// registers before running them.
type trampoline struct {
	at        uint64 // the first instruction moved
	orig      []byte // the bytes of the run
	jump      []byte // what replaces them while the thread runs
	installed bool
	page      uint64
	hit       uint64   // the int3 reached when the registers match
	offs      []int    // offset of each instruction in the run
	moved     []uint64 // address of each copy
	back      uint64   // the jump back, after the copies
	// intrusions counts, by offset, the branches into the run that
	// landed on an instruction after the first (settle).
	intrusions map[int]int
	// branchy is the offset of the first instruction of the run that may
	// branch away (a counter's run), len(orig) if none.
	branchy int
	// What it was built from, to build it again with one more stack word
	// (tell): the code at at, the run, the order of the registers and the
	// memory words it compares before and after them.
	src   []byte
	plan  insn.Patch
	order []int
	word  *trace.Mem
	late  []trace.Mem
}

// trampolineSize is the size of the page mapped for a trampoline.
const trampolineSize = 4096

// x86Num gives the x86 number (rax=0 … r15=15, as in ModRM) of the general
// registers, by their index in trace.Regs; x86RegOrder is the order the
// trampoline compares them in, after those that changed since the thread's
// previous event: those that change most in loops first, rsp last.
var (
	x86Num = func() map[int]int {
		m := map[int]int{}
		for num, idx := range trace.ByX86Number {
			m[idx] = num
		}
		return m
	}()
	x86RegOrder = []int{trace.RAX, trace.RCX, trace.RDX, trace.RSI, trace.RDI, trace.R8, trace.R9, trace.R10,
		trace.R11, trace.R12, trace.R13, trace.R14, trace.R15, trace.RBX, trace.RBP, trace.RSP}
)

// applyPreempt runs t to the first time it reaches the recorded pc with the
// recorded fingerprint.
func (s *Session) applyPreempt(t *rthread, e *trace.Event) (err error) {
	pc := e.Regs[trace.RIP]
	var tr *trampoline
	if !refuseFirstTrampoline {
		if tr, err = s.openTrampoline(t, e); err != nil {
			return err
		}
	}
	// The search ends with a trampoline if it had one, or got one at its
	// first pass (below).
	defer func() {
		s.preemptPC = 0
		if s.tramp == nil {
			return
		}
		if cerr := s.closeTrampoline(t); err == nil || err == errStopped {
			if cerr != nil {
				err = cerr
			}
		}
	}()
	if tr != nil {
		s.tramp = tr
	} else {
		s.preemptPC = pc
	}
	retried := tr != nil
	// Bounded: a search that has not found its point long after the
	// recorded slice (milliseconds of CPU) never will; the thread is
	// stopped and the replay says so rather than hang.
	var late atomic.Bool
	if t.proc != nil {
		pid, tid := t.proc.real, t.real
		timer := time.AfterFunc(searchLimit, func() {
			late.Store(true)
			unix.Tgkill(pid, tid, unix.SIGSTOP)
		})
		defer timer.Stop()
	}
	tooLong := func(passes int) error {
		where := ""
		var regs trace.Regs
		if ptrace.GetRegs(t.real, &regs) == nil {
			where = fmt.Sprintf(" at %#x", regs[trace.RIP])
		}
		return s.diverge(e, "thread did not reach its preemption point %#x within %v (%d passes): replay stopped it%s", pc, searchLimit, passes, where)
	}
	near := 0 // passes with the recorded registers and stack, another state
	told := 0 // trampolines built again with a word that tells passes apart
	// The data ranges are read at the first pass that needs them: they
	// cannot change while the thread runs to the point.
	var data []ptrace.Range
	for passes := 0; ; passes++ {
		st, err := s.run(t)
		if late.Load() {
			return tooLong(passes)
		}
		if err != nil {
			return err
		}
		var regs trace.Regs
		if !t.dead {
			if err := ptrace.GetRegs(t.real, &regs); err != nil {
				return err
			}
		}
		if t.dead || st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGTRAP) || regs[trace.RIP] != pc {
			why := ""
			if near > 0 {
				why = fmt.Sprintf(" (%d passes had its registers and stack, but another FPU/SSE state or other global data)", near)
			}
			if st.Kind == ptrace.StopSyscall {
				why += fmt.Sprintf(" (%s at rip %#x)", syscalls.Name(int(regs[trace.OrigRAX])), regs[trace.RIP])
			}
			return s.diverge(e, "expected to reach the preemption point %#x, got %s after %d passes%s", pc, describe(st), passes, why)
		}
		if debugSearch {
			for i := range regs {
				if regs[i] != e.Regs[i] {
					fmt.Fprintf(os.Stderr, "search: pass %d: %s %#x, recorded %#x\n", passes, trace.RegNames[i], regs[i], e.Regs[i])
				}
			}
			fmt.Fprintf(os.Stderr, "search: pass %d: stack hash %#x recorded %#x\n", passes, t.proc.mem.StackHash(regs[trace.RSP]), e.StackHash)
		}
		if samePassRegs(&regs, &e.Regs, s.looseFlags) {
			if t.proc.mem.StackHash(regs[trace.RSP]) == e.StackHash {
				same, err := s.sameState(t, e, &data)
				if err != nil || same {
					return err
				}
				near++
			}
			if told < maxTold {
				ok, err := s.tell(t, e)
				if err != nil {
					return err
				}
				if ok {
					told++
				}
			}
		}
		if _, ok := s.bps[pc]; ok {
			return s.userStop(t, StopBreakpoint, pc, 0)
		}
		if !retried {
			// Without a trampoline each pass is a stop (~16k a second,
			// where a hot loop passes millions of times): the thread
			// stood where no page could be mapped for one (a stop it
			// had already given, just back from a blocking call). At a
			// pass it stands in its code, where one can.
			retried = true
			tr, err := s.openTrampoline(t, e)
			if err != nil {
				return err
			}
			if tr != nil {
				s.tramp, s.preemptPC = tr, 0
			}
		}
		// Not this pass: step over the instruction and go on.
		st, stepped, err := s.stepRaw(t)
		if late.Load() {
			return tooLong(passes)
		}
		if err != nil {
			return err
		}
		if !stepped {
			return s.diverge(e, "stepping over %#x: got %s", pc, describe(st))
		}
	}
}

// sameState compares the parts of a preemption's fingerprint beyond the
// general registers and the stack: the FPU/SSE registers, the memory
// words (In), the sum of the stack above them (Hash) and the
// executable's data (when the recording has them).
func (s *Session) sameState(t *rthread, e *trace.Event, data *[]ptrace.Range) (bool, error) {
	if e.Value != 0 {
		fp, err := ptrace.FPHash(t.real)
		if err != nil {
			return false, err
		}
		if fp != e.Value {
			return false, nil
		}
	}
	for _, w := range e.In {
		got := make([]byte, len(w.Data))
		if n, _ := t.proc.mem.ReadAt(got, w.Addr); n != len(got) || !bytes.Equal(got, w.Data) {
			return false, nil
		}
	}
	if e.Hash != 0 && s.wideStack {
		// The stack further up (ptrace.WideStack); left out on another
		// CPU model or kernel, where a signal frame up there may hold
		// another FPU state.
		if t.proc.mem.WideSum(ptrace.WideStackOf(e.Regs[trace.RSP], e.Hash)) != e.Hash {
			return false, nil
		}
	}
	if e.Aux != 0 {
		if *data == nil {
			d, err := s.dataRanges(t)
			if err != nil {
				return false, err
			}
			*data = d
		}
		if s.dataHash(t.proc.mem, *data) != e.Aux {
			return false, nil
		}
	}
	return true, nil
}

// maxTold bounds how many stack words a search adds to its trampoline
// (tell); maxStackWord, how far above rsp they may be (the window and the
// stack above it, ptrace.DeepStackLen).
const (
	maxTold      = 8
	maxStackWord = 8 << 10
)

// tell builds t's trampoline again, comparing after the registers one
// more word: the first of the recorded stack above rsp (In) that differs
// at this pass, which has the point's registers. In a loop whose passes
// share them (a qsort called in every iteration), each pass would
// otherwise be a stop to compare the rest (~50 µs, millions of times),
// where the word, the loop's counter, is compared in the trampoline.
// false when it has no trampoline or no such word.
func (s *Session) tell(t *rthread, e *trace.Event) (bool, error) {
	tr := s.tramp
	if tr == nil {
		return false, nil
	}
	// Only a word of the stack above rsp, which the registers being the
	// point's make a word of the thread's stack at every pass compared.
	rsp := e.Regs[trace.RSP]
	var word *trace.Mem
	for _, m := range e.In {
		if m.Addr < rsp || m.Addr+uint64(len(m.Data)) > rsp+maxStackWord {
			continue
		}
		got := make([]byte, len(m.Data))
		if n, _ := t.proc.mem.ReadAt(got, m.Addr); n != len(got) {
			continue
		}
		for i := 0; i+8 <= len(got); i += 8 {
			if !bytes.Equal(got[i:i+8], m.Data[i:i+8]) {
				word = &trace.Mem{Addr: m.Addr + uint64(i), Data: m.Data[i : i+8]}
				break
			}
		}
		if word != nil {
			break
		}
	}
	if word == nil {
		return false, nil
	}
	nt, ok := buildTrampoline(tr.src, tr.plan, tr.at, tr.page, &e.Regs, tr.word, append(slices.Clone(tr.late), *word), tr.order)
	if !ok {
		return false, nil
	}
	if _, err := t.proc.mem.WriteAt(nt.code, tr.page); err != nil {
		return false, fmt.Errorf("write the trampoline: %w", err)
	}
	nt.installed, nt.intrusions = tr.installed, tr.intrusions
	s.tramp = nt.trampoline
	return true, nil
}

// samePassRegs says whether a pass's registers are the recorded point's,
// all of them but the flags withRecordedFlags leaves out.
func samePassRegs(got, want *trace.Regs, loose uint64) bool {
	return withRecordedFlags(got, want, loose) == *want
}

// openTrampoline prepares the trampoline for e's pc, or returns nil when the
// breakpoint must do: the instructions cannot be moved, a user breakpoint is
// on them, there is no room for a page within reach, or t is stopped where
// a system call cannot be injected without losing something (a signal about
// to be delivered, a stop already obtained).
func (s *Session) openTrampoline(t *rthread, e *trace.Event) (*trampoline, error) {
	if t.resumeSig != 0 || t.pending != nil || t.atEntry || t.atExec || t.dead {
		return nil, nil
	}
	at := e.Regs[trace.RIP]
	var buf [2 * insn.MaxLen]byte
	n, _ := t.proc.mem.ReadAt(buf[:], at)
	code := buf[:n]
	p, ok := insn.PlanPatch(code, at)
	if !ok {
		return nil, nil
	}
	for a := range s.bps {
		if a >= at && a < at+uint64(p.Len) && t.proc == s.main {
			return nil, nil
		}
	}
	page, ok, err := s.trampolinePage(t.proc.real, code, p, at)
	if err != nil || !ok {
		return nil, err
	}
	var word *trace.Mem
	if len(e.In) > 0 && len(e.In[0].Data) == 8 {
		word = &e.In[0]
	}
	// The registers that differ now from the point's are those most likely
	// to tell the passes apart: the trampoline compares them first.
	var now trace.Regs
	if err := ptrace.GetRegs(t.real, &now); err != nil {
		return nil, err
	}
	var order []int
	for _, idx := range x86RegOrder {
		if now[idx] != e.Regs[idx] {
			order = append(order, idx)
		}
	}
	tr, ok := buildTrampoline(code, p, at, page, &e.Regs, word, nil, order)
	if !ok {
		return nil, nil
	}
	ret, err := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_MMAP, page, trampolineSize,
		unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|mapFixedNoReplace, ^uint64(0), 0)
	if err != nil {
		return nil, fmt.Errorf("map a trampoline at %#x: %w", page, err)
	}
	if uint64(ret) != page {
		return nil, nil // taken after all (or refused): use the breakpoint
	}
	if _, err := t.proc.mem.WriteAt(tr.code, page); err != nil {
		ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_MUNMAP, page, trampolineSize)
		return nil, fmt.Errorf("write the trampoline: %w", err)
	}
	return tr.trampoline, nil
}

// closeTrampoline unmaps the trampoline page: the address space must be as
// the recording had it when the next event is replayed.
func (s *Session) closeTrampoline(t *rthread) error {
	tr := s.tramp
	s.tramp = nil
	if tr == nil || t.dead {
		return nil
	}
	if tr.installed {
		if _, err := t.proc.mem.WriteAt(tr.orig, tr.at); err != nil {
			return err
		}
		tr.installed = false
	}
	ret, err := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_MUNMAP, tr.page, trampolineSize)
	if err != nil {
		return fmt.Errorf("unmap the trampoline at %#x: %w", tr.page, err)
	}
	if ret != 0 {
		return fmt.Errorf("unmap the trampoline at %#x: %w", tr.page, unix.Errno(-ret))
	}
	return nil
}

// install writes or removes the jump to the trampoline.
func (tr *trampoline) install(m *ptrace.Mem, on bool) error {
	if tr.installed == on {
		return nil
	}
	b := tr.orig
	if on {
		b = tr.jump
	}
	if _, err := m.WriteAt(b, tr.at); err != nil {
		return fmt.Errorf("patch %#x for the preemption search: %w", tr.at, err)
	}
	tr.installed = on
	return nil
}

// settle moves a thread stopped inside the trampoline to the equivalent
// place of the original code. hit reports a stop at the int3 of a
// register match: the thread is then at the first moved instruction's
// address, as it was when the jump to the trampoline was taken. intruded
// reports a stop on a trap byte of the patch (a branch into the run, see
// insn.Patch): the thread is sent to the trampoline's copy of the
// instruction the branch went to, which runs the rest of the run and jumps
// back after it. That costs the one stop: a loop entered through the run's
// middle (a rotated loop: the function jumps to its test) does it once per
// call, millions of times in a search.
func (tr *trampoline) settle(tid int, st ptrace.Status) (hit, intruded bool, err error) {
	var regs trace.Regs
	if err := ptrace.GetRegs(tid, &regs); err != nil {
		return false, false, err
	}
	rip := regs[trace.RIP]
	end := tr.at + uint64(len(tr.orig))
	switch {
	case rip > tr.at && rip <= end && st.Kind == ptrace.StopSignal:
		b := rip
		if st.Sig == int(unix.SIGTRAP) && insn.TrapAfter(tr.jump[rip-1-tr.at]) {
			b--
		}
		if !tr.boundary(b) || !insn.TrapByte(tr.jump[b-tr.at]) {
			return false, false, nil
		}
		regs[trace.RIP], intruded = tr.moved[slices.Index(tr.offs, int(b-tr.at))], true
		if tr.intrusions == nil {
			tr.intrusions = map[int]int{}
		}
		tr.intrusions[int(b-tr.at)]++
	case rip < tr.page || rip >= tr.page+trampolineSize:
		return false, false, nil
	case rip == tr.hit+1 && st.Kind == ptrace.StopSignal && st.Sig == int(unix.SIGTRAP):
		regs[trace.RIP], hit = tr.at, true
	case rip == tr.back:
		regs[trace.RIP] = end // a watchpoint the last copy triggered
	default:
		i := slices.Index(tr.moved, rip)
		if i < 0 {
			return false, false, fmt.Errorf("thread %d stopped inside the preemption trampoline at %#x (%v)", tid, rip, st)
		}
		regs[trace.RIP] = tr.at + uint64(tr.offs[i]) // a fault of a copy, or a watchpoint
	}
	if err := ptrace.SetRegs(tid, &regs); err != nil {
		return false, false, fmt.Errorf("move out of the trampoline: %w", err)
	}
	return hit, intruded, nil
}

// stepOut single-steps t, with the original code in place, while it is
// inside the patched run but not at its start (a signal handler returned
// there, or the previous event left it there): resuming there with the patch in would
// run the jump's bytes. stepped is false for a stop the recording is about,
// returned as st.
func (s *Session) stepOut(t *rthread, tr *trampoline) (st ptrace.Status, stepped bool, err error) {
	for {
		var regs trace.Regs
		if err := ptrace.GetRegs(t.real, &regs); err != nil {
			return st, false, err
		}
		if rip := regs[trace.RIP]; rip <= tr.at || rip >= tr.at+uint64(len(tr.orig)) {
			return st, true, nil
		}
		if st, stepped, err = s.stepRaw(t); err != nil || !stepped {
			return st, stepped, err
		}
	}
}

// boundary reports whether addr starts an instruction of the run other
// than the first.
func (tr *trampoline) boundary(addr uint64) bool {
	return addr > tr.at && slices.Contains(tr.offs, int(addr-tr.at))
}

// builtTrampoline is a trampoline and the bytes of its page.
type builtTrampoline struct {
	*trampoline
	code []byte
}

// buildTrampoline assembles the trampoline for the run p of instructions
// (code) at at, to be mapped at page, matching regs (compared in the order
// of order, then the others), if word is not nil a memory word first, and
// the words of late after the registers (stack words, read only where rsp
// is the point's: tell).
// It leaves the flags alone (pushf/popf would cost more than all the rest):
// each comparison computes the difference in rcx with lea and tests it with
// jrcxz. It writes nothing to the program's memory: rcx and rax are saved
// in the trampoline's own page (a push below the red zone would change the
// stack that a later pass at a higher rsp is fingerprinted with).
//
//	mov [rip+savedRCX],rcx ; the scratch register
//	movabs rcx,-VALUE      ; for each register R
//	lea rcx,[rcx+R]
//	jrcxz next
//	jmp miss
//	next: …
//	mov rcx,[rip+savedRCX] ; all equal
//	int3                   ; the replayer decides
//	jmp moved
//	miss: mov rcx,[rip+savedRCX]
//	moved: <the instructions, displacements adjusted>
//	back: jmp at+len
func buildTrampoline(code []byte, p insn.Patch, at, page uint64, regs *trace.Regs, word *trace.Mem, late []trace.Mem, order []int) (*builtTrampoline, bool) {
	var c []byte
	pos := func() uint64 { return page + uint64(len(c)) }
	var misses []int // offsets of the rel32 of each jmp miss
	imm := func(v uint64) { c = binary.LittleEndian.AppendUint64(c, v) }
	neg := func(v uint64) uint64 { return -v }
	test := func() {
		c = append(c, 0xe3, 0x05, 0xe9) // jrcxz +5; jmp miss
		misses = append(misses, len(c))
		c = append(c, 0, 0, 0, 0)
	}
	savedRCX, savedRAX := page+trampolineSize-8, page+trampolineSize-16
	// ripRel appends a rip-relative mov (op is its bytes up to the disp32).
	ripRel := func(target uint64, op ...byte) {
		c = append(c, op...)
		c = binary.LittleEndian.AppendUint32(c, uint32(int32(int64(target)-int64(pos()+4))))
	}
	saveRAX := func() { ripRel(savedRAX, 0x48, 0x89, 0x05) }    // mov [rip+savedRAX],rax
	restoreRAX := func() { ripRel(savedRAX, 0x48, 0x8b, 0x05) } // mov rax,[rip+savedRAX]
	restoreRCX := func() { ripRel(savedRCX, 0x48, 0x8b, 0x0d) } // mov rcx,[rip+savedRCX]
	ripRel(savedRCX, 0x48, 0x89, 0x0d)                          // mov [rip+savedRCX],rcx
	cmpWord := func(word trace.Mem) {
		saveRAX()
		c = append(c, 0x48, 0xb8) // movabs rax,ADDR
		imm(word.Addr)
		c = append(c, 0x48, 0x8b, 0x00, 0x48, 0xb9) // mov rax,[rax]; movabs rcx,-WORD
		imm(neg(binary.LittleEndian.Uint64(word.Data)))
		c = append(c, 0x48, 0x8d, 0x0c, 0x01) // lea rcx,[rcx+rax]
		restoreRAX()
		test()
	}
	if word != nil {
		cmpWord(*word)
	}
	done := map[int]bool{}
	for _, idx := range append(order, x86RegOrder...) {
		if done[idx] {
			continue
		}
		done[idx] = true
		num := x86Num[idx]
		v := regs[idx]
		switch num {
		case 1: // rcx itself, saved in the page
			saveRAX()
			ripRel(savedRCX, 0x48, 0x8b, 0x05) // mov rax,[rip+savedRCX]
			c = append(c, 0x48, 0xb9)          // movabs rcx,-VALUE
			imm(neg(v))
			c = append(c, 0x48, 0x8d, 0x0c, 0x01) // lea rcx,[rcx+rax]
			restoreRAX()
		case 4: // rsp, as base: it cannot be an index
			c = append(c, 0x48, 0xb9)
			imm(neg(v))
			c = append(c, 0x48, 0x8d, 0x0c, 0x0c) // lea rcx,[rsp+rcx]
		default:
			rex := byte(0x48)
			if num >= 8 {
				rex |= 0x02 // REX.X: the index register
			}
			c = append(c, 0x48, 0xb9)
			imm(neg(v))
			c = append(c, rex, 0x8d, 0x0c, byte(num&7)<<3|0x01) // lea rcx,[rcx+R]
		}
		test()
	}
	for _, w := range late {
		cmpWord(w)
	}
	restoreRCX()
	hit := pos()
	c = append(c, 0xcc, 0xe9) // int3; jmp moved
	jmpMoved := len(c)
	c = append(c, 0, 0, 0, 0)
	missAt := pos()
	restoreRCX()
	movedAt := pos()
	binary.LittleEndian.PutUint32(c[jmpMoved:], uint32(int32(int64(movedAt)-int64(page+uint64(jmpMoved)+4))))
	for _, off := range misses {
		binary.LittleEndian.PutUint32(c[off:], uint32(int32(int64(missAt)-int64(page+uint64(off)+4))))
	}
	bt, ok := finishTrampoline(c, code, p, at, page, hit)
	if ok {
		bt.src, bt.plan, bt.order, bt.word, bt.late = code, p, order, word, late
	}
	return bt, ok
}

// finishTrampoline appends the moved run and the jump back to c (the
// trampoline's code so far, to be mapped at page, with its int3 at hit)
// and makes the jump that replaces the run.
func finishTrampoline(c, code []byte, p insn.Patch, at, page, hit uint64) (*builtTrampoline, bool) {
	pos := func() uint64 { return page + uint64(len(c)) }
	tr := &trampoline{at: at, orig: append([]byte(nil), code[:p.Len]...), page: page, hit: hit, branchy: p.Len}
	off := 0
	for _, m := range p.Insns {
		if m.Branch != insn.NoBranch && off < tr.branchy {
			tr.branchy = off
		}
		tr.offs = append(tr.offs, off)
		tr.moved = append(tr.moved, pos())
		moved, ok := insn.Move(code[off:], m, at+uint64(off), pos())
		if !ok {
			return nil, false
		}
		c = append(c, moved...)
		off += m.Len
	}
	tr.back = pos()
	jb, ok := insn.Jump(tr.back, at+uint64(p.Len))
	if !ok {
		return nil, false
	}
	c = append(c, jb...)
	if len(c) > trampolineSize-16 { // the saved registers at the end
		return nil, false
	}
	jump, ok := insn.Jump(at, page)
	if !ok {
		return nil, false
	}
	for len(jump) < p.Len {
		jump = append(jump, 0xcc) // where a branch into the run lands
	}
	for _, b := range p.TrapBoundaries() {
		if !insn.TrapByte(jump[b]) {
			return nil, false // the page does not make the boundary trap
		}
	}
	tr.jump = jump
	return &builtTrampoline{tr, c}, true
}

// reach bounds the distance a rel32 may span, with room for the page.
const reach = 1<<31 - 2*trampolineSize

// Address-space bounds for the trampoline page: above mmap_min_addr,
// below the top of user space.
const (
	lowestPage  = 0x10000
	highestPage = 0x7fff_ffff_f000
)

// trampolinePage finds a free page for the trampoline of run p at at: in
// rel32 reach of at and of the moved instructions' operands, placed so that
// the jump's displacement bytes at the run's inner boundaries are trap bytes
// (see insn.Patch), as near at as possible.
func (s *Session) trampolinePage(pid int, code []byte, p insn.Patch, at uint64) (uint64, bool, error) {
	free, err := freeSpans(pid)
	if err != nil {
		return 0, false, err
	}
	var targets []uint64
	off := 0
	for _, m := range p.Insns {
		targets = append(targets, insn.Target(code[off:], m, at+uint64(off)))
		off += m.Len
	}
	// The displacement is page - (at+5); its bytes d0..d3 sit at offsets
	// 1..4 of the jump.
	var want [4]bool
	for _, b := range p.TrapBoundaries() {
		if b >= 1 && b <= 4 {
			want[b-1] = true
		}
	}
	page, ok := nearestPage(free, at, want, targets)
	return page, ok, nil
}

// nearestPage returns the page of the free spans nearest at whose jump
// displacement from at (page - (at+JumpLen)) has a trap byte at each
// wanted byte, in rel32 reach of at and of every target. Going away from
// at, a page whose byte i is wrong is followed by the first page where
// that byte changes: a few steps per span, not a page at a time.
func nearestPage(free []span, at uint64, want [4]bool, targets []uint64) (uint64, bool) {
	base := int64(at + insn.JumpLen)
	if want[0] && !insn.TrapByte(byte(-base)) {
		return 0, false // d0 is the same for every page
	}
	// wrong returns the highest wanted byte of p's displacement that is
	// not a trap byte, or -1.
	wrong := func(p uint64) int {
		d := int64(p) - base
		for i := 3; i >= 1; i-- {
			if want[i] && !insn.TrapByte(byte(d>>(8*i))) {
				return i
			}
		}
		return -1
	}
	reachable := func(p uint64) bool {
		if !within(p, at) {
			return false
		}
		for _, t := range targets {
			if !within(p, t) {
				return false
			}
		}
		return true
	}
	const size = trampolineSize
	alignDown := func(v int64) int64 { return v &^ (size - 1) }
	alignUp := func(v int64) int64 { return alignDown(v + size - 1) }
	dist := func(a uint64) uint64 {
		if a > at {
			return a - at
		}
		return at - a
	}
	best, found := uint64(0), false
	consider := func(p uint64) {
		if !found || dist(p) < dist(best) || (dist(p) == dist(best) && p < best) {
			best, found = p, true
		}
	}
	// walk goes from page p through [lo, hi) away from at, upwards or
	// downwards, to the first page that fits.
	walk := func(p, lo, hi int64, up bool) {
		for p >= lo && p+size <= hi && within(uint64(p), at) {
			i := wrong(uint64(p))
			if i < 0 {
				if reachable(uint64(p)) {
					consider(uint64(p))
				}
				return
			}
			d := p - base
			if up {
				p = alignUp(base + (d | (1<<(8*i) - 1)) + 1) // byte i one more
			} else {
				p = alignDown(base + (d &^ (1<<(8*i) - 1)) - 1) // byte i one less
			}
		}
	}
	for _, f := range free {
		lo, hi := alignUp(int64(max(f.lo, lowestPage))), int64(min(f.hi, highestPage))
		if hi-lo < size {
			continue
		}
		// From the page nearest at, and from the page below it.
		start := min(max(lo, alignDown(int64(at))), hi-size)
		walk(start, lo, hi, true)
		walk(start-size, lo, hi, false)
	}
	return best, found
}

// span is an address range [lo, hi).
type span struct{ lo, hi uint64 }

// freeSpans lists the unmapped parts of process pid's address space where a
// trampoline may go: not in the guard gap below the main stack, which
// the stack grows into.
func freeSpans(pid int) ([]span, error) {
	maps, err := ptrace.ReadMaps(pid)
	if err != nil {
		return nil, fmt.Errorf("find room for a trampoline: %w", err)
	}
	var free []span
	prev := uint64(lowestPage)
	for _, m := range maps {
		a, b := m.Start, m.End
		if a >= highestPage {
			continue
		}
		if m.Path == "[stack]" {
			a -= min(a, stackGuard)
		}
		if a > prev {
			free = append(free, span{prev, a})
		}
		prev = max(prev, b)
	}
	if prev < highestPage {
		free = append(free, span{prev, highestPage})
	}
	return free, nil
}

// stackGuard is the kernel's default stack_guard_gap.
const stackGuard = 256 * trampolineSize

// within reports whether a and b are in rel32 reach of each other.
func within(a, b uint64) bool {
	d := int64(a) - int64(b)
	return d < reach && d > -reach
}

// dataHash hashes a process's global data as the trace's preemption points
// do (trace.Header.DataHash).
func (s *Session) dataHash(m *ptrace.Mem, ranges []ptrace.Range) uint64 {
	if s.hdr.DataHash == trace.DataHashCRC {
		return m.DataSum(ranges)
	}
	return m.DataHash(ranges)
}
