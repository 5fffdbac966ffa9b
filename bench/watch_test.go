package bench

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/internal/testprog"
	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

// BenchmarkReverseWatch: from the end of a recording, with a watchpoint on
// a counter, each iteration goes back one write (reverse-continue), then
// one more. "syscalls": 1M writes with a system call every 1000, so the
// segments are short; going back must cost the replay from the nearest
// checkpoint plus the traps of the last segments, not a trap for every
// write since the start. "one-segment": 1M writes and no system call; the
// search counts the loop's arrivals in the program (arrival counters) and
// traps only the writes of the last window (timeline/counted.go).
func BenchmarkReverseWatch(b *testing.B) {
	for _, c := range []struct {
		name string
		n, k int
	}{{"syscalls", 1000000, 1000}, {"one-segment", 1000000, 0}} {
		b.Run(c.name, func(b *testing.B) { reverseWatch(b, c.n, c.k) })
	}
}

func reverseWatch(b *testing.B, n, k int) {
	prog := filepath.Join(b.TempDir(), "watchcount")
	src := filepath.Join("..", "testdata", "bench", "watchcount.c")
	cc.Build(b, src, prog, "-O1", "-no-pie")
	out := filepath.Join(b.TempDir(), "watch.rwd")
	_, events := recordRun(b, prog, []string{strconv.Itoa(n), strconv.Itoa(k)}, out)
	tl, err := timeline.Open(out, 256<<20, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer tl.Close()
	if err := tl.Goto(tl.End()); err != nil {
		b.Fatal(err)
	}
	w := replay.Watchpoint{Addr: testprog.Symbol(b, prog, "counter"), Len: 8}
	if err := tl.SetWatchpoints([]replay.Watchpoint{w}); err != nil {
		b.Fatal(err)
	}
	back := func(want uint64) time.Duration {
		t0 := time.Now()
		st, err := tl.ReverseContinue()
		if err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		if st.Reason != timeline.ReasonWatchpoint || st.New != want || st.Old != want-1 {
			b.Fatalf("went back to %+v, want the write of %d", st, want)
		}
		return d
	}
	b.ResetTimer()
	// cold: the first search over the recording; warm: the worst of the
	// others (going back from the end again, then one write further).
	var cold, warm, fwd time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := tl.Goto(tl.End()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if d := back(uint64(n)); i == 0 {
			cold = d
		} else {
			warm = max(warm, d)
		}
		warm = max(warm, back(uint64(n-1)))
		// And forwards again to the last write.
		t0 := time.Now()
		st, err := tl.Continue()
		if err != nil || st.Reason != timeline.ReasonWatchpoint || st.New != uint64(n) {
			b.Fatalf("forwards to %+v, %v; want the write of %d", st, err, n)
		}
		fwd = max(fwd, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(cold.Milliseconds()), "cold-back-ms")
	b.ReportMetric(float64(warm.Milliseconds()), "warm-back-ms")
	b.ReportMetric(float64(fwd.Milliseconds()), "forward-ms")
}

// BenchmarkReverseWatchFromBreakpoint: where users stand. A loop writes a
// counter 1M times without a system call (in main, or in a second
// thread), then calls done(); the user stops at `break done`, sets `watch
// counter` there and reverse-continues twice (with the breakpoints armed),
// continues back to done, then goes back from the end of the recording to
// done and the last write. It reports the worst time of each kind of
// motion; `watch-ms` is setting the watchpoint at the breakpoint.
func BenchmarkReverseWatchFromBreakpoint(b *testing.B) {
	for _, mode := range []string{"main", "thread"} {
		b.Run(mode, func(b *testing.B) { reverseWatchFromBP(b, 1000000, mode) })
	}
}

func reverseWatchFromBP(b *testing.B, n int, mode string) {
	prog := filepath.Join(b.TempDir(), "watchbp")
	src := filepath.Join("..", "testdata", "watchbp.c")
	cc.Build(b, src, prog, "-O1", "-no-pie", "-pthread")
	out := filepath.Join(b.TempDir(), "watchbp.rwd")
	recordRun(b, prog, []string{strconv.Itoa(n), mode}, out)
	done := testprog.Symbol(b, prog, "done")
	w := replay.Watchpoint{Addr: testprog.Symbol(b, prog, "counter"), Len: 8}
	timed := func(worst *time.Duration, f func() (*timeline.Stop, error), want timeline.Reason, value uint64) {
		t0 := time.Now()
		st, err := f()
		*worst = max(*worst, time.Since(t0))
		if err != nil || st.Reason != want || (want == timeline.ReasonWatchpoint && st.New != value) {
			b.Fatalf("%+v, %v; want a %s (value %d)", st, err, want, value)
		}
	}
	var watch, back, fwd, fromEnd time.Duration
	for i := 0; i < b.N; i++ {
		tl, err := timeline.Open(out, 256<<20, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := tl.SetBreakpoints([]uint64{done}); err != nil {
			b.Fatal(err)
		}
		if st, err := tl.Continue(); err != nil || st.Reason != timeline.ReasonBreakpoint {
			b.Fatalf("continue to done: %+v, %v", st, err)
		}
		t0 := time.Now()
		if err := tl.SetWatchpoints([]replay.Watchpoint{w}); err != nil {
			b.Fatal(err)
		}
		watch = max(watch, time.Since(t0))
		timed(&back, tl.ReverseContinue, timeline.ReasonWatchpoint, uint64(n))
		timed(&back, tl.ReverseContinue, timeline.ReasonWatchpoint, uint64(n-1))
		timed(&fwd, tl.Continue, timeline.ReasonWatchpoint, uint64(n))
		timed(&fwd, tl.Continue, timeline.ReasonBreakpoint, 0)
		if err := tl.Goto(tl.End()); err != nil {
			b.Fatal(err)
		}
		timed(&fromEnd, tl.ReverseContinue, timeline.ReasonBreakpoint, 0)
		timed(&fromEnd, tl.ReverseContinue, timeline.ReasonWatchpoint, uint64(n))
		tl.Close()
	}
	b.ReportMetric(float64(watch.Milliseconds()), "watch-ms")
	b.ReportMetric(float64(back.Milliseconds()), "back-ms")
	b.ReportMetric(float64(fwd.Milliseconds()), "forward-ms")
	b.ReportMetric(float64(fromEnd.Milliseconds()), "from-end-ms")
}
