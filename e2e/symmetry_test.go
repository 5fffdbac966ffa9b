package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The symmetry check (issue 22): from a stop, a motion made N times and
// its reverse made N times must visit the same stops in reverse order and
// end where they started. A stop is compared by what a user sees of it
// (thread, pc, function, line) and by its registers' word on the stack
// (rsp): landing on the same line in another call, or in the previous
// iteration of a loop, is a different stop.

// symmetryCase is a program, where to start, and the motions to check.
type symmetryCase struct {
	name  string
	build func(t *testing.T) string // returns the program
	start []string                  // commands that reach the first stop
	// motions: forward command, its reverse, how many times.
	motions []symmetryMotion
}

type symmetryMotion struct {
	fwd, rev string
	n        int
}

// stopKey is what must be equal at the same stop reached both ways.
func stopKey(r map[string]any) string {
	st, _ := r["stop"].(map[string]any)
	if st == nil {
		return fmt.Sprintf("no stop (%v)", r["error"])
	}
	return fmt.Sprintf("%v %v %v:%v", st["thread"], st["pc"], st["function"], st["line"])
}

// checkSymmetry runs each motion n times forwards and n times backwards
// from the same start, in one batch session per motion, and compares.
func checkSymmetry(t *testing.T, trace string, start []string, m symmetryMotion) {
	t.Helper()
	cmds := append([]string{}, start...)
	// After each motion, the stack pointer: the same pc in another
	// frame (a recursive or repeated call) is another stop.
	for i := 0; i < m.n; i++ {
		cmds = append(cmds, m.fwd, "print/x $sp")
	}
	for i := 0; i < m.n; i++ {
		cmds = append(cmds, m.rev, "print/x $sp")
	}
	rs := batch(t, trace, cmds...)
	rs = rs[len(start)-1:] // the last start command's stop first
	key := func(i int) string {
		k := stopKey(rs[i])
		if i > 0 {
			k += " sp " + valueNumber.ReplaceAllString(field(rs[i+1], "text"), "")
		}
		return k
	}
	// Stops 0 (start), then forward stops at 1, 3, 5, …; reverse ones
	// after them.
	var fwd, rev []string
	fwd = append(fwd, stopKey(rs[0])) // the start: its sp is not asked (below)
	for i := 0; i < m.n; i++ {
		j := 1 + 2*i
		if rs[j]["ok"] != true {
			t.Fatalf("%s #%d: %v", m.fwd, i+1, rs[j]["error"])
		}
		fwd = append(fwd, key(j))
	}
	for i := 0; i < m.n; i++ {
		j := 1 + 2*m.n + 2*i
		if rs[j]["ok"] != true {
			t.Fatalf("%s #%d: %v", m.rev, i+1, rs[j]["error"])
		}
		rev = append(rev, key(j))
	}
	bad := 0
	for i := 0; i < m.n; i++ {
		want := fwd[m.n-1-i]
		got := rev[i]
		if i == m.n-1 {
			// Back at the start: compare what the start's stop says.
			got = got[:strings.Index(got+" sp ", " sp ")]
		}
		if got != want {
			bad++
			if bad <= 5 {
				t.Errorf("%s #%d lands at %s; %s #%d stopped at %s", m.rev, i+1, got, m.fwd, m.n-1-i, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s/%s: %d of %d stops differ; forward stops:\n%s", m.fwd, m.rev, bad, m.n, strings.Join(fwd, "\n"))
	}
}

// TestSymmetry checks step, next and stepi against their reverses on C
// at -O0 (functions returning into the middle of a line and at a row's
// start, a loop of calls, one-line functions, the segment that ends with
// the exit), step, next and stepi at -O2 (a loop of calls, inlined
// calls), and
// step and next on C++.
func TestSymmetry(t *testing.T) {
	t.Parallel()
	cases := []symmetryCase{
		{"stepout-O0", func(t *testing.T) string { return buildC(t, "source/stepout.c") }, []string{"break g", "continue"},
			[]symmetryMotion{{"step", "reverse-step", 36}, {"next", "reverse-next", 10}, {"stepi", "reverse-stepi", 30}}},
		{"calls-O2", func(t *testing.T) string { return buildC(t, "source/calls.c", "-O2") }, []string{"break work", "continue"},
			[]symmetryMotion{{"step", "reverse-step", 12}, {"stepi", "reverse-stepi", 30}}},
		// next is symmetric where it stays in its frame: a next that
		// leaves a function comes back over the call backwards.
		{"calls-O2-main", func(t *testing.T) string { return buildC(t, "source/calls.c", "-O2") }, []string{"break main", "continue"},
			[]symmetryMotion{{"next", "reverse-next", 14}}},
		{"inline-O2", func(t *testing.T) string { return buildC(t, "source/inline.c", "-O2") }, []string{"break main", "continue"},
			[]symmetryMotion{{"step", "reverse-step", 12}}},
		{"templates-C++", func(t *testing.T) string { return buildCXX(t, "source/templates.cpp") }, []string{"break main", "continue"},
			[]symmetryMotion{{"step", "reverse-step", 12}, {"next", "reverse-next", 6}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			prog := c.build(t)
			trace := filepath.Join(t.TempDir(), "t.rwd")
			record(t, trace, prog)
			for _, m := range c.motions {
				t.Run(m.fwd, func(t *testing.T) { checkSymmetry(t, trace, c.start, m) })
			}
		})
	}
}
