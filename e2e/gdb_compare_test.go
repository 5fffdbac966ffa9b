package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The same commands, asked of gdb on a live run of the program (no
// recording) and of rewind on a recording of it, must give the same
// answers: values, frames, lines.

// gdbAnswers runs gdb in batch mode and returns one output block per
// command (the commands after the first `pre` ones, which only get gdb to
// the place).
func gdbAnswers(t *testing.T, prog string, pre, cmds []string) []string {
	t.Helper()
	// The inferior must see the environment rewind's recording saw, or
	// stack addresses differ: no shell, no LINES/COLUMNS from gdb.
	args := []string{"-nx", "-batch", "-ex", "set pagination off", "-ex", "set width 0",
		"-ex", "set startup-with-shell off", "-ex", "unset environment LINES", "-ex", "unset environment COLUMNS"}
	for _, c := range pre {
		args = append(args, "-ex", c)
	}
	for _, c := range cmds {
		args = append(args, "-ex", "echo <<<\\n", "-ex", c)
	}
	args = append(args, "-ex", "echo <<<\\n", "-ex", "kill", prog)
	out, _ := exec.Command("gdb", args...).CombinedOutput()
	parts := strings.Split(string(out), "<<<\n")
	if len(parts) < len(cmds)+2 {
		t.Fatalf("gdb output:\n%s", out)
	}
	return parts[1 : len(cmds)+1]
}

var (
	valueNumber = regexp.MustCompile(`^\$\d+ = `)
	atPath      = regexp.MustCompile(` at [^ ]*/([^/ :]+:\d+)`)
	moment      = regexp.MustCompile(` \[#\d+, thread \d+\]`)
	quotedPath  = regexp.MustCompile(`"[^" ]*/([^/" ]+)"`)
	filePath    = regexp.MustCompile(`: file [^ ]*/([^/ ,]+),`)
)

// normalize removes what legitimately differs: $N numbering, directories
// in "at FILE:LINE", trailing spaces.
func normalize(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.HasPrefix(l, "Run till exit from ") || strings.HasPrefix(l, "Run back to call of ") || strings.HasPrefix(l, "Will ignore next ") ||
			strings.HasPrefix(l, "Not stopped at any breakpoint") || l == "(More stack frames follow...)" {
			continue // gdb says these at a terminal only, not in batch mode
		}
		l = valueNumber.ReplaceAllString(l, "")
		l = atPath.ReplaceAllString(l, " at $1")
		l = moment.ReplaceAllString(l, "") // rewind's own: where in the recording
		l = quotedPath.ReplaceAllString(l, `"$1"`)
		l = filePath.ReplaceAllString(l, ": file $1,") // break's answer
		out = append(out, strings.TrimRight(l, " "))
	}
	return strings.Join(out, "\n")
}

func compareWithGDB(t *testing.T, prog, trace string, gdbPre, rewindPre, cmds []string) {
	t.Helper()
	want := gdbAnswers(t, prog, gdbPre, cmds)
	rs := batch(t, trace, append(append([]string{}, rewindPre...), cmds...)...)
	rs = rs[len(rewindPre):]
	for i, c := range cmds {
		got := normalize(field(rs[i], "text"))
		if rs[i]["ok"] != true {
			got = normalize(field(rs[i], "error"))
		}
		if w := normalize(want[i]); got != w {
			t.Errorf("%s:\n gdb:    %q\n rewind: %q", c, w, got)
		}
	}
}

// compareC records testdata's C program src and compares gdb's answers to
// cmds with rewind's, both stopped first at the breakpoints pre.
func compareC(t *testing.T, src string, pre, cmds []string) {
	t.Helper()
	compareCBuilt(t, src, nil, pre, cmds)
}

// compareCBuilt is compareC for a program built with flags added.
func compareCBuilt(t *testing.T, src string, flags, pre, cmds []string) {
	t.Helper()
	prog, trace := recordedC(t, src, flags...)
	gdbPre := append(append([]string{}, pre...), "run")
	rewindPre := append(append([]string{}, pre...), "continue")
	compareWithGDB(t, prog, trace, gdbPre, rewindPre, cmds)
}

// recordedForGDB builds a program with build and records it, for a
// comparison with gdb: skipped without gdb, before anything is built.
func recordedForGDB(t *testing.T, build func() string) (prog, trace string) {
	t.Helper()
	need(t, "gdb")
	prog = build()
	trace = filepath.Join(t.TempDir(), "t.rwd")
	record(t, trace, prog)
	return prog, trace
}

// recordedC builds testdata's C program src with flags added and records
// it, for a comparison with gdb (skipped without gdb).
func recordedC(t *testing.T, src string, flags ...string) (prog, trace string) {
	t.Helper()
	return recordedForGDB(t, func() string { return buildC(t, src, flags...) })
}

func TestCompareWithGDBAtCrash(t *testing.T) {
	t.Parallel()
	prog, trace := recordedC(t, "source/corrupt.c")
	compareWithGDB(t, prog, trace, []string{"run"}, []string{"continue"}, []string{
		"bt", "print head", "print *head", "print head->next->name", "print n", "print/x total",
		"up", "info locals", "print *a", "print a->name[0]", "print b->next == c", "print sizeof(*a)",
		"print (long)&b->next - (long)b", "print *a->next", "down", "info args", "info line", "info line corrupt.c:16", "x/3i $pc",
	})
}

func TestCompareWithGDBAtBreakpoint(t *testing.T) {
	t.Parallel()
	prog, trace := recordedForGDB(t, func() string { return buildCXX(t, "source/templates.cpp") })
	pre := []string{"break templates.cpp:11", "run"}
	compareWithGDB(t, prog, trace, pre, []string{"break templates.cpp:11", "continue"}, []string{
		"print r", "print a * b", "up 2", "print name", "print v", "print sq", "print sq.side + sq.id",
		"print ref", "info locals",
	})
}

// TestCompareWithGDBTypes: ptype and whatis of variables, expressions and
// type names, and functions as values (print f, &f, *f, x/i f, libc's).
func TestCompareWithGDBTypes(t *testing.T) {
	t.Parallel()
	compareC(t, "source/types.c", []string{"break types.c:48"}, []string{
		"ptype n", "whatis n", "ptype p", "whatis p", "ptype node_t", "whatis node_t", "ptype struct node",
		"whatis struct node *", "ptype c", "whatis c", "ptype enum color", "ptype an", "ptype an.u", "ptype f",
		"whatis f", "ptype cmp_fn", "ptype s", "whatis s", "ptype grid", "whatis grid[0]", "ptype names",
		"ptype v", "ptype int", "ptype unsigned long", "whatis 1+2", "whatis p->next", "ptype n.name",
		"ptype compare", "whatis compare", "ptype sum", "ptype main",
		"print compare", "print &compare", "print *compare", "print f", "print compare == f", "print sum",
		"x/2i compare", "x/2xg compare", "info line compare", "ptype nosuch", "whatis struct nosuch",
		"output n.value", "output/x n.value", "print $", "output *p",
	})
}

func TestCompareWithGDBInlined(t *testing.T) {
	t.Parallel()
	compareC(t, "source/inline.c", []string{"break inline.c:7"}, []string{
		"bt", "print v", "info locals", "info frame", "up", "print v", "info locals", "up", "info args", "down 2", "finish",
	})
}

func TestCompareWithGDBStepping(t *testing.T) {
	t.Parallel()
	compareC(t, "source/steps.c", []string{"break square"}, []string{
		"bt", "next", "info locals", "finish", "next", "step", "print a + b", "finish", "until", "until",
		"print/x total", "print/c 65", "print/d 'A'", "list steps.c:5,7", "info breakpoints",
	})
}

// TestCompareWithGDBHabits: gdb's answers to what a user types without
// thinking: `continue N` where no breakpoint stopped (said, and continued),
// how often a breakpoint was hit (ignored crossings too), `output` (no
// line end), `list -` back through the file, the convenience variables
// gdb sets ($bpnum, $_hit_bpnum, $_hit_locno) (issue 22).
func TestCompareWithGDBHabits(t *testing.T) {
	t.Parallel()
	compareC(t, "source/calls.c", []string{"break work"}, []string{
		"next", "continue 3", "print a", "info breakpoints", "ignore 1 2", "continue", "print a",
		"info breakpoints", "output a", "output b", "list -", "list -", "list", "list -",
		"print $bpnum", "print $_hit_bpnum", "print $_hit_locno", "watch total", "print $bpnum",
	})
}

// TestCompareWithGDBFinishPointers: finish out of functions that return a
// void *, a struct pointer and a string prints the value as gdb does (the
// pointer's type first, not for a string) (issue 22).
func TestCompareWithGDBFinishPointers(t *testing.T) {
	t.Parallel()
	compareC(t, "source/returns.c", []string{"break raw", "break mk", "break name"}, []string{
		"finish", "continue", "finish", "continue", "finish",
	})
}

// TestCompareWithGDBOptimized: at -O2, a breakpoint on a function whose
// code starts with inlined calls, its arguments with their entry values
// (r=r@entry=…, read from the caller's call site), the arguments of the
// inlined call step enters (bound only in an empty range of their
// location lists, see TestCompareWithGDBLocationViews), main's argument
// kept in an SSE register (issue 22).
func TestCompareWithGDBOptimized(t *testing.T) {
	t.Parallel()
	compareCBuilt(t, "source/inlinestart.c", []string{"-O2"}, []string{"break column_double"}, []string{
		"bt", "info breakpoints", "step", "bt", "info args", "up 2", "print argc",
	})
}

// TestCompareWithGDBNextThroughBreakpoints: next over calls with
// breakpoints in them, at -O0 and -O2 (where g's breakpoint is its first
// instruction): a conditional breakpoint stops the next when it holds, a
// breakpoint's ignore count is spent by the hits a next runs through, and
// a next that ends on a breakpoint's line reports that breakpoint's hit
// and counts it (issue 22).
func TestCompareWithGDBNextThroughBreakpoints(t *testing.T) {
	t.Parallel()
	nexts := func(n int) []string { return slices.Repeat([]string{"next"}, n) }
	for _, o := range []string{"-O0", "-O2"} {
		for _, tc := range []struct {
			name string
			pre  []string
			cmds []string
		}{
			{"condition", []string{"break main"}, append([]string{"break g if i == 3"}, append(nexts(10), "bt", "info breakpoints")...)},
			{"ignore", []string{"break main"}, append([]string{"break g", "ignore 2 3"}, append(nexts(10), "bt", "info breakpoints")...)},
			{"line", []string{"break 13"}, append([]string{"break h if i == 3", "break 14", "ignore 3 2"}, append(nexts(12), "bt", "info breakpoints")...)},
		} {
			t.Run(o+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				compareCBuilt(t, "source/nextbreak.c", []string{o}, tc.pre, tc.cmds)
			})
		}
	}
}

// TestCompareWithGDBLocationViews: at -O2 the arguments of a call inlined
// at its caller's first instruction have there only location list entries
// with an empty address range (gcc's location views): gdb takes such an
// entry as valid at the entry pc of the function it is in, so a
// breakpoint on the inlined function, or a step into it from its caller's
// entry, shows their values, in info args, bt, print and their entry
// values (key=key@entry=1), where an empty range holds nowhere else; from
// .debug_loclists (DWARF 5) and .debug_loc (DWARF 4).
func TestCompareWithGDBLocationViews(t *testing.T) {
	t.Parallel()
	need(t, "gdb")
	tests := []struct {
		name              string
		gdbPre, rewindPre []string
		cmds              []string
	}{
		{"breakpoint", []string{"break probe", "run"}, []string{"break probe", "continue"}, []string{
			"info args", "bt", "print key", "print t", "print t->slot[key & 15]", "print *t",
			"up", "info args", "down", "continue", "info args", "bt 1",
		}},
		{"step", []string{"break lookup", "run"}, []string{"break lookup", "continue"}, []string{
			"bt", "step", "bt", "info args", "print key", "info frame", "up", "info args",
			"continue", "step", "info args", "print key * 2",
		}},
		// probe's code is in two pieces: stepping out of the first into
		// lookup's own code and then into the second enters probe again
		// (stopping first at its call site, on another line than the
		// one stepped), and settle's second piece is entered from
		// lookup's frame, which the step moved to on the way.
		{"split inlined calls", []string{"break lookup", "run"}, []string{"break lookup", "continue"}, []string{
			"step", "step", "bt", "step", "bt", "step", "bt", "step", "bt", "step", "bt",
		}},
	}
	for _, version := range []string{"-gdwarf-5", "-gdwarf-4"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			prog := buildC(t, "source/locviews.c", "-O2", version)
			trace := filepath.Join(t.TempDir(), "t.rwd")
			record(t, trace, prog)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) { compareWithGDB(t, prog, trace, tc.gdbPre, tc.rewindPre, tc.cmds) })
			}
		})
	}
}

// TestCompareWithGDBFinishValues: finish prints what a function returns
// wherever the ABI puts it (two integer registers, SSE and integer ones
// mixed, memory for a big struct), at -O0 and -O2, where a float
// argument's entry value shows too (issue 22).
func TestCompareWithGDBFinishValues(t *testing.T) {
	t.Parallel()
	var cmds []string
	for i := 0; i < 6; i++ {
		cmds = append(cmds, "finish")
		if i < 5 {
			cmds = append(cmds, "continue") // (the last would run to the exit)
		}
	}
	for _, o := range []string{"-O0", "-O2"} {
		t.Run(o, func(t *testing.T) {
			t.Parallel()
			compareCBuilt(t, "source/retval.c", []string{o}, []string{"break mk2", "break mkm", "break mkb", "break mkf", "break mks", "break dbl"}, cmds)
		})
	}
}

// TestCompareWithGDBNextOntoBreakpoint: at -O2 a breakpoint on a function
// is on its first instruction (no prologue); next over a call of it
// stops there, hit, as gdb says.
func TestCompareWithGDBNextOntoBreakpoint(t *testing.T) {
	t.Parallel()
	compareCBuilt(t, "source/calls.c", []string{"-O2"}, []string{"break work"}, []string{
		"next", "next", "next", "next", "next", "next", "next", "next", "next", "next", "next", "next", "info breakpoints",
	})
}

// TestCompareWithGDBImplicitPointer: at -O2 the pointers inlined helpers
// take to main's locals are implicit (DW_OP_implicit_pointer): they print
// as gdb's <synthetic pointer> (in bt and info args too), compute as 0, and
// dereference to their target: a register, a constant, a struct in
// pieces; an offset past the target is gdb's error (issue 22).
func TestCompareWithGDBImplicitPointer(t *testing.T) {
	t.Parallel()
	compareCBuilt(t, "source/implicitptr.c", []string{"-O2"},
		[]string{"break implicitptr.c:27", "break implicitptr.c:33", "break implicitptr.c:39"}, []string{
			"bt", "info args", "print p", "print *p", "print p[0]", "print p[1]", "print p+1", "print/x p",
			"print p == 0", "print *p * k",
			"continue", "info args", "print *p", "print *(p+1)", "print (char*)p", "print *(char*)p",
			"continue", "bt", "print *q", "print q->y", "print q[0].x", "print/x *q", "print q", "print &q->y",
			"whatis *q", "print sizeof(*q)",
		})
}

// TestCompareWithGDBSiginfo: at a signal stop $_siginfo is the recorded
// siginfo, with gdb's type: a SIGSEGV at 0x1234 (which a handler
// survives), then the SIGABRT of abort(); its sender's pid differs from
// gdb's run to the recording, so only the rest is compared (issue 22).
func TestCompareWithGDBSiginfo(t *testing.T) {
	t.Parallel()
	prog, trace := recordedC(t, "source/signals.c")
	compareWithGDB(t, prog, trace, []string{"run"}, []string{"continue"}, []string{
		"ptype $_siginfo", "whatis $_siginfo", "print $_siginfo", "print $_siginfo.si_signo",
		"print $_siginfo._sifields._sigfault.si_addr", "print/x $_siginfo.si_code", "print $_siginfo._sifields._sigfault",
		"ptype $_siginfo._sifields", "whatis $_siginfo._sifields._sigfault.si_addr", "up", "print $_siginfo.si_errno",
		"print $_siginfo.nosuch", "print &$_siginfo",
	})
	compareWithGDB(t, prog, trace, []string{"run", "continue"}, []string{"continue", "continue"}, []string{
		"print $_siginfo.si_signo", "print $_siginfo.si_code", "print $_siginfo._sifields._kill.si_uid",
		"whatis $_siginfo._sifields._kill.si_pid", "ptype $_siginfo._sifields._kill",
	})
}

// TestCompareWithGDBInlinedOnly: at -O2, break on a function that exists
// only inlined sets a location in each call (1.1, 1.2, …), each stop shows
// the inlined function with its arguments, and info frame describes an
// inlined frame and the frames around it (saved registers, gdb's frame
// base) (issue 22).
func TestCompareWithGDBInlinedOnly(t *testing.T) {
	t.Parallel()
	compareCBuilt(t, "source/inlineonly.c", []string{"-O2"}, []string{"break mix"}, []string{
		"info breakpoints", "bt", "info frame", "up", "info frame", "up", "info frame",
		"continue", "bt", "info frame", "print $_hit_locno", "continue", "bt", "info breakpoints",
	})
}

// TestCompareWithGDBFinishInlined: finish out of an inlined call whose
// code ends where the next inlined call starts stops in the caller at the
// line of that call (also where the calls begin with empty address
// ranges), or at a breakpoint on it, as a step onto it; up and bt after
// it; reverse-finish out of an inlined call goes back to where it
// starts, shown in the caller (gdb records the run to go back) (issue 22).
func TestCompareWithGDBFinishInlined(t *testing.T) {
	t.Parallel()
	prog, trace := recordedC(t, "source/inlineonly.c", "-O2")
	tests := []struct {
		name              string
		gdbPre, rewindPre []string
		cmds              []string
	}{
		{"next call", []string{"break main", "run", "record", "tbreak work", "continue"},
			[]string{"break main", "continue", "tbreak work", "continue"}, []string{
				"step", "bt", "finish", "bt", "info frame", "up", "info frame", "down", "step", "bt",
				"reverse-finish", "bt", "print $pc", "step", "next", "reverse-finish", "bt", "print $pc",
			}},
		{"empty ranges", []string{"break first", "run"}, []string{"break first", "continue"}, []string{
			"finish", "bt", "step", "bt", "stepi", "stepi", "finish", "bt",
		}},
		{"onto a breakpoint", []string{"break first", "break second", "run"}, []string{"break first", "break second", "continue"},
			[]string{"finish", "bt", "finish", "bt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { compareWithGDB(t, prog, trace, tc.gdbPre, tc.rewindPre, tc.cmds) })
	}
}

// recordedRust builds testdata's Rust program src with debug information
// and records it, for a comparison with gdb (skipped without gdb).
func recordedRust(t *testing.T, src string) (prog, trace string) {
	t.Helper()
	return recordedForGDB(t, func() string { return buildRust(t, src) })
}

// TestCompareWithGDBRustNames: Rust functions are named as gdb names them
// from DWARF, the scopes of a function joined with "::" and its own name
// with its generic arguments: a closure names::main::{closure#0}, a
// method names::Counter::bump, a trait method names::{impl#1}::area, a
// generic names::largest<u32>, core's functions the iterators run
// (core::iter::adapters::map::map_fold::{closure#0}<u64, …>), in stops,
// bt, info frame, info breakpoints, finish and step; `break` takes these
// names. A &mut self (any Rust reference or pointer) is an address in
// frame lines and info args, (*mut T) 0x… to print, and self.total
// reaches through it.
func TestCompareWithGDBRustNames(t *testing.T) {
	t.Parallel()
	prog, trace := recordedRust(t, "rust/names.rs")
	tests := []struct {
		name string
		pre  []string
		cmds []string
	}{
		{"closure and method", []string{"break names::main::{closure#0}", "break names::Counter::bump"}, []string{
			"bt", "bt 2", "info args", "print x", "info frame", "finish",
			"continue", "bt 2", "info args", "print self", "print self.total", "print self.steps + 1", "print/x self",
			"whatis self", "ptype self", "output self", "print &self", "print *&self", "info frame", "up", "print &c",
			"print c.total", "down", "print names::Counter::bump", "whatis names::Counter::bump",
			"print &names::Counter::bump", "finish", "info breakpoints",
		}},
		{"step into them", []string{"break names.rs:50"}, []string{
			"step", "bt 2", "finish", "step", "info args", "print self.total", "finish",
		}},
		{"through core's iterators", []string{"break names::main::{closure#1}"}, []string{
			"bt 6", "info args", "print v", "info frame", "info breakpoints",
		}},
		// Line 52's second location is where an inlined wrapping_mul
		// starts in the closure: named, and stopped in, as the closure
		// at line 52.
		{"line where an inlined call starts", []string{"break names.rs:52"}, []string{
			"bt 2", "info breakpoints", "continue", "bt 2", "continue", "bt 2",
		}},
		{"generic and trait method", []string{"break names::largest<u32>", "break names::{impl#1}::area"}, []string{
			"bt 1", "print items[1]", "whatis items", "finish", "continue", "bt 1", "info args", "print self",
			"print self.w * self.h", "finish", "info breakpoints",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			compareWithGDB(t, prog, trace, append(tc.pre, "run"), append(tc.pre, "continue"), tc.cmds)
		})
	}
}
