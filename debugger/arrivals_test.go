package debugger

import (
	"path/filepath"
	"testing"

	"github.com/rewind-debugger/rewind/internal/testprog"
)

var stepsTrace = testprog.Once(filepath.Join("..", "testdata", "source", "steps.c"))

// TestArrivalsPastBreakpoints: a line's next and previous arrivals are
// found across the user's breakpoints on the way (an editor's goto
// targets with breakpoints set: Emacs's dap-mode found none).
func TestArrivalsPastBreakpoints(t *testing.T) {
	// As an editor sets them: before the first line of main.
	s := openRecorded(t, stepsTrace, "break 21", "break square if x == 3", "start")
	earlier, later, err := s.Arrivals("steps.c:23")
	if err != nil || earlier != nil || later == nil {
		t.Fatalf("arrivals at 23 from 18: earlier %+v, later %+v, %v; want a later one only", earlier, later, err)
	}
	mustRun(t, s, "goto "+later.Moment)
	earlier, later, err = s.Arrivals("steps.c:18")
	if err != nil || earlier == nil || later != nil {
		t.Fatalf("arrivals at 18 from 23: earlier %+v, later %+v, %v; want an earlier one only", earlier, later, err)
	}
}
