package timeline_test

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/internal/testprog"
	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

func TestMain(m *testing.M) { testprog.Main(m) }

// recordBench compiles testdata/bench/NAME.c and records it with args.
func recordBench(t testing.TB, name string, args ...string) string {
	_, trace := recordC(t, "bench/"+name+".c", []string{"-O1", "-pthread"}, args...)
	return trace
}

// recordC compiles testdata/SRC with flags and records it with args; it
// returns the program and the trace.
func recordC(t testing.TB, src string, flags []string, args ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	prog := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
	cc.Build(t, "../../testdata/"+src, prog, flags...)
	null, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	defer null.Close()
	out := filepath.Join(dir, "t.rwd")
	if _, err := record.Record(record.Options{Path: prog, Args: append([]string{prog}, args...), Env: os.Environ(), Dir: dir,
		Output: out, Warn: io.Discard, Stdin: null, Stdout: null, Stderr: null}); err != nil {
		t.Fatal(err)
	}
	return prog, out
}

// TestCheckpointsSameState: a moment reached through a restored checkpoint
// has the registers and memory a fresh replay from the start gives; the
// checkpoints stay within their budget.
func TestCheckpointsSameState(t *testing.T) {
	trace := recordBench(t, "longrun", "3000", "200000")
	tl, mem, n := backFromEnd(t, trace, 64<<20)
	if n == 0 {
		t.Fatalf("no checkpoint taken over a %d-event replay", tl.Index().Total())
	}
	at := tl.Now()
	tid := at.Tid
	regs, err := tl.Session().Regs(tid)
	if err != nil {
		t.Fatal(err)
	}
	stack, _ := tl.Session().ReadMem(regs[19]-256, 512) // around rsp
	t.Logf("reverse-stepi from the end to %v with %d checkpoints (%d KiB)", at, n, mem>>10)

	fresh, err := timeline.Open(trace, 0, 0) // no checkpoints
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.Goto(at); err != nil {
		t.Fatal(err)
	}
	regs2, err := fresh.Session().Regs(tid)
	if err != nil {
		t.Fatal(err)
	}
	stack2, _ := fresh.Session().ReadMem(regs2[19]-256, 512)
	if regs != regs2 {
		t.Errorf("registers differ between the checkpoint route and a fresh replay:\n%x\n%x", regs, regs2)
	}
	if !reflect.DeepEqual(stack, stack2) {
		t.Errorf("stack memory differs between the checkpoint route and a fresh replay")
	}
}

// TestCheckpointTinyBudget: a tiny budget keeps (almost) nothing, and
// stepping back still works.
func TestCheckpointTinyBudget(t *testing.T) {
	trace := recordBench(t, "longrun", "3000", "200000")
	backFromEnd(t, trace, 1<<20)
}

// backFromEnd opens trace with a checkpoint budget, goes to the end,
// checks that the checkpoints taken on the way stay within the budget,
// then steps back one instruction. It returns the
// timeline, which closes with the test, and the checkpoints' memory and
// count at the end.
func backFromEnd(t *testing.T, trace string, budget int64) (tl *timeline.Timeline, mem int64, n int) {
	t.Helper()
	tl, err := timeline.Open(trace, budget, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tl.Close)
	if err := tl.Goto(tl.End()); err != nil {
		t.Fatal(err)
	}
	mem, n = tl.CheckpointMemory()
	if mem > budget {
		t.Errorf("checkpoints use %d bytes, over the %d budget", mem, budget)
	}
	if _, err := tl.ReverseStepInstruction(); err != nil {
		t.Fatal(err)
	}
	return tl, mem, n
}

// viaCheckpoint opens trace twice: one timeline with checkpoints, gone to
// the end (at least two checkpoints on the way) and back to the moment
// num/den of the events in, through a restored checkpoint; the other
// without checkpoints, gone straight there. Both close with the test.
func viaCheckpoint(t *testing.T, trace string, num, den int64) (tl, fresh *timeline.Timeline, target timeline.Moment) {
	t.Helper()
	tl, err := timeline.Open(trace, 256<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tl.Close)
	if err := tl.Goto(tl.End()); err != nil {
		t.Fatal(err)
	}
	if _, n := tl.CheckpointMemory(); n < 2 {
		t.Fatalf("only %d checkpoints over the replay", n)
	}
	target = timeline.Moment{Event: tl.Index().Total() * num / den}
	if err := tl.Goto(target); err != nil {
		t.Fatal(err)
	}
	fresh, err = timeline.Open(trace, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fresh.Close)
	if err := fresh.Goto(target); err != nil {
		t.Fatal(err)
	}
	return tl, fresh, target
}

// continueToExit continues tl, restored from a checkpoint, to the end.
func continueToExit(t *testing.T, tl *timeline.Timeline) {
	t.Helper()
	st, err := tl.Continue()
	if err != nil {
		t.Fatalf("continue to the end from a restored checkpoint: %v", err)
	}
	if st.Reason != timeline.ReasonExit {
		t.Errorf("continue from the checkpoint stopped with %v, want exit", st.Reason)
	}
}

// TestCheckpointsThreads: checkpoints of a multi-threaded process (threads
// re-created in the copy) give every thread the state a fresh replay gives,
// and the replay goes on to the end from them without divergence.
func TestCheckpointsThreads(t *testing.T) {
	trace := recordBench(t, "threadloop", "1500", "200000")
	tl, fresh, target := viaCheckpoint(t, trace, 2, 3)
	threads := tl.Session().Threads()
	if len(threads) < 3 {
		t.Fatalf("%d threads at %v, want the workers too", len(threads), target)
	}
	for _, th := range threads {
		a, err := tl.Session().Regs(th.Tid)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fresh.Session().Regs(th.Tid)
		if err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Errorf("thread %d: registers differ through a checkpoint:\n%x\n%x", th.Tid, a, b)
		}
	}
	continueToExit(t, tl)
}

// TestCheckpointsSharedMemory: checkpoints share the replay's shared memory
// (a memfd mapped twice, written with pwrite) with the live process, and
// clones skip memory marked MADV_WIPEONFORK or MADV_DONTFORK. A moment
// reached through a restored checkpoint has every readable mapping as a
// fresh replay has it, and the replay goes on to the end from there.
func TestCheckpointsSharedMemory(t *testing.T) {
	trace := recordBench(t, "sharedloop", "1500", "200000", "4")
	tl, fresh, target := viaCheckpoint(t, trace, 1, 2)
	maps, err := tl.Session().Mappings()
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for _, m := range maps {
		if m.Perms[0] != 'r' || m.Path == "[vvar]" || m.Path == "[vvar_vclock]" || m.Path == "[vsyscall]" {
			continue
		}
		if m.Perms[3] == 's' {
			shared++
		}
		a, errA := tl.Session().ReadMem(m.Start, int(m.End-m.Start))
		b, errB := fresh.Session().ReadMem(m.Start, int(m.End-m.Start))
		if errA != nil || errB != nil {
			t.Errorf("%#x-%#x %s: %v / %v", m.Start, m.End, m.Path, errA, errB)
			continue
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%#x-%#x %s %s differs between the checkpoint route and a fresh replay", m.Start, m.End, m.Perms, m.Path)
		}
	}
	if shared != 2 {
		t.Errorf("%d shared mappings at %v, want the memfd's 2", shared, target)
	}
	continueToExit(t, tl)
}

// TestCheckpointsInsideSegment: a counter written 10000 times in one
// segment (no system call); going back write by write from the end takes
// checkpoints inside the segment and restarts from them, and every write it
// stops at is the one a replay without checkpoints reaches at that moment,
// with the same registers and value.
func TestCheckpointsInsideSegment(t *testing.T) {
	prog, trace := recordC(t, "watchbp.c", []string{"-O1", "-no-pie"}, "10000")
	w := replay.Watchpoint{Addr: testprog.Symbol(t, prog, "counter"), Len: 8}
	done, after := testprog.Symbol(t, prog, "done"), testprog.Symbol(t, prog, "after")
	open := func(budget int64) *timeline.Timeline {
		tl, err := timeline.Open(trace, budget, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tl.Close)
		if err := tl.SetWatchpoints([]replay.Watchpoint{w}); err != nil {
			t.Fatal(err)
		}
		// Breakpoints at two functions the segment reaches after the
		// loop: arrival counting does not order their hits and the
		// writes, so this search traps.
		if err := tl.SetBreakpoints([]uint64{done, after}); err != nil {
			t.Fatal(err)
		}
		return tl
	}
	tl, fresh := open(64<<20), open(0)
	if err := tl.Goto(tl.End()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []uint64{after, done} {
		if st, err := tl.ReverseContinue(); err != nil || st.Reason != timeline.ReasonBreakpoint || rip(t, tl) != want {
			t.Fatalf("back to %+v (%v), want the breakpoint at %#x", st, err, want)
		}
	}
	for want := uint64(10000); want > 9997; want-- {
		st, err := tl.ReverseContinue()
		if err != nil {
			t.Fatal(err)
		}
		if st.Reason != timeline.ReasonWatchpoint || st.New != want || st.Old != want-1 {
			t.Fatalf("back to %+v, want the write of %d", st, want)
		}
		regs, err := tl.Session().Regs(st.Moment.Tid)
		if err != nil {
			t.Fatal(err)
		}
		if err := fresh.Goto(st.Moment); err != nil {
			t.Fatal(err)
		}
		regs2, err := fresh.Session().Regs(st.Moment.Tid)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(regs, regs2) {
			t.Fatalf("at %v: registers %v through checkpoints, %v from the start", st.Moment, regs, regs2)
		}
	}
	if tl.InnerCheckpoints() == 0 {
		t.Errorf("no checkpoint was taken inside the segment of 10000 writes")
	}

	// Those checkpoints count in the memory budget.
	const small = 256 << 10
	tight := open(small)
	if err := tight.Goto(tight.End()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := tight.ReverseContinue(); err != nil {
			t.Fatal(err)
		}
		if mem, n := tight.CheckpointMemory(); mem > small {
			t.Fatalf("%d checkpoints use %d bytes, over the budget of %d", n, mem, small)
		}
	}
}

// TestReverseContinueThroughCheckpoints: reverse-continue visits, newest
// first, every breakpoint hit that continue found, also when checkpoints
// stand exactly at those hits (taken at every chance here; a loaded
// machine takes them wherever its clock says). One standing at the hit
// before the crash made reverse-continue skip that hit.
func TestReverseContinueThroughCheckpoints(t *testing.T) {
	defer timeline.SetCheckpointEvery(0)()
	prog, trace := recordC(t, "crash.c", []string{"-O0", "-no-pie"})
	sum := testprog.Symbol(t, prog, "sum")
	tl, err := timeline.Open(trace, 64<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	if err := tl.SetBreakpoints([]uint64{sum}); err != nil {
		t.Fatal(err)
	}
	var hits []timeline.Moment
	for {
		st, err := tl.Continue()
		if err != nil {
			t.Fatal(err)
		}
		if st.Reason != timeline.ReasonBreakpoint {
			break
		}
		hits = append(hits, st.Moment)
	}
	if len(hits) < 2 {
		t.Fatalf("continue found %d hits of sum, want at least 2", len(hits))
	}
	for i := len(hits) - 1; i >= 0; i-- {
		st, err := tl.ReverseContinue()
		if err != nil {
			t.Fatal(err)
		}
		if st.Reason != timeline.ReasonBreakpoint || st.Moment != hits[i] {
			t.Fatalf("reverse-continue %d: %v at %v, want the breakpoint hit at %v", len(hits)-i, st.Reason, st.Moment, hits[i])
		}
	}
	if st, err := tl.ReverseContinue(); err != nil || st.Reason != timeline.ReasonStart {
		t.Fatalf("reverse-continue before the first hit: %+v, %v; want the start", st, err)
	}
}
