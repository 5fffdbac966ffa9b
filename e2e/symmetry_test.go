package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The symmetry check (issue 22): from a stop, a motion made N times and
// its reverse made N times must visit the same stops in reverse order and
// end where they started. A stop is compared by what a user sees of it
// (thread, pc, function, line) and by its registers' word on the stack
// (rsp): landing on the same line in another call, or in the previous
// iteration of a loop, is a different stop.

// symmetryCase is a program, where to start, and the motions to check.
type symmetryCase struct {
	name string
	// build returns the program and its arguments, made to run scale
	// times longer where the case's motions scale (see symmetryScale).
	build func(t *testing.T, scale int) (string, []string)
	start []string // commands that reach the first stop
	// motions: forward command, its reverse, how many times.
	motions []symmetryMotion
	// finish, when not 0, is how many finish/reverse-finish pairs to
	// check from start (at most the stack's depth).
	finish int
	// scales says the program grows with the scale, so its motions can.
	scales bool
}

type symmetryMotion struct {
	fwd, rev string
	n        int
}

// stopKey is what must be equal at the same stop reached both ways: a
// watchpoint's stop also by the change it reports (a reverse-continue
// stops just after the write, as the forward one, and says the same).
func stopKey(r map[string]any) string {
	st, _ := r["stop"].(map[string]any)
	if st == nil {
		return fmt.Sprintf("no stop (%v)", r["error"])
	}
	k := fmt.Sprintf("%v %v %v:%v", st["thread"], st["pc"], st["function"], st["line"])
	if w, ok := st["watch"].(map[string]any); ok {
		k += fmt.Sprintf(" %v: %v -> %v", w["expr"], w["old"], w["new"])
	}
	return k
}

// symmetryScale multiplies every motion count: bench/symmetry.sh sets
// REWIND_SYMMETRY_SCALE to check thousands of motions per program by hand;
// the suite runs the counts written here.
func symmetryScale(t *testing.T) int {
	v := os.Getenv("REWIND_SYMMETRY_SCALE")
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("REWIND_SYMMETRY_SCALE=%q: want a positive number", v)
	}
	return n
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
	// Scaled up by hand (bench/symmetry.sh), one batch makes thousands
	// of motions.
	rs := batchWith(t, runOpts{Timeout: time.Duration(symmetryScale(t)) * cmdTimeout}, trace, cmds...)
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

// checkFinishSymmetry checks finish against reverse-finish: from the same
// stop, the k-th finish and the k-th reverse-finish must stop in the same
// frame (function, sp), the first on the return address of the call the
// second stops on (the instruction after it). n is at most the depth of
// the stack below main.
func checkFinishSymmetry(t *testing.T, trace string, start []string, n int) {
	t.Helper()
	frameKey := func(rs []map[string]any, i int) (key string, pc uint64) {
		st, _ := rs[i]["stop"].(map[string]any)
		if rs[i]["ok"] != true || st == nil {
			t.Fatalf("%v: %v", rs[i]["command"], rs[i]["error"])
		}
		pc, _ = strconv.ParseUint(strings.TrimPrefix(fmt.Sprint(st["pc"]), "0x"), 16, 64)
		return fmt.Sprintf("%v %v sp %s", st["thread"], st["function"],
			valueNumber.ReplaceAllString(field(rs[i+1], "text"), "")), pc
	}
	var fwd, rev []string
	// Without breakpoints: a finish stops at one, as in gdb.
	start = append(append([]string{}, start...), "delete")
	cmds := append([]string{}, start...)
	for i := 0; i < n; i++ {
		cmds = append(cmds, "finish", "print/x $sp")
	}
	rs := batch(t, trace, cmds...)[len(start):]
	var back []uint64 // where each finish returned to
	for i := 0; i < n; i++ {
		k, pc := frameKey(rs, 2*i)
		fwd = append(fwd, k)
		back = append(back, pc)
	}
	cmds = append([]string{}, start...)
	for i := 0; i < n; i++ {
		cmds = append(cmds, "reverse-finish", "print/x $sp", "x/2i $pc")
	}
	rs = batch(t, trace, cmds...)[len(start):]
	for i := 0; i < n; i++ {
		k, _ := frameKey(rs, 3*i)
		rev = append(rev, k)
		// x/2i: the call, then the instruction it returns to.
		next := ""
		if insns, _ := rs[3*i+2]["value"].([]any); len(insns) == 2 {
			if m, ok := insns[1].(map[string]any); ok {
				next = fmt.Sprint(m["address"])
			}
		}
		if next != fmt.Sprintf("0x%x", back[i]) {
			t.Errorf("reverse-finish #%d stops on\n%s\nwhose next instruction is not 0x%x, where finish #%d returned",
				i+1, field(rs[3*i+2], "text"), back[i], i+1)
		}
		if rev[i] != fwd[i] {
			t.Errorf("reverse-finish #%d stops in %s; finish #%d in %s", i+1, rev[i], i+1, fwd[i])
		}
	}
}

// fixed builds a program whose run does not grow with the scale.
func fixed(build func(t *testing.T) string) func(*testing.T, int) (string, []string) {
	return func(t *testing.T, _ int) (string, []string) { return build(t), nil }
}

// symmC builds testdata/source/symm.c with flags, scale times 40 rounds.
func symmC(flags ...string) func(*testing.T, int) (string, []string) {
	return func(t *testing.T, scale int) (string, []string) {
		return buildC(t, "source/symm.c", append([]string{fmt.Sprintf("-DROUNDS=%d", 40*scale)}, flags...)...), nil
	}
}

// scaledArgs builds a program that runs longer with more arguments.
func scaledArgs(build func(t *testing.T) string) func(*testing.T, int) (string, []string) {
	return func(t *testing.T, scale int) (string, []string) {
		return build(t), strings.Fields(strings.Repeat("x ", scale-1))
	}
}

// TestSymmetry checks step, next, stepi, finish, and continue with
// breakpoints and watchpoints against their reverses: C at -O0 (functions
// returning into the middle of a line and at a row's start, one-line
// functions, the segment that ends with the exit, recursion) and -O2 (a
// loop of calls, inlined calls, recursion), C++, Rust and Go.
func TestSymmetry(t *testing.T) {
	t.Parallel()
	symmMotions := []symmetryMotion{{"step", "reverse-step", 24}, {"stepi", "reverse-stepi", 24}}
	cases := []symmetryCase{
		{name: "stepout-O0", build: fixed(func(t *testing.T) string { return buildC(t, "source/stepout.c") }), start: []string{"break g", "continue"},
			motions: []symmetryMotion{{"step", "reverse-step", 36}, {"next", "reverse-next", 10}, {"stepi", "reverse-stepi", 30}}},
		{name: "calls-O2", build: func(t *testing.T, scale int) (string, []string) {
			return buildC(t, "source/calls.c", "-O2", fmt.Sprintf("-DCALLS=%d", 10*scale)), nil
		}, start: []string{"break work", "continue"}, scales: true,
			motions: []symmetryMotion{{"step", "reverse-step", 12}, {"stepi", "reverse-stepi", 30}}},
		// next is symmetric where it stays in its frame: a next that
		// leaves a function comes back over the call backwards.
		{name: "calls-O2-main", build: func(t *testing.T, scale int) (string, []string) {
			return buildC(t, "source/calls.c", "-O2", fmt.Sprintf("-DCALLS=%d", 10*scale)), nil
		}, start: []string{"break main", "continue"}, scales: true,
			motions: []symmetryMotion{{"next", "reverse-next", 14}}},
		{name: "inline-O2", build: fixed(func(t *testing.T) string { return buildC(t, "source/inline.c", "-O2") }), start: []string{"break main", "continue"},
			motions: []symmetryMotion{{"step", "reverse-step", 12}}},
		{name: "templates-C++", build: fixed(func(t *testing.T) string { return buildCXX(t, "source/templates.cpp") }), start: []string{"break main", "continue"},
			motions: []symmetryMotion{{"step", "reverse-step", 12}, {"next", "reverse-next", 6}}},
	}
	// Recursion at -O0 and -O2: the stepping motions from the deepest
	// call, finish pairs up to main, next in main, continue to a
	// conditional breakpoint, to a watchpoint, and to both.
	for _, o := range []string{"-O0", "-O2"} {
		cases = append(cases,
			symmetryCase{name: "symm" + o, build: symmC(o), start: []string{"break depth if n == 0", "continue"}, scales: true,
				motions: append(symmMotions, symmetryMotion{"continue", "reverse-continue", 8})},
			symmetryCase{name: "symm" + o + "-finish", build: symmC(o), start: []string{"break depth if n == 0", "continue", "continue 5"}, finish: 7},
			symmetryCase{name: "symm" + o + "-main", build: symmC(o), start: []string{"break main", "continue"}, scales: true,
				motions: []symmetryMotion{{"next", "reverse-next", 12}}},
			symmetryCase{name: "symm" + o + "-watch", build: symmC(o), start: []string{"watch total", "continue"}, scales: true,
				motions: []symmetryMotion{{"continue", "reverse-continue", 12}}},
			symmetryCase{name: "symm" + o + "-watch-break", build: symmC(o), start: []string{"break depth if n == 3", "watch total", "continue"}, scales: true,
				motions: []symmetryMotion{{"continue", "reverse-continue", 12}}},
		)
	}
	cases = append(cases,
		symmetryCase{name: "rust", build: scaledArgs(func(t *testing.T) string { return buildRust(t, "rust/symm.rs") }),
			start: []string{"break symm::depth", "continue", "continue 5"}, scales: true, motions: symmMotions, finish: 3},
		symmetryCase{name: "rust-main", build: scaledArgs(func(t *testing.T) string { return buildRust(t, "rust/symm.rs") }),
			start: []string{"break symm::main", "continue"}, scales: true, motions: []symmetryMotion{{"next", "reverse-next", 12}}},
		symmetryCase{name: "go", build: scaledArgs(func(t *testing.T) string { return buildGo(t, "symm") }),
			start: []string{"break main.depth", "continue", "continue 5"}, scales: true, motions: symmMotions, finish: 3},
		symmetryCase{name: "go-main", build: scaledArgs(func(t *testing.T) string { return buildGo(t, "symm") }),
			start: []string{"break main.main", "continue"}, scales: true, motions: []symmetryMotion{{"next", "reverse-next", 12}}},
	)
	scale := symmetryScale(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := 1
			if c.scales {
				s = scale
			}
			prog, args := c.build(t, s)
			trace := filepath.Join(t.TempDir(), "t.rwd")
			record(t, trace, prog, args...)
			for _, m := range c.motions {
				m.n *= s
				t.Run(m.fwd, func(t *testing.T) { checkSymmetry(t, trace, c.start, m) })
			}
			if c.finish > 0 {
				t.Run("finish", func(t *testing.T) { checkFinishSymmetry(t, trace, c.start, c.finish) })
			}
		})
	}
}
