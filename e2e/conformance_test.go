package e2e

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestConformance records and replays every program of testdata/conformance:
// small C (and C++, *.cpp) programs, one per kernel or CPU behaviour the recorder must get right
// (process trees, shared memory, signals into busy code, system call
// families). Each ends by printing a line "OK". The test checks the native
// run says OK, the recording exits with the native status and prints the same
// last line, and `replay --check` reproduces the recorded stdout and stderr
// byte for byte.
//
// A program's first lines may hold directives:
//
//	// flags: -lrt            extra compiler flags
//	// args: a b              arguments
//	// code: 3                the exit status (default 0)
//	// stdin: text            standard input (with \n for newlines)
//	// reader: slow           stdout and stderr are read slowly (the pipes fill)
func TestConformance(t *testing.T) {
	t.Parallel()
	srcs, err := filepath.Glob(filepath.Join(testdataDir, "conformance", "*.c"))
	cxx, _ := filepath.Glob(filepath.Join(testdataDir, "conformance", "*.cpp"))
	srcs = append(srcs, cxx...)
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no conformance programs in testdata/conformance (%v)", err)
	}
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conform(t, src, nil)
		})
	}
}

// TestConformanceNoBuffer records with --no-buffer (no seccomp filter, no
// hook page: every call stops) the conformance programs whose calls stop
// differently there: the program's own filters (their verdicts, a thread
// killed in a call, unknown numbers), uretprobe, the program's own
// tracers, threads, signals, exec, forks.
func TestConformanceNoBuffer(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"seccomp_verdicts", "seccomp_unknown", "seccomp_kill_thread", "seccomp_kill",
		"failed", "ptrace_sysemu", "ptrace_seize", "ptrace_step_syscall", "exec_thread", "proctree",
		"signal_syscall_threads", "signal_tempmask", "jobctl_threads", "vdso", "threads_exit_main"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conform(t, filepath.Join(testdataDir, "conformance", name+".c"), []string{"--no-buffer"})
		})
	}
}

// directives are the settings a conformance program asks for.
type directives struct {
	flags, args []string
	code        int
	stdin       []byte
	slow        bool
}

func readDirectives(t *testing.T, src string) directives {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d directives
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "// ")
		if !ok {
			break
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "flags":
			d.flags = strings.Fields(val)
		case "args":
			d.args = strings.Fields(val)
		case "code":
			if d.code, err = strconv.Atoi(val); err != nil {
				t.Fatalf("%s: bad code directive %q", src, val)
			}
		case "stdin":
			d.stdin = []byte(strings.ReplaceAll(val, `\n`, "\n"))
		case "reader":
			if val != "slow" {
				t.Fatalf("%s: bad reader directive %q", src, val)
			}
			d.slow = true
		}
	}
	return d
}

// conform records and replays the conformance program src, with flags
// added to rewind record.
func conform(t *testing.T, src string, flags []string) {
	rewind(t)
	d := readDirectives(t, src)
	rel, _ := filepath.Rel(testdataDir, src)
	prog := ""
	if filepath.Ext(src) == ".cpp" {
		prog = buildCXX(t, rel, d.flags...)
	} else {
		prog = buildC(t, rel, d.flags...)
	}

	opts := runOpts{Stdin: d.stdin, SlowReader: d.slow}
	native := run(t, opts, prog, d.args...)
	opts.RecordFlags = flags
	if native.Code != d.code {
		t.Fatalf("native run exited %d, want %d\nstdout:\n%s\nstderr:\n%s", native.Code, d.code, tail(native.Stdout), tail(native.Stderr))
	}
	if last, _ := lastLine(native.Stdout); last != "OK" {
		t.Fatalf("native run's last line is %q, want OK\nstdout:\n%s\nstderr:\n%s", last, tail(native.Stdout), tail(native.Stderr))
	}

	trace := filepath.Join(t.TempDir(), filepath.Base(prog)+".rwd")
	r := recordOpts(t, opts, trace, prog, d.args...)
	if r.Code != d.code {
		t.Fatalf("record exited %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, d.code, tail(r.Stdout), tail(r.Stderr))
	}
	if last, _ := lastLine(r.Stdout); last != "OK" {
		t.Fatalf("recorded run's last line is %q, want OK\nstdout:\n%s\nstderr:\n%s", last, tail(r.Stdout), tail(r.Stderr))
	}
	events, progStderr := checkRecorded(t, r.Stderr, trace, "")
	if bytes.Contains(progStderr, []byte("rewind:")) {
		t.Errorf("record warned:\n%s", tail(progStderr))
	}
	stdout, stderr, code := replayCheck(t, trace)
	checkReplayed(t, events, r.Stdout, progStderr, stdout, stderr, code)
}
