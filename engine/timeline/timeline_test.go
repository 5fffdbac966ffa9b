package timeline_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

func TestMain(m *testing.M) {
	ptrace.MaybeRunHelper()
	os.Exit(m.Run())
}

// recordLongrun records testdata/bench/longrun.c with the given sizes.
func recordLongrun(t testing.TB, calls, work string) string {
	t.Helper()
	dir := t.TempDir()
	prog := filepath.Join(dir, "longrun")
	if msg, err := exec.Command("gcc", "-O1", "-o", prog, "../../testdata/bench/longrun.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	null, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	defer null.Close()
	out := filepath.Join(dir, "t.rwd")
	if _, err := record.Record(record.Options{Path: prog, Args: []string{prog, calls, work}, Env: os.Environ(), Dir: dir,
		Output: out, Warn: io.Discard, Stdin: null, Stdout: null, Stderr: null}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckpointsSameState: a moment reached through a restored checkpoint
// has the registers and memory a fresh replay from the start gives; the
// checkpoints stay within their budget.
func TestCheckpointsSameState(t *testing.T) {
	trace := recordLongrun(t, "3000", "200000")
	const budget = 64 << 20
	tl, err := timeline.Open(trace, budget)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	if err := tl.Goto(tl.End()); err != nil {
		t.Fatal(err)
	}
	mem, n := tl.CheckpointMemory()
	if n == 0 {
		t.Fatalf("no checkpoint taken over a %d-event replay", tl.Index().Total())
	}
	if mem > budget {
		t.Errorf("checkpoints use %d bytes, over the %d budget", mem, budget)
	}
	if _, err := tl.ReverseStepInstruction(); err != nil {
		t.Fatal(err)
	}
	at := tl.Now()
	tid := at.Tid
	regs, err := tl.Session().Regs(tid)
	if err != nil {
		t.Fatal(err)
	}
	stack, _ := tl.Session().ReadMem(regs[19]-256, 512) // around rsp
	t.Logf("reverse-stepi from the end to %v with %d checkpoints (%d KiB)", at, n, mem>>10)

	fresh, err := timeline.Open(trace, 0) // no checkpoints
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

// TestCheckpointBudgetZeroMemory: a tiny budget keeps (almost) nothing.
func TestCheckpointTinyBudget(t *testing.T) {
	trace := recordLongrun(t, "3000", "200000")
	const budget = 1 << 20
	tl, err := timeline.Open(trace, budget)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	if err := tl.Goto(tl.End()); err != nil {
		t.Fatal(err)
	}
	if mem, _ := tl.CheckpointMemory(); mem > budget {
		t.Errorf("checkpoints use %d bytes, over the %d budget", mem, budget)
	}
	if _, err := tl.ReverseStepInstruction(); err != nil {
		t.Fatal(err)
	}
}
