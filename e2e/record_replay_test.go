package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// rrCase is one program to record and replay.
type rrCase struct {
	name string
	// setup returns the program (a path, or a name looked up in PATH by
	// rewind) and its arguments; it may build it or create input files.
	setup func(t *testing.T) (prog string, args []string)
	// tool, if set, is a program that must be in PATH; the case is skipped
	// if it is not installed.
	tool  string
	stdin []byte
	code  int      // expected exit status (the native one)
	want  []string // regular expressions the recorded stdout must match
	// check, if set, checks the recorded stdout further.
	check func(t *testing.T, stdout []byte)
	// quiet: the program writes nothing to stderr, so record's stderr must be
	// exactly its one summary line.
	quiet bool
}

func cProg(src string, args ...string) func(t *testing.T) (string, []string) {
	return func(t *testing.T) (string, []string) { return buildC(t, src), args }
}

func goProg(dir string) func(t *testing.T) (string, []string) {
	return func(t *testing.T) (string, []string) { return buildGo(t, dir), nil }
}

func tool(name string, args ...string) func(t *testing.T) (string, []string) {
	return func(t *testing.T) (string, []string) { return name, args }
}

// testdataCases are the programs of testdata/.
var testdataCases = []rrCase{
	{
		name:  "nondet",
		setup: cProg("nondet.c"),
		quiet: true,
		want: []string{
			`(?m)^random: [0-9a-f]{32}$`,
			`(?m)^monotonic: \d+\.\d{9}$`,
			`(?m)^realtime: \d+\.\d{9}$`,
			`(?m)^gettimeofday: \d+\.\d{6}$`,
			`(?m)^rdtsc: \d+$`,
			`(?m)^rdtscp: \d+ aux=\d+$`,
			`(?m)^pid: \d+$`,
			`(?m)^tid: \d+$`,
			`(?m)^tempfile: \S+/rewind-nondet-\S{6}$`,
			`(?m)^digest: [0-9a-f]{16}$`,
		},
	},
	{
		name:  "crash",
		setup: cProg("crash.c"),
		quiet: true,
		code:  139,
		want:  []string{`(?m)^sum before corruption: 10$`, `(?m)^about to crash$`},
		check: func(t *testing.T, stdout []byte) {
			if strings.Contains(string(stdout), "sum after corruption") {
				t.Errorf("crash.c did not crash:\n%s", stdout)
			}
		},
	},
	{
		name:  "exit3",
		setup: cProg("exit3.c"),
		quiet: true,
		code:  3,
		want:  []string{`(?m)^exiting with 3$`},
	},
	{
		name:  "threads",
		setup: cProg("threads.c"),
		quiet: true,
		want:  []string{`(?m)^count: 200$`, `(?m)^order: [0-3]{200}$`},
		check: func(t *testing.T, stdout []byte) {
			m := regexp.MustCompile(`(?m)^order: ([0-3]+)$`).FindSubmatch(stdout)
			if m == nil {
				return
			}
			for _, id := range "0123" {
				if n := strings.Count(string(m[1]), string(id)); n != 50 {
					t.Errorf("thread %c appended %d times, want 50", id, n)
				}
			}
		},
	},
	{
		name:  "spin",
		setup: cProg("spin.c"),
		quiet: true,
		want:  []string{`(?m)^flag seen$`, `(?m)^random: [0-9a-f]{8}$`},
	},
	{
		name:  "alarm",
		setup: cProg("alarm.c"),
		quiet: true,
		want:  []string{`(?m)^ticks: 2\d$`, `(?m)^iterations: \d+$`},
	},
	{
		name:  "children",
		setup: cProg("children.c"),
		quiet: true,
		want: []string{
			`(?m)^vfork child: exit 0$`,
			`(?m)^posix_spawn child: exit 0$`,
			`(?m)^fork child: exit 7$`,
			`(?m)^sigchld handled: 1$`,
		},
	},
	{
		name:  "redir",
		setup: cProg("redir.c"),
		want:  []string{`\Aone\ntwo\n\z`},
	},
	{
		name:  "popen",
		setup: cProg("popen.c"),
		quiet: true,
		want: []string{
			`(?m)^popen: hello from child$`,
			`(?m)^popen: \d{9}$`,
			`(?m)^pclose status: 0 \(exit 0\)$`,
			`(?m)^child exited: 7$`,
		},
	},
	{
		name:  "tcp",
		setup: cProg("tcp.c"),
		quiet: true,
		want:  []string{`(?m)^port: \d+$`, `(?m)^reply: HELLO SERVER \d+$`},
	},
	{
		name: "cxx",
		setup: func(t *testing.T) (string, []string) {
			// random_device's default token: rdseed or rdrand where
			// cpuid shows them (patched into recorded traps without
			// CPUID faulting), getrandom where it hides them.
			return buildCXX(t, "cxx.cpp"), nil
		},
		quiet: true,
		want:  []string{`(?m)^key\d+ = -?\d+$`, `(?m)^outer caught: outer$`},
	},
	{
		name:  "go-goroutines",
		setup: goProg("goroutines"),
		quiet: true,
		want: []string{
			`(?m)^pipeline sum: 338350$`,
			`(?m)^map order: k\d\d( k\d\d){11}$`,
			`(?m)^random: [0-9a-f]{32}$`,
			`(?m)^now: \d+$`,
		},
	},
	{
		name:  "go-httpserve",
		setup: goProg("httpserve"),
		quiet: true,
		want:  []string{`(?m)^status: 200$`, `(?m)^body: hello from server, path /rewind, random \d+$`},
	},
	{
		name:  "go-spin",
		setup: goProg("spin"),
		quiet: true,
		want:  []string{`(?m)^spin done$`},
	},
}

// realCases are ordinary programs installed on the system, looked up in PATH
// by rewind itself.
var realCases = []rrCase{
	{
		name:  "ls",
		tool:  "ls",
		setup: tool("ls", "-la", "/usr/lib"),
		want:  []string{`(?m)^total \d+$`, `(?m) \.\.?$`},
	},
	{
		name: "sort-R",
		tool: "sort",
		setup: func(t *testing.T) (string, []string) {
			return "sort", []string{"-R", writeLines(t)}
		},
		check: func(t *testing.T, stdout []byte) {
			got := lines(stdout)
			want := lines([]byte(linesContent()))
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("sort -R output is not a permutation of its input:\n%s", tail(stdout))
			}
		},
	},
	{
		name: "python3",
		tool: "python3",
		setup: tool("python3", "-c",
			`import random,time,hashlib; print(random.random(), time.time(), hashlib.sha256(str(random.random()).encode()).hexdigest())`),
		want: []string{`^\S+ \d+\.\d+ [0-9a-f]{64}\n$`},
	},
	{
		name: "gofmt",
		tool: "gofmt",
		setup: func(t *testing.T) (string, []string) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "good.go"), "package p\n\nfunc F() int { return 1 }\n")
			writeFile(t, filepath.Join(dir, "bad.go"), "package p\nfunc  G( )int{\nreturn 2}\n")
			return "gofmt", []string{"-l", dir}
		},
		check: func(t *testing.T, stdout []byte) {
			if got := lines(stdout); len(got) != 1 || filepath.Base(got[0]) != "bad.go" {
				t.Errorf("gofmt -l printed %q, want only the path of bad.go", stdout)
			}
		},
	},
	{
		name:  "sqlite3",
		tool:  "sqlite3",
		setup: tool("sqlite3", ":memory:", "select hex(randomblob(8)), datetime('now');"),
		want:  []string{`^[0-9A-F]{16}\|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\n$`},
	},
	{
		// A WAL database: sqlite maps its -shm index MAP_SHARED.
		name: "sqlite3-wal",
		tool: "sqlite3",
		setup: func(t *testing.T) (string, []string) {
			db := filepath.Join(t.TempDir(), "w.db")
			return "sqlite3", []string{db, "pragma journal_mode=wal; create table t(x); insert into t values(1),(2),(3); select sum(x) from t; pragma wal_checkpoint;"}
		},
		want: []string{`^wal\n6\n0\|\d+\|\d+\n$`},
	},
	{
		// Standard input is passed through to the recorded program; replay
		// must not need it.
		name:  "cat-stdin",
		tool:  "cat",
		setup: tool("cat"),
		stdin: []byte("line one\nline two from stdin\n"),
		want:  []string{`^line one\nline two from stdin\n$`},
	},
}

// stretchCases are harder real programs (JITs, big runtimes).
var stretchCases = []rrCase{
	{
		name:  "perl",
		tool:  "perl",
		setup: tool("perl", "-e", `print rand(), "\n"`),
		want:  []string{`^0(\.\d+)?(e-\d+)?\n$`},
	},
	{
		name:  "jq",
		tool:  "jq",
		setup: tool("jq", "-n", "now"),
		want:  []string{`^\d+(\.\d+)?\n$`},
	},
	{
		name:  "node",
		tool:  "node",
		setup: tool("node", "-e", "console.log(Math.random())"),
		want:  []string{`^0(\.\d+)?(e-\d+)?\n$`},
	},
}

func TestRecordReplay(t *testing.T) {
	t.Parallel()
	for _, c := range slices.Concat(testdataCases, realCases, processTreeCases) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			recordReplay(t, c)
		})
	}
}

func TestRecordReplayStretch(t *testing.T) {
	t.Parallel()
	for _, c := range stretchCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			recordReplay(t, c)
		})
	}
}

// recordReplay records c, checks the recording, replays it with --check and
// checks that the replay reproduces it.
func recordReplay(t *testing.T, c rrCase) {
	if c.tool != "" {
		need(t, c.tool)
	}
	rewind(t) // fail early, before building anything, if there is no binary
	prog, args := c.setup(t)
	trace := filepath.Join(t.TempDir(), c.name+".rwd")

	r := recordOpts(t, runOpts{Stdin: c.stdin}, trace, prog, args...)
	if r.Code != c.code {
		t.Fatalf("record exited %d, want %d (the native status)\nstdout:\n%s\nstderr:\n%s",
			r.Code, c.code, tail(r.Stdout), tail(r.Stderr))
	}
	events, progStderr := checkRecorded(t, r.Stderr, trace, "")
	if c.quiet && len(progStderr) != 0 {
		t.Errorf("record printed more than its summary line on stderr:\n%s", tail(r.Stderr))
	}
	for _, re := range c.want {
		if !regexp.MustCompile(re).Match(r.Stdout) {
			t.Errorf("recorded stdout does not match %s:\n%s", re, tail(r.Stdout))
		}
	}
	if c.check != nil {
		c.check(t, r.Stdout)
	}

	stdout, stderr, code := replayCheck(t, trace)
	checkReplayed(t, events, r.Stdout, progStderr, stdout, stderr, code)
}

func TestRecordExitStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		src  string
		code int
		out  string
	}{
		{"crash.c", 139, "about to crash\n"},
		{"exit3.c", 3, "exiting with 3\n"},
	} {
		t.Run(c.src, func(t *testing.T) {
			t.Parallel()
			rewind(t)
			prog := buildC(t, c.src)
			if _, _, code := runNative(t, prog); code != c.code {
				t.Fatalf("native run of %s exited %d, want %d", c.src, code, c.code)
			}
			trace := filepath.Join(t.TempDir(), "t.rwd")
			stdout, stderr, code := record(t, trace, prog)
			if code != c.code {
				t.Errorf("record exited %d, want %d\nstderr:\n%s", code, c.code, tail(stderr))
			}
			if !strings.Contains(string(stdout), c.out) {
				t.Errorf("recorded stdout %q does not contain %q", stdout, c.out)
			}
			checkRecorded(t, stderr, trace, "")
		})
	}
}

// TestRecordDefaultTraceName records without -o (and without --): the trace
// is ./PROG-N.rwd in the working directory.
func TestRecordDefaultTraceName(t *testing.T) {
	t.Parallel()
	bin := rewind(t)
	prog := buildC(t, "exit3.c")
	dir := t.TempDir()
	r := run(t, runOpts{Dir: dir}, bin, "record", prog)
	if r.Code != 3 {
		t.Fatalf("record exited %d, want 3\nstderr:\n%s", r.Code, tail(r.Stderr))
	}
	checkRecorded(t, r.Stderr, "", dir)
	names := dirNames(t, dir)
	if len(names) != 1 || !regexp.MustCompile(`^exit3-\d+\.rwd$`).MatchString(names[0]) {
		t.Fatalf("working directory holds %q, want one trace named exit3-N.rwd", names)
	}
	last, _ := lastLine(r.Stderr)
	if !strings.HasSuffix(last, names[0]) {
		t.Errorf("record's summary %q does not name %s", last, names[0])
	}
}

// TestInfo checks the summary of a complete trace.
func TestInfo(t *testing.T) {
	t.Parallel()
	bin := rewind(t)
	prog := buildC(t, "exit3.c")
	trace := filepath.Join(t.TempDir(), "info.rwd")
	_, stderr, code := record(t, trace, prog, "alpha", "beta-arg")
	if code != 3 {
		t.Fatalf("record exited %d, want 3\nstderr:\n%s", code, tail(stderr))
	}
	events, _ := checkRecorded(t, stderr, trace, "")
	r := run(t, runOpts{}, bin, "info", trace)
	out := string(r.Stdout) + string(r.Stderr)
	checkNoPanic(t, "rewind info", r.Stdout, r.Stderr)
	if r.Code != 0 {
		t.Fatalf("info exited %d, want 0\n%s", r.Code, tail([]byte(out)))
	}
	for _, want := range []string{"exit3", "alpha", "beta-arg", fmt.Sprint(events)} {
		if !strings.Contains(out, want) {
			t.Errorf("info output does not mention %q:\n%s", want, out)
		}
	}
	if strings.Contains(strings.ToLower(out), "truncated") {
		t.Errorf("info calls a complete trace truncated:\n%s", out)
	}
}

// writeFile writes a file or fails the test.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// linesContent is the input of sort -R: 200 distinct lines.
func linesContent() string {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "line %03d %x\n", i, i*2654435761%1000003)
	}
	return b.String()
}

func writeLines(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "lines.txt")
	writeFile(t, p, linesContent())
	return p
}

// TestGoRecordingsInARow: 20 recordings of a Go program in a row all
// replay. The Go runtime keeps cpuid's answers (the APIC id of the CPU it
// runs on) in registers: before record and replay were bound to one CPU,
// about half of them diverged at the first arch_prctl.
func TestGoRecordingsInARow(t *testing.T) {
	t.Parallel()
	prog := buildGo(t, "goroutines")
	dir := t.TempDir()
	for i := range 20 {
		trace := filepath.Join(dir, fmt.Sprintf("g%d.rwd", i))
		mustRecord(t, trace, prog)
		if _, stderr, code := replayCheck(t, trace); code != 0 {
			t.Fatalf("recording %d of 20 does not replay (exit %d):\n%s", i, code, tail(stderr))
		}
		os.Remove(trace)
	}
}

// TestBindToCPU: --bind-to-cpu binds the recording (info names the CPU,
// replay binds to it again); a CPU rewind may not use is a one-line error
// before anything runs.
func TestBindToCPU(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "nondet.c")
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	cpu := -1
	for c := 1023; c >= 0 && cpu < 0; c-- {
		if set.IsSet(c) {
			cpu = c // the last allowed: not the default's likely choice
		}
	}
	trace := filepath.Join(t.TempDir(), "t.rwd")
	r := run(t, runOpts{}, rewind(t), "record", "--bind-to-cpu", fmt.Sprint(cpu), "-o", trace, "--", prog)
	if r.Code != 0 {
		t.Fatalf("record --bind-to-cpu %d exited %d\n%s", cpu, r.Code, r.Stderr)
	}
	info := run(t, runOpts{}, rewind(t), "info", trace)
	if want := fmt.Sprintf("bound to CPU %d", cpu); !strings.Contains(string(info.Stdout), want) {
		t.Errorf("info does not say %q:\n%s", want, info.Stdout)
	}
	if _, stderr, code := replayCheck(t, trace); code != 0 || strings.Contains(string(stderr), "warning") {
		t.Errorf("replay --check exited %d:\n%s", code, stderr)
	}
	r = run(t, runOpts{}, rewind(t), "record", "--bind-to-cpu", "100000", "-o", filepath.Join(t.TempDir(), "x.rwd"), "--", prog)
	if r.Code != 1 || len(lines(r.Stderr)) != 1 || !strings.Contains(string(r.Stderr), "--bind-to-cpu 100000") || len(r.Stdout) != 0 {
		t.Errorf("record --bind-to-cpu 100000 exited %d, stdout %q, stderr %q: want one line and nothing run", r.Code, r.Stdout, r.Stderr)
	}
}

// TestDefaultCPU: without --bind-to-cpu the program runs on one CPU (the
// one rewind starts on, or the one that takes the machine's device
// interrupts, which the recorder moves it to at its exec), and info names
// the CPU it ran on.
func TestDefaultCPU(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "t.rwd")
	r := run(t, runOpts{}, rewind(t), "record", "-o", trace, "--", "grep", "Cpus_allowed_list", "/proc/self/status")
	if r.Code != 0 {
		t.Fatalf("record exited %d\n%s", r.Code, r.Stderr)
	}
	fields := strings.Fields(string(r.Stdout))
	if len(fields) != 2 {
		t.Fatalf("the program printed %q, want its allowed CPUs", r.Stdout)
	}
	if _, err := strconv.Atoi(fields[1]); err != nil {
		t.Fatalf("the program may run on CPUs %s, want one", fields[1])
	}
	info := run(t, runOpts{}, rewind(t), "info", trace)
	if want := "bound to CPU " + fields[1]; !strings.Contains(string(info.Stdout), want) {
		t.Errorf("the program ran on CPU %s, and info does not say %q:\n%s", fields[1], want, info.Stdout)
	}
}

// TestSpreadCPUs: processes that compute side by side do not take turns on
// the program's CPU. spreadcpu's two children compute until one finds
// itself moved to another CPU; with --bind-to-cpu or --serial, or when the
// program bound itself to CPUs of its choice, none moves. Every recording
// replays, and rewind info says whether one moved.
func TestSpreadCPUs(t *testing.T) {
	t.Parallel()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []string
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, fmt.Sprint(c))
		}
	}
	if len(cpus) < 2 {
		t.Skip("rewind may use one CPU here")
	}
	prog := buildC(t, "spreadcpu.c")
	for _, tc := range []struct {
		name  string
		flags []string
		args  []string
		want  string
	}{
		// One moves within a few balancer periods; 60 s is for a
		// machine so loaded that no two of them ever see both compute.
		{"default", nil, []string{"60"}, "one moved\n"},
		{"bind-to-cpu", []string{"--bind-to-cpu", cpus[0]}, []string{"0.5"}, "none moved\n"},
		{"serial", []string{"--serial"}, []string{"0.5"}, "none moved\n"},
		{"the program's choice", nil, []string{"0.5", strings.Join(cpus[:2], ",")}, "none moved\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			trace := filepath.Join(t.TempDir(), "spread.rwd")
			r := recordOpts(t, runOpts{RecordFlags: tc.flags, Timeout: 2 * time.Minute}, trace, prog, tc.args...)
			if r.Code != 0 || string(r.Stdout) != tc.want {
				t.Fatalf("record: exit %d, stdout %q, want 0 and %q\n%s", r.Code, r.Stdout, tc.want, tail(r.Stderr))
			}
			if out, errOut, code := replayCheck(t, trace); code != 0 || string(out) != tc.want {
				t.Errorf("replay --check: exit %d, stdout %q, want 0 and %q\n%s", code, out, tc.want, tail(errOut))
			}
			// rewind info says which processes moved, and where.
			info := string(run(t, runOpts{}, rewind(t), "info", trace).Stdout)
			if moved := strings.Contains(info, "1 process that computed side by side moved to CPU "); moved != (tc.want == "one moved\n") {
				t.Errorf("rewind info (moved %v) for %q:\n%s", moved, tc.want, info)
			}
		})
	}
}

// TestKnownExits: arch_prctl(ARCH_SET_FS) and set_robust_list made as the
// loader makes them (testdata/knownexit.c), whose exits the recorder logs
// at their entry with no exit stop, leave the program as the kernel does
// (fs still its TLS), and those the kernel refuses fail as they do
// natively; the recording replays.
func TestKnownExits(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "knownexit.c", "-O2")
	const want = "taken 0, bad address -1, bad size -22, tls 7\n"
	trace := filepath.Join(t.TempDir(), "known.rwd")
	r := recordOpts(t, runOpts{}, trace, prog, "50")
	if r.Code != 0 || string(r.Stdout) != want {
		t.Fatalf("record: exit %d, stdout %q, want 0 and %q\n%s", r.Code, r.Stdout, want, tail(r.Stderr))
	}
	if out, errOut, code := replayCheck(t, trace); code != 0 || string(out) != want {
		t.Errorf("replay --check: exit %d, stdout %q, want 0 and %q\n%s", code, out, want, tail(errOut))
	}
}
