package replay_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
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

// TestBufferedWrites: the hook records writes to regular files and
// /dev/null, dup2 and the like (testdata/buffered_writes.c), but leaves
// to the recorder the writes to the file the program's stdout is (which
// replay re-emits) and every write once the program maps memory shared;
// a buffered write of other bytes than recorded is reported at its event.
func TestBufferedWrites(t *testing.T) {
	const rounds = 200
	prog := buildC(t, "buffered_writes")
	path, printed, _ := recordProg(t, prog, t.TempDir(), "200")
	events := readEvents(t, path)
	count := map[int32]int{}
	mapped := false
	for _, e := range events {
		if e.Kind == trace.KindSyscall && e.Syscall == unix.SYS_MMAP && e.Regs[trace.R10]&unix.MAP_SHARED != 0 {
			mapped = true
		}
		if e.Flags&trace.FlagBuffered == 0 {
			continue
		}
		if mapped && (e.Syscall == unix.SYS_PWRITE64 || e.Syscall == unix.SYS_WRITE) {
			t.Errorf("event %d: a buffered write after the file was mapped shared", e.Syscall)
		}
		count[e.Syscall]++
	}
	for _, nr := range []int32{unix.SYS_WRITE, unix.SYS_PWRITE64, unix.SYS_WRITEV, unix.SYS_DUP, unix.SYS_DUP2, unix.SYS_DUP3, unix.SYS_OPENAT} {
		if count[nr] < rounds-10 {
			t.Errorf("%d buffered calls %d, want about %d", count[nr], nr, rounds)
		}
	}
	// The writes to stdout are buffered with their bytes, which replay
	// shows.
	for _, e := range events {
		if e.Flags&trace.FlagBuffered != 0 && e.Flags&trace.FlagStdout != 0 && uint64(len(e.Data)) != e.ExitRegs[trace.RAX] {
			t.Errorf("a buffered write to stdout of %d bytes keeps %d", e.ExitRegs[trace.RAX], len(e.Data))
		}
	}
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Fatalf("replay: err %v, output %q want %q", err, got, printed)
	}

	for _, tc := range []struct {
		what string
		edit func(e *trace.Event)
		msg  string
	}{
		{"hash", func(e *trace.Event) { e.Hash ^= 2 }, "different bytes"},
		{"prefix", func(e *trace.Event) { e.In[0].Data[0] ^= 1 }, "bytes written"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.rwd")
			changed, seen := -1, 0
			rewrite(t, path, bad, func(i int, e *trace.Event) {
				if e.Flags&trace.FlagBuffered != 0 && e.Syscall == unix.SYS_WRITE && len(e.In) == 1 {
					if seen++; seen == 50 {
						tc.edit(e)
						changed = i
					}
				}
			})
			_, err := replayAll(t, bad)
			var d *replay.Divergence
			if !errors.As(err, &d) || d.Event != int64(changed) || !strings.Contains(d.Msg, tc.msg) {
				t.Fatalf("replay of a buffered write with another %s: %v, want a divergence at event %d about %q", tc.what, err, changed, tc.msg)
			}
		})
	}
}

// TestBufferedReplayTraced: memory and signal calls the hook records in
// the program (testdata/buffered_memory.c), which replay makes again
// (hook.ReplayTraced), leave the replay with the mappings, handlers and
// masks of the recording; a signal unblocked while pending is still
// delivered before sigprocmask returns (that call is left to the
// recorder). An execve of a path that names nothing is answered by the
// hook too.
func TestBufferedReplayTraced(t *testing.T) {
	const rounds = 100
	prog := buildC(t, "buffered_memory")
	path, printed, _ := recordProg(t, prog, "100")
	if !strings.Contains(printed, "late 0 absent 100") {
		t.Fatalf("the program printed %q", printed)
	}
	count := map[int32]int{}
	files := 0
	for _, e := range readEvents(t, path) {
		if e.Flags&trace.FlagBuffered != 0 {
			count[e.Syscall]++
			if e.Syscall == unix.SYS_MMAP && e.Map != nil {
				files++
			}
		}
	}
	if files < rounds-10 {
		t.Errorf("%d buffered mmaps of a stored file, want at least %d", files, rounds-10)
	}
	for _, nr := range []int32{unix.SYS_MMAP, unix.SYS_MPROTECT, unix.SYS_MUNMAP, unix.SYS_BRK, unix.SYS_RT_SIGACTION, unix.SYS_RT_SIGPROCMASK, unix.SYS_IOCTL, unix.SYS_EXECVE} {
		if count[nr] < rounds-10 {
			t.Errorf("%d buffered calls %d, want at least %d", count[nr], nr, rounds-10)
		}
	}
	if count[unix.SYS_IOCTL] < 3*rounds-10 {
		t.Errorf("%d buffered ioctls, want about %d (TCGETS, TIOCGWINSZ, TIOCGPGRP each round)", count[unix.SYS_IOCTL], 3*rounds)
	}
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Fatalf("replay: err %v, output %q want %q", err, got, printed)
	}

	// The hook makes those calls again itself in replay, in its runs of
	// buffered calls: an mmap of memory, or of a file the trace stored,
	// whose recorded address is taken (by the hook page) is reported at
	// its own event, as the hook's.
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprintf("diverging mmap, file %v", file), func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.rwd")
			changed, seen := -1, 0
			rewrite(t, path, bad, func(i int, e *trace.Event) {
				if e.Flags&trace.FlagBuffered != 0 && e.Syscall == unix.SYS_MMAP && (e.Map != nil) == file {
					if seen++; seen == rounds/2 {
						e.ExitRegs[trace.RAX] = hook.Ctl
						changed = i
					}
				}
			})
			_, err := replayAll(t, bad)
			var d *replay.Divergence
			if !errors.As(err, &d) || d.Event != int64(changed) || !strings.Contains(d.Msg, "made again by the hook page") {
				t.Fatalf("replay of an mmap at a taken address: %v, want the hook's divergence at event %d", err, changed)
			}
		})
	}
}

// TestKnownSites: sites the hook served in one process are patched at
// once where a later process maps the same code (its exec, an mmap of a
// library), so that the loader's and libc's first calls in a program the
// shell runs need no stop either (Event.Hooks), and replay patches them
// at the same events.
func TestKnownSites(t *testing.T) {
	prog := buildC(t, "buffered_memory")
	path, printed, _ := recordProg(t, "/bin/sh", "-c", prog+" 3; "+prog+" 3")
	if strings.Count(printed, "late 0 absent 3") != 2 {
		t.Fatalf("the programs printed %q", printed)
	}
	var execs, hooked int
	access := map[int]bool{} // by run: the loader's access of /etc/ld.so.preload, buffered
	var rseq []bool
	for _, e := range readEvents(t, path) {
		if e.Kind == trace.KindExec {
			execs++
		}
		if len(e.Hooks) > 0 {
			hooked++
		}
		if e.Syscall == unix.SYS_ACCESS && len(e.In) == 1 && strings.HasPrefix(string(e.In[0].Data), "/etc/ld.so.preload") {
			access[execs] = e.Flags&trace.FlagBuffered != 0
		}
		if e.Syscall == unix.SYS_RSEQ && execs > 1 {
			// (glibc 2.35 on registers rseq, which rewind refuses:
			// the hook answers ENOSYS.)
			rseq = append(rseq, e.Flags&trace.FlagBuffered != 0 && int64(e.ExitRegs[trace.RAX]) == -int64(unix.ENOSYS))
		}
	}
	for i, buffered := range rseq {
		if !buffered {
			t.Errorf("rseq %d of the program's runs: not answered ENOSYS by the hook", i)
		}
	}
	if execs != 3 || hooked < 2 {
		t.Fatalf("%d execs, %d events patching known sites; want 3 execs (sh, the program twice) and known sites patched at the last two", execs, hooked)
	}
	// The loader is the shell's too: its sites are known from the shell on.
	if access[1] || !access[2] || !access[3] {
		t.Errorf("the loader's first access, buffered in sh: %v, in the program's runs: %v, %v; want false, true, true", access[1], access[2], access[3])
	}
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Fatalf("replay: err %v, output %q want %q", err, got, printed)
	}
}

// TestStoredFilesMapped: replay maps the files a program mapped (its own
// executable, each round: buffered_memory.c) from the files themselves
// while they are the ones recorded, and from the trace's copies of them
// (memfds, mapfile.go) once they changed, never from anonymous memory
// filled page by page.
func TestStoredFilesMapped(t *testing.T) {
	prog := buildC(t, "buffered_memory")
	path, printed, _ := recordProg(t, prog, "3")
	mapped := func() string {
		maps, _ := mapsAtCall(t, path, prog, "mapped_own")
		return maps
	}
	// The round's private read-only mapping of 8 KiB at offset 0 of prog.
	own := regexp.MustCompile(`(?m)^([0-9a-f]+)-([0-9a-f]+) r--p 00000000 \S+ \d+ +(.+)$`)
	find := func(maps, name string) bool {
		for _, m := range own.FindAllStringSubmatch(maps, -1) {
			lo, _ := strconv.ParseUint(m[1], 16, 64)
			hi, _ := strconv.ParseUint(m[2], 16, 64)
			if hi-lo == 8192 && strings.HasPrefix(m[3], name) {
				return true
			}
		}
		return false
	}
	if maps := mapped(); !find(maps, prog) || strings.Contains(maps, "memfd:rewind-file-") {
		t.Errorf("the program's mapping of itself is not of %s in the replaying process, or a library is the trace's copy:\n%s", prog, maps)
	}
	// Changed (its times: any write changes them), the file is not the
	// recorded one any more: the trace's copy is mapped, and the replay
	// is the recorded one.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(prog, later, later); err != nil {
		t.Fatal(err)
	}
	if maps := mapped(); !find(maps, "/memfd:rewind-file-") {
		t.Errorf("no mapping of the trace's copy of the changed program in the replaying process:\n%s", maps)
	}
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Fatalf("replay after the program changed: err %v, output %q want %q", err, got, printed)
	}
}

// mapsAtCall replays path to the first call of prog's function fn and
// returns the replaying process's /proc/PID/maps then, and the registers.
func mapsAtCall(t *testing.T, path, prog, fn string) (string, trace.Regs) {
	t.Helper()
	maps, _, regs := mappingsAtCall(t, path, prog, fn)
	return maps, regs
}

// mappingsAtCall is mapsAtCall with the replay's own list of the
// mappings (Session.Mappings: the names the debugger shows).
func mappingsAtCall(t *testing.T, path, prog, fn string) (string, []replay.Mapping, trace.Regs) {
	t.Helper()
	s, err := replay.Open(path, replay.Options{Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := loadBase(t, s, prog)
	s.SetBreakpoints([]uint64{base + testprog.Symbol(t, prog, fn)})
	if st, err := s.Continue(0); err != nil || st == nil {
		t.Fatalf("continue to %s: %v %v", fn, st, err)
	}
	regs, err := s.Regs(s.Threads()[0].Tid)
	if err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", s.Threads()[0].Real))
	if err != nil {
		t.Fatal(err)
	}
	named, err := s.Mappings()
	if err != nil {
		t.Fatal(err)
	}
	return string(maps), named, regs
}

// TestBufferedNewFiles: the hook records an mmap of a small file the
// recorder has not stored yet, with the file's bytes (git maps each loose
// object it reads), with no stop, and the next mmap of it from the table
// of stored files; a file larger than the hook carries stays traced.
// Replay has the hook map each small file from the pack of them
// (packfile.go: one memfd, open once in the process), whether the file is
// still the recorded one or gone, and the debugger sees the mapping named
// by the file's path.
func TestBufferedNewFiles(t *testing.T) {
	const n = 40
	prog := buildC(t, "buffered_mapfiles")
	dir := t.TempDir()
	for i := range n {
		data := make([]byte, 100+i*97)
		for j := range data {
			data[j] = byte(i*131 + j*7 + j>>5)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, hook.NewFileMax+1), 0o644); err != nil {
		t.Fatal(err)
	}
	path, printed, _ := recordProg(t, prog, dir, strconv.Itoa(n))
	blobs := map[uint32]bool{}
	buffered, traced := 0, 0
	for _, e := range readEvents(t, path) {
		if e.Kind != trace.KindSyscall || e.Syscall != unix.SYS_MMAP || e.Map == nil || !strings.HasPrefix(e.Map.Path, dir) {
			continue
		}
		blobs[e.Map.Blob] = true
		switch {
		case e.Flags&trace.FlagBuffered != 0 && e.Map.Path != filepath.Join(dir, "big"):
			buffered++
		case e.Flags&trace.FlagBuffered == 0 && e.Map.Path == filepath.Join(dir, "big"):
			traced++
		default:
			t.Errorf("mmap of %s: flags %#x", e.Map.Path, e.Flags)
		}
	}
	if buffered != 2*n || traced != 1 || len(blobs) != n+1 {
		t.Fatalf("%d buffered mmaps of the small files (want %d), %d traced of big (want 1), %d files stored (want %d)", buffered, 2*n, traced, len(blobs), n+1)
	}
	// f0's mapping, kept at mapped_at, in the replaying process: the
	// kernel's line, and the replay's name for it.
	f0 := filepath.Join(dir, "f0")
	mapping := func() (string, string) {
		maps, named, regs := mappingsAtCall(t, path, prog, "mapped_at")
		line, name := "", ""
		for _, l := range strings.Split(maps, "\n") {
			var lo, hi uint64
			if _, err := fmt.Sscanf(l, "%x-%x", &lo, &hi); err == nil && lo <= regs[trace.RDI] && regs[trace.RDI] < hi {
				line = l
			}
		}
		for _, m := range named {
			if m.Start <= regs[trace.RDI] && regs[trace.RDI] < m.End {
				name = m.Path
			}
		}
		if line == "" {
			t.Fatalf("mapped_at's argument %#x is not mapped in the replay:\n%s", regs[trace.RDI], maps)
		}
		return line, name
	}
	check := func(when string) {
		t.Helper()
		if line, name := mapping(); !strings.Contains(line, "memfd:rewind-stored-pack") || name != f0 {
			t.Errorf("f0's mapping in the replay, %s: %q named %q; want the pack's, named %s", when, line, name, f0)
		}
		if got, err := replayAll(t, path); err != nil || got != printed {
			t.Fatalf("replay, %s: err %v, output %q want %q", when, err, got, printed)
		}
	}
	check("the files there")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	check("the files gone")
}

// TestBufferedFlushOrder: thousands of buffered calls, then a call that
// stops, in rounds of each size the recorder logs differently (a few
// records at once; a large flush beside the program, the stopping call's
// event after it without waiting): each stopping call's event comes after
// exactly the calls made before it, and the recording replays.
func TestBufferedFlushOrder(t *testing.T) {
	prog := buildC(t, "buffered_flushes")
	for _, n := range []int{10, 5000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			const rounds = 6
			path, printed, _ := recordProg(t, prog, strconv.Itoa(rounds), strconv.Itoa(n))
			calls, yields := 0, 0
			for _, e := range readEvents(t, path) {
				if e.Kind != trace.KindSyscall {
					continue
				}
				switch {
				case e.Syscall == unix.SYS_GETPPID && e.Flags&trace.FlagBuffered != 0:
					calls++
				case e.Syscall == unix.SYS_GETPPID:
					calls++ // the site's first call, before it is patched
				case e.Syscall == unix.SYS_SCHED_YIELD:
					yields++
					if calls != n {
						t.Fatalf("yield %d comes after %d getppid events, want %d", yields, calls, n)
					}
					calls = 0
				}
			}
			if yields != rounds {
				t.Fatalf("%d yields in the recording, want %d", yields, rounds)
			}
			if got, err := replayAll(t, path); err != nil || got != printed {
				t.Fatalf("replay: err %v, output %q want %q", err, got, printed)
			}
		})
	}
}
