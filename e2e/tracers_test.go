package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// straceLog runs `strace -f -o LOG sh -c script` through do (natively or
// recorded) and returns the run and the log strace wrote.
func straceLog(t *testing.T, script string, do func(log string) result) (result, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "strace.log")
	r := do(log)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("strace wrote no log: %v\nstderr:\n%s", err, tail(r.Stderr))
	}
	return r, string(b)
}

// straceFacts are what a user reads in an strace log and that do not depend
// on timing: the programs exec'd, how many processes ended and how, the
// writes to standard output; sorted, as the processes' lines interleave
// as they ran.
func straceFacts(log string) []string {
	var facts []string
	execs := regexp.MustCompile(`execve\("([^"]+)"`)
	writes := regexp.MustCompile(`write\(1, ("[^"]*")`)
	for _, l := range strings.Split(log, "\n") {
		// Drop the pid column: pids differ between runs.
		if _, rest, ok := strings.Cut(l, " "); ok {
			l = rest
		}
		switch {
		case strings.HasPrefix(l, "+++ "):
			facts = append(facts, l)
		case strings.HasPrefix(l, "--- SIGCHLD"):
		default:
			if m := execs.FindStringSubmatch(l); m != nil {
				facts = append(facts, "execve "+m[1])
			}
			if m := writes.FindStringSubmatch(l); m != nil {
				facts = append(facts, "write "+m[1])
			}
		}
	}
	slices.Sort(facts)
	return facts
}

// TestRealStrace records `strace -f` running a shell pipeline: strace
// seizes its child once it stopped itself, interrupts it, follows its
// forks (PTRACE_O_TRACEFORK), reads each call with PTRACE_GET_SYSCALL_INFO
// and waits with __WALL, all emulated by the recorder (issue 21). The
// program's output is the native run's, strace's log says what the native
// log says (the programs, the ends, the writes), and the recording replays.
func TestRealStrace(t *testing.T) {
	t.Parallel()
	need(t, "strace")
	input := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(input, []byte("three\none\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "echo hi | tr a-z A-Z; sort " + input
	native, nlog := straceLog(t, script, func(log string) result {
		return run(t, runOpts{}, "strace", "-f", "-o", log, "sh", "-c", script)
	})
	if native.Code != 0 {
		t.Fatalf("native strace exited %d: %s", native.Code, native.Stderr)
	}
	trace := filepath.Join(t.TempDir(), "strace.rwd")
	rec, rlog := straceLog(t, script, func(log string) result {
		return recordOpts(t, runOpts{}, trace, "strace", "-f", "-o", log, "sh", "-c", script)
	})
	if rec.Code != 0 || !bytes.Equal(rec.Stdout, native.Stdout) {
		t.Fatalf("recorded strace: exit %d, stdout %q, want %q\nstderr:\n%s", rec.Code, rec.Stdout, native.Stdout, tail(rec.Stderr))
	}
	if strings.Contains(string(rec.Stderr), "warning") {
		t.Errorf("record warned:\n%s", rec.Stderr)
	}
	want, got := straceFacts(nlog), straceFacts(rlog)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("strace's log under record says\n%s\nnatively\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := strings.Count(rlog, "ERESTARTSYS"); n > strings.Count(nlog, "ERESTARTSYS") {
		t.Errorf("strace saw %d calls interrupted under record, natively %d:\n%s", n, strings.Count(nlog, "ERESTARTSYS"), rlog)
	}
	out, errOut, code := replayCheck(t, trace)
	if code != 0 || !bytes.Equal(out, native.Stdout) {
		t.Fatalf("replay --check: exit %d, stdout %q\nstderr:\n%s", code, out, tail(errOut))
	}
}
