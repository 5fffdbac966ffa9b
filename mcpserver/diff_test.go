package mcpserver

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/internal/testprog"
	"github.com/rewind-debugger/rewind/tracediff"
)

// TestDiffTraces compares recordings as an agent would: two runs of a
// program that reads the time and random numbers part at those reads; a
// recording agrees with itself; another program's is refused.
func TestDiffTraces(t *testing.T) {
	src := filepath.Join("..", "testdata", "nondet.c")
	a, b := testprog.RecordCT(t, src, nil), testprog.RecordCT(t, src, nil)
	cs := connect(t, a)

	rep := decode[tracediff.Report](t, call(t, cs, toolDiffTraces, map[string]any{"other": b}))
	if rep.Same || rep.First == nil {
		t.Fatalf("no difference between two runs of nondet.c: %+v", rep)
	}
	if c := rep.First.Category; c != tracediff.CatRandom && c != tracediff.CatTime {
		t.Errorf("first difference %s (%s), want a time or random read", c, rep.First.What)
	}
	if s := rep.First.A; s == nil || s.File != "nondet.c" || s.Function != "main" {
		t.Errorf("A's side %+v, want placed in nondet.c's main", s)
	}

	res := call(t, cs, toolDiffTraces, map[string]any{"other": a, "no_stacks": true})
	if same := decode[tracediff.Report](t, res); !same.Same || same.First != nil {
		t.Errorf("a recording differs from itself: %+v", same)
	}
	if !strings.Contains(text(res), "no difference") {
		t.Errorf("text %q", text(res))
	}

	res = call(t, cs, toolDiffTraces, map[string]any{"other": traceOf(t)})
	if !res.IsError || !strings.Contains(text(res), "not recordings of the same program") {
		t.Errorf("another program: error %v, %q", res.IsError, text(res))
	}
}
