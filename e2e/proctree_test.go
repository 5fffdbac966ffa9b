package e2e

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// psRow is a line of `rewind ps --json`.
type psRow struct {
	Pid    int32    `json:"pid"`
	Parent int32    `json:"ppid"`
	Exit   string   `json:"exit"`
	First  int64    `json:"first_event"`
	Last   int64    `json:"last_event"`
	Args   []string `json:"args"`
}

func rewindPs(t *testing.T, trace string) []psRow {
	t.Helper()
	r := run(t, runOpts{}, rewind(t), "ps", "--json", trace)
	if r.Code != 0 {
		t.Fatalf("rewind ps exited %d:\n%s", r.Code, r.Stderr)
	}
	return ndjson[psRow](t, r)
}

// TestProcessTree records a program that forks, vforks and execs, spawns a
// shell, has a grandchild, an orphan, a child that crashes and one that
// execs the program again, and checks what a user sees: rewind ps lists the
// tree, the debugger opens on the crashed child and stops at its fault, and
// -p replays one process with only its output.
func TestProcessTree(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "conformance/proctree.c")
	trace := filepath.Join(t.TempDir(), "proctree.rwd")
	mustRecord(t, trace, prog)

	rows := rewindPs(t, trace)
	if len(rows) != 10 {
		t.Fatalf("rewind ps lists %d processes, want 10:\n%+v", len(rows), rows)
	}
	root := rows[0]
	if root.Parent != 0 || root.Exit != "0" || root.First != 0 || filepath.Base(root.Args[0]) != "proctree" {
		t.Errorf("first process: %+v", root)
	}
	byExit := map[string]psRow{}
	pids := map[int32]bool{}
	for _, r := range rows {
		byExit[r.Exit] = r
		pids[r.Pid] = true
		if r.Last < r.First {
			t.Errorf("process %d: event range #%d-#%d", r.Pid, r.First, r.Last)
		}
	}
	for _, r := range rows[1:] {
		if !pids[r.Parent] {
			t.Errorf("process %d: parent %d is not in the list", r.Pid, r.Parent)
		}
	}
	for exit, args := range map[string]string{"3": "proctree", "5": "sh -c echo spawned sh; exit 5", "6": "proctree",
		"7": "proctree", "SIGSEGV": "proctree", "4": "proctree again"} {
		r, ok := byExit[exit]
		if !ok {
			t.Errorf("no process exited with %s: %+v", exit, rows)
			continue
		}
		got := strings.Join(r.Args, " ")
		got = strings.TrimPrefix(got, filepath.Dir(prog)+"/")
		if got != args {
			t.Errorf("process that exited %s: command line %q, want %q", exit, got, args)
		}
	}
	if g, m := byExit["6"], byExit["7"]; g.Parent != m.Pid {
		t.Errorf("the grandchild's parent is %d, want the middle child %d", g.Parent, m.Pid)
	}
	var echo *psRow
	for i := range rows {
		if len(rows[i].Args) > 0 && rows[i].Args[0] == "echo" {
			echo = &rows[i]
		}
	}
	if echo == nil || echo.Parent != root.Pid {
		t.Errorf("no echo exec'd by a child of the first process: %+v", rows)
	}

	// The debugger opens on the process that crashed.
	out := run(t, runOpts{}, rewind(t), "replay", "--batch", "--json", "-ex", "process", "-ex", "continue", "-ex", "bt", trace)
	results := batchResults(t, out)
	crashed := byExit["SIGSEGV"]
	if v, _ := results[0]["value"].(float64); int32(v) != crashed.Pid {
		t.Errorf("the session opened on process %v, want the crashed one %d", results[0]["value"], crashed.Pid)
	}
	stop, _ := results[1]["stop"].(map[string]any)
	if stop["reason"] != "signal" || stop["signal"] != "SIGSEGV" || stop["function"] != "crash" {
		t.Errorf("continue in the crashed child: %v, want SIGSEGV in crash()", results[1])
	}
	if !strings.Contains(results[2]["text"].(string), "in main") {
		t.Errorf("bt in the crashed child does not reach main:\n%s", results[2]["text"])
	}

	// -p replays one process: only its output is re-emitted.
	sh := byExit["5"]
	r := run(t, runOpts{}, rewind(t), "replay", "-p", itoa(sh.Pid), "--check", trace)
	if r.Code != 0 || string(r.Stdout) != "spawned sh\n" {
		t.Errorf("replay -p %d --check: exit %d, stdout %q, want 0 and \"spawned sh\\n\"\n%s", sh.Pid, r.Code, r.Stdout, tail(r.Stderr))
	}
	// And `process N` switches, to the start of that process's life.
	out = run(t, runOpts{}, rewind(t), "replay", "--batch", "--json", "-p", itoa(root.Pid), "-ex", "process "+itoa(byExit["4"].Pid), "-ex", "continue", trace)
	results = batchResults(t, out)
	if ok, _ := results[0]["ok"].(bool); !ok {
		t.Fatalf("process %d: %v", byExit["4"].Pid, results[0])
	}
	if stop, _ := results[1]["stop"].(map[string]any); stop["reason"] != "end" && stop["reason"] != "exit" {
		t.Errorf("continue in the re-exec'd child: %v", results[1])
	}

	// goto an event of another process debugs that process there: the
	// shell's last system call, then the first process's last event.
	var shCall int64 = -1
	ev := run(t, runOpts{}, rewind(t), "events", "--json", "--type", "syscall", trace)
	for _, l := range lines(ev.Stdout) {
		var e struct {
			Event  int64 `json:"event"`
			Thread int32 `json:"thread"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && e.Thread == sh.Pid {
			shCall = e.Event
		}
	}
	if shCall < 0 {
		t.Fatalf("no system call of the shell (%d) in rewind events", sh.Pid)
	}
	out = run(t, runOpts{}, rewind(t), "replay", "--batch", "--json", "-p", itoa(root.Pid),
		"-ex", "goto #"+strconv.FormatInt(shCall, 10), "-ex", "process", "-ex", "info registers rip",
		"-ex", "goto #"+strconv.FormatInt(root.Last, 10), "-ex", "process", trace)
	results = batchResults(t, out)
	if len(results) != 5 {
		t.Fatalf("goto across processes: %d results, want 5:\n%s", len(results), out.Stdout)
	}
	if text, _ := results[0]["text"].(string); !strings.HasPrefix(text, "[Switching to process "+itoa(sh.Pid)+" ") {
		t.Errorf("goto #%d, the shell's last system call: %q, want a switch to process %d", shCall, text, sh.Pid)
	}
	if v, _ := results[1]["value"].(float64); int32(v) != sh.Pid {
		t.Errorf("process after goto #%d: %v, want %d", shCall, results[1], sh.Pid)
	}
	if ok, _ := results[2]["ok"].(bool); !ok {
		t.Errorf("info registers rip in the shell: %v", results[2])
	}
	if v, _ := results[4]["value"].(float64); int32(v) != root.Pid {
		t.Errorf("process after goto #%d: %v, want %d", root.Last, results[4], root.Pid)
	}

	// A pid that is not in the recording is a one-line error.
	r = run(t, runOpts{}, rewind(t), "replay", "-p", "1", "--check", trace)
	if r.Code == 0 || len(lines(r.Stderr)) != 1 || !strings.Contains(string(r.Stderr), "no process 1") {
		t.Errorf("replay -p 1: exit %d, stderr %q; want a one-line error", r.Code, r.Stderr)
	}
}

// batchResults decodes the JSON lines of replay --batch --json.
func batchResults(t *testing.T, r result) []map[string]any {
	t.Helper()
	out := ndjson[map[string]any](t, r)
	if len(out) == 0 {
		t.Fatalf("batch printed nothing (exit %d)\n%s", r.Code, tail(r.Stderr))
	}
	return out
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// processTreeCases are real programs that make processes.
var processTreeCases = []rrCase{
	{
		name:  "sh-pipeline",
		tool:  "sh",
		setup: tool("sh", "-c", "printf 'b\\na\\nc\\n' | sort | tr a-z A-Z; echo status $?"),
		want:  []string{`^A\nB\nC\nstatus 0\n$`},
	},
	{
		name: "make",
		tool: "make",
		setup: func(t *testing.T) (string, []string) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "Makefile"), "all: out.txt\n\t@cat out.txt\n\nout.txt:\n\t@echo built by make > out.txt\n\t@echo step two\n")
			return "make", []string{"-s", "-C", dir}
		},
		want: []string{`step two\nbuilt by make\n`},
	},
	{
		name: "python3-multiprocessing",
		tool: "python3",
		setup: tool("python3", "-c", `
import multiprocessing as mp
def sq(x): return x * x
if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as p:
        print(sum(p.map(sq, range(100))))
`),
		want: []string{`^328350\n$`},
	},
	{
		// sqlite processes one after the other on a WAL database: each
		// maps a new -shm file MAP_SHARED, writes its index there and
		// unlinks it at its end, and the next one's file may get the
		// same inode: replay must not show it the index the one before
		// left in its copy of the old file.
		name: "sqlite3-wal-processes",
		tool: "sqlite3",
		setup: func(t *testing.T) (string, []string) {
			db := filepath.Join(t.TempDir(), "w.db")
			return "sh", []string{"-c", `sqlite3 "$1" 'pragma journal_mode=wal; create table t(x);' &&
for v in 1 2 3 4; do sqlite3 "$1" "insert into t values($v);" || exit; done
sqlite3 "$1" 'select sum(x) from t;'`, "sh", db}
		},
		want: []string{`^wal\n10\n$`},
	},
	{
		// Two shells of sqlite processes inserting into one WAL database
		// at the same time: each process maps the -shm index while
		// another may be writing it, on the serial queue, as the new one
		// leaves its queue of its own.
		name: "sqlite3-wal-concurrent",
		tool: "sqlite3",
		setup: func(t *testing.T) (string, []string) {
			db := filepath.Join(t.TempDir(), "w.db")
			return "sh", []string{"-c", `sqlite3 "$1" 'pragma journal_mode=wal; create table t(x);' || exit
for w in 1 2; do (for v in 1 2 3 4 5 6 7 8 9 10; do sqlite3 -cmd '.timeout 10000' "$1" "insert into t values($v);" || exit; done) & done
wait
sqlite3 "$1" 'select count(*), sum(x) from t;'`, "sh", db}
		},
		want: []string{`^wal\n20\|110\n$`},
	},
}

// TestGoTestProcess records `go test` of a small package, with the flags
// that keep the test binary debuggable, replays the whole tree (the go
// command, the compiler, the linker, the test binary, which go deletes when
// it is done) and debugs the test binary with -p: a breakpoint in the code
// under test, its backtrace through the test function, a reverse step.
func TestGoTestProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("records a whole go build")
	}
	goBin := need(t, "go")
	args := []string{"test", "-count=1", "-v", "-run", "TestSum", "-ldflags=-s=false -w=false", "-gcflags=-N -l", "./sum"}
	dir := filepath.Join(testdataDir, "go")
	// A native run first fills the build cache: a cold cache would have the
	// recording compile the standard library (-gcflags without all= keeps
	// it optimized and cached).
	if native := run(t, runOpts{Dir: dir}, goBin, args...); native.Code != 0 {
		t.Fatalf("go test exited %d natively\n%s%s", native.Code, tail(native.Stdout), tail(native.Stderr))
	}
	trace := filepath.Join(t.TempDir(), "gotest.rwd")
	rec := recordOpts(t, runOpts{Dir: dir, Timeout: 6 * time.Minute}, trace, goBin, args...)
	if rec.Code != 0 || !strings.Contains(string(rec.Stdout), "--- PASS: TestSum") {
		t.Fatalf("record go test exited %d\nstdout:\n%s\nstderr:\n%s", rec.Code, tail(rec.Stdout), tail(rec.Stderr))
	}
	events, progStderr := checkRecorded(t, rec.Stderr, trace, "")
	rep := run(t, runOpts{Timeout: 6 * time.Minute}, rewind(t), "replay", "--check", trace)
	checkReplayed(t, events, rec.Stdout, progStderr, rep.Stdout, rep.Stderr, rep.Code)

	var test *psRow
	rows := rewindPs(t, trace)
	for i, r := range rows {
		if len(r.Args) > 0 && strings.HasSuffix(r.Args[0], "sum.test") {
			test = &rows[i]
		}
	}
	if test == nil {
		t.Fatalf("no sum.test process in rewind ps: %+v", rows)
	}
	out := run(t, runOpts{}, rewind(t), "replay", "--batch", "--json", "-p", itoa(test.Pid),
		"-ex", "break testprogs/sum.Sum", "-ex", "continue", "-ex", "bt", "-ex", "next", "-ex", "reverse-next", trace)
	res := batchResults(t, out)
	if len(res) != 5 {
		t.Fatalf("batch gave %d results: %v", len(res), res)
	}
	stop, _ := res[1]["stop"].(map[string]any)
	if stop["reason"] != "breakpoint" || stop["function"] != "testprogs/sum.Sum" || stop["file"] != "sum.go" {
		t.Errorf("continue to sum.Sum in the test binary: %v", res[1])
	}
	if bt, _ := res[2]["text"].(string); !strings.Contains(bt, "testprogs/sum.TestSum") {
		t.Errorf("bt does not show the test function:\n%s", bt)
	}
	next, _ := res[3]["stop"].(map[string]any)
	back, _ := res[4]["stop"].(map[string]any)
	if next["line"] == nil || back["line"] == nil || next["line"] == back["line"] {
		t.Errorf("next then reverse-next: %v then %v", res[3], res[4])
	}
}

// TestEveryProcessAlone replays each process of a shell pipeline alone
// (`replay -p PID`) to its end. Both sides of the pipe map the same locale
// file shared (gconv-modules.cache): the recorder logs its contents once,
// in the process that mapped it first, and a replay of the other process
// alone must still see them (it took another branch in glibc and diverged).
func TestEveryProcessAlone(t *testing.T) {
	t.Parallel()
	sh := need(t, "sh")
	trace := filepath.Join(t.TempDir(), "pipe.rwd")
	mustRecord(t, trace, sh, "-c", "ls / | wc -l; ls /nonexistent-dir 2>/dev/null | wc -c")
	rows := rewindPs(t, trace)
	if len(rows) < 3 {
		t.Fatalf("rewind ps lists %d processes, want the shell and its children", len(rows))
	}
	for _, r := range rows {
		out := run(t, runOpts{}, rewind(t), "replay", "-p", itoa(r.Pid), "--batch", "-ex", "continue", trace)
		if out.Code != 0 || !strings.Contains(string(out.Stdout), "End of the recording") {
			t.Errorf("replay -p %d (%s) exited %d:\n%s%s", r.Pid, strings.Join(r.Args, " "), out.Code, tail(out.Stdout), tail(out.Stderr))
		}
	}
}

// TestBreakpointsFollowExec: in a child that runs its parent's program,
// then execs another, a breakpoint on main resolves in each program in
// turn (its address in the parent's program was inside the other's code
// and corrupted it), and going back before the exec brings the first
// program's breakpoints back.
func TestBreakpointsFollowExec(t *testing.T) {
	t.Parallel()
	trace, child := recordExecOther(t)
	r := run(t, runOpts{}, rewind(t), "replay", "-p", itoa(child), "--batch", "--json",
		"-ex", "break main", "-ex", "break before_exec", "-ex", "continue", "-ex", "continue", "-ex", "continue",
		"-ex", "reverse-continue", "-ex", "reverse-continue", "-ex", "reverse-continue", trace)
	res := batchResults(t, r)
	if len(res) != 8 {
		t.Fatalf("%d results:\n%s%s", len(res), r.Stdout, r.Stderr)
	}
	want := []struct{ reason, function, file string }{
		{"breakpoint", "before_exec", "execother.c"},
		{"breakpoint", "main", "ctor.c"},
		{"exit", "", ""},
		{"breakpoint", "main", "ctor.c"},
		{"breakpoint", "before_exec", "execother.c"},
		{"start", "", ""},
	}
	for i, w := range want {
		st, _ := res[2+i]["stop"].(map[string]any)
		if res[2+i]["ok"] != true || st["reason"] != w.reason || (w.function != "" && (st["function"] != w.function || st["file"] != w.file)) {
			t.Errorf("%s: %v; want a %s stop in %s (%s)", res[2+i]["command"], res[2+i], w.reason, w.function, w.file)
		}
	}
}

// recordExecOther records execother.c running ctor.c in its child, and
// returns the trace and the child's pid.
func recordExecOther(t *testing.T) (string, int32) {
	prog, other := buildC(t, "execother.c"), buildC(t, "ctor.c")
	trace := filepath.Join(t.TempDir(), "execother.rwd")
	mustRecord(t, trace, prog, other)
	var child int32
	for _, r := range rewindPs(t, trace) {
		if r.Parent != 0 {
			child = r.Pid
		}
	}
	return trace, child
}

// TestStepsAfterExec: in a child that exec'd another program, finish and
// next stop in that program. Their temporary breakpoints are armed for it
// alone: counting arrivals from a segment's start before the exec once
// dropped them, and both ran to the end of the recording.
func TestStepsAfterExec(t *testing.T) {
	t.Parallel()
	trace, child := recordExecOther(t)
	r := run(t, runOpts{}, rewind(t), "replay", "-p", itoa(child), "--batch", "--json",
		"-ex", "break hook if n == 3", "-ex", "continue", "-ex", "finish", "-ex", "delete",
		"-ex", "break main", "-ex", "continue", "-ex", "next", trace)
	res := batchResults(t, r)
	if len(res) != 7 {
		t.Fatalf("%d results:\n%s%s", len(res), r.Stdout, r.Stderr)
	}
	for i, w := range map[int]struct{ function string }{1: {"hook"}, 2: {"init"}, 5: {"main"}, 6: {"main"}} {
		st, _ := res[i]["stop"].(map[string]any)
		if res[i]["ok"] != true || st["function"] != w.function || st["file"] != "ctor.c" {
			t.Errorf("%s: %v; want a stop in %s (ctor.c)", res[i]["command"], res[i], w.function)
		}
	}
	if a, b := res[5]["stop"].(map[string]any), res[6]["stop"].(map[string]any); a != nil && b != nil && a["line"] == b["line"] {
		t.Errorf("next from main's line %v stayed there", a["line"])
	}
}

// TestFocusSharingChild: a replay, and one focused on the parent (replay
// -p), run the children that share its memory until they exec or exit, as
// the recording did: a vfork child's store before its exec, and the error posix_spawnp's
// child writes for its parent, are what the parent reads, and watching x
// from a breakpoint goes back to the child's store. Both with and
// without system call buffering (the children's calls before their exec
// go through the hook page, or stop).
func TestFocusSharingChild(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "sharingchild.c")
	const want = "x 42 spawned 0 missing 2\n"
	for _, flags := range [][]string{nil, {"--no-buffer"}} {
		t.Run(strings.Join(append([]string{"record"}, flags...), " "), func(t *testing.T) {
			t.Parallel()
			trace := filepath.Join(t.TempDir(), "sharing.rwd")
			r := recordOpts(t, runOpts{RecordFlags: flags}, trace, prog)
			if r.Code != 0 || string(r.Stdout) != want {
				t.Fatalf("record: exit %d, stdout %q, want 0 and %q\n%s", r.Code, r.Stdout, want, tail(r.Stderr))
			}
			rows := rewindPs(t, trace)
			if len(rows) != 4 {
				t.Fatalf("rewind ps lists %d processes, want the parent and 3 children:\n%+v", len(rows), rows)
			}
			if out, errOut, code := replayCheck(t, trace); code != 0 || string(out) != want {
				t.Errorf("replay --check: exit %d, stdout %q, want 0 and %q\n%s", code, out, want, tail(errOut))
			}
			parent := itoa(rows[0].Pid)
			r = run(t, runOpts{}, rewind(t), "replay", "-p", parent, "--check", trace)
			if r.Code != 0 || string(r.Stdout) != want {
				t.Errorf("replay -p %s --check: exit %d, stdout %q, want 0 and %q\n%s", parent, r.Code, r.Stdout, want, tail(r.Stderr))
			}
			out := run(t, runOpts{}, rewind(t), "replay", "-p", parent, "--batch", "--json",
				"-ex", "break report", "-ex", "continue", "-ex", "print x", "-ex", "print missing",
				"-ex", "watch x", "-ex", "reverse-continue", trace)
			results := batchResults(t, out)
			if len(results) != 6 {
				t.Fatalf("replay -p %s --batch: %d results, want 6:\n%s", parent, len(results), out.Stdout)
			}
			// Back from the breakpoint to the store, made by the vfork
			// child in the parent's memory.
			stop, _ := results[5]["stop"].(map[string]any)
			if line, _ := stop["line"].(float64); stop["reason"] != "watchpoint" || int32(stop["thread"].(float64)) == rows[0].Pid || line != 24 {
				t.Errorf("replay -p %s: reverse-continue to the store of x: %v, want a watchpoint stop at line 24 in the child", parent, results[5])
			}
			for i, v := range map[int]string{2: "42", 3: "2"} {
				if got, _ := results[i]["value"].(string); got != v {
					t.Errorf("replay -p %s: %s = %v, want %s", parent, []string{"", "", "x", "missing"}[i], results[i], v)
				}
			}
		})
	}
}
