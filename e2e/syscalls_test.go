package e2e

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"
)

// TestRefusedCalls records programs making calls rewind refuses: each gets
// an error it could get natively, the recording warns once naming the call,
// the event and the reason, and replay reproduces the run.
func TestRefusedCalls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src, warning, output string
	}{
		{"syscalls/perf_mmap.c", `rewind: warning: mmap at event \d+ fails with ENODEV: mapping a perf_event ring buffer is refused`, "mmap: No such device\n"},
		{"syscalls/ptrace_attach.c", `rewind: warning: ptrace at event \d+ fails with EPERM: attaching to a process outside the recording is refused`, "attach: Operation not permitted\nseize: Operation not permitted\n"},
	} {
		t.Run(filepath.Base(tc.src), func(t *testing.T) {
			t.Parallel()
			rewind(t)
			prog := buildC(t, tc.src)
			trace := filepath.Join(t.TempDir(), "refused.rwd")
			r := mustRecord(t, trace, prog)
			events, progStderr := checkRecorded(t, r.Stderr, trace, "")
			if n := len(regexp.MustCompile(tc.warning).FindAll(progStderr, -1)); n != 1 {
				t.Errorf("record warned %d times matching %q, want once\nstderr:\n%s", n, tc.warning, tail(r.Stderr))
			}
			if string(r.Stdout) != tc.output {
				t.Errorf("recorded program printed %q, want %q", r.Stdout, tc.output)
			}
			stdout, stderr, code := replayCheck(t, trace)
			checkReplayed(t, events, r.Stdout, progStderr, stdout, stderr, code)
		})
	}
}

// TestUnsupportedCallStopsReplay records a program whose call succeeds in a
// way rewind cannot replay (syscall user dispatch turned on): the recording
// goes on and warns, naming the call, why, and the event where replay will
// stop; replay --check re-emits the output up to there and fails at that
// event, saying why.
func TestUnsupportedCallStopsReplay(t *testing.T) {
	t.Parallel()
	rewind(t)
	prog := buildC(t, "syscalls/user_dispatch.c")
	trace := filepath.Join(t.TempDir(), "dispatch.rwd")
	r := recordOpts(t, runOpts{}, trace, prog)
	if r.Code != 0 || string(r.Stdout) != "before\non 0 off 0\n" {
		t.Fatalf("record exited %d, printed %q\nstderr:\n%s", r.Code, r.Stdout, tail(r.Stderr))
	}
	_, progStderr := checkRecorded(t, r.Stderr, trace, "")
	warn := regexp.MustCompile(`^rewind: warning: system call 157 \(prctl\) is not supported: PR_SET_SYSCALL_USER_DISPATCH [^;]+; replay will stop at event (\d+)\n$`)
	m := warn.FindSubmatch(progStderr)
	if m == nil {
		t.Fatalf("record's warning does not match %s:\n%s", warn, progStderr)
	}
	stdout, stderr, code := replayCheck(t, trace)
	checkNoPanic(t, "rewind replay", stderr)
	if code != 1 {
		t.Errorf("replay --check exited %d, want 1\nstderr:\n%s", code, tail(stderr))
	}
	if string(stdout) != "before\n" {
		t.Errorf("replay re-emitted %q, want the output before the call", stdout)
	}
	stop := regexp.MustCompile(`rewind: replay: event (\d+) \(tid \d+\): system call 157 \(prctl\) is not supported: PR_SET_SYSCALL_USER_DISPATCH [^;]+; replay cannot go past it`)
	s := stop.FindSubmatch(stderr)
	if s == nil {
		t.Fatalf("replay's error does not match %s:\n%s", stop, stderr)
	}
	if !bytes.Equal(s[1], m[1]) {
		t.Errorf("replay stopped at event %s, the recording said %s", s[1], m[1])
	}
}
