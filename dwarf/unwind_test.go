package dwarf

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// These tests run real programs from testdata/unwind, uwStopped by
// raise(SIGSTOP), and read their live stacks through ptrace and
// /proc/PID/mem. gdb, when installed, gives the reference backtrace.

// uwBuildC compiles testdata/unwind/src with gcc and the given flags.
func uwBuildC(t *testing.T, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed")
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(src, ".c"))
	args := append(append([]string{}, flags...), "-o", out, filepath.Join("..", "testdata", "unwind", src))
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, b)
	}
	return out
}

// uwProcMem reads a process's memory through /proc/PID/mem.
type uwProcMem struct{ f *os.File }

func (m uwProcMem) ReadAt(p []byte, addr uint64) (int, error) {
	if addr >= 1<<63 {
		return 0, fmt.Errorf("address %#x beyond the file offsets of /proc/PID/mem", addr)
	}
	return m.f.ReadAt(p, int64(addr))
}

// uwStopped is a test program that uwStopped itself.
type uwStopped struct {
	pid   int
	out   []string // its stdout up to "ready"
	regs  Regs
	mem   uwProcMem
	table *Table
}

// value returns the number printed after "key=" on the line starting with
// prefix.
func (s *uwStopped) value(t *testing.T, prefix, key string) int64 {
	t.Helper()
	for _, l := range s.out {
		if !strings.HasPrefix(l, prefix+" ") {
			continue
		}
		for _, f := range strings.Fields(l) {
			if v, ok := strings.CutPrefix(f, key+"="); ok {
				n, err := strconv.ParseInt(strings.TrimPrefix(v, "0x"), map[bool]int{true: 16, false: 10}[strings.HasPrefix(v, "0x")], 64)
				if err != nil {
					t.Fatalf("parse %q: %v", f, err)
				}
				return n
			}
		}
	}
	t.Fatalf("program printed no %s %s= (output %q)", prefix, key, s.out)
	return 0
}

// uwRunStopped starts bin and waits until it has uwStopped itself, then reads
// its registers with ptrace and builds its symbol table from
// /proc/PID/maps. The process is detached (still uwStopped) on return and
// killed when the test ends.
func uwRunStopped(t *testing.T, bin string, args ...string) *uwStopped {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	s := &uwStopped{pid: cmd.Process.Pid}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(20 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s exited before it was ready; output %q", bin, s.out)
			}
			if l == "ready" {
				break wait
			}
			s.out = append(s.out, l)
		case <-timeout:
			t.Fatalf("%s did not get ready", bin)
		}
	}
	go func() {
		for range lines { // keep the pipe drained
		}
	}()
	// "ready" is printed just before raise(SIGSTOP): wait for the stop.
	for i := 0; ; i++ {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:])); len(f) > 0 && f[0] == "T" {
			break
		}
		if i > 2000 {
			t.Fatalf("process %d did not stop", s.pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	regs, err := uwPtraceRegs(s.pid)
	if err != nil {
		t.Fatalf("ptrace: %v", err)
	}
	s.regs = regs
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", s.pid))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	s.mem = uwProcMem{f}
	s.table = uwTableOf(t, s.pid)
	return s
}

// uwPtraceRegs seizes a uwStopped process, reads its registers and detaches,
// leaving it uwStopped. ptrace requests must all come from one thread.
func uwPtraceRegs(pid int) (Regs, error) {
	type result struct {
		regs Regs
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var res result
		defer func() { ch <- res }()
		if err := unix.PtraceSeize(pid); err != nil {
			res.err = fmt.Errorf("seize %d: %w", pid, err)
			return
		}
		defer unix.PtraceDetach(pid)
		if err := unix.PtraceInterrupt(pid); err != nil {
			res.err = fmt.Errorf("interrupt %d: %w", pid, err)
			return
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
			res.err = fmt.Errorf("wait %d: %w", pid, err)
			return
		}
		if !ws.Stopped() {
			res.err = fmt.Errorf("process %d is not uwStopped: %v", pid, ws)
			return
		}
		var pr unix.PtraceRegs
		if err := unix.PtraceGetRegs(pid, &pr); err != nil {
			res.err = fmt.Errorf("getregs %d: %w", pid, err)
			return
		}
		r := &res.regs
		for n, v := range map[int]uint64{RegRAX: pr.Rax, RegRDX: pr.Rdx, RegRCX: pr.Rcx, RegRBX: pr.Rbx,
			RegRSI: pr.Rsi, RegRDI: pr.Rdi, RegRBP: pr.Rbp, RegRSP: pr.Rsp, 8: pr.R8, 9: pr.R9, 10: pr.R10,
			11: pr.R11, 12: pr.R12, 13: pr.R13, 14: pr.R14, 15: pr.R15, RegRIP: pr.Rip} {
			r.Set(n, v)
		}
		r.FSBase = pr.Fs_base
	}()
	res := <-ch
	return res.regs, res.err
}

// uwTableOf loads the images mapped in a process: the executable first,
// then every other file mapped from offset 0.
func uwTableOf(t *testing.T, pid int) *Table {
	t.Helper()
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	tab := &Table{}
	seen := map[string]bool{}
	var rest []*Image
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") || f[2] != "00000000" || seen[f[5]] {
			continue
		}
		seen[f[5]] = true
		start, _ := strconv.ParseUint(strings.Split(f[0], "-")[0], 16, 64)
		img, err := LoadImage(f[5], start)
		if err != nil {
			t.Fatalf("load %s: %v", f[5], err)
		}
		if f[5] == exe {
			tab.Images = append(tab.Images, img)
		} else {
			rest = append(rest, img)
		}
	}
	if len(tab.Images) != 1 {
		t.Fatalf("executable %s not mapped in %d", exe, pid)
	}
	tab.Images = append(tab.Images, rest...)
	t.Cleanup(tab.Close)
	return tab
}

// uwGdbFrame is one physical frame of gdb's backtrace.
type uwGdbFrame struct {
	pc, sp uint64
	name   string
	sig    bool
}

const uwGdbScript = `
import gdb
f = gdb.newest_frame()
while f is not None:
    # Inline and tail-call frames are gdb's reconstructions from DWARF,
    # not physical frames.
    if f.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
        print("FRAME 0x%x %s %s 0x%x" % (f.pc(), f.name() or "??", "sig" if f.type() == gdb.SIGTRAMP_FRAME else "normal", int(f.read_register("rsp"))))
    try:
        f = f.older()
    except gdb.error:
        break
for expr in ["&tl", "&counter"]:
    try:
        print("EXPR %s 0x%x" % (expr, int(gdb.parse_and_eval(expr))))
    except gdb.error as e:
        print("EXPR %s error %s" % (expr, e))
`

// uwGdbBacktrace runs gdb on the uwStopped process and returns its physical
// frames and the values of the expressions of uwGdbScript.
func uwGdbBacktrace(t *testing.T, pid int) ([]uwGdbFrame, map[string]uint64) {
	t.Helper()
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb is not installed")
	}
	script := filepath.Join(t.TempDir(), "bt.py")
	if err := os.WriteFile(script, []byte(uwGdbScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gdb", "-nx", "-batch", "-ex", "set backtrace past-main on", "-p", strconv.Itoa(pid), "-ex", "source "+script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	var frames []uwGdbFrame
	exprs := map[string]uint64{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 5 && f[0] == "FRAME":
			pc, _ := strconv.ParseUint(f[1], 0, 64)
			sp, _ := strconv.ParseUint(f[4], 0, 64)
			frames = append(frames, uwGdbFrame{pc: pc, sp: sp, name: f[2], sig: f[3] == "sig"})
		case len(f) == 3 && f[0] == "EXPR":
			if v, err := strconv.ParseUint(f[2], 0, 64); err == nil {
				exprs[f[1]] = v
			}
		}
	}
	if len(frames) == 0 {
		t.Fatalf("gdb printed no frames:\n%s", out)
	}
	return frames, exprs
}

// uwAliases returns the names of the uwSymbols at the address of the symbol
// containing pc.
func uwAliases(tab *Table, pc uint64) map[string]bool {
	names := map[string]bool{}
	s, _, ok := tab.At(pc)
	if !ok {
		return names
	}
	for _, img := range tab.Images {
		for _, o := range img.Symbols() {
			if o.Addr == s.Addr && o.Image == s.Image {
				names[o.Name], names[o.Raw] = true, true
			}
		}
	}
	return names
}

func uwSymbols(frames []Frame) []string {
	var out []string
	for _, f := range frames {
		out = append(out, f.Symbol)
	}
	return out
}

// uwHasSequence says whether want appears in got in order, consecutively.
func uwHasSequence(got, want []string) bool {
	for i := 0; i+len(want) <= len(got); i++ {
		ok := true
		for j := range want {
			if got[i+j] != want[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func TestUnwindLiveProcess(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		stripCF bool // remove .eh_frame so only frame pointers are left
		args    []string
		want    []string
	}{
		{name: "O0", flags: []string{"-g", "-O0"}, want: []string{"c", "b", "a", "main"}},
		{name: "O2-omit-frame-pointer", flags: []string{"-g", "-O2", "-fomit-frame-pointer"}, want: []string{"c", "b", "a", "main"}},
		{name: "frame-pointers-only", stripCF: true,
			flags: []string{"-O0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-fno-omit-frame-pointer"},
			want:  []string{"c", "b", "a", "main"}},
		{name: "signal-O2", flags: []string{"-g", "-O2", "-fomit-frame-pointer"}, args: []string{"segv"},
			want: []string{"handler", SignalFrameSymbol, "c", "b", "a", "main"}},
		{name: "signal-O0", flags: []string{"-g", "-O0"}, args: []string{"segv"},
			want: []string{"handler", SignalFrameSymbol, "c", "b", "a", "main"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := uwBuildC(t, "chain.c", tc.flags...)
			if tc.stripCF {
				if b, err := exec.Command("objcopy", "--remove-section", ".eh_frame", "--remove-section", ".eh_frame_hdr", "--remove-section", ".debug_frame", bin).CombinedOutput(); err != nil {
					t.Fatalf("objcopy: %v\n%s", err, b)
				}
			}
			p := uwRunStopped(t, bin, tc.args...)
			frames := p.table.Unwind(p.regs, p.mem, 64)
			got := uwSymbols(frames)
			t.Logf("frames: %q", got)
			if !uwHasSequence(got, tc.want) {
				t.Fatalf("backtrace %q does not contain %q", got, tc.want)
			}
			exe := p.table.Images[0]
			if tc.stripCF {
				c, _ := exe.Lookup("c")
				if _, _, ok := exe.cfiTables().findFDE(c.Addr); ok {
					t.Fatal("c still has call frame information")
				}
			}
			for i, f := range frames {
				if f.Level != i {
					t.Errorf("frame %d has level %d", i, f.Level)
				}
				if i > 0 && f.CFA != 0 && f.CFA <= frames[i-1].CFA && f.Symbol != SignalFrameSymbol && frames[i-1].Symbol != SignalFrameSymbol {
					t.Errorf("frame %d CFA %#x not above frame %d's %#x", i, f.CFA, i-1, frames[i-1].CFA)
				}
				if i > 0 && f.Regs.SP() != frames[i-1].CFA && frames[i-1].Symbol != SignalFrameSymbol {
					t.Errorf("frame %d sp %#x is not the CFA %#x of frame %d", i, f.Regs.SP(), frames[i-1].CFA, i-1)
				}
			}
			// gdb reads the same uwStopped process: its physical frames must
			// be ours, pc for pc and sp for sp.
			gf, _ := uwGdbBacktrace(t, p.pid)
			if len(gf) != len(frames) {
				t.Errorf("gdb has %d frames, we have %d", len(gf), len(frames))
			}
			for i := 0; i < len(gf) && i < len(frames); i++ {
				g, f := gf[i], frames[i]
				if g.pc != f.PC || g.sp != f.Regs.SP() {
					t.Errorf("frame %d: gdb pc %#x sp %#x (%s), we pc %#x sp %#x (%s)", i, g.pc, g.sp, g.name, f.PC, f.Regs.SP(), f.Symbol)
					continue
				}
				lookup := f.PC
				if i > 0 && frames[i-1].Symbol != SignalFrameSymbol {
					lookup--
				}
				switch {
				case g.sig:
					if f.Symbol != SignalFrameSymbol {
						t.Errorf("frame %d: gdb has a signal frame, we %q", i, f.Symbol)
					}
				case g.name != "??" && !uwAliases(p.table, lookup)[g.name]:
					t.Errorf("frame %d: gdb names it %s, we %q", i, g.name, f.Symbol)
				}
			}
		})
	}
}

// TestUnwindCallerSavedRegisters checks which registers a caller frame
// has: the callee-saved ones the CFI describes, never the scratch ones.
func TestUnwindCallerSavedRegisters(t *testing.T) {
	bin := uwBuildC(t, "chain.c", "-g", "-O2", "-fomit-frame-pointer")
	p := uwRunStopped(t, bin)
	frames := p.table.Unwind(p.regs, p.mem, 64)
	var b *Frame
	for i := range frames {
		if frames[i].Symbol == "b" {
			b = &frames[i]
		}
	}
	if b == nil {
		t.Fatalf("no frame b in %q", uwSymbols(frames))
	}
	tests := []struct {
		reg   int
		valid bool
	}{
		{RegRIP, true}, {RegRSP, true}, {RegRBX, true}, {RegRBP, true}, {12, true}, {RegR15, true},
		{RegRAX, false}, {RegRDI, false}, {RegRSI, false}, {RegRDX, false}, {RegRCX, false}, {8, false}, {11, false},
	}
	for _, tc := range tests {
		if b.Regs.Valid[tc.reg] != tc.valid {
			t.Errorf("frame b: register %s valid=%v, want %v", regName(uint64(tc.reg)), b.Regs.Valid[tc.reg], tc.valid)
		}
	}
	if b.Regs.FSBase != p.regs.FSBase {
		t.Errorf("fs_base not carried to callers")
	}
}

// TestUnwindMax checks the frame limit and that frame 0 at a function's
// first instruction needs no CFI row beyond the CIE's.
func TestUnwindMax(t *testing.T) {
	bin := uwBuildC(t, "chain.c", "-g", "-O0")
	p := uwRunStopped(t, bin)
	for _, max := range []int{1, 2, 3} {
		if got := p.table.Unwind(p.regs, p.mem, max); len(got) != max {
			t.Errorf("Unwind(max=%d) returned %d frames", max, len(got))
		}
	}
	// Pretend the process is at the entry of c, called from b: the return
	// address is at the top of the stack.
	all := p.table.Unwind(p.regs, p.mem, 64)
	var bi int
	for i, f := range all {
		if f.Symbol == "b" {
			bi = i
		}
	}
	c, _ := p.table.Lookup("c")
	var entry Regs
	entry.Set(RegRIP, c.Addr)
	entry.Set(RegRSP, all[bi].Regs.SP()-8) // where the call pushed b's return address
	entry.Set(RegRBP, all[bi].Regs.R[RegRBP])
	got := p.table.Unwind(entry, p.mem, 64)
	if s := uwSymbols(got); !uwHasSequence(s, []string{"c", "b", "a", "main"}) {
		t.Fatalf("from c's entry: %q", s)
	}
	if got[1].PC != all[bi].PC {
		t.Errorf("from c's entry: return address %#x, want %#x", got[1].PC, all[bi].PC)
	}
}
