package attach

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

// target is a running testdata/attach/target.c that is nobody's child.
type target struct {
	pid  int
	in   *os.File
	out  *bufio.Reader
	file string // the file it has open at offset 123
}

// buildTarget compiles testdata/attach/target.c.
func buildTarget(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "target")
	src := filepath.Join("..", "..", "testdata", "attach", "target.c")
	return cc.Build(tb, src, bin, "-g", "-O0", "-pthread")
}

// startTarget runs the target with mib MiB of buffer; it forks away from
// the test (its parent exits) and is killed at the end of the test.
func startTarget(tb testing.TB, bin string, mib int) *target {
	tb.Helper()
	file := filepath.Join(tb.TempDir(), "data")
	if err := os.WriteFile(file, make([]byte, 4096), 0o644); err != nil {
		tb.Fatal(err)
	}
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	cmd := exec.Command(bin, "-d", file, strconv.Itoa(mib))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("start %s: %v", bin, err)
	}
	inR.Close()
	outW.Close()
	t := &target{in: inW, out: bufio.NewReader(outR), file: file}
	line, err := t.out.ReadString('\n')
	if err != nil {
		tb.Fatalf("target did not start: %v", err)
	}
	if _, err := fmt.Sscanf(line, "pid %d", &t.pid); err != nil {
		tb.Fatalf("target said %q", line)
	}
	tb.Cleanup(func() {
		unix.Kill(t.pid, unix.SIGKILL)
		inW.Close()
		outR.Close()
	})
	return t
}

// query asks the target for its view of itself: the words of each line by
// their first word.
func (t *target) query(tb testing.TB) map[string][]string {
	tb.Helper()
	if _, err := t.in.WriteString("q\n"); err != nil {
		tb.Fatalf("ask the target: %v", err)
	}
	facts := map[string][]string{}
	done := make(chan error, 1)
	go func() {
		for {
			line, err := t.out.ReadString('\n')
			if err != nil {
				done <- err
				return
			}
			f := strings.Fields(line)
			if len(f) == 1 && f[0] == "end" {
				done <- nil
				return
			}
			if len(f) > 0 {
				facts[f[0]] = f[1:]
			}
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			tb.Fatalf("read the target's answer: %v", err)
		}
	case <-time.After(10 * time.Second):
		tb.Fatal("the target does not answer")
	}
	return facts
}

// num parses a number the target printed (0x… or decimal).
func num(tb testing.TB, s string) uint64 {
	tb.Helper()
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		tb.Fatalf("bad number %q: %v", s, err)
	}
	return n
}

func TestSnapshotAndDetach(t *testing.T) {
	tg := startTarget(t, buildTarget(t), 1)
	before := tg.query(t)
	// Seized once back in its read of stdin: the answer's last write may
	// still be returning when its last line arrives.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		sc, _ := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", tg.pid))
		if strings.HasPrefix(string(sc), "0 ") || time.Now().After(deadline) {
			break
		}
	}

	snap := takeSnapshot(t, tg.pid, func() {
		// Sent while every thread is stopped: it must be delivered once, after.
		if err := unix.Kill(tg.pid, unix.SIGUSR1); err != nil {
			t.Error(err)
		}
	})
	after := tg.query(t)
	// The worker sleeps a millisecond at a time: ask until it has ticked.
	for deadline := time.Now().Add(10 * time.Second); num(t, after["ticks"][0]) <= num(t, before["ticks"][0]) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		after = tg.query(t)
	}

	usr1 := snap.Handlers[unix.SIGUSR1-1]
	mainMask, workerMask := num(t, before["mask"][0]), uint64(0)
	var main *trace.ThreadState
	for i := range snap.Threads {
		th := &snap.Threads[i]
		if th.Tid == tg.pid {
			main = th
		} else {
			workerMask = th.Blocked
		}
	}
	if main == nil {
		t.Fatalf("no main thread among %d threads", len(snap.Threads))
	}
	altSP, altSize := le64(main.AltStack[0:8]), le64(main.AltStack[16:24])
	var buf *trace.Region
	bufAddr := num(t, before["buf"][0])
	for i := range snap.Regions {
		m := &snap.Regions[i]
		if bufAddr >= m.Start && bufAddr < m.Start+m.Size {
			buf = m
		}
	}
	var data *trace.OpenFile
	for i := range snap.Files {
		if snap.Files[i].Fd == int(num(t, before["fd"][0])) {
			data = &snap.Files[i]
		}
	}
	cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", tg.pid))
	maps, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", tg.pid))

	checks := []struct {
		what string
		ok   bool
		got  any
	}{
		{"two threads", len(snap.Threads) == 2, len(snap.Threads)},
		{"SIGUSR1 handler", usr1.Handler == num(t, before["handler"][0]), usr1.Handler},
		{"SIGUSR1 flags", usr1.Flags&0xffffffff == num(t, before["flags"][0]), usr1.Flags},
		{"SIGUSR1 mask", usr1.Mask == num(t, before["samask"][0]), usr1.Mask},
		{"main thread back before its read", main.Regs[trace.RAX] == unix.SYS_READ && main.Regs[trace.OrigRAX] == ^uint64(0), [2]uint64{main.Regs[trace.RAX], main.Regs[trace.OrigRAX]}},
		{"main thread's mask", main.Blocked == mainMask, main.Blocked},
		{"worker's mask: SIGUSR2, and the main thread's it inherited", workerMask&(1<<(unix.SIGUSR2-1)) != 0 && workerMask&mainMask == mainMask, workerMask},
		{"alternate stack", altSP == num(t, before["altstack"][0]) && altSize == num(t, before["altstack"][1]), [2]uint64{altSP, altSize}},
		{"SIGUSR1 pending while stopped", (main.Shared|main.Pending)&(1<<(unix.SIGUSR1-1)) != 0, main.Shared},
		{"open file at its offset", data != nil && data.Kind == trace.FileRegular && data.Path == tg.file && data.Pos == 123, data},
		{"stdin is a pipe", len(snap.Files) > 0 && snap.Files[0].Fd == 0 && snap.Files[0].Kind == trace.FilePipe, snap.Files},
		{"program break", snap.Layout.Brk == num(t, before["brk"][0]), snap.Layout.Brk},
		{"current directory", snap.Cwd == cwd, snap.Cwd},
		{"command line", len(snap.Cmdline) == 4 && snap.Cmdline[1] == "-d" && snap.Cmdline[2] == tg.file, snap.Cmdline},
		{"auxv has AT_PAGESZ 4096", hasAux(snap.Auxv, 6, 4096), len(snap.Auxv)},
		{"as many mappings as /proc", len(snap.Regions) == strings.Count(string(maps), "\n"), len(snap.Regions)},
		{"buffer's bytes", buf != nil && buf.Data != nil && bufferOK(buf, bufAddr, num(t, before["buf"][1])), buf != nil},
		{"SIGUSR1 delivered once after detach, as sent by kill", after["usr1"][0] == "1" && after["usr1"][1] == "0", after["usr1"]},
		{"worker runs after detach", num(t, after["ticks"][0]) > num(t, before["ticks"][0]), after["ticks"]},
		{"file position kept", after["fd"][1] == "123", after["fd"]},
		{"buffer intact", after["buf"][2] == before["buf"][2], after["buf"]},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %v", c.what, c.got)
		}
	}
	for _, th := range snap.Threads {
		if !inExecutable(snap.Regions, th.Regs[trace.RIP]) {
			t.Errorf("thread %d: rip %#x is not in executable code", th.Tid, th.Regs[trace.RIP])
		}
		if th.Regs[trace.FSBase] == 0 {
			t.Errorf("thread %d: no fs base", th.Tid)
		}
		if len(th.XState) < 512 {
			t.Errorf("thread %d: XSAVE area of %d bytes", th.Tid, len(th.XState))
		}
	}
	checkFileRefs(t, snap.Regions)
	checkLimits(t, tg.pid, snap.Rlimits)
	checkReleased(t, tg.pid)
}

// takeSnapshot seizes pid, runs whileStopped, snapshots and detaches.
func takeSnapshot(tb testing.TB, pid int, whileStopped func()) *trace.Snapshot {
	tb.Helper()
	p, err := Seize(pid)
	if err != nil {
		tb.Fatal(err)
	}
	whileStopped()
	snap, err := p.Snapshot()
	if err != nil {
		p.Detach()
		tb.Fatal(err)
	}
	if err := p.Detach(); err != nil {
		tb.Fatal(err)
	}
	return snap
}

// hasAux reports an auxv entry.
func hasAux(auxv []trace.AuxEntry, typ, val uint64) bool {
	for _, e := range auxv {
		if e.Type == typ && e.Val == val {
			return true
		}
	}
	return false
}

// bufferOK checks the target's fill pattern (byte i is i*7+1).
func bufferOK(m *trace.Region, addr, size uint64) bool {
	off := addr - m.Start
	if off+size > uint64(len(m.Data)) {
		return false
	}
	for i := uint64(0); i < size; i++ {
		if m.Data[off+i] != byte(i*7+1) {
			return false
		}
	}
	return true
}

// inExecutable reports an address inside an executable mapping.
func inExecutable(maps []trace.Region, addr uint64) bool {
	for _, m := range maps {
		if addr >= m.Start && addr < m.Start+m.Size && m.Perms[2] == 'x' {
			return true
		}
	}
	return false
}

// checkFileRefs checks that each file reference hashes like its file.
func checkFileRefs(t *testing.T, maps []trace.Region) {
	refs := 0
	for _, m := range maps {
		if m.File == nil {
			continue
		}
		refs++
		f, err := os.Open(m.File.Path)
		if err != nil {
			t.Errorf("file reference %s: %v", m.File.Path, err)
			continue
		}
		b := make([]byte, m.File.Size)
		n, _ := f.ReadAt(b, int64(m.File.Offset))
		f.Close()
		// Past the end of the file a mapping reads zeros.
		clear(b[n:])
		if sha256.Sum256(b) != m.File.SHA256 {
			t.Errorf("file reference %s+%#x: hash differs from the file", m.File.Path, m.File.Offset)
		}
	}
	if refs == 0 {
		t.Error("no read-only file mapping kept by reference")
	}
}

// checkLimits compares the rlimits with /proc/PID/limits' "Max open files".
func checkLimits(t *testing.T, pid int, lims []trace.Rlimit) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "Max open files") {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(l, "Max open files"))
		nofile := lims[unix.RLIMIT_NOFILE]
		if f[0] != strconv.FormatUint(nofile.Cur, 10) || f[1] != strconv.FormatUint(nofile.Max, 10) {
			t.Errorf("RLIMIT_NOFILE %d/%d, /proc says %v", nofile.Cur, nofile.Max, f)
		}
		return
	}
	t.Error("no Max open files in /proc limits")
}

// checkReleased checks that no thread is traced or stopped any more.
func checkReleased(t *testing.T, pid int) {
	tids, err := listThreads(pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		s, err := readStatus(tid)
		if err != nil {
			t.Fatal(err)
		}
		if s.TracerPid != 0 {
			t.Errorf("thread %d still traced by %d", tid, s.TracerPid)
		}
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && (stat[i+2] == 't' || stat[i+2] == 'T') {
			t.Errorf("thread %d left stopped", tid)
		}
	}
}

// TestInjectUnderSignals injects calls while signals keep coming: each one
// that stops the thread during an injected call is queued again with its
// siginfo, so the program sees it as kill sent it (si_code SI_USER), not
// as a tgkill from rewind.
func TestInjectUnderSignals(t *testing.T) {
	tg := startTarget(t, buildTarget(t), 1)
	p, err := Seize(tg.pid)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	sent := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				sent <- n
				return
			default:
			}
			unix.Kill(tg.pid, unix.SIGUSR1)
			n++
			time.Sleep(50 * time.Microsecond)
		}
	}()
	p.do(func() {
		for i := 0; i < 300; i++ {
			if _, err := ptrace.InjectSyscall(p.tids[0], p.mem, unix.SYS_GETPID); err != nil {
				t.Errorf("injection %d: %v", i, err)
				return
			}
		}
	})
	close(stop)
	if n := <-sent; n == 0 {
		t.Fatal("no signal sent")
	}
	if err := p.Detach(); err != nil {
		t.Fatal(err)
	}
	var after map[string][]string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if after = tg.query(t); after["usr1"][0] != "0" {
			break
		}
	}
	if after["usr1"][0] == "0" || after["usr1"][1] != "0" {
		t.Errorf("SIGUSR1 count and si_code after injections under fire: %v, want some and 0 (SI_USER)", after["usr1"])
	}
}
