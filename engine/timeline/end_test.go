package timeline_test

import (
	"errors"
	"testing"

	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

// TestEndIsTheExit: continue runs to the exiting thread's exit_group
// instruction, also when the program makes no system call before it (all
// of main in the last segment): stepi says the recording ends there, the
// instruction before it is named near it (stepping from before main took
// minutes), and reverse-continue from there finds the last call of add,
// also outside the last segment (printed before the exit: a counted search
// that found nothing to count there went on from the exit instead of the
// segment's start, and missed the moment).
func TestEndIsTheExit(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"output", nil},
		{"no system call in main", []string{"-DQUIET"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			prog, tr := recordC(t, "source/ends.c", append([]string{"-O0", "-no-pie", "-pthread"}, c.flags...))
			tl, err := timeline.Open(tr, 64<<20, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer tl.Close()
			end := tl.End()
			st, err := tl.Continue()
			if err != nil {
				t.Fatal(err)
			}
			if st.Reason != timeline.ReasonExit || st.Moment != end || end.Hits != 1 {
				t.Fatalf("continue: %v at %v, want the exit at the end %v, an arrival at its instruction", st.Reason, st.Moment, end)
			}
			if rip := rip(t, tl); rip != end.PC {
				t.Fatalf("at the end, pc %#x, want the exit_group instruction %#x", rip, end.PC)
			}
			if _, err := tl.StepInstruction(); !errors.Is(err, timeline.ErrAtEnd) {
				t.Fatalf("stepi at the end: %v, want %v", err, timeline.ErrAtEnd)
			}
			back, err := tl.ReverseStepInstruction()
			if err != nil {
				t.Fatal(err)
			}
			if back.Moment.Steps > 100 || rip(t, tl) == end.PC {
				t.Errorf("reverse-stepi from the end: %v, want the instruction before, named near it", back.Moment)
			}
			if _, err := tl.StepInstruction(); err != nil || rip(t, tl) != end.PC {
				t.Errorf("stepi after reverse-stepi: %v at %#x, want the end's %#x", err, rip(t, tl), end.PC)
			}
			if err := tl.Goto(end); err != nil {
				t.Fatal(err)
			}
			add := testprog.Symbol(t, prog, "add")
			if err := tl.SetBreakpoints([]uint64{add}); err != nil {
				t.Fatal(err)
			}
			hit, err := tl.ReverseContinue()
			if err != nil {
				t.Fatal(err)
			}
			if hit.Reason != timeline.ReasonBreakpoint || hit.Moment.PC != add {
				t.Fatalf("reverse-continue from the end: %v at %v, want add's last call", hit.Reason, hit.Moment)
			}
			// add(42): its argument is in rdi at the entry.
			regs, err := tl.Session().Regs(hit.Moment.Tid)
			if err != nil {
				t.Fatal(err)
			}
			if regs[trace.RDI] != 42 {
				t.Errorf("reverse-continue from the end: add(%d), want its last call, add(42)", regs[trace.RDI])
			}
		})
	}
}
