package replay_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"

	"github.com/rewind-debugger/rewind/internal/testprog"
	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

func TestMain(m *testing.M) { testprog.Main(m) }

// buildC compiles testdata/NAME.c into dir.
func buildC(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	src := filepath.Join("..", "..", "testdata", name+".c")
	return cc.Build(t, src, out, "-g", "-O0", "-pthread")
}

// recordProg records prog and returns the trace path and what it printed.
func recordProg(t *testing.T, prog string, args ...string) (string, string, string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "t.rwd")
	stdout, _ := os.Create(filepath.Join(dir, "stdout"))
	defer stdout.Close()
	var warn bytes.Buffer
	null, _ := os.Open(os.DevNull)
	defer null.Close()
	res, err := record.Record(record.Options{Path: prog, Args: append([]string{prog}, args...), Env: os.Environ(),
		Dir: dir, Output: out, Warn: &warn, Stdin: null, Stdout: stdout, Stderr: null})
	if err != nil {
		t.Fatalf("record %s: %v", prog, err)
	}
	if res.ExitCode() != 0 {
		t.Fatalf("record %s: exit %d", prog, res.ExitCode())
	}
	printed, _ := os.ReadFile(stdout.Name())
	return out, string(printed), warn.String()
}

// replayAll replays a trace and returns what the replay re-emitted on stdout.
func replayAll(t *testing.T, path string) (string, error) {
	t.Helper()
	var stdout bytes.Buffer
	s, err := replay.Open(path, replay.Options{Stdout: &stdout, Stderr: io.Discard})
	if err != nil {
		return "", err
	}
	defer s.Close()
	err = s.Run()
	return stdout.String(), err
}

// rewrite copies a trace through edit, which may change events in place.
func rewrite(t *testing.T, src, dst string, edit func(i int, e *trace.Event)) {
	t.Helper()
	rd, err := trace.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	w, err := trace.Create(dst, rd.Header())
	if err != nil {
		t.Fatal(err)
	}
	for id := 0; id < rd.Blobs(); id++ {
		data, err := rd.Blob(uint32(id))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddBlob(data); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; ; i++ {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		edit(i, e)
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&trace.Footer{Exited: true}); err != nil {
		t.Fatal(err)
	}
}

// TestDivergenceDetected tampers with recorded events and checks that
// replay refuses to go on, naming the event.
func TestDivergenceDetected(t *testing.T) {
	prog := buildC(t, "nondet")
	path, printed, _ := recordProg(t, prog)
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Fatalf("untouched trace: err %v, output %q want %q", err, got, printed)
	}
	tests := []struct {
		name string
		// pick returns true for the event to change, after changing it.
		pick func(e *trace.Event) bool
	}{
		{"syscall argument register", func(e *trace.Event) bool {
			if e.Kind == trace.KindSyscall && e.Syscall == unix.SYS_GETPID {
				e.Regs[trace.RDI] ^= 1
				return true
			}
			return false
		}},
		{"stdout bytes", func(e *trace.Event) bool {
			if e.Flags&trace.FlagStdout != 0 && len(e.Data) > 0 {
				e.Data[0] ^= 0x20
				return true
			}
			return false
		}},
		{"rdtsc position", func(e *trace.Event) bool {
			if e.Kind == trace.KindRdtsc {
				e.Regs[trace.RIP]++
				return true
			}
			return false
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.rwd")
			changed := -1
			rewrite(t, path, bad, func(i int, e *trace.Event) {
				if changed < 0 && tc.pick(e) {
					changed = i
				}
			})
			if changed < 0 {
				t.Fatal("no event to change")
			}
			_, err := replayAll(t, bad)
			var d *replay.Divergence
			if !errors.As(err, &d) {
				t.Fatalf("replay of a tampered trace: err %v, want a divergence", err)
			}
			if d.Event != int64(changed) {
				t.Errorf("divergence at event %d, want %d (%v)", d.Event, changed, err)
			}
		})
	}
}

// TestMappedFileGone records a program that maps a file, deletes the file,
// and replays: the mapping's contents come from the trace.
func TestMappedFileGone(t *testing.T) {
	prog := buildC(t, "mapfile")
	data := filepath.Join(t.TempDir(), "data.bin")
	content := bytes.Repeat([]byte("rewind mapped file "), 5000)
	if err := os.WriteFile(data, content, 0o644); err != nil {
		t.Fatal(err)
	}
	path, printed, _ := recordProg(t, prog, data)
	if !strings.HasPrefix(printed, "size 95000 digest ") {
		t.Fatalf("recorded output %q", printed)
	}
	if err := os.Remove(data); err != nil {
		t.Fatal(err)
	}
	got, err := replayAll(t, path)
	if err != nil {
		t.Fatalf("replay after deleting the mapped file: %v", err)
	}
	if got != printed {
		t.Errorf("replay printed %q, recorded %q", got, printed)
	}
}

// TestRefusedAndUnknownCalls: io_uring is refused with ENOSYS in both runs;
// a rarely used call (sysfs) replays.
func TestRefusedAndUnknownCalls(t *testing.T) {
	prog := buildC(t, "refused")
	path, printed, warn := recordProg(t, prog)
	if !strings.Contains(printed, "io_uring_setup: -1 errno 38") {
		t.Errorf("recorded output %q, want io_uring_setup to fail with ENOSYS (38)", printed)
	}
	if warn != "" {
		t.Errorf("unexpected warnings: %q", warn)
	}
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Fatalf("replay: err %v, output %q want %q", err, got, printed)
	}

	// sysfs, once unknown, is in the table now: it replays. (A call replay
	// cannot reproduce is e2e's TestUnsupportedCallStopsReplay.)
	path, printed, warn = recordProg(t, prog, "sysfs")
	if warn != "" {
		t.Errorf("unexpected warnings: %q", warn)
	}
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Errorf("replay: err %v, output %q want %q", err, got, printed)
	}
}

// TestChangedExecutable: a program that changed since it was recorded is
// not the one replay runs: its exec is rebuilt from the recording's copy
// (execimage.go), and the replay is the recorded one. A trace without the
// exec's image (older than format 8) would refuse it.
func TestChangedExecutable(t *testing.T) {
	prog := buildC(t, "refused")
	path, printed, _ := recordProg(t, prog)
	// A byte of the ELF header's padding: the program still runs, and
	// is another file.
	f, err := os.OpenFile(prog, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0x55}, 9)
	f.Close()
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Fatalf("replay of a changed program: err %v, output %q want %q", err, got, printed)
	}
	s, err := replay.Open(path, replay.Options{Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	maps, err := s.Mappings()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range maps {
		if m.Path == prog && m.Offset == 0 {
			if b, err := s.ReadMem(m.Start+9, 1); err != nil || b[0] != 0 {
				t.Errorf("the replay's program holds %x at offset 9, want the recorded 00 (%v)", b, err)
			}
			return
		}
	}
	t.Errorf("the recorded program %s is not mapped at the start of its replay: %+v", prog, maps)
}
