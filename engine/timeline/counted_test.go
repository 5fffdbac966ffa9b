package timeline_test

import (
	"encoding/binary"
	"testing"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

// word reads the 8-byte value at addr where tl stands.
func word(t *testing.T, tl *timeline.Timeline, addr uint64) uint64 {
	t.Helper()
	b, err := tl.Session().ReadMem(addr, 8)
	if err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint64(b)
}

func rip(t *testing.T, tl *timeline.Timeline) uint64 {
	t.Helper()
	regs, err := tl.Session().Regs(tl.Now().Tid)
	if err != nil {
		t.Fatal(err)
	}
	return regs[trace.RIP]
}

// watchedAtEnd opens a timeline over path with checkpoints (budget 0: none),
// a watchpoint on w and, when end, at the end of the recording.
func watchedAtEnd(t *testing.T, path string, budget int64, w replay.Watchpoint, end bool) *timeline.Timeline {
	t.Helper()
	tl, err := timeline.Open(path, budget, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tl.Close)
	if end {
		if err := tl.Goto(tl.End()); err != nil {
			t.Fatal(err)
		}
	}
	if err := tl.SetWatchpoints([]replay.Watchpoint{w}); err != nil {
		t.Fatal(err)
	}
	return tl
}

// firstWriteRIP is where a thread stands after the first write to w: every
// write of a loop leaves it there.
func firstWriteRIP(t *testing.T, path string, w replay.Watchpoint) uint64 {
	t.Helper()
	tl := watchedAtEnd(t, path, 0, w, false)
	st, err := tl.Continue()
	if err != nil || st.Reason != timeline.ReasonWatchpoint {
		t.Fatalf("first write: %+v, %v", st, err)
	}
	return rip(t, tl)
}

// TestReverseWatchBusySegment: going back with a watchpoint through runs of
// thousands of writes without a system call (counted, not trapped: see
// counted.go) stops at each write in turn, newest first, with the right
// old and new values, right after the writing instruction, in the state a
// fresh replay reaches at that moment; the last write is found also when a
// different instruction than the loop's made it; reverse-stepi and going
// forwards from such a moment work.
func TestReverseWatchBusySegment(t *testing.T) {
	const n = 5000
	for _, opt := range []string{"-O0", "-O1", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			if opt == "-O1" {
				// Checkpoints at every chance, as a loaded machine may take
				// them: one was once taken inside the busy segment and
				// named its start.
				defer timeline.SetCheckpointEvery(0)()
			}
			prog, path := recordC(t, "lastwriter.c", []string{opt, "-no-pie"}, "5000")
			w := replay.Watchpoint{Addr: testprog.Symbol(t, prog, "counter"), Len: 8}
			loopRIP := firstWriteRIP(t, path, w)
			tl, fresh := watchedAtEnd(t, path, 64<<20, w, true), watchedAtEnd(t, path, 0, w, false)
			// The fresh replay traps its way to each moment: a breakpoint
			// (at _fini, never reached in the loops) keeps counters out of
			// its Goto, so it checks how the search named the moment.
			if err := fresh.SetBreakpoints([]uint64{testprog.Symbol(t, prog, "_fini")}); err != nil {
				t.Fatal(err)
			}
			back := func(old, new uint64) timeline.Stop {
				t.Helper()
				st, err := tl.ReverseContinue()
				if err != nil {
					t.Fatal(err)
				}
				if st.Reason != timeline.ReasonWatchpoint || st.Old != old || st.New != new || word(t, tl, w.Addr) != new {
					t.Fatalf("back to %+v (counter %d there), want the write of %d over %d", st, word(t, tl, w.Addr), new, old)
				}
				regs, err := tl.Session().Regs(st.Moment.Tid)
				if err != nil {
					t.Fatal(err)
				}
				if err := fresh.Goto(st.Moment); err != nil {
					t.Fatalf("fresh replay to %v: %v", st.Moment, err)
				}
				regs2, err := fresh.Session().Regs(st.Moment.Tid)
				if err != nil {
					t.Fatal(err)
				}
				if regs != regs2 || word(t, fresh, w.Addr) != new {
					t.Fatalf("at %v: registers %v after the search, %v from a fresh replay", st.Moment, regs, regs2)
				}
				return *st
			}
			last := back(n, 2*n+1)
			if tl.CountedSearches() == 0 {
				t.Fatalf("the writes were trapped one by one, not counted")
			}
			lastRIP := rip(t, tl)
			for v := uint64(n); v > n-3; v-- {
				back(v-1, v)
				if got := rip(t, tl); got != loopRIP {
					t.Fatalf("after the loop's write of %d: rip %#x, want %#x (after the first write)", v, got, loopRIP)
				}
			}
			// Reverse-stepi: before the write, the old value; stepi: after it.
			if _, err := tl.ReverseStepInstruction(); err != nil {
				t.Fatal(err)
			}
			if got := word(t, tl, w.Addr); got != n-3 {
				t.Fatalf("reverse-stepi from the write of %d: counter %d, want %d", n-2, got, n-3)
			}
			if _, err := tl.StepInstruction(); err != nil {
				t.Fatal(err)
			}
			if got := word(t, tl, w.Addr); got != n-2 || rip(t, tl) != loopRIP {
				t.Fatalf("stepi back over the write: counter %d at %#x, want %d at %#x", got, rip(t, tl), n-2, loopRIP)
			}
			// Forwards: the next writes, to the last one, counted too (not
			// by trapping the segment's writes from its start), each at the
			// moment a fresh replay reaches the same state at.
			counted := tl.CountedSearches()
			forward := func(old, new uint64) {
				t.Helper()
				st, err := tl.Continue()
				if err != nil || st.Reason != timeline.ReasonWatchpoint || st.New != new || st.Old != old || word(t, tl, w.Addr) != new {
					t.Fatalf("continue: %+v, %v; want the write of %d over %d", st, err, new, old)
				}
				regs, err := tl.Session().Regs(st.Moment.Tid)
				if err != nil {
					t.Fatal(err)
				}
				if err := fresh.Goto(st.Moment); err != nil {
					t.Fatalf("fresh replay to %v: %v", st.Moment, err)
				}
				if regs2, err := fresh.Session().Regs(st.Moment.Tid); err != nil || regs != regs2 {
					t.Fatalf("at %v: registers %v going forwards, %v from a fresh replay", st.Moment, regs, regs2)
				}
			}
			forward(n-2, n-1)
			forward(n-1, n)
			forward(n, 2*n+1)
			if rip(t, tl) != lastRIP {
				t.Fatalf("continue to the last write: at %#x; want %#x (as found backwards, at %v)", rip(t, tl), lastRIP, last.Moment)
			}
			if tl.CountedSearches() == counted {
				t.Errorf("going forwards trapped the segment's writes from its start")
			}
			// No write after the last: on to the end of the recording.
			if st, err := tl.Continue(); err != nil || st.Reason != timeline.ReasonExit {
				t.Fatalf("continue after the last write: %+v, %v; want the exit", st, err)
			}
		})
	}
}

// TestReverseWatchBusySegments: busy segments between system calls are
// counted one by one; going back from the start of one reaches the last
// write of the one before.
func TestReverseWatchBusySegments(t *testing.T) {
	// getppid after the writes 1, 1001 and 2001: segments of 1000 writes.
	prog, path := recordC(t, "bench/watchcount.c", []string{"-O1", "-no-pie"}, "2600", "1000")
	w := replay.Watchpoint{Addr: testprog.Symbol(t, prog, "counter"), Len: 8}
	tl := watchedAtEnd(t, path, 64<<20, w, true)
	back := func(want uint64) timeline.Stop {
		t.Helper()
		st, err := tl.ReverseContinue()
		if err != nil || st.Reason != timeline.ReasonWatchpoint || st.New != want || st.Old != want-1 || word(t, tl, w.Addr) != want {
			t.Fatalf("back: %+v, %v; want the write of %d", st, err, want)
		}
		return *st
	}
	back(2600)
	back(2599)
	if tl.CountedSearches() == 0 {
		t.Fatalf("the writes were trapped one by one, not counted")
	}
	for _, want := range []uint64{2001, 1001} {
		// The start of the segment, after the getppid that follows the
		// last write of the segment before.
		now := tl.Now()
		if err := tl.Goto(timeline.Moment{Event: now.Event, Tid: now.Tid}); err != nil {
			t.Fatal(err)
		}
		if got := word(t, tl, w.Addr); got != want {
			t.Fatalf("at the start of the segment of %v: counter %d, want %d", now, got, want)
		}
		back(want)
		back(want - 1)
	}
}

// TestReverseWatchThroughCalls: writes made by a small function called
// from a loop are counted at the loop (its return address), and each is
// found in turn.
func TestReverseWatchThroughCalls(t *testing.T) {
	const n = 5000
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			prog, path := recordC(t, "watchcall.c", []string{opt, "-no-pie"}, "5000")
			w := replay.Watchpoint{Addr: testprog.Symbol(t, prog, "counter"), Len: 8}
			tl := watchedAtEnd(t, path, 64<<20, w, true)
			for want := uint64(n); want > n-3; want-- {
				st, err := tl.ReverseContinue()
				if err != nil || st.Reason != timeline.ReasonWatchpoint || st.New != want || st.Old != want-1 || word(t, tl, w.Addr) != want {
					t.Fatalf("back: %+v, %v; want the write of %d", st, err, want)
				}
			}
			if tl.CountedSearches() == 0 {
				t.Errorf("the writes were trapped one by one, not counted")
			}
		})
	}
}
