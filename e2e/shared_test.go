package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rewind-debugger/rewind/internal/testprog"
	"golang.org/x/sys/unix"
)

// TestSharedMemoryOutsideWriter records a program that reads, through its
// shared mappings, what this test writes from outside the recording (a
// process rewind knows nothing of): a file written with write() and through
// the test's own mapping of it, and a SysV segment. The program waits for a
// line on stdin before each look; replay must show it the same bytes.
func TestSharedMemoryOutsideWriter(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "outside.c")
	dir := t.TempDir()
	path := filepath.Join(dir, "shared")
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if err := file.Truncate(8192); err != nil {
		t.Fatal(err)
	}
	mapped, err := unix.Mmap(int(file.Fd()), 0, 8192, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mapped)
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	seg, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SysvShmDetach(seg)

	trace := filepath.Join(dir, "outside.rwd")
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, rewind(t), "record", "-o", trace, "--", prog, path, strconv.Itoa(id))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, out := testprog.StartPiped(t, cmd)
	var stdout strings.Builder
	rd := bufio.NewReader(io.TeeReader(out, &stdout))
	for round := range 2 {
		// What it printed of the previous round comes first.
		want := fmt.Sprintf("ready %d\n", round)
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				t.Fatalf("no %q from the program (%v); stdout:\n%s\nstderr:\n%s", want, err, stdout.String(), stderr.String())
			}
			if line == want {
				break
			}
		}
		if _, err := file.WriteAt([]byte(fmt.Sprintf("write() in round %d", round)), 0); err != nil {
			t.Fatal(err)
		}
		copy(mapped[4096:], fmt.Sprintf("a mapping in round %d", round))
		copy(seg, fmt.Sprintf("the segment in round %d", round))
		if _, err := io.WriteString(stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	io.Copy(io.Discard, rd)
	stdin.Close()
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the recording did not finish in %v", cmdTimeout)
	}
	if err != nil {
		t.Fatalf("record: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for round := range 2 {
		want := fmt.Sprintf("file: write() in round %d|a mapping in round %d\nshm: the segment in round %d\n", round, round, round)
		if !strings.Contains(stdout.String(), want) {
			t.Fatalf("the recorded program did not see the outside writes of round %d:\n%s", round, stdout.String())
		}
	}
	events, progStderr := checkRecorded(t, []byte(stderr.String()), trace, "")
	// Replay without the outside writer, and with the file and segment
	// changed since: what the program saw comes from the trace.
	copy(mapped, make([]byte, 8192))
	copy(seg, make([]byte, 4096))
	rs, rerr, code := replayCheck(t, trace)
	checkReplayed(t, events, []byte(stdout.String()), progStderr, rs, rerr, code)
}

// TestSharedMappingDropped: a process writes a file through a shared
// mapping and unmaps it at once; the next one empties the file before it
// maps it again (as the next sqlite process resets a WAL index it finds
// unused). Replay must show the second one the empty file, not what the
// first left in replay's copy of it.
func TestSharedMappingDropped(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "sharedreset.c", "-O1")
	dir := t.TempDir()
	file := filepath.Join(dir, "shared")
	trace := filepath.Join(dir, "reset.rwd")
	const want = "reset sees an empty file\n"
	stdout, stderr, code := record(t, trace, "sh", "-c", `"$1" write "$2" && "$1" reset "$2"`, "sh", prog, file)
	if code != 0 || string(stdout) != want {
		t.Fatalf("record: exit %d, stdout %q, want %q\n%s", code, stdout, want, tail(stderr))
	}
	wantReplayed(t, trace, want)
}

// TestSharedFileWriterBeside: a process spins on a read-only shared
// mapping of a file that another writes with pwrite (an LMDB reader and
// its writer). The reader, mapping a file of its own, takes turns with the
// others on the serial queue, and the writer's writes, made traced (the
// hook knows the files the tree maps shared), wait for its turn: replay
// shows the reader the values where the recording did.
func TestSharedFileWriterBeside(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "sharedwatch.c", "-O1")
	dir := t.TempDir()
	file := filepath.Join(dir, "shared")
	if err := os.WriteFile(file, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "watch.rwd")
	const want = "saw 1 2 3\n"
	stdout, stderr, code := record(t, trace, "sh", "-c", `"$1" watch "$2" & "$1" write "$2"; wait`, "sh", prog, file)
	if code != 0 || string(stdout) != want {
		t.Fatalf("record: exit %d, stdout %q, want %q\n%s", code, stdout, want, tail(stderr))
	}
	wantReplayed(t, trace, want)
}
