// Package bench measures what recording and replay cost against native runs
// of the same program, and against the floor of any ptrace recorder: a bare
// PTRACE_SYSCALL loop that stops at every system call and does nothing else.
//
//	go test -run XXX -bench . -benchtime 3x ./bench/
//
// Each benchmark reports ratios (record/native, replay/native, and for the
// system call loop record/bare and replay/bare) and the trace size per event.
package bench

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/attach"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"

	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

func TestMain(m *testing.M) {
	ptrace.MaybeRunHelper()
	attach.MaybeRunGuard() // rewind record -p starts one: the test binary is rewind here
	// A user's caches are warm after their first recording: the blobs of
	// libc and the loader, the sites the hook served, the cpuid table.
	// Benchmarks measure that state, in a cache of their own that the
	// first run of each benchmark (b.N = 1, untimed by -benchtime Nx's
	// report) fills, rather than with the caches off as tests run.
	dir, err := os.MkdirTemp("", "rewind-bench-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("REWIND_CACHE", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles a benchmark program from testdata/bench.
func build(b *testing.B, name string) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), name)
	src := filepath.Join("..", "testdata", "bench", name+".c")
	return cc.Build(b, src, out, "-O1")
}

func native(b *testing.B, prog string, args []string) time.Duration {
	start := time.Now()
	cmd := exec.Command(prog, args...)
	if err := cmd.Run(); err != nil {
		b.Fatalf("native %s: %v", prog, err)
	}
	return time.Since(start)
}

func devNull(b *testing.B) *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

func recordRun(b *testing.B, prog string, args []string, out string) (time.Duration, int64) {
	null := devNull(b)
	start := time.Now()
	res, err := record.Record(record.Options{Path: prog, Args: append([]string{prog}, args...), Env: os.Environ(),
		Dir: "/", Output: out, Warn: io.Discard, Stdin: null, Stdout: null, Stderr: null})
	if err != nil {
		b.Fatalf("record: %v", err)
	}
	return time.Since(start), res.Events
}

func replayRun(b *testing.B, trace string) time.Duration {
	start := time.Now()
	s, err := replay.Open(trace, replay.Options{})
	if err != nil {
		b.Fatalf("replay: %v", err)
	}
	defer s.Close()
	if err := s.Run(); err != nil {
		b.Fatalf("replay: %v", err)
	}
	return time.Since(start)
}

// bare runs prog under the cheapest possible ptrace loop: stop at every
// system call entry and exit, look at nothing, resume. As in a recording,
// the program and the tracer share one CPU and stops send no SIGCHLD: the
// fastest way found to take a stop.
func bare(b *testing.B, prog string, args []string) time.Duration {
	null := devNull(b)
	var elapsed time.Duration
	th := ptrace.NewThread()
	defer th.Close()
	defer ptrace.QuietStops()()
	th.Do(func() {
		cpu, err := ptrace.PickCPU(-1)
		if err != nil {
			b.Errorf("bare: %v", err)
			return
		}
		ptrace.PinThread(cpu)
		start := time.Now()
		pid, err := ptrace.Start(&ptrace.Spec{Path: prog, Args: append([]string{prog}, args...), Env: os.Environ(), Dir: "/", CPU: cpu, Ignored: -1,
			Stdin: null, Stdout: null, Stderr: null})
		if err != nil {
			b.Errorf("bare: %v", err)
			return
		}
		// rdtsc is not trapped here: the floor does not log anything.
		if err := ptrace.Syscall(pid, 0); err != nil {
			b.Errorf("bare: %v", err)
			return
		}
		for {
			st, _, err := ptrace.Wait(-1, false)
			if err != nil {
				if errors.Is(err, unix.ECHILD) {
					break
				}
				b.Errorf("bare: %v", err)
				return
			}
			if st.Kind == ptrace.Exited || st.Kind == ptrace.Killed {
				if st.Tid == pid {
					break
				}
				continue
			}
			sig := 0
			if st.Kind == ptrace.StopSignal {
				sig = st.Sig
			}
			ptrace.Syscall(st.Tid, sig)
		}
		elapsed = time.Since(start)
	})
	return elapsed
}

func traceSize(b *testing.B, path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// reportRatios reports the native time of a run and the ratios of its
// recording's and its replay's to it.
func reportRatios(b *testing.B, t times) {
	b.ReportMetric(float64(t.nat.Milliseconds())/float64(b.N), "native-ms")
	b.ReportMetric(float64(t.rec)/float64(t.nat), "record/native")
	b.ReportMetric(float64(t.rep)/float64(t.nat), "replay/native")
}

// times are the total times of b.N runs of a program each way (zero for a
// way not measured), and the events of one of its recordings.
type times struct {
	nat, flo, rec, rep time.Duration
	events             int64
}

// measure builds testdata/bench's program name, then runs it with args
// natively and recorded, b.N times each; withBare runs it under the bare
// ptrace loop too, withReplay replays each recording. It returns the
// times and the recording's path.
func measure(b *testing.B, name string, withBare, withReplay bool, args ...string) (t times, trace string) {
	prog := build(b, name)
	trace = filepath.Join(b.TempDir(), name+".rwd")
	runtime.GC() // not in the timed runs
	for i := 0; i < b.N; i++ {
		t.nat += native(b, prog, args)
		if withBare {
			t.flo += bare(b, prog, args)
		}
		d, n := recordRun(b, prog, args, trace)
		t.rec += d
		t.events = n
		if withReplay {
			t.rep += replayRun(b, trace)
		}
	}
	return t, trace
}

// roundTrips measures native runs, recordings and replays of the program
// name.
func roundTrips(b *testing.B, name string, args ...string) times {
	t, _ := measure(b, name, false, true, args...)
	return t
}

// measureFloor measures the program name against the bare ptrace loop, the
// floor of any ptrace recorder, and reports the native and floor times and
// the recording's ratios to both.
func measureFloor(b *testing.B, name string, withReplay bool, args ...string) (times, string) {
	t, trace := measure(b, name, true, withReplay, args...)
	b.ReportMetric(float64(t.nat.Microseconds())/float64(b.N)/1000, "native-ms")
	b.ReportMetric(float64(t.flo.Microseconds())/float64(b.N)/1000, "bare-ptrace-ms")
	b.ReportMetric(float64(t.rec)/float64(t.flo), "record/bare")
	b.ReportMetric(float64(t.rec)/float64(t.nat), "record/native")
	return t, trace
}

// BenchmarkCPULoop: a ~1 s compute loop without system calls.
func BenchmarkCPULoop(b *testing.B) {
	reportRatios(b, roundTrips(b, "cpuloop", "400000000"))
}

// BenchmarkParallelCompute: one process per CPU (at most 8) computing side
// by side for ~0.3 s each, as `make -j` runs its compilers. Recorded, they
// start on the program's CPU and the balancer moves them to CPUs of their
// own; replay runs them on one.
func BenchmarkParallelCompute(b *testing.B) {
	reportRatios(b, roundTrips(b, "parallel", strconv.Itoa(min(runtime.NumCPU(), 8)), "100000000"))
}

// BenchmarkSyscallLoop: 20k getppid calls.
func BenchmarkSyscallLoop(b *testing.B) {
	t, trace := measureFloor(b, "syscalls", true, "20000")
	b.ReportMetric(float64(t.rep)/float64(t.flo), "replay/bare")
	b.ReportMetric(float64(traceSize(b, trace))/float64(t.events), "bytes/event")
}

// BenchmarkForkHeavy: 200 runs of `sh -c 'exit 0'`, each a fork, an exec
// and an exit recorded into the one trace; replay re-executes every fork.
func BenchmarkForkHeavy(b *testing.B) {
	t := roundTrips(b, "forks", "200")
	reportRatios(b, t)
	b.ReportMetric(float64(t.events), "events")
}

// BenchmarkPingPong: two processes exchange 4 bytes over loopback TCP
// 5000 times, each blocked in read until the other writes.
func BenchmarkPingPong(b *testing.B) {
	t := roundTrips(b, "pingpong", "5000")
	reportRatios(b, t)
	b.ReportMetric(float64(t.events)/5000, "events/round-trip")
}

// BenchmarkYieldHandoff: two threads pass a token 200 times, each waiting
// in a sched_yield loop. The recorder switches threads at a sched_yield when
// another is ready, instead of letting the yielding thread spin out its
// slice: events per hand-off is the measure.
func BenchmarkYieldHandoff(b *testing.B) {
	t := roundTrips(b, "yield", "200")
	b.ReportMetric(float64(t.events)/200, "events/handoff")
	b.ReportMetric(float64(t.rec.Milliseconds())/float64(b.N), "record-ms")
	b.ReportMetric(float64(t.rep.Milliseconds())/float64(b.N), "replay-ms")
	b.ReportMetric(float64(t.rec)/float64(t.nat), "record/native")
}

// BenchmarkCloseLoop: 100k close calls (of a descriptor that is not
// open), as a program closing every descriptor up to its limit makes. It
// reports calls recorded per second besides the ratios.
func BenchmarkCloseLoop(b *testing.B) {
	t, _ := measureFloor(b, "syscalls", false, "100000", "close")
	b.ReportMetric(float64(t.events)*float64(b.N)/t.rec.Seconds(), "calls/s")
}

// BenchmarkPerCall: what one more buffered call costs, recorded against
// native, for getppid and for close of a descriptor that is not open. A
// run of 20k calls natively takes a few milliseconds, less than a
// recording's fixed cost (rewind's start, the first exec's patching, the
// trace's end), so the ratio of whole runs (BenchmarkSyscallLoop) measures
// mostly that. Here each way runs 20k and 200k calls, and the ratio is of
// the differences: the cost per call, which issue 23's "~40 µs a call"
// measured. The intercept is reported too, as the recording's fixed cost.
func BenchmarkPerCall(b *testing.B) {
	for _, call := range []string{"getppid", "close"} {
		b.Run(call, func(b *testing.B) {
			prog := build(b, "syscalls")
			trace := filepath.Join(b.TempDir(), "calls.rwd")
			const few, many = 20000, 200000
			var nat, rec [2]time.Duration
			for i := 0; i < b.N; i++ {
				for k, n := range []int{few, many} {
					args := []string{strconv.Itoa(n), call}
					nat[k] += native(b, prog, args)
					d, _ := recordRun(b, prog, args, trace)
					rec[k] += d
				}
			}
			perNat := (nat[1] - nat[0]).Seconds() / (many - few) / float64(b.N)
			perRec := (rec[1] - rec[0]).Seconds() / (many - few) / float64(b.N)
			b.ReportMetric(perNat*1e9, "native-ns/call")
			b.ReportMetric(perRec*1e9, "record-ns/call")
			b.ReportMetric(perRec/perNat, "record/native-per-call")
			fixed := rec[0].Seconds()/float64(b.N) - few*perRec
			b.ReportMetric(fixed*1e3, "record-fixed-ms")
		})
	}
}

// BenchmarkReverseStepiNearEnd: a recording of about 10 s of native run time
// with 100k events; after replaying to the end once (which takes the
// checkpoints), each iteration goes back one instruction from the end.
func BenchmarkReverseStepiNearEnd(b *testing.B) {
	prog := build(b, "longrun")
	args := []string{"100000", "60000"}
	out := filepath.Join(b.TempDir(), "long.rwd")
	nat := native(b, prog, args)
	_, events := recordRun(b, prog, args, out)
	const budget = 256 << 20
	tl, err := timeline.Open(out, budget, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer tl.Close()
	start := time.Now()
	if err := tl.Goto(tl.End()); err != nil {
		b.Fatal(err)
	}
	toEnd := time.Since(start)
	b.ResetTimer()
	var worst time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := tl.Goto(tl.End()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := tl.ReverseStepInstruction(); err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(t0))
	}
	b.StopTimer()
	mem, n := tl.CheckpointMemory()
	if mem > budget {
		b.Errorf("checkpoints use %d bytes, over the budget of %d", mem, budget)
	}
	b.ReportMetric(nat.Seconds(), "native-s")
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(toEnd.Seconds(), "replay-to-end-s")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-rsi-ms")
	b.ReportMetric(float64(n), "checkpoints")
	b.ReportMetric(float64(mem)/(1<<20), "checkpoint-MiB")
}
