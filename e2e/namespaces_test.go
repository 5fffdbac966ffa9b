package e2e

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestUnsharePidNamespace records util-linux's `unshare -fp` (a pid
// namespace, its init forked, as sandboxes and containers start) running a
// small program that prints the pids it sees and forks, and checks that the
// recording behaves as the native run (same output, same status) and replays
// byte for byte. With --mount-proc, /proc is the namespace's too.
func TestUnsharePidNamespace(t *testing.T) {
	t.Parallel()
	unshare := need(t, "unshare")
	if r := run(t, runOpts{}, unshare, "-fp", "true"); r.Code != 0 {
		t.Skipf("unshare -fp cannot run here (no privilege?): %s", bytes.TrimSpace(r.Stderr))
	}
	prog := buildC(t, "nspid.c")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"fp", []string{"-fp", prog}},
		{"mount-proc", []string{"-fp", "--mount-proc", prog, "proc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			native := run(t, runOpts{}, unshare, tc.args...)
			if native.Code != 5 || !bytes.Contains(native.Stdout, []byte("pid 1 ppid 0\n")) {
				t.Fatalf("native run exited %d, want 5 as pid 1\nstdout:\n%s\nstderr:\n%s", native.Code, native.Stdout, native.Stderr)
			}
			trace := filepath.Join(t.TempDir(), "unshare.rwd")
			r := recordOpts(t, runOpts{}, trace, unshare, tc.args...)
			if r.Code != native.Code || !bytes.Equal(r.Stdout, native.Stdout) {
				t.Fatalf("record exited %d, want %d; stdout:\n%s\nwant:\n%s\nstderr:\n%s", r.Code, native.Code, r.Stdout, native.Stdout, tail(r.Stderr))
			}
			events, progStderr := checkRecorded(t, r.Stderr, trace, "")
			stdout, stderr, code := replayCheck(t, trace)
			checkReplayed(t, events, r.Stdout, progStderr, stdout, stderr, code)
		})
	}
}
