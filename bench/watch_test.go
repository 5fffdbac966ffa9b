package bench

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

// symbolAddr returns the address of a global in a non-PIE executable.
func symbolAddr(b *testing.B, prog, name string) uint64 {
	b.Helper()
	f, err := elf.Open(prog)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	b.Fatalf("%s: no symbol %s", prog, name)
	return 0
}

// BenchmarkReverseWatch: a counter written 1M times (a system call every
// 1000 writes); from the end of the recording, with a watchpoint on the
// counter, each iteration goes back one write (reverse-continue). The cost
// must be bounded by the replay from the nearest checkpoint plus the traps
// of the last segments, not a trap for every write since the start.
func BenchmarkReverseWatch(b *testing.B) {
	prog := filepath.Join(b.TempDir(), "watchcount")
	src := filepath.Join("..", "testdata", "bench", "watchcount.c")
	if msg, err := exec.Command("gcc", "-O1", "-no-pie", "-o", prog, src).CombinedOutput(); err != nil {
		b.Fatalf("gcc %s: %v\n%s", src, err, msg)
	}
	args := []string{"1000000", "1000"}
	out := filepath.Join(b.TempDir(), "watch.rwd")
	_, events := recordRun(b, prog, args, out)
	tl, err := timeline.Open(out, 256<<20, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer tl.Close()
	if err := tl.Goto(tl.End()); err != nil {
		b.Fatal(err)
	}
	w := replay.Watchpoint{Addr: symbolAddr(b, prog, "counter"), Len: 8}
	if err := tl.SetWatchpoints([]replay.Watchpoint{w}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var worst time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := tl.Goto(tl.End()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		st, err := tl.ReverseContinue()
		if err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(t0))
		if st.Reason != timeline.ReasonWatchpoint || st.New != 1000000 || st.Old != 999999 {
			b.Fatalf("went back to %+v, want the last write (999999 -> 1000000)", st)
		}
		// And one more write back, from the write just found.
		t0 = time.Now()
		st, err = tl.ReverseContinue()
		if err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(t0))
		if st.Reason != timeline.ReasonWatchpoint || st.New != 999999 {
			b.Fatalf("went back to %+v, want the write before (999998 -> 999999)", st)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-back-one-write-ms")
}
