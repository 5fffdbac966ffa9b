package timeline_test

import (
	"testing"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

// TestReverseWatchFromBreakpoint: a user stops at a breakpoint after a loop
// that wrote a watched counter thousands of times in one segment (in main,
// or in a second thread), sets the watchpoint there and goes back through
// the writes, then forwards again to the breakpoint; and from the end of
// the recording back to the breakpoint and the last write. Each stop is
// the right write, with the state a replay trapping its way there has, and
// the searches count the loop in the program (counted.go) instead of
// trapping every write since the segment's start, with the breakpoints
// armed (one on a function too short for a counter, one never reached),
// forwards too (a step's temporary breakpoint).
func TestReverseWatchFromBreakpoint(t *testing.T) {
	const n = 5000
	for _, mode := range []string{"main", "thread"} {
		t.Run(mode, func(t *testing.T) {
			prog, path := recordC(t, "watchbp.c", []string{"-O1", "-no-pie", "-pthread"}, "5000", mode)
			w := replay.Watchpoint{Addr: testprog.Symbol(t, prog, "counter"), Len: 8}
			done := testprog.Symbol(t, prog, "done")
			bps := []uint64{done, testprog.Symbol(t, prog, "never")}
			tl, err := timeline.Open(path, 64<<20, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer tl.Close()
			if err := tl.SetBreakpoints(bps); err != nil {
				t.Fatal(err)
			}
			if st, err := tl.Continue(); err != nil || st.Reason != timeline.ReasonBreakpoint || rip(t, tl) != done {
				t.Fatalf("continue to done: %+v, %v", st, err)
			}
			if err := tl.SetWatchpoints([]replay.Watchpoint{w}); err != nil {
				t.Fatal(err)
			}
			// The reference: no breakpoints, writes trapped from the start.
			fresh := watchedAtEnd(t, path, 0, w, false)
			check := func(what string, st *timeline.Stop, err error, reason timeline.Reason, old, new uint64) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if st.Reason != reason || word(t, tl, w.Addr) != new || reason == timeline.ReasonWatchpoint && (st.Old != old || st.New != new) {
					t.Fatalf("%s: %+v (counter %d there), want a %s with counter %d", what, st, word(t, tl, w.Addr), reason, new)
				}
				regs, err := tl.Session().Regs(st.Moment.Tid)
				if err != nil {
					t.Fatal(err)
				}
				if err := fresh.Goto(st.Moment); err != nil {
					t.Fatalf("%s: fresh replay to %v: %v", what, st.Moment, err)
				}
				if regs2, err := fresh.Session().Regs(st.Moment.Tid); err != nil || regs != regs2 {
					t.Fatalf("%s: at %v registers %v, a fresh replay has %v (%v)", what, st.Moment, regs, regs2, err)
				}
			}
			st, err := tl.ReverseContinue()
			check("reverse-continue from done", st, err, timeline.ReasonWatchpoint, n-1, n)
			st, err = tl.ReverseContinue()
			check("reverse-continue again", st, err, timeline.ReasonWatchpoint, n-2, n-1)
			if tl.CountedSearches() == 0 {
				t.Fatalf("the writes were trapped one by one from the segment's start, not counted")
			}
			st, err = tl.Continue()
			check("continue", st, err, timeline.ReasonWatchpoint, n-1, n)
			st, err = tl.Continue()
			check("continue to done", st, err, timeline.ReasonBreakpoint, 0, n)
			if rip(t, tl) != done {
				t.Fatalf("continue to done: at %#x, want %#x", rip(t, tl), done)
			}
			// A step's temporary breakpoint, the watchpoint armed: the
			// stop is named by counting, not by trapping the loop's writes.
			counted := tl.CountedSearches()
			after := testprog.Symbol(t, prog, "after")
			st, err = tl.ContinueWith([]uint64{after}, nil)
			check("continue to a temporary breakpoint at after", st, err, timeline.ReasonStep, 0, n)
			if rip(t, tl) != after || tl.CountedSearches() == counted {
				t.Fatalf("continue to after: at %#x, want %#x, counted (%d searches before, %d after)", rip(t, tl), after, counted, tl.CountedSearches())
			}
			counted = tl.CountedSearches()
			if err := tl.Goto(tl.End()); err != nil {
				t.Fatal(err)
			}
			st, err = tl.ReverseContinue()
			check("reverse-continue from the end", st, err, timeline.ReasonBreakpoint, 0, n)
			if rip(t, tl) != done {
				t.Fatalf("reverse-continue from the end: at %#x, want done at %#x", rip(t, tl), done)
			}
			st, err = tl.ReverseContinue()
			check("reverse-continue from done again", st, err, timeline.ReasonWatchpoint, n-1, n)
			if tl.CountedSearches() == counted {
				t.Errorf("from the end, the busy segment was trapped, not counted")
			}
		})
	}
}
