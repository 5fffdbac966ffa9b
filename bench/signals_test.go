package bench

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// cpuTime is the CPU time (user and system) of this process and of its
// reaped children: the tracee is a child of the recorder and of the
// replayer, so it counts its own work as well as the ptrace work. On a
// loaded machine it is steadier than the elapsed time.
func cpuTime() time.Duration {
	var self, kids unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &self)
	unix.Getrusage(unix.RUSAGE_CHILDREN, &kids)
	tv := func(t unix.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// measured runs f and returns its elapsed and CPU time.
func measured(f func()) (time.Duration, time.Duration) {
	c0, t0 := cpuTime(), time.Now()
	f()
	return time.Since(t0), cpuTime() - c0
}

// BenchmarkTimerSignalLoop: about 2 s of compute in a loop without system
// calls, with a 1 ms interval timer (SIGALRM, a handler that counts): every
// signal is delivered in user code, at a preemption point found in replay
// by the trampoline (replay/search.go). Reports the elapsed and CPU ratios
// against the native run, the signals delivered, and what replay pays per
// loop iteration it runs through while looking for the points.
func BenchmarkTimerSignalLoop(b *testing.B) {
	prog := build(b, "timerloop")
	const iterations = 1500000000
	args := []string{"1500000000"}
	out := filepath.Join(b.TempDir(), "timer.rwd")
	var nat, natCPU, rec, recCPU, rep, repCPU time.Duration
	var signals, preempts, approx int64
	for i := 0; i < b.N; i++ {
		d, c := measured(func() { native(b, prog, args) })
		nat, natCPU = nat+d, natCPU+c
		d, c = measured(func() { recordRun(b, prog, args, out) })
		rec, recCPU = rec+d, recCPU+c
		d, c = measured(func() { replayRun(b, out) })
		rep, repCPU = rep+d, repCPU+c
		s, p, a := countEvents(b, out)
		signals, preempts, approx = signals+s, preempts+p, approx+a
	}
	n := float64(b.N)
	b.ReportMetric(float64(nat.Milliseconds())/n, "native-ms")
	b.ReportMetric(float64(rec)/float64(nat), "record/native")
	b.ReportMetric(float64(rep)/float64(nat), "replay/native")
	b.ReportMetric(float64(recCPU)/float64(natCPU), "record/native-cpu")
	b.ReportMetric(float64(repCPU)/float64(natCPU), "replay/native-cpu")
	b.ReportMetric(float64(signals)/n, "signals")
	b.ReportMetric(float64(preempts)/n, "preemptions")
	b.ReportMetric(float64(approx)/n, "approximate")
	// Replay runs every iteration, each one a pass of the trampoline at
	// the point being looked for (the loop is one basic block).
	b.ReportMetric(float64(repCPU)/n/iterations, "replay-cpu-ns/iter")
	b.ReportMetric(float64(natCPU)/n/iterations, "native-cpu-ns/iter")
}

// BenchmarkPreemptSearch: the cost of finding preemption points deep in a
// hot loop, with the trampoline. Each iteration replays a recording of
// timerloop (200M iterations, a signal per millisecond) and times the
// preemption events only, in elapsed time and in CPU time (the tracee's,
// from /proc/TID/schedstat, and the replayer's own); nearly every loop pass
// happens inside one of them.
func BenchmarkPreemptSearch(b *testing.B) {
	prog := build(b, "timerloop")
	const iterations = 200000000
	args := []string{"200000000"}
	out := filepath.Join(b.TempDir(), "search.rwd")
	_, natCPU := measured(func() { native(b, prog, args) })
	recordRun(b, prog, args, out)
	_, preempts, _ := countEvents(b, out)
	if preempts == 0 {
		b.Skip("the recording has no preemption (the loop ran between two timer ticks)")
	}
	var search, searchCPU time.Duration
	for i := 0; i < b.N; i++ {
		s, err := replay.Open(out, replay.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			var tid int
			if th := s.Threads(); len(th) > 0 {
				tid = th[0].Real
			}
			c0, r0, t0 := onCPU(tid), selfCPU(), time.Now()
			e, err := s.Step()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				s.Close()
				b.Fatal(err)
			}
			if e.Kind == trace.KindPreempt {
				search += time.Since(t0)
				searchCPU += onCPU(tid) - c0 + selfCPU() - r0
			}
		}
		s.Close()
	}
	n := float64(b.N)
	b.ReportMetric(float64(search)/n/iterations, "search-ns/pass")
	b.ReportMetric(float64(searchCPU)/n/iterations, "search-cpu-ns/pass")
	b.ReportMetric(float64(natCPU)/iterations, "native-cpu-ns/iter")
	b.ReportMetric(float64(preempts), "preemptions")
}

// onCPU is how long thread tid has run, from /proc/TID/schedstat (0 if
// it cannot be read).
func onCPU(tid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	ns, _ := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns)
}

// selfCPU is the CPU time of this process.
func selfCPU() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countEvents counts the signals and preemptions (all, approximate) of a
// trace.
func countEvents(b *testing.B, path string) (signals, preempts, approx int64) {
	rd, err := trace.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	for {
		e, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				b.Fatal(err)
			}
			return
		}
		switch e.Kind {
		case trace.KindSignal:
			signals++
		case trace.KindPreempt:
			preempts++
			if e.Flags&trace.FlagApprox != 0 {
				approx++
			}
		}
	}
}
