package debugger

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

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

// maxOtherWriterRuns bounds the runs of other threads otherWriter looks
// back through (the writer's own runs cost nothing: they are skipped
// unread, however many there are), and otherWriterBudget the time it
// spends finding the exact write in the run it found, and, when the runs'
// values tell none, searching those runs with a watchpoint (a run that
// ends in a preemption takes no arrival counter: each write there is a
// trap).
const (
	maxOtherWriterRuns = 256
	otherWriterBudget  = 2 * time.Second
)

// otherWrite is the last write by another thread than the writer.
type otherWrite struct {
	tid    int32
	moment timeline.Moment
	// exact: moment is the write; else the end of the run that made it
	// (too many writes to trap within the budget).
	exact bool
}

// otherWriter finds the last write before now by another thread than
// writer: first the last run of another thread that changed wp's bytes (a
// run between two events is one thread's: the values at its start and its
// end tell whether it changed them, without a trap), then the write itself
// in it when that is quick. A store of the value already there changes
// nothing, and two threads losing updates do just that (each stores the
// value the other stored); so where no run changed the bytes, the runs
// are searched for a write with a watchpoint, newest first, within the
// budget. The timeline moves.
func (s *Session) otherWriter(wp replay.Watchpoint, writer int32) *otherWrite {
	read := func(n int64) ([]byte, bool) {
		if s.tl.Goto(timeline.Moment{Event: n, Tid: s.tl.Index().TidAt(n)}) != nil {
			return nil, false
		}
		b := make([]byte, wp.Len)
		got, err := s.mem().ReadAt(b, wp.Addr)
		return b, err == nil && got == wp.Len
	}
	idx := s.tl.Index()
	// after holds the bytes at event next: the end of the run looked at.
	next := s.tl.Now().Event
	after, ok := read(next)
	if !ok {
		return nil
	}
	var runs []int64 // the other threads' runs looked at, newest first
	for k := next - 1; k >= idx.First && len(runs) < maxOtherWriterRuns; k-- {
		if idx.TidAt(k) == writer {
			continue
		}
		if next != k+1 {
			if after, ok = read(k + 1); !ok {
				return nil
			}
		}
		before, ok := read(k)
		if !ok {
			return nil
		}
		runs = append(runs, k)
		next = k
		if string(before) == string(after) {
			after = before
			continue
		}
		// Run k (to event k) changed it, by another thread.
		deadline := time.Now().Add(otherWriterBudget)
		if w := s.writeIn(wp, k, deadline); w != nil {
			return w
		}
		runEnd := timeline.Moment{Event: k + 1, Tid: idx.TidAt(k + 1)}
		if s.tl.Goto(runEnd) != nil {
			return nil
		}
		return &otherWrite{tid: idx.TidAt(k), moment: runEnd}
	}
	deadline := time.Now().Add(otherWriterBudget)
	for _, k := range runs {
		if !time.Now().Before(deadline) {
			break
		}
		if w := s.writeIn(wp, k, deadline); w != nil {
			return w
		}
	}
	return nil
}

// writeIn finds the last write to wp in run k (to event k), by its thread,
// searching back from the run's end until deadline; nil if there is none,
// or it took longer.
func (s *Session) writeIn(wp replay.Watchpoint, k int64, deadline time.Time) *otherWrite {
	idx := s.tl.Index()
	tid := idx.TidAt(k)
	if s.tl.Goto(timeline.Moment{Event: k + 1, Tid: idx.TidAt(k + 1)}) != nil {
		return nil
	}
	progress := s.tl.Progress
	s.tl.Progress = func(done, total int64) bool {
		return time.Now().Before(deadline) && (progress == nil || progress(done, total))
	}
	st, err := s.tl.PreviousWrite(wp)
	s.tl.Progress = progress
	if err == nil && !kernelWrote(st.Moment) && st.Moment.Event == k && st.Moment.Tid == tid {
		return &otherWrite{tid: tid, moment: st.Moment, exact: true}
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
	for _, p := range s.procs {
		if p.Pid != s.Process() {
			continue
		}
		for _, tid := range p.Tids {
			if s.inStackOf(tid, addr, maps) {
				return true
			}
		}
	}
	return false
}

// inStackOf says whether addr is in the mapping of thread tid's stack
// pointer (false for a thread not alive now).
func (s *Session) inStackOf(tid int32, addr uint64, maps []replay.Mapping) bool {
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return false
	}
	sp := regs[trace.RSP]
	for _, m := range maps {
		if sp >= m.Start && sp < m.End {
			return addr >= m.Start && addr < m.End
		}
	}
	return false
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
