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

// These tests run real programs from testdata/unwind, stopped by
// raise(SIGSTOP), and read their live stacks through ptrace and
// /proc/PID/mem. gdb, when installed, gives the reference backtrace.

// uwBuildC compiles testdata/unwind/src with gcc and the given flags.
func uwBuildC(t *testing.T, src string, flags ...string) string {
	t.Helper()
	return uwBuildWith(t, "gcc", src, flags...)
}

// uwBuildWith compiles testdata/unwind/src with a C compiler (gcc when cc
// is empty), skipping the test when the compiler is not installed.
func uwBuildWith(t *testing.T, cc, src string, flags ...string) string {
	t.Helper()
	if cc == "" {
		cc = "gcc"
	}
	return compileTest(t, cc, filepath.Join("..", "testdata", "unwind", src), append([]string{"-w"}, flags...)...)
}

// uwProcMem reads a process's memory through /proc/PID/mem.
type uwProcMem struct{ f *os.File }

func (m uwProcMem) ReadAt(p []byte, addr uint64) (int, error) {
	if addr >= 1<<63 {
		return 0, fmt.Errorf("address %#x beyond the file offsets of /proc/PID/mem", addr)
	}
	return m.f.ReadAt(p, int64(addr))
}

// uwStopped is a test program that stopped itself.
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

// uwRunStopped starts bin and waits until it has stopped itself, then reads
// its registers with ptrace and builds its symbol table from
// /proc/PID/maps. The process is detached (still stopped) on return and
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

// uwPtraceRegs seizes a stopped process, reads its registers and detaches,
// leaving it stopped. ptrace requests must all come from one thread.
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

// uwGdbBacktrace runs gdb on the stopped process and returns its physical
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

// uwAliases returns the names of the symbols at the address of the symbol
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
		cc      string // gcc when empty
		flags   []string
		stripCF bool // remove .eh_frame and .debug_frame: only frame pointers are left
		stripEH bool // remove .eh_frame: only .debug_frame is left
		args    []string
		want    []string
	}{
		{name: "clang-O2", cc: "clang", flags: []string{"-g", "-O2", "-fomit-frame-pointer"}, want: []string{"c", "b", "a", "main"}},
		// clang writes version 4 CIEs into .debug_frame.
		{name: "clang-debug-frame-only", cc: "clang", stripEH: true,
			flags: []string{"-g", "-gdwarf-5", "-O2", "-fomit-frame-pointer", "-fno-asynchronous-unwind-tables"},
			want:  []string{"c", "b", "a", "main"}},
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
			bin := uwBuildWith(t, tc.cc, "chain.c", tc.flags...)
			strip := []string{"--remove-section", ".eh_frame", "--remove-section", ".eh_frame_hdr"}
			if tc.stripCF {
				strip = append(strip, "--remove-section", ".debug_frame")
			}
			if tc.stripCF || tc.stripEH {
				if b, err := exec.Command("objcopy", append(strip, bin)...).CombinedOutput(); err != nil {
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
			c, _ := exe.Lookup("c")
			_, eh, ok := exe.cfiTables().findFDE(c.Addr)
			switch {
			case tc.stripCF && ok:
				t.Fatal("c still has call frame information")
			case tc.stripEH && (!ok || eh):
				t.Fatalf("c's call frame information: found %v, in .eh_frame %v; want .debug_frame", ok, eh)
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
			if len(tc.args) > 0 {
				uwCheckSignalCFI(t, p, frames)
			}
			// gdb reads the same stopped process: its physical frames must
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
// has: the callee-saved ones as the CFI restores them, and, as gdb takes
// them, the scratch ones no frame saves with the innermost frame's values.
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
		reg     int
		inner   bool // the innermost frame's value
		restore bool // restored by the CFI, valid
	}{
		{RegRIP, false, true}, {RegRSP, false, true}, {RegRBX, false, true}, {RegRBP, false, true}, {12, false, true}, {RegR15, false, true},
		{RegRAX, true, true}, {RegRDI, true, true}, {RegRSI, true, true}, {RegRDX, true, true}, {RegRCX, true, true}, {8, true, true}, {11, true, true},
	}
	for _, tc := range tests {
		if b.Regs.Valid[tc.reg] != tc.restore {
			t.Errorf("frame b: register %s valid=%v, want %v", RegName(uint64(tc.reg)), b.Regs.Valid[tc.reg], tc.restore)
		}
		if tc.inner && b.Regs.R[tc.reg] != p.regs.R[tc.reg] {
			t.Errorf("frame b: register %s = %#x, want the innermost frame's %#x", RegName(uint64(tc.reg)), b.Regs.R[tc.reg], p.regs.R[tc.reg])
		}
	}
	if b.Regs.FSBase != p.regs.FSBase {
		t.Errorf("fs_base not carried to callers")
	}
}

// TestUnwindMax checks the frame limit.
func TestUnwindMax(t *testing.T) {
	bin := uwBuildC(t, "chain.c", "-g", "-O0")
	p := uwRunStopped(t, bin)
	for _, max := range []int{0, 1, 2, 3} {
		if got := p.table.Unwind(p.regs, p.mem, max); len(got) != max {
			t.Errorf("Unwind(max=%d) returned %d frames", max, len(got))
		}
	}
}

// TestUnwindFunctionEntry unwinds from registers made to stand at c's
// first instructions, called from b: with CFI, and without it, where the
// unwinder must know that the return address is at the top of the stack
// (and, after push %rbp, just above it).
func TestUnwindFunctionEntry(t *testing.T) {
	tests := []struct {
		name      string
		flags     []string
		strip     bool
		afterPush bool
	}{
		{name: "cfi", flags: []string{"-g", "-O0"}},
		{name: "no-cfi", flags: []string{"-O0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"}, strip: true},
		{name: "no-cfi-after-push", flags: []string{"-O0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"}, strip: true, afterPush: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := uwBuildC(t, "chain.c", tc.flags...)
			if tc.strip {
				if b, err := exec.Command("objcopy", "--remove-section", ".eh_frame", "--remove-section", ".eh_frame_hdr", bin).CombinedOutput(); err != nil {
					t.Fatalf("objcopy: %v\n%s", err, b)
				}
			}
			p := uwRunStopped(t, bin)
			all := p.table.Unwind(p.regs, p.mem, 64)
			bi := uwFrameOf(t, all, "b")
			c, _ := p.table.Lookup("c")
			code := make([]byte, 1)
			p.mem.ReadAt(code, c.Addr)
			// c's frame is still on the stack: b's return address at
			// b's sp-8, and b's rbp, pushed by c, below it.
			var entry Regs
			entry.Set(RegRIP, c.Addr)
			entry.Set(RegRSP, all[bi].Regs.SP()-8)
			entry.Set(RegRBP, all[bi].Regs.R[RegRBP])
			if tc.afterPush {
				if code[0] != 0x55 {
					t.Fatalf("c starts with %#x, not push %%rbp", code[0])
				}
				entry.Set(RegRIP, c.Addr+1)
				entry.Set(RegRSP, all[bi].Regs.SP()-16)
				// b's rbp must come from the stack slot push wrote, not
				// from the register.
				entry.Set(RegRBP, 0)
			}
			got := p.table.Unwind(entry, p.mem, 64)
			if s := uwSymbols(got); !uwHasSequence(s, []string{"c", "b", "a", "main"}) {
				t.Fatalf("from c's entry: %q", s)
			}
			if got[1].PC != all[bi].PC || got[1].Regs.SP() != all[bi].Regs.SP() || got[1].Regs.R[RegRBP] != all[bi].Regs.R[RegRBP] {
				t.Errorf("from c's entry: b at pc %#x sp %#x rbp %#x, want %#x %#x %#x", got[1].PC, got[1].Regs.SP(), got[1].Regs.R[RegRBP],
					all[bi].PC, all[bi].Regs.SP(), all[bi].Regs.R[RegRBP])
			}
		})
	}
}

// uwCheckSignalCFI unwinds the signal trampoline frame a second way, with
// glibc's hand-written CFI for __restore_rt (augmentation "zRS", CFA and
// every register given by DWARF expressions), and checks that it finds
// the registers read from the kernel's sigcontext.
func uwCheckSignalCFI(t *testing.T, p *uwStopped, frames []Frame) {
	t.Helper()
	k := -1
	for i, f := range frames {
		if f.Symbol == SignalFrameSymbol {
			k = i
		}
	}
	if k < 0 || k+1 >= len(frames) {
		t.Fatalf("no signal frame with a caller in %q", uwSymbols(frames))
	}
	tramp := frames[k]
	img := p.table.ImageAt(tramp.PC)
	fde, eh, ok := img.cfiTables().findFDE(tramp.PC - 1)
	if !ok {
		t.Fatalf("no FDE for __restore_rt at %#x", tramp.PC)
	}
	if !strings.ContainsRune(fde.CIE.Augmentation, 'S') {
		t.Errorf("__restore_rt's CIE augmentation %q lacks S", fde.CIE.Augmentation)
	}
	st, err := cfiStep(img, fde, &tramp.Regs, p.mem, tramp.PC-1, eh)
	if err != nil {
		t.Fatalf("CFI of __restore_rt: %v", err)
	}
	if !st.signal || st.cfa != tramp.CFA {
		t.Errorf("CFI: signal=%v cfa %#x, want a signal frame with CFA %#x", st.signal, st.cfa, tramp.CFA)
	}
	want := frames[k+1].Regs
	for r := 0; r < NumRegs; r++ {
		if !want.Valid[r] || !st.caller.Valid[r] || st.caller.R[r] != want.R[r] {
			t.Errorf("%s: CFI gives %#x (valid %v), sigcontext %#x (valid %v)", RegName(uint64(r)), st.caller.R[r], st.caller.Valid[r], want.R[r], want.Valid[r])
		}
	}
}

// TestUnwindGoDebugFrame unwinds a Go program, whose only call frame
// information is .debug_frame, and compares with gdb.
func TestUnwindGoDebugFrame(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	bin := filepath.Join(t.TempDir(), "gochain")
	cmd := exec.Command(goTool, "build", "-o", bin, "main.go")
	cmd.Dir = filepath.Join("..", "testdata", "unwind", "gochain")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	p := uwRunStopped(t, bin)
	exe := p.table.Images[0]
	if c := exe.cfiTables(); len(c.debug) == 0 || len(c.eh) != 0 {
		t.Fatalf("want .debug_frame only: %d .eh_frame and %d .debug_frame FDEs", len(c.eh), len(c.debug))
	}
	frames := p.table.Unwind(p.regs, p.mem, 64)
	got := uwSymbols(frames)
	t.Logf("frames: %q", got)
	if !uwHasSequence(got, []string{"main.c", "main.b", "main.a", "main.main", "runtime.main"}) {
		t.Fatalf("backtrace %q lacks main.c, main.b, main.a, main.main, runtime.main", got)
	}
	gf, _ := uwGdbBacktrace(t, p.pid)
	if n := len(gf); n > 0 && gf[n-1].pc == 0 {
		gf = gf[:n-1] // gdb shows runtime.goexit's zero return address; we stop there
	}
	for i := 0; i < len(gf) && i < len(frames); i++ {
		g, f := gf[i], frames[i]
		// gdb names functions by DWARF, without the ELF symbol's ABI suffix.
		if g.pc != f.PC || g.sp != f.Regs.SP() || g.name != strings.TrimSuffix(f.Symbol, ".abi0") {
			t.Errorf("frame %d: gdb %s pc %#x sp %#x, we %s pc %#x sp %#x", i, g.name, g.pc, g.sp, f.Symbol, f.PC, f.Regs.SP())
		}
	}
	if len(gf) != len(frames) {
		t.Errorf("gdb has %d frames, we have %d", len(gf), len(frames))
	}
	// Go's parameters: DWARF 5 location lists over registers and stack
	// slots, with DW_OP_call_frame_cfa frame bases.
	for _, fn := range []string{"c", "b", "a"} {
		f := uwFindFunc(t, exe, "main."+fn)
		i := uwFrameOf(t, frames, "main."+fn)
		ctx, pc := uwContext(t, p, frames, i, f)
		_, _, b := uwRead(t, p, ctx, pc, f, f.vars["x"], 8)
		if got, want := uwInt(b), p.value(t, fn, "x"); got != want {
			t.Errorf("main.%s's x = %d, program printed %d", fn, got, want)
		}
	}
}
