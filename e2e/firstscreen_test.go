package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The first screen (issue 12.2), the Timeline's folding and filters and
// the Processes pane (12.4), the session file (12.5).

// buildRust compiles a Rust test program, or skips without rustc.
func buildRust(t *testing.T, src string) string {
	t.Helper()
	need(t, "rustc")
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".rs"))
	if b, err := exec.Command("rustc", "-g", "-o", out, srcPath(src)).CombinedOutput(); err != nil {
		t.Fatalf("rustc %s: %v\n%s", src, err, b)
	}
	return out
}

// focus presses Tab until the pane titled title has the focus (its frame
// drawn heavy), one press at a time: keys sent at once can reach the UI
// in one read.
func (s *tmuxSession) focus(title string) {
	s.t.Helper()
	for range 20 {
		screen := s.capture(false)
		if strings.Contains(screen, "┏━ "+title) {
			return
		}
		s.keys("Tab")
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && s.capture(false) == screen {
			time.Sleep(20 * time.Millisecond)
		}
	}
	s.t.Fatalf("Tab never focused %s:\n%s", title, s.capture(false))
}

// idle waits until no operation runs (the status bar shows the moment,
// not a progress): the Watch pane lists a new watchpoint's writes with an
// operation of its own, and a command typed meanwhile is refused.
func (s *tmuxSession) idle() {
	s.t.Helper()
	s.waitFor(`(?m)^ #\d+/\d+ \d+% · thread`)
}

// TestStartReachesMain: start goes forward from the beginning of the
// recording to the first line of the user's main in each language (Rust's
// fn main of the crate, not the C main std makes; Go's main.main), with
// that frame selected, and goto start still reaches the loader before it.
func TestStartReachesMain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		build func(t *testing.T) string
		fn    string
		file  string
		// line is main's first line: where its definition starts, up
		// to the first statement.
		lo, hi int
	}{
		{"C", func(t *testing.T) string { return buildC(t, "source/corrupt.c") }, "main", "corrupt.c", 28, 30},
		{"C++", func(t *testing.T) string { return buildCXX(t, "cxx.cpp") }, "main", "cxx.cpp", 27, 28},
		{"Go", func(t *testing.T) string { return buildGo(t, "locals") }, "main.main", "main.go", 19, 20},
		{"Rust", func(t *testing.T) string { return buildRust(t, "rust/panic.rs") }, "panic::main", "panic.rs", 7, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prog := tt.build(t)
			trace := filepath.Join(t.TempDir(), "t.rwd")
			recordOpts(t, runOpts{}, trace, prog)
			res := batch(t, trace, "start", "frame", "goto start", "when")
			if len(res) != 4 || res[0]["ok"] != true {
				t.Fatalf("start: %v", res)
			}
			fr, _ := res[1]["value"].(map[string]any)
			line, _ := fr["line"].(float64)
			if fr["function"] != tt.fn || fr["file"] != tt.file || int(line) < tt.lo || int(line) > tt.hi {
				t.Errorf("start selected %v, want %s at %s:%d-%d", fr, tt.fn, tt.file, tt.lo, tt.hi)
			}
			stop, _ := res[0]["stop"].(map[string]any)
			mainAt, _ := stop["event"].(float64)
			start, _ := res[3]["event"].(float64)
			if !(start < mainAt) {
				t.Errorf("goto start is at #%v, not before main's #%v", start, mainAt)
			}
		})
	}
}

// TestStartStopsAtBreakpointsBeforeMain: as gdb's start, breakpoints met
// before main stop it (in a constructor here), a conditional one only where
// its condition holds.
func TestStartStopsAtBreakpointsBeforeMain(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "ctor.c")
	trace := filepath.Join(t.TempDir(), "t.rwd")
	recordOpts(t, runOpts{}, trace, prog)
	for _, c := range []struct {
		bp, want string
	}{{"break hook if n == 3", "3"}, {"break hook", "1"}} {
		res := batch(t, trace, c.bp, "start", "print n")
		if len(res) != 3 || res[1]["ok"] != true {
			t.Fatalf("%s, start: %v", c.bp, res)
		}
		stop, _ := res[1]["stop"].(map[string]any)
		if stop["reason"] != "breakpoint" || res[2]["value"] != c.want {
			t.Errorf("%s, start: stopped %v with n = %v, want the breakpoint with n = %v", c.bp, stop, res[2]["value"], c.want)
		}
	}
}

// TestStartInProcessTree: in a recording of a process tree, start is main
// of the debugged process: after the exec of a child that ran the program
// again, and a forked child that never runs main says so.
func TestStartInProcessTree(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "conformance/proctree.c")
	trace := filepath.Join(t.TempDir(), "proctree.rwd")
	recordOpts(t, runOpts{}, trace, prog)
	var again, crashed int32
	for _, r := range rewindPs(t, trace) {
		switch {
		case len(r.Args) == 2 && r.Args[1] == "again":
			again = r.Pid
		case strings.HasPrefix(r.Exit, "SIGSEGV"):
			crashed = r.Pid
		}
	}
	if again == 0 || crashed == 0 {
		t.Fatalf("no re-exec'd or crashed child in %v", rewindPs(t, trace))
	}
	out := run(t, runOpts{}, rewind(t), "replay", "-p", itoa(again), "--batch", "-ex", "start", "-ex", "print argc", trace)
	if !strings.Contains(string(out.Stdout), "Stopped at the first line of main") || !strings.Contains(string(out.Stdout), "$1 = 2") {
		t.Errorf("start in the re-exec'd child:\n%s%s", out.Stdout, out.Stderr)
	}
	out = run(t, runOpts{}, rewind(t), "replay", "-p", itoa(crashed), "--batch", "-ex", "start", trace)
	if !strings.Contains(string(out.Stdout), "never runs the first line of main") || !strings.Contains(string(out.Stdout), "SIGSEGV") {
		t.Errorf("start in the forked child that crashes:\n%s%s", out.Stdout, out.Stderr)
	}
}

// TestTUIFirstScreen: the UI opens on the source of main with its first
// line highlighted as the current one, in C and Go, at 160x48 and 80x24,
// and says where it stopped; the Timeline folds the loader's events.
func TestTUIFirstScreen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, line string
		w, h            int
	}{
		{"C 160x48", "source/corrupt.c", `=> +30 .*struct node \*c = calloc`, 160, 48},
		{"C 80x24", "source/corrupt.c", `=> +30 .*struct node \*c = calloc`, 80, 24},
		{"Go 160x48", "go:locals", `=> +19 .*func main\(\) \{`, 160, 48},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var prog string
			if dir, ok := strings.CutPrefix(tt.src, "go:"); ok {
				prog = buildGo(t, dir)
			} else {
				prog = buildC(t, tt.src)
			}
			trace := filepath.Join(t.TempDir(), "t.rwd")
			recordOpts(t, runOpts{}, trace, prog)
			s := newTmux(t, tt.w, tt.h, []string{"HOME=" + t.TempDir()}, "replay", trace)
			s.waitFor(tt.line)
			if tt.w >= 160 {
				// Said once start is done, which a loaded machine may
				// take a while to finish after the first drawing.
				s.waitFor(`Stopped at the first line of main`)
				s.waitFor(`before main`)
			}
			// The current line is drawn on the current line's background.
			raw := s.capture(true)
			for _, l := range strings.Split(raw, "\n") {
				if strings.Contains(l, "=> ") && !sgrBg.MatchString(l) {
					t.Errorf("the current line is not highlighted: %q", l)
				}
			}
			s.keys("q")
		})
	}
}

// TestTUITimelineFoldFilter: the Timeline of a recording folds the
// loader's events and rdtsc into one line, space unfolds them, a filter by
// system call name shows only those calls, and Esc clears it.
func TestTUITimelineFoldFilter(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "counter.c", 0)
	s := newTmux(t, 160, 48, []string{"HOME=" + t.TempDir()}, "replay", trace)
	s.waitFor(`folded: #0–#\d+ before main`)
	screen := s.waitFor(`write\(1, "counter 15\\n", 11\) = 11  in \S+`)
	if strings.Contains(screen, "rdtsc at") || strings.Contains(screen, "execve") {
		t.Errorf("folded events shown:\n%s", screen)
	}
	s.focus("Timeline")
	s.press("Space", `Timeline[^\n]*\n[^\n]*\n[^\n]*=>• #\d+`) // no fold line under the bar
	screen = s.press("Home", `#0 +\d+  exec`)
	if strings.Contains(screen, "folded: ") {
		t.Errorf("space did not unfold:\n%s", screen)
	}
	s.keys("/")
	s.enter("sys:write")
	screen = s.waitFor(`/sys:write  1 matches`)
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "  #") && strings.Contains(l, " = ") && !strings.Contains(l, "write(") {
			t.Errorf("the filter lets through %q", l)
		}
	}
	s.press("Escape", `exit_group\(0\)`)
	s.keys("q")
}

// TestTUIProcessesPane: on a recording of a process tree, the Processes
// pane lists the processes; Enter on another switches to it (the status
// bar and Console say so), and the Timeline has a process column.
func TestTUIProcessesPane(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "conformance/proctree.c")
	trace := filepath.Join(t.TempDir(), "proctree.rwd")
	recordOpts(t, runOpts{}, trace, prog)
	rows := rewindPs(t, trace)
	s := newTmux(t, 160, 48, []string{"HOME=" + t.TempDir()}, "replay", trace)
	s.waitFor(`#\d+/\d+ .*thread`)
	s.waitFor(`(?m)#\d+ +\d+ +p\d+  `) // the Timeline's process column
	// Tab to Processes: it takes a slot of the layout when focused.
	s.focus("Processes")
	s.waitFor(`PID +PPID +EXIT +EVENTS`)
	// The cursor starts on the debugged (crashed) process, marked: Up
	// selects the one born before it.
	var crashed, prev psRow
	for i, r := range rows {
		if strings.HasPrefix(r.Exit, "SIGSEGV") && i > 0 {
			crashed, prev = r, rows[i-1]
		}
	}
	s.waitFor(`=> +` + itoa(crashed.Pid) + ` +` + itoa(crashed.Parent) + ` +SIGSEGV`)
	s.keys("Up")
	s.keys("Enter")
	s.waitFor(`Switching to process ` + itoa(prev.Pid))
	s.keys("q")
}

// TestTUISessionFile: breakpoints, a watchpoint and the Timeline's filter
// set in one run are there when the recording is opened again; a damaged
// session file is a one-line warning and the UI opens anyway.
func TestTUISessionFile(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "counter.c", 0)
	home := t.TempDir()
	s := newTmux(t, 160, 48, []string{"HOME=" + home}, "replay", trace)
	s.waitFor(`Stopped at the first line of main`)
	s.command("break bump", `Breakpoint 1 at`)
	s.command("watch counter", `Hardware watchpoint 2: counter`)
	s.waitFor(`counter .*· 5 writes`) // the Watch pane's history, an operation
	s.idle()
	s.command("layout Source | Console", `layout Source \| Console`)
	s.quit()
	data, err := os.ReadFile(trace + ".session")
	if err != nil {
		t.Fatalf("no session file beside the trace: %v", err)
	}
	// A watch on a parameter of bump, as made at a stop in it: main's
	// first line cannot set it up, and it must stay in the file.
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("session file: %v\n%s", err, data)
	}
	f["watchpoints"] = append(f["watchpoints"].([]any), map[string]any{"expr": "by"})
	data, _ = json.Marshal(f)
	os.WriteFile(trace+".session", data, 0o644)
	r := newTmux(t, 160, 48, []string{"HOME=" + home}, "replay", trace)
	r.waitFor(`session: 2 of 3 breakpoints and watchpoints restored`)
	r.waitFor(`session: watch by: `)
	// The layout chosen with :layout came back: two panes only.
	if screen := r.capture(false); strings.Contains(screen, "─ Stack ") || strings.Contains(screen, "━ Stack ") {
		t.Errorf("the session's layout (Source | Console) was not restored:\n%s", screen)
	}
	r.command("layout", `layout Source \| Console \(presets`)
	r.command("layout default", `counter .*· 5 writes`)
	r.idle()
	screen := r.command("info breakpoints", `hw watchpoint +keep y +counter`)
	if !strings.Contains(screen, "in bump at") {
		t.Errorf("breakpoint not restored:\n%s", screen)
	}
	r.press("c", `Breakpoint 1, bump`)
	r.idle()
	r.quit()
	// What could not be set up at main stays in the file, for later.
	if data, _ := os.ReadFile(trace + ".session"); !strings.Contains(string(data), `"expr": "by"`) {
		t.Errorf("the watch on a parameter was dropped from the session file:\n%s", data)
	}

	// Batch mode does not read it unless asked.
	res := batch(t, trace, "info breakpoints")
	if v, _ := res[0]["value"].([]any); len(v) != 0 {
		t.Errorf("batch mode read the session file: %v", res[0])
	}
	out := run(t, runOpts{}, rewind(t), "replay", "--batch", "--session", "-ex", "info breakpoints", trace)
	if !strings.Contains(string(out.Stdout), "in bump at counter.c:8") {
		t.Errorf("--session did not restore:\n%s%s", out.Stdout, out.Stderr)
	}

	os.WriteFile(trace+".session", []byte("{not json"), 0o644)
	d := newTmux(t, 160, 48, []string{"HOME=" + home}, "replay", trace)
	d.waitFor(`(?s)warning: session file.*damaged`)
	d.waitFor(`Stopped at the first line of main`)
	d.keys("q")
}
