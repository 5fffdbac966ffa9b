package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
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
)

// normalize removes what legitimately differs: $N numbering, directories
// in "at FILE:LINE", trailing spaces.
func normalize(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.HasPrefix(l, "Run till exit from ") || strings.Contains(l, "breakpoint already hit") {
			continue // gdb batch mode does not print the first; rewind counts no hits
		}
		l = valueNumber.ReplaceAllString(l, "")
		l = atPath.ReplaceAllString(l, " at $1")
		l = moment.ReplaceAllString(l, "") // rewind's own: where in the recording
		l = quotedPath.ReplaceAllString(l, `"$1"`)
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

func TestCompareWithGDBAtCrash(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not installed")
	}
	prog := buildC(t, "source/corrupt.c")
	trace := filepath.Join(t.TempDir(), "c.rwd")
	record(t, trace, prog)
	compareWithGDB(t, prog, trace, []string{"run"}, []string{"continue"}, []string{
		"bt", "print head", "print *head", "print head->next->name", "print n", "print/x total",
		"up", "info locals", "print *a", "print a->name[0]", "print b->next == c", "print sizeof(*a)",
		"print (long)&b->next - (long)b", "print *a->next", "down", "info args", "info line", "info line corrupt.c:16", "x/3i $pc",
	})
}

func TestCompareWithGDBAtBreakpoint(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not installed")
	}
	prog := buildCXX(t, "source/templates.cpp")
	trace := filepath.Join(t.TempDir(), "t.rwd")
	record(t, trace, prog)
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
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not installed")
	}
	prog := buildC(t, "source/types.c")
	trace := filepath.Join(t.TempDir(), "t.rwd")
	record(t, trace, prog)
	pre := []string{"break types.c:48"}
	compareWithGDB(t, prog, trace, append(pre, "run"), append(pre, "continue"), []string{
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
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not installed")
	}
	prog := buildC(t, "source/inline.c")
	trace := filepath.Join(t.TempDir(), "i.rwd")
	record(t, trace, prog)
	compareWithGDB(t, prog, trace, []string{"break inline.c:7", "run"}, []string{"break inline.c:7", "continue"}, []string{
		"bt", "print v", "info locals", "up", "print v", "info locals", "up", "info args", "down 2", "finish",
	})
}

func TestCompareWithGDBStepping(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not installed")
	}
	prog := buildC(t, "source/steps.c")
	trace := filepath.Join(t.TempDir(), "s.rwd")
	record(t, trace, prog)
	compareWithGDB(t, prog, trace, []string{"break square", "run"}, []string{"break square", "continue"}, []string{
		"bt", "next", "info locals", "finish", "next", "step", "print a + b", "finish", "until", "until",
		"print/x total", "print/c 65", "print/d 'A'", "list steps.c:5,7", "info breakpoints",
	})
}
