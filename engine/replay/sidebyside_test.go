package replay_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// recordWith records prog with opts (Path, Args, Output and the streams
// filled in) and returns the trace and what it printed.
func recordWith(t *testing.T, opts record.Options, prog string, args ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	opts.Path, opts.Args, opts.Env, opts.Dir = prog, append([]string{prog}, args...), os.Environ(), dir
	opts.Output = filepath.Join(dir, "t.rwd")
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	null, _ := os.Open(os.DevNull)
	defer null.Close()
	var warn bytes.Buffer
	opts.Warn, opts.Stdin, opts.Stdout, opts.Stderr = &warn, null, stdout, null
	res, err := record.Record(opts)
	if err != nil {
		t.Fatalf("record %s: %v\n%s", prog, err, warn.String())
	}
	if res.ExitCode() != 0 {
		t.Fatalf("record %s: exit %d\n%s", prog, res.ExitCode(), warn.String())
	}
	printed, _ := os.ReadFile(stdout.Name())
	return opts.Output, string(printed)
}

// traced counts the calls nr of a recording that stopped (not made by the
// hook).
func traced(t *testing.T, path string, nr int32) int {
	n := 0
	for _, e := range readEvents(t, path) {
		if (e.Kind == trace.KindSyscall || e.Kind == trace.KindSyscallExit) && e.Syscall == nr && e.Flags&trace.FlagBuffered == 0 {
			n++
		}
	}
	return n
}

// TestSideBySide records two processes that share only descriptors, which
// rewind runs side by side (engine/record/sidebyside.go): messages between
// them cost no stop, as each one's hook waits in its read; a signal that
// interrupts such a read, or kills its process, does what it does without
// rewind; two processes writing to one stdout at once replay their lines in
// the order the file got them.
func TestSideBySide(t *testing.T) {
	prog := buildC(t, "sidebyside")
	tests := []struct {
		name   string
		args   []string
		serial bool
		want   string // a line the program prints
		check  func(t *testing.T, path string)
	}{
		{name: "pingpong", args: []string{"pingpong", "200"}, want: "child status 0", check: func(t *testing.T, path string) {
			// The first read of each site, before it is patched, may stop.
			if n := traced(t, path, unix.SYS_READ); n > 4 {
				t.Errorf("%d of 400 reads stopped, want them made by the hook", n)
			}
		}},
		{name: "poll", args: []string{"poll", "200"}, want: "child status 0", check: func(t *testing.T, path string) {
			for _, c := range []struct {
				name string
				nr   int32
			}{{"poll", unix.SYS_POLL}, {"epoll_wait", unix.SYS_EPOLL_WAIT}, {"read", unix.SYS_READ}} {
				if n := traced(t, path, c.nr); n > 4 {
					t.Errorf("%d of 200 %s calls stopped, want them made by the hook", n, c.name)
				}
			}
		}},
		{name: "serial", args: []string{"pingpong", "200"}, serial: true, want: "child status 0", check: func(t *testing.T, path string) {
			// Taking turns, a read that waits for the other process stops.
			if n := traced(t, path, unix.SYS_READ); n < 100 {
				t.Errorf("%d of 400 reads stopped with --serial, want the waits to", n)
			}
		}},
		{name: "bulk", args: []string{"bulk", "100"}, want: "bulk 1638400 bytes, sum 178683904", check: func(t *testing.T, path string) {
			// Writes of 16 KiB into a full pipe wait in the hook too.
			if n := traced(t, path, unix.SYS_WRITE); n > 4 {
				t.Errorf("%d of 100 writes stopped, want them made by the hook", n)
			}
		}},
		{name: "epipe", args: []string{"epipe"}, want: "parent: child exited -1, signal 13"},
		{name: "signal", args: []string{"signal"}, want: "child: signal 10, read 120"},
		{name: "kill", args: []string{"kill"}, want: "parent: child exited -1, signal 15"},
		{name: "race", args: []string{"race", "300"}, want: "parent line 299 of 300", check: func(t *testing.T, path string) {
			// The child's lines, all written while its parent lives, stop
			// at their entry, for their events to keep the file's order
			// (on one CPU the two may well not interleave at all).
			if n := traced(t, path, unix.SYS_WRITE); n < 300 {
				t.Errorf("%d writes to stdout stopped, want the child's 300 at least", n)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, printed := recordWith(t, record.Options{Serial: tc.serial}, prog, tc.args...)
			if !strings.Contains(printed, tc.want+"\n") {
				t.Fatalf("the program printed %q, want a line %q", printed, tc.want)
			}
			if tc.check != nil {
				tc.check(t, path)
			}
			got, err := replayAll(t, path)
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			if got != printed {
				t.Fatalf("replay printed\n%s\nthe recording\n%s", got, printed)
			}
		})
	}
}
