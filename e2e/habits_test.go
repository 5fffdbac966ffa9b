package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gdb's habits in rewind's command language (issue 13, point 3): each
// answer is compared with gdb's on a live run of the same binary.

// habit is one command: what rewind is asked, and what gdb is asked for
// the same answer ("" for the same command; gdb's batch mode runs -ex
// commands as not typed at a terminal, so commands that speak only to a
// user at one are asked through Python with from_tty set).
type habit struct {
	rewind, gdb string
	// differs marks a command whose answer is not compared (it only
	// gets both to the same place).
	differs bool
}

// typed asks gdb for a command as typed at its prompt.
func typed(cmd string) string {
	return `python gdb.execute("` + strings.ReplaceAll(cmd, `"`, `\"`) + `", True)`
}

var (
	threadID    = regexp.MustCompile(`Thread 0x[0-9a-f]+ \(LWP \d+\)`)
	processID   = regexp.MustCompile(`process \d+`)
	libPath     = regexp.MustCompile(`(\s)/\S*/([^/\s]+)$`)
	ofPath      = regexp.MustCompile(` of /\S*/([^/\s]+)$`)
	spaces      = regexp.MustCompile(` {2,}`)
	connection  = regexp.MustCompile(`1 \((native|replay)\)`)
	otherThread = regexp.MustCompile(`^( [0-9]+ Thread X "[^"]*") .*$`)
	gdbChatter  = regexp.MustCompile(`^\[(New Thread|Thread 0x.* exited|Thread debugging|Inferior 1 \(process \d+\) exited)|^Using host libthread_db|answered Y; input not from terminal`)
)

// normalizeHabit is normalize plus what differs between a live run and a
// replay of it: thread pointers and LWPs, pids, the directories of files
// (gdb names libraries by their link-map names), column widths, gdb's own
// connection, the frames of threads other than the current one (waiting
// in libc, where gdb and rewind may see different debug information),
// and gdb's messages about threads coming and going.
func normalizeHabit(s string) string {
	var out []string
	for _, l := range strings.Split(normalize(s), "\n") {
		if gdbChatter.MatchString(l) {
			continue
		}
		l = threadID.ReplaceAllString(l, "Thread X")
		l = processID.ReplaceAllString(l, "process N")
		l = connection.ReplaceAllString(l, "1 (target)")
		l = ofPath.ReplaceAllString(l, " of $1")
		l = libPath.ReplaceAllString(l, "$1$2")
		l = strings.TrimRight(spaces.ReplaceAllString(l, " "), " ")
		l = otherThread.ReplaceAllString(l, "$1")
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

func TestHabitsCompareWithGDB(t *testing.T) {
	t.Parallel()
	prog, trace := recordedC(t, "source/habits.c")
	script := filepath.Join(t.TempDir(), "cmds.gdb")
	if err := os.WriteFile(script, []byte("# a comment\nprint counter\n\necho sourced\\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	habits := []habit{
		{rewind: "show pagination"}, {rewind: "show confirm"}, {rewind: "show print pretty"},
		{rewind: "show width"}, {rewind: "show height"},
		{rewind: "set height 30"}, {rewind: "show height"}, {rewind: "set height 0"},
		{rewind: "display counter", gdb: typed("display counter")},
		{rewind: "display/x step", gdb: typed("display/x step")},
		{rewind: "display/i $pc", gdb: typed("display/i $pc")},
		{rewind: "info display"},
		{rewind: "continue"},
		{rewind: "undisplay 3", gdb: typed("undisplay 3")},
		{rewind: "undisplay 7"},
		{rewind: "disable display 2", gdb: typed("disable display 2")},
		{rewind: "info display"},
		{rewind: "enable display 2", gdb: typed("enable display 2")},
		{rewind: "info display"},
		{rewind: "up"},
		{rewind: "set print pretty on"}, {rewind: "show print pretty"},
		{rewind: "print s"}, {rewind: "print s.corner"}, {rewind: "print/x s.corner[1]"}, {rewind: "output s"},
		{rewind: "set print pretty off"}, {rewind: "print s"},
		{rewind: `printf "%d %u %x %s %c %f %p %lu %5d|%-4s|%%\n", counter, counter, counter, s.name, 65, s.area, &counter, 7, i, s.name`},
		{rewind: `printf "%e %g %ld\n", s.area, s.area, -1L`},
		{rewind: `echo hi\tthere\n`}, {rewind: `echo \101\102\n`}, {rewind: `echo no newline`},
		{rewind: "bt full"},
		{rewind: "down"},
		{rewind: "condition 1 step == 4", gdb: typed("condition 1 step == 4")},
		{rewind: "info breakpoints"},
		{rewind: "continue"},
		{rewind: "condition 1", gdb: typed("condition 1")},
		{rewind: "condition 9 step"},
		{rewind: "ignore 1 0", gdb: typed("ignore 1 0")},
		{rewind: "ignore 1 1", gdb: typed("ignore 1 1")},
		{rewind: "ignore 1 2", gdb: typed("ignore 1 2")},
		{rewind: "ignore 9 1"},
		{rewind: "info breakpoints"},
		{rewind: "continue"},
		{rewind: "info threads"},
		{rewind: "thread"},
		{rewind: "thread 3"},
		{rewind: "bt full 2", gdb: typed("bt full 2")},
		{rewind: "info symbol main"}, {rewind: "info symbol bump+3"}, {rewind: "info symbol &counter"},
		{rewind: "info symbol 0"},
		{rewind: "info sharedlibrary"},
		{rewind: "info signals SIGSEGV"}, {rewind: "info signals 8"}, {rewind: "info handle SIGBUS"},
		{rewind: "info inferiors"},
		{rewind: "info watchpoints"},
		{rewind: "watch counter"},
		{rewind: "info watchpoints"},
		{rewind: "delete 2", differs: true},
		{rewind: "source " + script},
		{rewind: "kill", gdb: typed("kill")},
		{rewind: "info registers"}, {rewind: "bt"}, {rewind: "continue"}, {rewind: "info threads"},
		{rewind: "run"},
	}
	var rewindCmds, gdbCmds []string
	for _, h := range habits {
		rewindCmds = append(rewindCmds, h.rewind)
		if h.gdb == "" {
			h.gdb = h.rewind
		}
		gdbCmds = append(gdbCmds, h.gdb)
	}
	// gdbAnswers' own settings, given to rewind too.
	settings := []string{"set pagination off", "set width 0"}
	want := gdbAnswers(t, prog, []string{"break bump", "run"}, gdbCmds)
	rs := batch(t, trace, append(append(settings, "break bump", "run"), rewindCmds...)...)
	rs = rs[len(settings)+2:]
	for i, h := range habits {
		got, _ := rs[i]["text"].(string)
		if rs[i]["ok"] != true {
			got = field(rs[i], "error")
		}
		if h.differs {
			continue
		}
		if w, g := normalizeHabit(want[i]), normalizeHabit(got); g != w {
			t.Errorf("%s:\n gdb:    %q\n rewind: %q", h.rewind, w, g)
		}
	}
}

// TestHabitsReplayOnly checks what gdb cannot compare: the refusals a
// recording needs, ignore counts backwards, rr's checkpoints, displays in
// JSON, thread numbers, quit, and gdb's batch flags.
func TestHabitsReplayOnly(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "source/habits.c")
	trace := filepath.Join(t.TempDir(), "h.rwd")
	record(t, trace, prog)
	rs := batch(t, trace, "break bump", "run", "display counter", "ignore 1 5", "continue", // 0-4
		"ignore 1 2", "reverse-continue", "print step", "checkpoint", "info checkpoints", // 5-9
		"continue", "print step", "restart 1", "print step", "delete checkpoint 1", // 10-14
		"restart 1", "set var counter = 3", "print counter = 3", "print counter++", "set counter = 1", // 15-19
		"print counter == 15", "info threads", "thread 1", "info signals SIGINT", "kill", "print counter", // 20-25
		"start", "print counter", // 26-27
		"source /dev/zero", "info signals SIGFOO", "show", "restart", "printf \"%d\\n\"", "ignore 1 x") // 28-33
	tests := []struct {
		i      int
		ok     bool
		substr string
	}{
		{4, true, "bump (step=200)"}, // five hits skipped: steps 2 to 5, and worker 1's 100
		{6, true, "bump (step=4)"},   // backwards, two skipped: worker 1's 100 and step 5
		{7, true, "= 4"},             // at the hit of step 4
		{8, true, "Checkpoint 1 at bump (step=4)"},
		{9, true, "1\t#"},
		{11, true, "= 5"},
		{12, true, "bump (step=4)"}, // restart returns to the checkpoint exactly
		{13, true, "= 4"},
		{14, true, "Deleted checkpoint 1."},
		{15, false, "No checkpoint number 1."},
		{16, false, "cannot change the recording"},
		{17, false, "cannot change the recording"},
		{18, false, "cannot change the recording"},
		{19, false, "cannot change the recording"},
		{20, true, "= 0"},
		{22, true, "[Switching to thread 1 (Thread 0x"},
		{23, true, "SIGINT        No\tNo\tYes\t\tInterrupt"}, // delivered as recorded, no stop
		{24, true, "killed]"},
		{25, false, "The program is not being run."},
		{27, true, "= 0"},
		{28, false, "not a command file"},
		{29, false, "unknown signal"},
		{30, false, "show needs a setting"},
		{31, false, "restart needs a checkpoint number"},
		{32, false, "Bad format string"},
		{33, false, "bad ignore count"},
	}
	for _, tc := range tests {
		r := rs[tc.i]
		text := field(r, "text")
		if (r["ok"] == true) != tc.ok || !strings.Contains(text, tc.substr) || strings.Contains(text, "\n") && !tc.ok {
			t.Errorf("%s: ok=%v %q, want ok=%v containing %q", r["command"], r["ok"], text, tc.ok, tc.substr)
		}
	}
	// The display is in the JSON of every stop.
	for _, i := range []int{4, 6, 10} {
		ds, _ := rs[i]["displays"].([]any)
		if len(ds) != 1 || !strings.HasPrefix(field(ds[0].(map[string]any), "text"), "1: counter = ") {
			t.Errorf("%s: displays %v, want the counter display", rs[i]["command"], rs[i]["displays"])
		}
	}
	// info threads: gdb's numbers in creation order, the OS ids beside them.
	threads, _ := rs[21]["value"].([]any)
	var nums []string
	for _, th := range threads {
		nums = append(nums, field(th.(map[string]any), "num"))
	}
	if strings.Join(nums, " ") != "1" {
		t.Errorf("info threads at the main thread's hit of step 4: numbers %v, want [1] (the workers come later)", nums)
	}

	// A stop made by a sourced file shows each display once.
	cont := filepath.Join(t.TempDir(), "cont.gdb")
	if err := os.WriteFile(cont, []byte("continue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := batch(t, trace, "break bump", "run", "display counter", "source "+cont)
	ds, _ := src[3]["displays"].([]any)
	if n := strings.Count(field(src[3], "text"), "1: counter = "); len(ds) != 1 || n != 1 {
		t.Errorf("source of a continue: %d displays in JSON, %d in the text, want 1 and 1:\n%s", len(ds), n, field(src[3], "text"))
	}

	// gdb's flags: -batch, and -ex and -x run in the order given; quit ends the batch.
	script := filepath.Join(t.TempDir(), "two.gdb")
	if err := os.WriteFile(script, []byte("print 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, runOpts{}, rewind(t), "replay", "-batch", "-ex", "print 1", "-x", script, "-ex", "print 3", "-ex", "quit", "-ex", "print 4", trace)
	want := "(rewind) print 1\n$1 = 1\n(rewind) print 2\n$2 = 2\n(rewind) print 3\n$3 = 3\n(rewind) quit\n"
	if r.Code != 0 || string(r.Stdout) != want {
		t.Errorf("rewind replay -batch -ex -x -ex quit: exit %d\n%s\nwant\n%s", r.Code, r.Stdout, want)
	}
}
