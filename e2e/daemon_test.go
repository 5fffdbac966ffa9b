package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonWait bounds how long the test waits for a daemon's answer: only a
// daemon that is gone (killed with the recording) never answers.
const daemonWait = 60 * time.Second

// serveDaemon talks to the daemon testdata/daemon.c left running: one
// request on reqPath, the answer read from ansPath (each open blocks until
// the daemon opens its end, which only a live daemon does).
func serveDaemon(t *testing.T, reqPath, ansPath string) string {
	t.Helper()
	type reply struct {
		text string
		err  error
	}
	done := make(chan reply, 1)
	go func() {
		req, err := os.OpenFile(reqPath, os.O_WRONLY, 0)
		if err != nil {
			done <- reply{err: err}
			return
		}
		_, err = req.WriteString("ping\n")
		req.Close()
		if err != nil {
			done <- reply{err: err}
			return
		}
		ans, err := os.ReadFile(ansPath)
		done <- reply{text: string(ans), err: err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("talking to the daemon: %v", r.err)
		}
		return r.text
	case <-time.After(daemonWait):
		// Unblock the goroutine's opens before failing.
		for _, p := range []string{reqPath, ansPath} {
			if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil {
				f.Close()
			}
		}
		t.Fatalf("the daemon did not answer within %v: it is not running", daemonWait)
		return ""
	}
}

// fifos makes the daemon's request and answer FIFOs in a new directory.
func fifos(t *testing.T) (req, ans string) {
	t.Helper()
	dir := t.TempDir()
	req, ans = filepath.Join(dir, "req"), filepath.Join(dir, "ans")
	for _, p := range []string{req, ans} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return req, ans
}

// TestDaemon records a program that starts a daemon and returns: the
// recording ends with the program, as the native run does, says on stderr
// that the daemon was detached, and the daemon runs on unrecorded (it
// answers a request after rewind has exited, traced only by the shepherd
// rewind named, rdtsc working in it). The trace replays to its end.
func TestDaemon(t *testing.T) {
	t.Parallel()
	testDaemon(t, nil)
}

// TestDaemonNoBuffer: with --no-buffer there is no seccomp filter to keep
// the daemon traced, and no shepherd.
func TestDaemonNoBuffer(t *testing.T) {
	t.Parallel()
	testDaemon(t, []string{"--no-buffer"})
}

// testDaemon records the daemon with flags. By default the recorder's
// seccomp filter, which stays with the daemon and fails its calls with
// ENOSYS if nothing traces it, makes rewind hand the daemon over to a
// shepherd it names; the daemon answers, traced by it.
func testDaemon(t *testing.T, flags []string) {
	prog := buildC(t, "daemon.c")

	req, ans := fifos(t)
	native := run(t, runOpts{}, prog, req, ans)
	if native.Code != 0 || string(native.Stdout) != "parent done\n" {
		t.Fatalf("native run: exit %d, stdout %q, stderr %q", native.Code, native.Stdout, native.Stderr)
	}
	if got := serveDaemon(t, req, ans); !strings.Contains(got, " tracer 0 rdtsc ok") {
		t.Fatalf("native daemon answered %q", got)
	}

	req, ans = fifos(t)
	trace := filepath.Join(t.TempDir(), "daemon.rwd")
	rec := recordOpts(t, runOpts{RecordFlags: flags}, trace, prog, req, ans)
	if rec.Code != native.Code || string(rec.Stdout) != string(native.Stdout) {
		t.Fatalf("record: exit %d, stdout %q, want %d, %q\nstderr:\n%s", rec.Code, rec.Stdout, native.Code, native.Stdout, tail(rec.Stderr))
	}
	shepherd := checkDetached(t, rec.Stderr)
	if (shepherd != 0) != (flags == nil) {
		t.Errorf("record named shepherd %d; want one only without --no-buffer:\n%s", shepherd, rec.Stderr)
	}
	// The process detached may be the daemon or, detached before its
	// last fork, its parent: either way the daemon runs unrecorded, traced
	// by nothing or, under the recorder's seccomp filter, by the shepherd
	// rewind named.
	var pid, tracer int
	got := serveDaemon(t, req, ans)
	if _, err := fmt.Sscanf(got, "pid %d tracer %d rdtsc ok\n", &pid, &tracer); err != nil || pid == 0 || tracer != shepherd {
		t.Errorf("the detached daemon answered %q, want \"pid N tracer %d rdtsc ok\" (%v)", got, shepherd, err)
	}

	wantReplayed(t, trace, string(native.Stdout))
}

// detachedRE matches rewind's word that it detached a daemon: one that left
// the program's session, or one whose parent (the intermediate fork) was
// already gone when rewind looked.
var detachedRE = regexp.MustCompile(`(?m)^rewind: process \d+ (left the session|outlived its parent) \(a daemon\); detached, it runs on unrecorded( under shepherd (\d+) \(a tracer the recorder's seccomp filter needs\))?$`)

// checkDetached checks that a recording's stderr says it detached a daemon,
// and returns the pid of the shepherd it named, or 0.
func checkDetached(t *testing.T, stderr []byte) int {
	t.Helper()
	m := detachedRE.FindSubmatch(stderr)
	if m == nil {
		t.Fatalf("record did not say it detached the daemon:\n%s", stderr)
	}
	pid, _ := strconv.Atoi(string(m[3]))
	return pid
}

// TestDaemonSessionZero records the daemon with rewind as the first
// process of a new pid namespace, as in most containers (and CI runners):
// there the program's session reads as 0 in /proc (its leader is outside
// the namespace), which is a session like any other: the recording still
// ends when only the daemon is left. The daemon dies with the namespace
// when rewind exits, so only the recording and its replay are checked.
func TestDaemonSessionZero(t *testing.T) {
	t.Parallel()
	unshare := need(t, "unshare")
	if r := run(t, runOpts{}, unshare, "-fp", "--mount-proc", "true"); r.Code != 0 {
		t.Skipf("unshare -fp cannot run here (no privilege?): %s", bytes.TrimSpace(r.Stderr))
	}
	prog := buildC(t, "daemon.c")
	req, ans := fifos(t)
	trace := filepath.Join(t.TempDir(), "daemon.rwd")
	rec := run(t, runOpts{}, unshare, "-fp", "--mount-proc", rewind(t), "record", "-o", trace, "--", prog, req, ans)
	if rec.Code != 0 || string(rec.Stdout) != "parent done\n" {
		t.Fatalf("record: exit %d, stdout %q\nstderr:\n%s", rec.Code, rec.Stdout, tail(rec.Stderr))
	}
	checkDetached(t, rec.Stderr)
	wantReplayed(t, trace, "parent done\n")
}
