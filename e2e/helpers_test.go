// Package e2e holds the end-to-end tests of Rewind: they build the rewind
// binary once, compile the programs in ../testdata, record them with
// `rewind record`, and check that `rewind replay --check` reproduces them.
//
// Run with a generous timeout, since every subtest records and replays a
// program under ptrace:
//
//	go test -timeout 30m ./e2e/
//
// Set REWIND_E2E_BIN to test an already built rewind binary instead of
// building github.com/rewind-debugger/rewind.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/internal/testprog"
)

// cmdTimeout bounds every command the tests run (build, record, replay,
// native run). It is shortened when the test binary's own deadline is nearer,
// so that a hang is reported as a test failure rather than a harness panic.
const cmdTimeout = 120 * time.Second

var (
	moduleRoot  string // directory holding the main go.mod
	testdataDir string // moduleRoot/testdata
	workDir     string // temporary directory for the rewind binary and built programs
	rewindBin   string // path of the built rewind binary
	rewindErr   error  // why rewind could not be built, if it could not
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	root, err := findModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 2
	}
	moduleRoot = root
	testdataDir = filepath.Join(root, "testdata")
	testprog.ColdCaches()

	dir, err := os.MkdirTemp("", "rewind-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	workDir = dir

	// REWIND_E2E_BIN runs the tests against an existing binary instead.
	if bin := os.Getenv("REWIND_E2E_BIN"); bin != "" {
		if abs, err := filepath.Abs(bin); err == nil {
			bin = abs
		}
		rewindBin = bin
		return m.Run()
	}

	// Build the binary once. A failure is not fatal here: every test that
	// needs the binary fails with the build output (see rewind()), and the
	// tests that only need native runs still run.
	bin := filepath.Join(dir, "rewind")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/rewind-debugger/rewind")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	cancel()
	if err != nil {
		rewindErr = fmt.Errorf("go build github.com/rewind-debugger/rewind: %v\n%s", err, out)
		fmt.Fprintf(os.Stderr, "e2e: cannot build rewind; tests that need it will fail:\n%v\n", rewindErr)
	} else {
		rewindBin = bin
	}
	return m.Run()
}

// findModuleRoot walks up from the working directory to the directory that
// holds go.mod.
func findModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod found above the working directory")
		}
		dir = parent
	}
}

// rewind returns the path of the rewind binary, failing the test if it could
// not be built.
func rewind(t testing.TB) string {
	t.Helper()
	if rewindBin == "" {
		t.Fatalf("rewind binary not available: %v", rewindErr)
	}
	return rewindBin
}

// result is what a finished command produced. Code is the exit status, or
// 128+N when the process was killed by signal N (as a shell reports it).
type result struct {
	Stdout, Stderr []byte
	Code           int
}

// runOpts are the optional settings of run.
type runOpts struct {
	Dir   string // working directory ("" = the test's)
	Stdin []byte // standard input (nil = /dev/null)
	// SlowReader reads stdout and stderr with a pause after each read, so
	// that a program writing much fills the pipes and blocks on them.
	SlowReader bool
	// Timeout replaces cmdTimeout for a command known to be long (a whole
	// go build recorded: minutes on a loaded machine).
	Timeout time.Duration
	// Env is added to the test's environment.
	Env []string
	// RecordFlags are flags recordOpts adds to `rewind record`.
	RecordFlags []string
}

// slowWriter is where a slow reader puts what it read: each write (one
// read of the pipe) is followed by a pause.
type slowWriter struct{ w io.Writer }

func (s slowWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	time.Sleep(time.Millisecond)
	return n, err
}

// run executes name with args, with a timeout, and returns its output and
// exit status. It fails the test if the command cannot be started or does
// not finish in time; a non-zero exit is not a failure here.
func run(t testing.TB, opts runOpts, name string, args ...string) result {
	t.Helper()
	timeout := cmdTimeout
	if opts.Timeout > 0 {
		timeout = opts.Timeout
	}
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			if left := time.Until(deadline) - 15*time.Second; left < timeout {
				timeout = max(left, 5*time.Second)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = opts.Dir
	if opts.Env != nil {
		cmd.Env = append(os.Environ(), opts.Env...)
	}
	if opts.Stdin != nil {
		cmd.Stdin = bytes.NewReader(opts.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if opts.SlowReader {
		cmd.Stdout, cmd.Stderr = slowWriter{&stdout}, slowWriter{&stderr}
	}
	// Run in a process group of its own, and kill the whole group on
	// timeout: rewind's tracees (and their children) would otherwise survive
	// it and keep the output pipes open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 10 * time.Second

	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("%s did not finish within %v (killed)\nstdout so far:\n%s\nstderr so far:\n%s",
			describe(name, args), timeout.Round(time.Second), tail(stdout.Bytes()), tail(stderr.Bytes()))
	}
	res := result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		ws, _ := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			res.Code = 128 + int(ws.Signal())
		} else {
			res.Code = ee.ExitCode()
		}
	case errors.Is(err, exec.ErrWaitDelay):
		// The command exited but something it started kept the pipes open.
		if cmd.ProcessState != nil {
			res.Code = cmd.ProcessState.ExitCode()
		}
		t.Errorf("%s exited but left a process holding its output open", describe(name, args))
	default:
		t.Fatalf("cannot run %s: %v", describe(name, args), err)
	}
	return res
}

func describe(name string, args []string) string {
	q := []string{name}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$") {
			a = strconv.Quote(a)
		}
		q = append(q, a)
	}
	return strings.Join(q, " ")
}

// tail returns the last few KB of b, for failure messages.
func tail(b []byte) string {
	const limit = 4000
	if len(b) > limit {
		return "…" + string(b[len(b)-limit:])
	}
	return string(b)
}

// record runs `rewind record -o trace -- prog args...` and returns the
// output and exit status.
func record(t testing.TB, trace, prog string, args ...string) (stdout, stderr []byte, exitCode int) {
	t.Helper()
	r := recordOpts(t, runOpts{}, trace, prog, args...)
	return r.Stdout, r.Stderr, r.Code
}

// mustRecord is record for a program that must exit 0: any other status
// fails t with what rewind said.
func mustRecord(t testing.TB, trace, prog string, args ...string) result {
	t.Helper()
	r := recordOpts(t, runOpts{}, trace, prog, args...)
	if r.Code != 0 {
		t.Fatalf("record -o %s %s: exit %d\nstderr:\n%s", trace, describe(prog, args), r.Code, tail(r.Stderr))
	}
	return r
}

// recordOpts is record with a working directory and standard input. An
// empty trace leaves out -o (the default name is used).
func recordOpts(t testing.TB, opts runOpts, trace, prog string, args ...string) result {
	t.Helper()
	a := append([]string{"record"}, opts.RecordFlags...)
	if trace != "" {
		a = append(a, "-o", trace)
	}
	a = append(a, "--", prog)
	a = append(a, args...)
	return run(t, opts, rewind(t), a...)
}

// replayCheck runs `rewind replay --check trace`.
func replayCheck(t testing.TB, trace string) (stdout, stderr []byte, exitCode int) {
	t.Helper()
	r := run(t, runOpts{}, rewind(t), "replay", "--check", trace)
	return r.Stdout, r.Stderr, r.Code
}

// need returns the path of the program name, and skips tb where it is not
// installed: a test that drives another tool (gdb, tmux, a compiler) says
// so rather than failing on a machine without it.
func need(tb testing.TB, name string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		tb.Skipf("%s not installed", name)
	}
	return path
}

// wantReplayed runs `rewind replay --check trace` and fails t unless it
// exits 0 having printed want, the program's output; it returns what the
// replay wrote on stderr.
func wantReplayed(t testing.TB, trace, want string) (stderr []byte) {
	t.Helper()
	out, errOut, code := replayCheck(t, trace)
	if code != 0 || string(out) != want {
		t.Fatalf("replay --check %s: exit %d, stdout %q, want %q\nstderr:\n%s", trace, code, out, want, tail(errOut))
	}
	return errOut
}

// ndjson decodes the JSON lines r printed (events --json, ps --json,
// replay --batch --json), one T each; a line that is not T fails t.
func ndjson[T any](t testing.TB, r result) []T {
	t.Helper()
	var out []T
	for _, l := range lines(r.Stdout) {
		var v T
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("bad JSON line %q: %v\nstderr:\n%s", l, err, tail(r.Stderr))
		}
		out = append(out, v)
	}
	return out
}

// runNative runs prog directly (no rewind).
func runNative(t testing.TB, prog string, args ...string) (stdout, stderr []byte, exitCode int) {
	t.Helper()
	r := run(t, runOpts{}, prog, args...)
	return r.Stdout, r.Stderr, r.Code
}

// Built test programs are cached for the whole test binary run: each
// (compiler, source, flags) is built once, into workDir.
var (
	buildMu    sync.Mutex
	buildCache = map[string]*buildEntry{}
)

type buildEntry struct {
	once sync.Once
	path string
	err  error
}

// cachedBuild builds once per key and returns the path of the result.
func cachedBuild(t testing.TB, key, out string, build func(out string) error) string {
	t.Helper()
	buildMu.Lock()
	e := buildCache[key]
	if e == nil {
		e = &buildEntry{}
		buildCache[key] = e
	}
	buildMu.Unlock()
	e.once.Do(func() {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			e.err = err
			return
		}
		e.err = build(out)
		e.path = out
	})
	if e.err != nil {
		t.Fatalf("building %s: %v", key, e.err)
	}
	return e.path
}

// compile runs a compiler command with a timeout and returns an error with
// its output if it fails.
func compile(name string, dir string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", describe(name, args), err, out)
	}
	return nil
}

// srcPath resolves a source path relative to testdata (absolute paths are
// kept).
func srcPath(src string) string {
	if filepath.IsAbs(src) {
		return src
	}
	return filepath.Join(testdataDir, src)
}

// binName is the name a built program gets: the source's base name without
// extension, so that default trace names (PROG-N.rwd) are readable.
func binName(src string) string {
	b := filepath.Base(src)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// buildC compiles a C source (relative to testdata) with
// `gcc -g -O0 -pthread` and returns the path of the executable.
func buildC(t testing.TB, src string, extraFlags ...string) string {
	t.Helper()
	key := "gcc " + src + " " + strings.Join(extraFlags, " ")
	out := filepath.Join(workDir, "bin", fmt.Sprintf("c%x", hashKey(key)), binName(src))
	return cachedBuild(t, key, out, func(out string) error {
		args := append([]string{"-g", "-O0", "-pthread", "-o", out, srcPath(src)}, extraFlags...)
		return compile("gcc", testdataDir, args...)
	})
}

// buildCXX compiles a C++ source (relative to testdata) with `g++ -g -O0`.
func buildCXX(t testing.TB, src string, extraFlags ...string) string {
	t.Helper()
	key := "g++ " + src + " " + strings.Join(extraFlags, " ")
	out := filepath.Join(workDir, "bin", fmt.Sprintf("cxx%x", hashKey(key)), binName(src))
	return cachedBuild(t, key, out, func(out string) error {
		args := append([]string{"-g", "-O0", "-o", out, srcPath(src)}, extraFlags...)
		return compile("g++", testdataDir, args...)
	})
}

// buildGo builds the Go program in testdata/go/<dir> (module testprogs) with
// optimizations and inlining disabled.
func buildGo(t testing.TB, dir string) string {
	t.Helper()
	key := "go " + dir
	out := filepath.Join(workDir, "bin", fmt.Sprintf("go%x", hashKey(key)), filepath.Base(dir))
	return cachedBuild(t, key, out, func(out string) error {
		return compile("go", filepath.Join(testdataDir, "go"),
			"build", "-gcflags=all=-N -l", "-o", out, "./"+dir)
	})
}

// hashKey is FNV-1a, to give each build configuration its own directory.
func hashKey(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// Output checks.

var (
	recordedRE = regexp.MustCompile(`^rewind: recorded (\d+) events to (.+)$`)
	replayOKRE = regexp.MustCompile(`(?m)^replay OK: (\d+) events$`)
)

// lines splits output into lines, without the final newline.
func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// lastLine returns the last line of b and everything before it.
func lastLine(b []byte) (last string, before []byte) {
	s := strings.TrimSuffix(string(b), "\n")
	i := strings.LastIndexByte(s, '\n')
	if i < 0 {
		return s, nil
	}
	return s[i+1:], []byte(s[:i+1])
}

// checkNoPanic fails the test if output looks like a Go panic or fatal error.
func checkNoPanic(t testing.TB, what string, outputs ...[]byte) {
	t.Helper()
	for _, o := range outputs {
		s := string(o)
		if strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") || strings.Contains(s, "fatal error:") {
			t.Errorf("%s: output contains a panic or runtime error:\n%s", what, tail(o))
			return
		}
	}
}

// checkRecorded checks the stderr of a successful `rewind record`: its last
// line is `rewind: recorded N events to TRACE`, naming the trace that exists.
// It returns N and the program's own stderr (everything before that line).
// dir is the working directory of the record command, for relative paths.
func checkRecorded(t testing.TB, stderr []byte, trace, dir string) (events int, progStderr []byte) {
	t.Helper()
	checkNoPanic(t, "rewind record", stderr)
	last, before := lastLine(stderr)
	m := recordedRE.FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("last line of record's stderr is %q, want `rewind: recorded N events to TRACE`\nstderr:\n%s", last, tail(stderr))
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n <= 0 {
		t.Fatalf("record reports %q events, want a positive number", m[1])
	}
	named := m[2]
	if !filepath.IsAbs(named) && dir != "" {
		named = filepath.Join(dir, named)
	}
	fiNamed, err := os.Stat(named)
	if err != nil {
		t.Fatalf("record says it wrote %q, but: %v", m[2], err)
	}
	if trace != "" {
		fiTrace, err := os.Stat(trace)
		if err != nil {
			t.Fatalf("trace %s not written: %v", trace, err)
		}
		if !os.SameFile(fiNamed, fiTrace) {
			t.Errorf("record names trace %q, want %q", m[2], trace)
		}
		if fiTrace.Size() == 0 {
			t.Errorf("trace %s is empty", trace)
		}
	}
	return n, before
}

// checkReplayed checks the result of a `rewind replay --check` of a trace
// whose recording reported recEvents events and produced recStdout and
// recProgStderr: exit 0, `replay OK: N` with the same N as the last stderr
// line, and the program's output reproduced byte for byte.
func checkReplayed(t testing.TB, recEvents int, recStdout, recProgStderr, stdout, stderr []byte, code int) {
	t.Helper()
	checkNoPanic(t, "rewind replay", stderr)
	if code != 0 {
		t.Fatalf("replay --check exited %d, want 0\nstderr:\n%s", code, tail(stderr))
	}
	last, before := lastLine(stderr)
	m := replayOKRE.FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("last line of replay's stderr is %q, want `replay OK: N events`\nstderr:\n%s", last, tail(stderr))
	}
	if n, _ := strconv.Atoi(m[1]); n != recEvents {
		t.Errorf("replay reports %d events, record reported %d", n, recEvents)
	}
	if !bytes.Equal(stdout, recStdout) {
		t.Errorf("replay stdout differs from recorded stdout: %s", firstDiff(recStdout, stdout))
	}
	// rewind's own warnings at record time are not the program's output.
	recProgStderr = regexp.MustCompile(`(?m)^rewind: warning: .*\n`).ReplaceAll(recProgStderr, nil)
	if !bytes.Equal(before, recProgStderr) {
		t.Errorf("replay re-emitted stderr differs from the recorded program's stderr: %s", firstDiff(recProgStderr, before))
	}
}

// divergenceRE finds the event and thread of a replay's divergence.
var divergenceRE = regexp.MustCompile(`divergence at event (\d+) \(tid (\d+)\)`)

// logDivergence logs the events that led to the divergence replay's
// stderr reports, those of its thread and the last few of all: a failure
// that shows once in a hundred runs is read from the test's log, the trace
// being gone with its directory.
func logDivergence(t testing.TB, trace string, stderr []byte) {
	t.Helper()
	m := divergenceRE.FindSubmatch(stderr)
	if m == nil {
		return
	}
	n, _ := strconv.Atoi(string(m[1]))
	from := strconv.Itoa(max(0, n-400))
	thread := run(t, runOpts{}, rewind(t), "events", "--from", from, "--to", string(m[1]), "--thread", string(m[2]), trace)
	all := run(t, runOpts{}, rewind(t), "events", "--from", strconv.Itoa(max(0, n-30)), "--to", strconv.Itoa(n+5), trace)
	t.Logf("the diverging thread's last events:\n%s\nall threads' last events:\n%s", tail(thread.Stdout), all.Stdout)
}

// firstDiff describes where two byte slices first differ.
func firstDiff(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(0, i-40)
	snip := func(b []byte) string {
		return strconv.Quote(string(b[min(lo, len(b)):min(i+40, len(b))]))
	}
	return fmt.Sprintf("lengths %d (recorded) vs %d (replayed), first difference at byte %d:\n  recorded: %s\n  replayed: %s",
		len(want), len(got), i, snip(want), snip(got))
}
