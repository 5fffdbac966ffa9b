package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/insn"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Arrival counters. Without performance counters, a place inside a long
// run of a thread between two events is named by how many times something
// happened before it: a breakpoint was reached, a watchpoint trapped. Each
// of those is a ptrace stop (~100µs here), so finding the last of a million
// writes to a variable, in one run without a system call, costs minutes.
//
// A counter counts the arrivals at one instruction in the program itself,
// with the preemption search's trampoline (search.go): the instruction is
// moved to a page next to it and replaced by a jump there, where a few
// instructions increment a count kept in the page and compare it with a
// stop value without touching the flags. Only the arrival that reaches the
// stop value traps. Counting a million arrivals then costs milliseconds,
// and "the n-th arrival at pc" is a place the replay reaches at full speed.
//
// A counter lives inside one segment: it is opened while the thread that
// runs next has not reached its event yet, and closed (its page unmapped)
// when the thread reaches it, since the event must meet the address space
// the recording had. Only segments that end in a system call take
// counters: a preemption or a signal is found with a trampoline of its own.
// Single-steps run the original code and are not counted.

// ErrNoCounter says a counter cannot be opened here; the caller counts with
// breakpoint or watchpoint traps instead.
var ErrNoCounter = errors.New("no arrival counter here")

// counter is an arrival counter at one address of the debugged process.
type counter struct {
	tr    *trampoline
	final int // the count when it was closed
	open  bool
}

// Where a counter keeps its state, at the end of its page, below the
// trampoline's saved registers.
const (
	slotCount   = trampolineSize - 24
	slotNegStop = trampolineSize - 32
)

// neverStop is the negated stop value of a counter without one: a count
// plus it is never zero.
const neverStop = uint64(1) << 63

// OpenCounters starts counting the arrivals at each of pcs, from zero, for
// the rest of the current segment. It fails with ErrNoCounter (wrapped,
// saying why) when counters cannot be used there.
func (s *Session) OpenCounters(pcs []uint64) error {
	var err error
	s.th.Do(func() { err = s.openCounters(pcs) })
	return err
}

// OpenCountersWhere starts counting, like OpenCounters, at those of pcs
// where a counter can go, and returns them; the others are left out (a
// caller traps there instead, or reads their counts with CounterValue
// when a counter's run covers them). No run covers an address of avoid.
// It fails with ErrNoCounter when no counter can be used in this segment.
func (s *Session) OpenCountersWhere(pcs, avoid []uint64) ([]uint64, error) {
	var opened []uint64
	var err error
	s.th.Do(func() {
		if err = s.openCounters(nil); err != nil {
			return
		}
		for _, pc := range pcs {
			cerr := s.openCounter(s.counterThread, pc, avoid, pcs)
			switch {
			case cerr == nil:
				if !slices.Contains(opened, pc) {
					opened = append(opened, pc)
				}
			case !errors.Is(cerr, ErrNoCounter):
				err = errors.Join(cerr, s.closeCounters())
				return
			}
		}
	})
	return opened, err
}

func (s *Session) openCounters(pcs []uint64) error {
	if err := s.closeCounters(); err != nil {
		return err
	}
	s.counters = map[uint64]*counter{}
	e, err := s.peek(0)
	if err != nil {
		return err
	}
	if e == nil || s.done {
		return fmt.Errorf("%w: the recording is over", ErrNoCounter)
	}
	if e.Kind != trace.KindSyscall && e.Kind != trace.KindSyscallEntry {
		return fmt.Errorf("%w: event %d is not a system call", ErrNoCounter, s.next)
	}
	t := s.threads[e.Tid]
	if t == nil || t.proc != s.main || t.resumeSig != 0 || t.pending != nil || t.atEntry || t.atExec || t.inKernel || t.dead ||
		s.tramp != nil || s.preemptPC != 0 {
		return fmt.Errorf("%w: thread %d is not running user code towards event %d", ErrNoCounter, e.Tid, s.next)
	}
	s.counterThread = t
	for _, pc := range pcs {
		if err := s.openCounter(t, pc, nil, nil); err != nil {
			return errors.Join(err, s.closeCounters())
		}
	}
	return nil
}

// openCounter opens a counter at pc, unless its run would cover a
// breakpoint or an address of avoid, or an address of others that it
// cannot count (after a branch of the run).
func (s *Session) openCounter(t *rthread, pc uint64, avoid, others []uint64) error {
	if _, ok := s.counters[pc]; ok {
		return nil
	}
	var buf [2 * insn.MaxLen]byte
	n, _ := t.proc.mem.ReadAt(buf[:], pc)
	code := buf[:n]
	p, ok := insn.PlanPatchBranches(code, pc)
	if !ok {
		return fmt.Errorf("%w: the instructions at %#x cannot be moved", ErrNoCounter, pc)
	}
	end := pc + uint64(p.Len)
	// An address of others inside the run is counted through it
	// (coveredValue) only if no instruction before it branches away.
	branchy := pc + uint64(p.Len)
	off := 0
	for _, m := range p.Insns {
		if m.Branch != insn.NoBranch {
			branchy = pc + uint64(off)
			break
		}
		off += m.Len
	}
	for _, a := range others {
		if a > branchy && a < end {
			return fmt.Errorf("%w: %#x is inside the run at %#x, after a branch", ErrNoCounter, a, pc)
		}
	}
	for a := range s.bps {
		if a >= pc && a < end {
			return fmt.Errorf("%w: a breakpoint at %#x is inside the run at %#x", ErrNoCounter, a, pc)
		}
	}
	for _, a := range avoid {
		if a > pc && a < end {
			return fmt.Errorf("%w: %#x is inside the run at %#x", ErrNoCounter, a, pc)
		}
	}
	for _, c := range s.counters {
		if c.tr.at < end && pc < c.tr.at+uint64(len(c.tr.orig)) {
			return fmt.Errorf("%w: the runs at %#x and %#x overlap", ErrNoCounter, pc, c.tr.at)
		}
	}
	page, ok, err := s.trampolinePage(t.proc.real, code, p, pc)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: no room for a page within reach of %#x", ErrNoCounter, pc)
	}
	built, ok := buildCounter(code, p, pc, page)
	if !ok {
		return fmt.Errorf("%w: the run at %#x cannot be moved to %#x", ErrNoCounter, pc, page)
	}
	ret, err := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_MMAP, page, trampolineSize,
		unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|mapFixedNoReplace, ^uint64(0), 0)
	if err != nil {
		return fmt.Errorf("map a counter at %#x: %w", page, err)
	}
	if uint64(ret) != page {
		return fmt.Errorf("%w: the page at %#x was refused (%d)", ErrNoCounter, page, ret)
	}
	c := &counter{tr: built.trampoline, open: true}
	s.counters[pc] = c
	page0 := make([]byte, trampolineSize)
	copy(page0, built.code)
	binary.LittleEndian.PutUint64(page0[slotNegStop:], neverStop)
	if _, err := t.proc.mem.WriteAt(page0, page); err != nil {
		return fmt.Errorf("write the counter at %#x: %w", page, err)
	}
	return nil
}

// SetCounterStop makes the counter at pc stop the replay (a Stop of kind
// StopCounter, at pc, before its instruction runs) at its stop-th arrival
// since it was opened; 0 never stops. The counter of a stop has no stop
// value any more.
func (s *Session) SetCounterStop(pc uint64, stop int) error {
	var err error
	s.th.Do(func() {
		c := s.counters[pc]
		if c == nil || !c.open {
			err = fmt.Errorf("no counter open at %#x", pc)
			return
		}
		v := neverStop
		if stop > 0 {
			v = -uint64(stop)
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		_, err = s.counterThread.proc.mem.WriteAt(b[:], c.tr.page+slotNegStop)
	})
	return err
}

// CounterValue returns the arrivals at pc counted since its counter was
// opened: those whose instruction has started. A thread stopped at pc (a
// counter stop, a watchpoint trap of the instruction before) is at arrival
// CounterValue+1. After the counter is closed it returns the final count.
func (s *Session) CounterValue(pc uint64) (int, error) {
	return ptrace.DoValue(s.th, func() (int, error) { return s.counterValue(pc) })
}

func (s *Session) counterValue(pc uint64) (int, error) {
	c := s.counters[pc]
	if c == nil {
		return s.coveredValue(pc)
	}
	if !c.open {
		return c.final, nil
	}
	var b [8]byte
	if _, err := s.counterThread.proc.mem.ReadAt(b[:], c.tr.page+slotCount); err != nil {
		return 0, fmt.Errorf("read the counter at %#x: %w", pc, err)
	}
	return int(binary.LittleEndian.Uint64(b[:])), nil
}

// CounterCovers reports whether pc is an instruction, other than the first,
// of the run a counter moved: CounterValue then gives its arrivals too.
func (s *Session) CounterCovers(pc uint64) bool {
	var ok bool
	s.th.Do(func() { ok = s.coveringCounter(pc) != nil })
	return ok
}

func (s *Session) coveringCounter(pc uint64) *counter {
	for _, c := range s.counters {
		if c.tr.boundary(pc) && pc <= c.tr.at+uint64(c.tr.branchy) {
			return c
		}
	}
	return nil
}

// coveredValue counts the arrivals at pc, an instruction inside a counted
// run: every run of the copies passed it (the instructions before it do
// not branch), and so did every branch into it (a trap each, see
// trampoline.settle).
func (s *Session) coveredValue(pc uint64) (int, error) {
	c := s.coveringCounter(pc)
	if c == nil {
		return 0, fmt.Errorf("no counter at %#x", pc)
	}
	n, err := s.counterValue(c.tr.at)
	return n + c.tr.intrusions[int(pc-c.tr.at)], err
}

// CloseCounters stops counting now (the counts stay readable).
func (s *Session) CloseCounters() error {
	var err error
	s.th.Do(func() { err = s.closeCounters() })
	return err
}

// closeCounters reads the final counts and unmaps the pages. The jumps are
// never in memory while threads are stopped (removeBPs).
func (s *Session) closeCounters() error {
	t := s.counterThread
	var errs []error
	for pc, c := range s.counters {
		if !c.open {
			continue
		}
		n, err := s.counterValue(pc)
		c.final, c.open = n, false
		if err != nil || t == nil || t.dead {
			errs = append(errs, err)
			continue
		}
		if ret, err := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_MUNMAP, c.tr.page, trampolineSize); err != nil || ret != 0 {
			errs = append(errs, fmt.Errorf("unmap the counter at %#x: %v (%d)", c.tr.page, err, ret))
		}
	}
	return errors.Join(errs...)
}

// dropCounters forgets the counters of a process that is gone.
func (s *Session) dropCounters() {
	s.counters, s.counterThread = nil, nil
}

// countersOpen tells whether counters are installed for t.
func (s *Session) countersOpen(t *rthread) bool {
	if t != s.counterThread {
		return false
	}
	for _, c := range s.counters {
		if c.open {
			return true
		}
	}
	return false
}

// counterStop settles t after the int3 of a counter's trampoline: at the
// counter's address, the arrival that stopped it not counted yet (resuming
// runs the jump again, which counts it), no stop value any more.
func (s *Session) counterStop(t *rthread, c *counter) error {
	m := t.proc.mem
	var b [16]byte
	if _, err := m.ReadAt(b[:], c.tr.page+slotNegStop); err != nil {
		return err
	}
	n := binary.LittleEndian.Uint64(b[8:])
	binary.LittleEndian.PutUint64(b[8:], n-1)
	binary.LittleEndian.PutUint64(b[:8], neverStop)
	if _, err := m.WriteAt(b[:], c.tr.page+slotNegStop); err != nil {
		return err
	}
	return s.userStop(t, StopCounter, c.tr.at, 0)
}

// buildCounter assembles a counter's trampoline for the run p (code) at at,
// mapped at page. Like the preemption trampoline it leaves the flags alone
// and writes nothing but its own page:
//
//	mov [rip+savedRCX],rcx
//	mov rcx,[rip+count]
//	lea rcx,[rcx+1]
//	mov [rip+count],rcx
//	mov [rip+savedRAX],rax
//	mov rax,[rip+negStop]
//	lea rcx,[rcx+rax]      ; zero at the stop value
//	mov rax,[rip+savedRAX]
//	jrcxz hit
//	mov rcx,[rip+savedRCX]
//	jmp moved
//	hit: mov rcx,[rip+savedRCX]
//	int3
//	moved: <the instructions>
//	back: jmp at+len
func buildCounter(code []byte, p insn.Patch, at, page uint64) (*builtTrampoline, bool) {
	var c []byte
	ripRel := func(slot uint64, op ...byte) {
		c = append(c, op...)
		target := page + slot
		c = binary.LittleEndian.AppendUint32(c, uint32(int32(int64(target)-int64(page+uint64(len(c))+4))))
	}
	const savedRCX, savedRAX = trampolineSize - 8, trampolineSize - 16
	ripRel(savedRCX, 0x48, 0x89, 0x0d)    // mov [rip+savedRCX],rcx
	ripRel(slotCount, 0x48, 0x8b, 0x0d)   // mov rcx,[rip+count]
	c = append(c, 0x48, 0x8d, 0x49, 0x01) // lea rcx,[rcx+1]
	ripRel(slotCount, 0x48, 0x89, 0x0d)   // mov [rip+count],rcx
	ripRel(savedRAX, 0x48, 0x89, 0x05)    // mov [rip+savedRAX],rax
	ripRel(slotNegStop, 0x48, 0x8b, 0x05) // mov rax,[rip+negStop]
	c = append(c, 0x48, 0x8d, 0x0c, 0x01) // lea rcx,[rcx+rax]
	ripRel(savedRAX, 0x48, 0x8b, 0x05)    // mov rax,[rip+savedRAX]
	c = append(c, 0xe3, 0x09)             // jrcxz hit
	ripRel(savedRCX, 0x48, 0x8b, 0x0d)    // mov rcx,[rip+savedRCX]
	c = append(c, 0xeb, 0x08)             // jmp moved
	ripRel(savedRCX, 0x48, 0x8b, 0x0d)    // hit: mov rcx,[rip+savedRCX]
	hit := page + uint64(len(c))
	c = append(c, 0xcc)
	return finishTrampoline(c, code, p, at, page, hit)
}

// CounterSites returns up to n addresses where a counter can go that a
// thread standing at one of pcs reaches soon, nearest first: the pc itself
// when its instructions can be moved, else those that follow, branches
// taken both ways (a loop's head is often a branch away from its body's
// last write). Their runs do not overlap, so that they can be counted
// together and the busiest chosen.
func (s *Session) CounterSites(pcs []uint64, n int) []uint64 {
	var out []uint64
	s.th.Do(func() {
		if s.main == nil || s.main.mem == nil {
			return
		}
		m := s.main.mem
		// Only the program's code: a seed may be any word of the stack
		// (a frame's return address is a guess), and a "run" decoded from
		// data would be patched there.
		maps, err := ptrace.ReadMaps(s.main.real)
		if err != nil {
			return
		}
		code := func(lo, hi uint64) bool {
			for _, mp := range maps {
				if lo >= mp.Start && hi <= mp.End {
					return len(mp.Perms) >= 4 && mp.Perms[2] == 'x' && !mp.Shared() && !strings.HasPrefix(mp.Path, "[")
				}
			}
			return false
		}
		// The sites' runs do not overlap: they can be counted together.
		var runs [][2]uint64
		overlaps := func(lo, hi uint64) bool {
			for _, r := range runs {
				if lo < r[1] && r[0] < hi {
					return true
				}
			}
			return false
		}
		seen := map[uint64]bool{}
		queue := append([]uint64(nil), pcs...)
		for len(queue) > 0 && len(seen) < 32 && len(out) < n {
			a := queue[0]
			queue = queue[1:]
			if a == 0 || seen[a] || !code(a, a+1) {
				continue
			}
			seen[a] = true
			var buf [2 * insn.MaxLen]byte
			k, _ := m.ReadAt(buf[:], a)
			if p, ok := insn.PlanPatch(buf[:k], a); ok && code(a, a+uint64(p.Len)) && !overlaps(a, a+uint64(p.Len)) {
				out = append(out, a)
				runs = append(runs, [2]uint64{a, a + uint64(p.Len)})
			}
			next, target, ok := insn.Flow(buf[:k], a)
			if ok {
				queue = append(queue, next, target)
			}
		}
	})
	return out
}
