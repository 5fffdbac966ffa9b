package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recordTwice records a testdata program twice, returning the traces.
func recordTwice(t *testing.T, src string) (a, b string) {
	t.Helper()
	prog := buildC(t, src)
	dir := t.TempDir()
	a, b = filepath.Join(dir, "a.rwd"), filepath.Join(dir, "b.rwd")
	for _, tr := range []string{a, b} {
		mustRecord(t, tr, prog)
	}
	return a, b
}

// diffSide is one side of the first difference.
type diffSide struct {
	Event    int64  `json:"event"`
	Text     string `json:"text"`
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Stack    []struct {
		PC       string `json:"pc"`
		Function string `json:"function"`
	} `json:"stack"`
}

// diffReport is the part of `rewind diff --json` the tests read.
type diffReport struct {
	A, B struct {
		Trace   string `json:"trace"`
		Program string `json:"program"`
		Events  int64  `json:"events"`
	}
	Same  bool `json:"same"`
	First *struct {
		Category string `json:"category"`
		What     string `json:"what"`
		Process  int    `json:"process"`
		Thread   int    `json:"thread"`
		A, B     *diffSide
	} `json:"first"`
	Differences []struct {
		Category string `json:"category"`
		Name     string `json:"name"`
		Count    int    `json:"count"`
		FirstA   int64  `json:"first_a"`
		FirstB   int64  `json:"first_b"`
	} `json:"differences"`
}

// diffJSON runs rewind diff --json and decodes its report.
func diffJSON(t *testing.T, a, b string, wantCode int) diffReport {
	t.Helper()
	r := run(t, runOpts{}, rewind(t), "diff", "--json", a, b)
	if r.Code != wantCode {
		t.Fatalf("diff: exit %d, want %d: %s", r.Code, wantCode, r.Stderr)
	}
	var rep diffReport
	if err := json.Unmarshal(r.Stdout, &rep); err != nil {
		t.Fatalf("diff --json: %v\n%s", err, r.Stdout)
	}
	return rep
}

// TestDiffTimeAndRandom is issue 25's measure: two recordings of a program
// that reads the time and random numbers part at those calls first, each
// side placed at the program's line.
func TestDiffTimeAndRandom(t *testing.T) {
	a, b := recordTwice(t, "nondet.c")
	rep := diffJSON(t, a, b, 1)
	if rep.Same || rep.First == nil {
		t.Fatalf("no difference found: %+v", rep)
	}
	f := rep.First
	if f.Category != "random" && f.Category != "time" {
		t.Errorf("first difference is %s (%s), want a time or random read", f.Category, f.What)
	}
	for _, s := range []*diffSide{f.A, f.B} {
		if s == nil {
			t.Fatal("a side of the first difference is missing")
		}
		if !strings.HasPrefix(s.Text, "getrandom(") && !strings.HasPrefix(s.Text, "clock_gettime(") {
			t.Errorf("first difference at %q, want the program's getrandom or clock_gettime", s.Text)
		}
		if s.File != "nondet.c" || s.Function != "main" || s.Line == 0 || len(s.Stack) < 2 {
			t.Errorf("side placed at %s:%d in %s with %d frames, want nondet.c in main", s.File, s.Line, s.Function, len(s.Stack))
		}
	}
	// The time and random reads lead the summary, before what they caused.
	var cats []string
	for _, d := range rep.Differences {
		cats = append(cats, d.Category+" "+d.Name)
	}
	for _, want := range []string{"random getrandom", "time clock_gettime", "time gettimeofday"} {
		if !slices.Contains(cats, want) {
			t.Errorf("summary %v lacks %q", cats, want)
		}
	}
	for i, c := range cats[:2] {
		if !strings.HasPrefix(c, "random ") && !strings.HasPrefix(c, "time ") {
			t.Errorf("summary line %d is %q, want a time or random read first: %v", i, c, cats)
		}
	}

	// For people: the same, one side above the other, or side by side.
	for _, cols := range []string{"", "160"} {
		r := run(t, runOpts{Env: []string{"COLUMNS=" + cols}}, rewind(t), "diff", a, b)
		out := string(r.Stdout)
		if r.Code != 1 || !strings.Contains(out, "First difference ("+f.Category+")") ||
			!strings.Contains(out, "nondet.c:") || !strings.Contains(out, "What differs") {
			t.Errorf("COLUMNS=%q: exit %d, output:\n%s%s", cols, r.Code, out, r.Stderr)
		}
		if sideBySide := strings.Contains(out, " │ "); sideBySide != (cols != "") {
			t.Errorf("COLUMNS=%q: side by side %v:\n%s", cols, sideBySide, out)
		}
	}
}

// TestDiffSame: two recordings of a deterministic program do not differ.
func TestDiffSame(t *testing.T) {
	a, b := recordTwice(t, "counter.c")
	rep := diffJSON(t, a, b, 0)
	if !rep.Same || rep.First != nil || len(rep.Differences) != 0 {
		t.Errorf("deterministic program: %+v", rep)
	}
	if rep.A.Events == 0 || rep.A.Program == "" || rep.B.Trace != b {
		t.Errorf("recordings described as %+v %+v", rep.A, rep.B)
	}
	r := run(t, runOpts{}, rewind(t), "diff", a, b)
	if r.Code != 0 || !strings.Contains(string(r.Stdout), "no difference") {
		t.Errorf("exit %d, output:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestDiffBadInput: what cannot be compared gets one line and status 2.
func TestDiffBadInput(t *testing.T) {
	a, _ := recordTwice(t, "counter.c")
	other := recorded(t, "exit3.c", 3)
	notTrace := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notTrace, []byte("not a trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"replay --diff of another program", []string{"replay", "--diff", other, a}, "not recordings of the same program"},
		{"replay --diff and --check", []string{"replay", "--diff", a, "--check", a}, "choose one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, runOpts{}, rewind(t), tc.args...)
			msg := strings.TrimRight(string(r.Stderr), "\n")
			if r.Code == 0 || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "panic") {
				t.Errorf("exit %d, stderr %q; want one line with %q", r.Code, msg, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"different programs", a, other, "not recordings of the same program"},
		{"missing file", a, filepath.Join(t.TempDir(), "nope.rwd"), "no such file"},
		{"not a trace", notTrace, a, "not a rewind trace"},
		{"no arguments", a, "", "accepts 2 arg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"diff", tc.a}
			if tc.b != "" {
				args = append(args, tc.b)
			}
			r := run(t, runOpts{}, rewind(t), args...)
			msg := strings.TrimRight(string(r.Stderr), "\n")
			if r.Code == 0 || r.Code == 1 && tc.b != "" || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) ||
				strings.Contains(msg, "panic") || len(r.Stdout) != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want one line with %q", r.Code, msg, r.Stdout, tc.want)
			}
		})
	}
}

// childSide is what TestDiffChildProcess reads of a side.
type childSide struct {
	Command    string `json:"command"`
	Moment     string `json:"moment"`
	Stack      []any  `json:"stack"`
	StackError string `json:"stack_error"`
}

// TestDiffChildProcess: where a child process parts, the difference is
// its, with its stack (found by replaying that process, not the first).
func TestDiffChildProcess(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir() // the shell stats its directory: one left alone
	a, b := filepath.Join(dir, "a.rwd"), filepath.Join(dir, "b.rwd")
	for _, tr := range []string{a, b} {
		if r := recordOpts(t, runOpts{Dir: cwd}, tr, "/bin/sh", "-c", "date +%N; true"); r.Code != 0 {
			t.Fatalf("record: exit %d: %s", r.Code, r.Stderr)
		}
	}
	var rep struct {
		First *struct {
			Category string `json:"category"`
			Process  int    `json:"process"`
			A, B     childSide
		} `json:"first"`
	}
	r := run(t, runOpts{}, rewind(t), "diff", "--json", a, b)
	if err := json.Unmarshal(r.Stdout, &rep); err != nil || r.Code != 1 || rep.First == nil {
		t.Fatalf("exit %d, %v: %s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	f := rep.First
	if f.Category != "time" || f.Process < 2 {
		t.Errorf("first difference %s in process %d, want date's time read in a child", f.Category, f.Process)
	}
	for _, s := range []childSide{f.A, f.B} {
		if !strings.HasPrefix(s.Command, "date") || len(s.Stack) == 0 || s.StackError != "" || !strings.HasPrefix(s.Moment, "#") {
			t.Errorf("side %+v, want date's, with a stack", s)
		}
	}
}

// TestDiffTUI opens rewind replay --diff A B in a terminal: B where it
// leaves A, A's event beside the panes, :diff hiding it.
func TestDiffTUI(t *testing.T) {
	a, b := recordTwice(t, "nondet.c")
	s := newTmux(t, 160, 48, []string{"HOME=" + t.TempDir()}, "replay", "--diff", a, b)
	screen := s.waitFor(`(?s)A: a\.rwd #\d+.*(random|time): .*A #\d+ +(getrandom|clock_gettime)\(.*#\d+/\d+ .*thread`)
	if !strings.Contains(screen, "diff: this is b.rwd where it leaves a.rwd") {
		t.Errorf("no note in the Console:\n%s", screen)
	}
	s.command("diff", `A's side hidden`)
	if screen := s.capture(false); strings.Contains(screen, "A: a.rwd #") {
		t.Errorf("A's side still shown:\n%s", screen)
	}
	s.quit()
}
