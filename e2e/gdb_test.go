package e2e

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"
)

// gdbPidRE matches the process ids gdb prints, which differ from run to run.
var gdbPidRE = regexp.MustCompile(`process \d+`)

// TestRecordGDB records gdb debugging a small program: gdb traces it (the
// program's own ptrace, emulated by the recorder) and, in each session,
// stops at a breakpoint, steps (next, step, stepi, finish: single steps and
// breakpoints stepped over), catches a system call (PTRACE_SYSCALL stops),
// watches a variable (debug registers), calls a function of the program
// (its registers and FPU state set and restored), prints variables and a
// backtrace, and runs the program to its end. gdb's
// output under rewind record must be its native output, process ids
// aside, with no warning from rewind, and `replay --check` must replay it.
func TestRecordGDB(t *testing.T) {
	need(t, "gdb")
	t.Parallel()
	rewind(t)
	prog := buildC(t, "gdbinferior.c")
	for _, tc := range []struct {
		name string
		cmds []string
		// want: what gdb must print natively, so that the comparison is
		// about a session that worked.
		want []string
	}{
		{"steps", []string{"break square", "run", "next", "print y", "print x", "bt", "info registers rip",
			"finish", "print total", "stepi", "step", "step", "print x", "delete", "continue"},
			[]string{"Breakpoint 1, square (x=1)", "$1 = 1", "#1  0x", "Value returned is $3 = 1", "square (x=2)"}},
		{"watch", []string{"break main", "run", "watch total", "continue", "continue", "delete", "continue"},
			[]string{"Hardware watchpoint 2: total", "Old value = 0", "New value = 1"}},
		{"catch", []string{"catch syscall write", "run", "continue", "delete", "continue"},
			[]string{"(call to syscall write)", "(returned from syscall write)", "total 14"}},
		{"call", []string{"break main", "run", "next", "print square(5)", "set var total = 5", "delete", "continue"},
			[]string{"$1 = 25", "total 19"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// gdb's worker threads (parallel DWARF indexing) stay on:
			// with them, a recording once hung (a SIGCHLD for gdb held
			// and never sent again, issue 21).
			args := []string{"-nx", "-batch"}
			for _, c := range tc.cmds {
				args = append(args, "-ex", c)
			}
			args = append(args, prog)
			recordGDB(t, args, append(tc.want, "exited normally"))
		})
	}
}

// recordGDB runs gdb with args natively and under record, compares its
// outputs and replays the trace.
func recordGDB(t *testing.T, args, want []string) {
	native := run(t, runOpts{}, "gdb", args...)
	if native.Code != 0 {
		t.Fatalf("native gdb exited %d\nstdout:\n%s\nstderr:\n%s", native.Code, tail(native.Stdout), tail(native.Stderr))
	}
	for _, w := range want {
		if !bytes.Contains(native.Stdout, []byte(w)) {
			t.Fatalf("native gdb's output lacks %q:\n%s", w, native.Stdout)
		}
	}

	trace := filepath.Join(t.TempDir(), "gdb.rwd")
	r := recordOpts(t, runOpts{}, trace, "gdb", args...)
	if r.Code != native.Code {
		t.Fatalf("record exited %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, native.Code, tail(r.Stdout), tail(r.Stderr))
	}
	events, progStderr := checkRecorded(t, r.Stderr, trace, "")
	if bytes.Contains(progStderr, []byte("rewind:")) {
		t.Errorf("record warned:\n%s", tail(progStderr))
	}
	unpid := func(b []byte) []byte { return gdbPidRE.ReplaceAll(b, []byte("process N")) }
	if got, want := unpid(r.Stdout), unpid(native.Stdout); !bytes.Equal(got, want) {
		t.Errorf("gdb's stdout under record differs from its native stdout: %s", firstDiff(want, got))
	}
	if got, want := unpid(progStderr), unpid(native.Stderr); !bytes.Equal(got, want) {
		t.Errorf("gdb's stderr under record differs from its native stderr: %s", firstDiff(want, got))
	}

	stdout, stderr, code := replayCheck(t, trace)
	if code != 0 {
		logDivergence(t, trace, stderr)
	}
	checkReplayed(t, events, r.Stdout, progStderr, stdout, stderr, code)
}
