package replay_test

import (
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

// TestBufferedRuns replays a loop of calls the hook recorded in the
// program (testdata/buffered.c), which replay gives back to the hook in
// runs: a breakpoint in the loop still stops between the right events
// with the memory of that moment, and a call that differs from its
// record in the middle of a run is reported at its own event.
func TestBufferedRuns(t *testing.T) {
	const rounds = 300
	prog := buildC(t, "buffered")
	path, printed, _ := recordProg(t, prog, "300")
	events := readEvents(t, path)
	buffered := 0
	for _, e := range events {
		if e.Flags&trace.FlagBuffered != 0 {
			buffered++
		}
	}
	if buffered < 2*rounds {
		t.Fatalf("%d buffered calls in the recording, want about %d", buffered, 3*rounds)
	}
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Fatalf("replay: err %v, output %q want %q", err, got, printed)
	}

	t.Run("breakpoint", func(t *testing.T) {
		s, err := replay.Open(path, replay.Options{Stdout: io.Discard, Stderr: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		round, total := testprog.Symbol(t, prog, "round_"), testprog.Symbol(t, prog, "total")
		base := loadBase(t, s, prog)
		s.SetBreakpoints([]uint64{base + round})
		stops := 0
		for {
			st, err := s.Continue(0)
			if errors.Is(err, io.EOF) || st == nil && err == nil {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n := s.Next()
			// At round_'s entry: the round's clock_gettime comes next,
			// after the last round's fstat, and total counts the rounds.
			if e := events[n]; e.Kind != trace.KindSyscall || e.Syscall != unix.SYS_CLOCK_GETTIME {
				t.Fatalf("stop %d: the next event (%d) is %v %d, want clock_gettime", stops, n, e.Kind, e.Syscall)
			}
			// (glibc's fstat may be newfstatat)
			if e := events[n-1]; stops > 1 && (e.Syscall != unix.SYS_FSTAT && e.Syscall != unix.SYS_NEWFSTATAT || e.Flags&trace.FlagBuffered == 0) {
				t.Fatalf("stop %d: the last event (%d) is call %d (flags %#x), want a buffered fstat", stops, n-1, e.Syscall, e.Flags)
			}
			b, err := s.ReadMem(base+total, 8)
			if err != nil || len(b) != 8 || binary.LittleEndian.Uint64(b) != uint64(3*stops) {
				t.Fatalf("stop %d: total reads %x (%v), want %d", stops, b, err, 3*stops)
			}
			stops++
		}
		if stops != rounds {
			t.Errorf("%d stops at round_, want %d", stops, rounds)
		}
	})

	t.Run("divergence", func(t *testing.T) {
		// The 100th buffered getppid, with another argument register.
		bad := filepath.Join(t.TempDir(), "bad.rwd")
		changed, seen := -1, 0
		rewrite(t, path, bad, func(i int, e *trace.Event) {
			if e.Flags&trace.FlagBuffered != 0 && e.Syscall == unix.SYS_GETPPID {
				if seen++; seen == 100 {
					e.Regs[trace.RDI] ^= 1
					changed = i
				}
			}
		})
		_, err := replayAll(t, bad)
		var d *replay.Divergence
		if !errors.As(err, &d) || d.Event != int64(changed) {
			t.Fatalf("replay of a changed buffered call: %v, want a divergence at event %d", err, changed)
		}
	})
}

// TestBufferedPathDiffers: a buffered call that reads another path than
// the recorded one, in the middle of a run given to the hook, is reported
// at its own event, naming both paths.
func TestBufferedPathDiffers(t *testing.T) {
	prog := buildC(t, "buffered_files")
	path, printed, _ := recordProg(t, prog, t.TempDir(), "100")
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Fatalf("replay: err %v, output %q want %q", err, got, printed)
	}
	bad := filepath.Join(t.TempDir(), "bad.rwd")
	changed, seen := -1, 0
	rewrite(t, path, bad, func(i int, e *trace.Event) {
		if e.Flags&trace.FlagBuffered != 0 && e.Syscall == unix.SYS_OPENAT && len(e.In) == 1 {
			if seen++; seen == 50 {
				e.In[0].Data[len(e.In[0].Data)-2] ^= 1 // the last letter
				changed = i
			}
		}
	})
	_, err := replayAll(t, bad)
	var d *replay.Divergence
	if !errors.As(err, &d) || d.Event != int64(changed) || !strings.Contains(d.Msg, "path") {
		t.Fatalf("replay of a buffered openat of another path: %v, want a divergence at event %d about the path", err, changed)
	}
}

// readEvents reads every event of a trace.
func readEvents(t *testing.T, path string) []*trace.Event {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out []*trace.Event
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
}

// loadBase is where prog is mapped in the replay.
func loadBase(t *testing.T, s *replay.Session, prog string) uint64 {
	t.Helper()
	maps, err := s.Mappings()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range maps {
		if m.Path == prog && m.Offset == 0 {
			return m.Start
		}
	}
	t.Fatalf("%s is not mapped in the replay", prog)
	return 0
}
