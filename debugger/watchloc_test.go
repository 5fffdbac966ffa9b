package debugger

import (
	"path/filepath"
	"testing"

	"github.com/rewind-debugger/rewind/internal/testprog"
)

// cursorTrace is the recording of cursor.c: a heap cursor whose typedef,
// enum and anonymous-struct fields are written in a loop.
var cursorTrace = testprog.Once(filepath.Join("..", "testdata", "source", "cursor.c"))

// openCursor opens cursor.c's recording and runs lines in it, each of
// which must succeed.
func openCursor(t *testing.T, lines ...string) *Session {
	t.Helper()
	return openRecorded(t, cursorTrace, lines...)
}

// openRecorded opens a recording made once for the package's tests and
// runs lines in it, each of which must succeed.
func openRecorded(t *testing.T, recorded func() (string, error), lines ...string) *Session {
	t.Helper()
	trace, err := recorded()
	if err != nil {
		t.Skip(err)
	}
	s, err := Open(trace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	for _, line := range lines {
		mustRun(t, s, line)
	}
	return s
}

// mustRun runs a command that must succeed.
func mustRun(t *testing.T, s *Session, line string) Result {
	t.Helper()
	r := s.Execute(line)
	if !r.OK {
		t.Fatalf("%s: %s", line, r.Error)
	}
	return r
}

// stopMoment is the moment a motion stopped at, which must be a write of
// the watchpoint.
func stopMoment(t *testing.T, r Result) string {
	t.Helper()
	if r.Stop == nil || r.Stop.Reason != "watchpoint" || r.Stop.Watch == nil {
		t.Fatalf("%s: stopped at %+v, want a watchpoint", r.Command, r.Stop)
	}
	return r.Stop.Moment
}

// TestWatchLocationReopens: a watch -l made inside moveto (where pCur
// exists) is saved in the session file in a form that watches the same
// bytes anywhere, and reopening the recording at a moment where pCur does
// not exist, nor the heap it points into, sets it up again under the
// user's expression: continue and reverse-continue stop at the same writes
// as in the first session. It was saved as the expression, or as a cast
// the session evaluated by reading the memory, and failed to reopen with
// `No symbol "pCur" in current context` or `Cannot access memory`.
func TestWatchLocationReopens(t *testing.T) {
	tests := []struct {
		name, expr string
		// reopen is where the second session restores the file ("": the
		// first event, in the loader).
		reopen string
	}{
		{"typedef", "pCur->eState", ""},
		{"enum", "pCur->st", "start"},
		{"anonymous struct", "pCur->pt", ""},
		{"typedef of 8 bytes", "pCur->nKey", "start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// In moveto's second call.
			s := openCursor(t, "break moveto", "continue", "continue", "delete")
			call := s.Snapshot().Moment
			mustRun(t, s, "watch -l "+tt.expr)
			first := stopMoment(t, mustRun(t, s, "continue"))
			second := stopMoment(t, mustRun(t, s, "continue"))
			if back := stopMoment(t, mustRun(t, s, "reverse-continue")); back != first {
				t.Fatalf("reverse-continue from %s stopped at %s, want %s", second, back, first)
			}
			var f SessionFile
			f.SetStops(nil, s.Snapshot().Watches, nil)
			dir := t.TempDir()
			t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
			copyTrace := filepath.Join(dir, "t.rwd")
			if _, err := f.Save(copyTrace); err != nil {
				t.Fatal(err)
			}
			back, err := LoadSessionFile(copyTrace)
			if err != nil {
				t.Fatal(err)
			}

			var r *Session
			if tt.reopen != "" {
				r = openCursor(t, tt.reopen)
			} else {
				r = openCursor(t)
			}
			if n, _, problems := r.Restore(back); n != 1 || len(problems) > 0 {
				t.Fatalf("restored %d of %+v: %v", n, back.Watchpoints, problems)
			}
			ws := r.Snapshot().Watches
			if len(ws) != 1 || ws[0].Expr != tt.expr || ws[0].Location != back.Watchpoints[0].Location {
				t.Fatalf("reopened watchpoints %+v, want %s at %s", ws, tt.expr, back.Watchpoints[0].Location)
			}
			mustRun(t, r, "goto "+call)
			if got := stopMoment(t, mustRun(t, r, "continue")); got != first {
				t.Errorf("reopened, continue from %s stopped at %s, want %s", call, got, first)
			}
			if got := stopMoment(t, mustRun(t, r, "continue")); got != second {
				t.Errorf("reopened, continue from %s stopped at %s, want %s", first, got, second)
			}
			if got := stopMoment(t, mustRun(t, r, "reverse-continue")); got != first {
				t.Errorf("reopened, reverse-continue from %s stopped at %s, want %s", second, got, first)
			}
			// Saved again, it is the same.
			var again SessionFile
			again.SetStops(nil, ws, nil)
			if again.Watchpoints[0] != back.Watchpoints[0] {
				t.Errorf("saved again as %+v, want %+v", again.Watchpoints[0], back.Watchpoints[0])
			}
		})
	}
}
