package hook

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/engine/internal/gccimage"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

// TestLayout checks the Go constants against src/layout.h, which the
// image is built with.
func TestLayout(t *testing.T) {
	h, err := os.ReadFile("src/layout.h")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"HOOK_BASE": Base, "HOOK_UNTRACED": Untraced, "HOOK_TRACED": Traced, "HOOK_REEXEC": Reexec, "HOOK_ENTRY": Entry,
		"CTL_MISS_NR": ctlMissNr, "CTL_MISS_RET": ctlMissRet, "CTL_WAITING": ctlWaiting, "CTL_XCR0": ctlXCR0,
		"FLAG_WAIT": flagWait, "FLAG_STD_TRACED": flagStdTraced, "RETRACE": Retrace,
		"HOOK_CTL": Ctl, "HOOK_STACK_TOP": StackTop, "HOOK_BUF": Buf, "HOOK_BUF_SIZE": BufSize, "HOOK_SIZE": Size,
		"HOOK_FILES": Files, "HOOK_FILES_MAX": FilesMax, "CTL_NFILES": ctlNFiles,
		"HOOK_TRAP_CODE": TrapCode, "HOOK_TRAP_STACK_TOP": TrapStackTop, "CTL_TRAP_RSP": ctlTrapRSP, "CTL_NSHARED": ctlNShared, "CTL_SHARED_MAPS": ctlShared, "SHARED_MAX": SharedMax, "HOOK_TRAP_ENTRY": TrapEntry, "NR_RDTSC": NrRdtsc, "FILE_NEW": FileNew, "NEWFILE_MAX": NewFileMax, "NEWFILE_PATH": newFilePath, "FLAG_TSC_TRAP": flagTscTrap, "HOOK_CPUID_TABLE": CpuidTable, "HOOK_CPUID_MAX": CpuidMax, "CTL_NCPUID": ctlNCpuid, "TRAP_MISS_SKIP": trapMissSkip,
		"CTL_MODE": ctlMode, "CTL_LEN": ctlLen, "CTL_USER_RSP": ctlUserRSP, "CTL_CALLS": ctlCalls, "CTL_POS": ctlPos, "CTL_STUB": ctlStub, "STUB_RET": stubRet, "STUB_TAIL": stubTail, "STUB_LEN": StubLen, "CTL_RET": ctlRet,
		"CTL_FLAGS": ctlFlags, "CTL_STREAMS": ctlStreams, "CTL_PROC_DEV": ctlProcDev, "FLAG_SHARED": flagShared,
		"MODE_TRACED": uint64(ModeTraced), "MODE_RECORD": uint64(ModeRecord), "MODE_REPLAY": uint64(ModeReplay)}
	re := regexp.MustCompile(`(?m)^#define (\w+) (0x[0-9a-fA-F]+|\d+)`)
	seen := 0
	for _, m := range re.FindAllStringSubmatch(string(h), -1) {
		v, _ := strconv.ParseUint(m[2], 0, 64)
		w, ok := want[m[1]]
		if !ok {
			t.Errorf("layout.h defines %s, which hook.go does not", m[1])
			continue
		}
		seen++
		if v != w {
			t.Errorf("%s: layout.h says %#x, hook.go %#x", m[1], v, w)
		}
	}
	if seen != len(want) {
		t.Errorf("layout.h defines %d of the %d constants", seen, len(want))
	}
	if UntracedIP != ptrace.UntracedIP || ReexecIP != ptrace.ReexecIP {
		t.Errorf("the filter lets calls from %#x and %#x through, the hook makes them at %#x and %#x", ptrace.UntracedIP, ptrace.ReexecIP, UntracedIP, ReexecIP)
	}
	if len(Image) > CodeSize || !bytes.Equal(Image[:6], []byte{0x0f, 0x05, 0xc3, 0x0f, 0x05, 0xc3}) {
		t.Errorf("hook.bin: %d bytes, starting % x: want the two syscall; ret first, under %d bytes", len(Image), Image[:6], CodeSize)
	}
}

// TestImage rebuilds the image and compares it with hook.bin, when the
// compiler is the one it was built with (another may lay it out otherwise).
func TestImage(t *testing.T) {
	gccimage.Check(t, Image, "hook.bin", "src/build.sh", "./engine/hook", "objcopy")
}

// TestRecordMode runs the hook in a program of its own, its sites patched
// as the recorder patches them: calls it knows are recorded with their
// results and outputs, others are made and not recorded, every register a
// system call keeps is kept, and each call returns where it came from.
func TestRecordMode(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "harness")
	cc.Build(t, "testdata/harness.c", prog, "-O1", "-no-pie", "-mno-red-zone")
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	textSec := f.Section(".text")
	textData, err := textSec.Data()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The rip after each site's syscall: site_generic's is after two movs.
	ripOff := map[string]uint64{"site_getppid": 7, "site_clock_gettime": 7, "site_write": 7, "site_generic": 8}
	sites := map[string]uint64{}
	var replayTS uint64
	for _, s := range syms {
		if off, ok := ripOff[s.Name]; ok {
			sites[s.Name] = s.Value + off
		}
		if s.Name == "replay_ts" {
			replayTS = s.Value
		}
	}
	var patches []byte
	add := func(addr uint64, b []byte) {
		patches = binary.LittleEndian.AppendUint64(patches, addr)
		patches = binary.LittleEndian.AppendUint32(patches, uint32(len(b)))
		patches = append(patches, b...)
	}
	stub := uint64(0x10000000)
	for _, name := range []string{"site_getppid", "site_clock_gettime", "site_write", "site_generic"} {
		rip := sites[name]
		off := rip - textSec.Addr
		code := textData[off-SiteBefore : off-SiteBefore+SiteCode]
		nr := map[string]uint32{"site_getppid": 110, "site_clock_gettime": 228, "site_write": 1, "site_generic": 110}[name]
		site, ok := FindSite(code, rip, nr)
		want := ShapeMov
		if name == "site_generic" {
			want = ShapeCmp
		}
		if !ok || site.Shape != want {
			t.Fatalf("FindSite(% x) for %s = %+v, %v; want shape %d", code, name, site, ok, want)
		}
		code2, err := site.Stub(stub)
		if err != nil {
			t.Fatal(err)
		}
		jmp, err := site.Jump(stub)
		if err != nil {
			t.Fatal(err)
		}
		if len(jmp) != site.Len() {
			t.Fatalf("%s: a jump of %d bytes for %d", name, len(jmp), site.Len())
		}
		add(stub, code2)
		add(site.Start(), jmp)
		stub += StubLen
	}
	img := filepath.Join(dir, "hook.bin")
	os.WriteFile(img, Image, 0o644)
	os.WriteFile(filepath.Join(dir, "patches"), patches, 0o644)
	recs := filepath.Join(dir, "records")
	// Replay's records: a getppid and a clock_gettime(CLOCK_MONOTONIC)
	// with made-up answers, which only the hook can give.
	var replay []byte
	replay = AppendRecord(replay, &Record{Nr: 110, Ret: 12345})
	fake := make([]byte, 16)
	binary.LittleEndian.PutUint64(fake, 777)
	binary.LittleEndian.PutUint64(fake[8:], 888)
	replay = AppendRecord(replay, &Record{Nr: 228, Args: [6]uint64{1, replayTS}, Outputs: []Output{{Addr: replayTS, Data: fake}}})
	if rs, err := ParseRecords(replay); err != nil || len(rs) != 2 || rs[1].Args[1] != replayTS || !bytes.Equal(rs[1].Outputs[0].Data, fake) {
		t.Fatalf("ParseRecords(AppendRecord) = %+v, %v", rs, err)
	}
	replayFile := filepath.Join(dir, "replay")
	os.WriteFile(replayFile, replay, 0o644)
	out, err := exec.Command(prog, img, filepath.Join(dir, "patches"), recs, replayFile).CombinedOutput()
	if err != nil {
		t.Fatalf("harness: %v\n%s", err, out)
	}
	text := string(out)
	var ppid, wantPPID, cr, sec, nsec, calls int64
	var wr, hw int
	var bad uint64
	lines := strings.Split(text, "\n")
	if len(lines) < 8 {
		t.Fatalf("harness printed:\n%s", text)
	}
	parse := func(i int, format string, args ...any) {
		if _, err := fmt.Sscanf(lines[i], format, args...); err != nil {
			t.Fatalf("harness line %q: %v\n%s", lines[i], err, text)
		}
	}
	if lines[0] != "written" {
		t.Errorf("the write through the hook: %q, want \"written\"", lines[0])
	}
	parse(1, "getppid %d want %d", &ppid, &wantPPID)
	parse(2, "clock_gettime %d %d.%d", &cr, &sec, &nsec)
	parse(3, "write %d %d", &wr, &hw)
	parse(4, "regs changed %v", &bad)
	var gen int64
	parse(5, "generic %d", &gen)
	parse(6, "calls %d", &calls)
	if ppid != wantPPID || cr != 0 || wr != 8 || hw != 42 || bad != 0 || gen != wantPPID || calls != 6 {
		t.Errorf("through the hook: getppid %d (want %d), clock_gettime %d, writes %d and %d, registers changed %#x, syscall(getppid) %d, calls %d (want 6)",
			ppid, wantPPID, cr, wr, hw, bad, gen, calls)
	}
	// Replay mode: the two records answered the calls that match them,
	// and the others were made.
	var rppid, rcr, rsec, rnsec, realtime, rppid2, pos int64
	parse(7, "replay getppid %d clock_gettime %d %d.%d realtime %d getppid %d pos %d", &rppid, &rcr, &rsec, &rnsec, &realtime, &rppid2, &pos)
	if rppid != 12345 || rcr != 0 || rsec != 777 || rnsec != 888 || realtime != 1 || rppid2 != wantPPID || pos != int64(len(replay)) {
		t.Errorf("replay mode: %s\nwant getppid 12345, clock_gettime 0 777.000000888, realtime 1, getppid %d, pos %d", lines[7], wantPPID, len(replay))
	}

	buf, _ := os.ReadFile(recs)
	rs, err := ParseRecords(buf)
	if err != nil {
		t.Fatal(err)
	}
	// (The write goes to the standard output rewind passed, a pipe: the
	// recorder's, as another thread's write may be waiting there.)
	if len(rs) != 5 {
		t.Fatalf("%d records, want 5 (getppid, clock_gettime, getppid twice, the write to /dev/null; the write to the stdout pipe is not recorded): %+v", len(rs), rs)
	}
	// The hook's hash of what the write wrote is the recorder's.
	const hashed = "the hook hashes these 42 bytes: crc32c!!!\n"
	if r := rs[4]; r.Nr != 1 || r.Ret != 42 || r.Hash != trace.WriteSum(trace.WriteHashCRC, []byte(hashed)) {
		t.Errorf("the write's record: %+v, want 42 bytes hashed %#x", r, trace.WriteSum(trace.WriteHashCRC, []byte(hashed)))
	}
	if r := rs[3]; r.Nr != 110 || r.Ret != ppid || r.Site != sites["site_generic"] {
		t.Errorf("syscall(getppid)'s record: %+v, want ret %d at %#x", r, ppid, sites["site_generic"])
	}
	if r := rs[0]; r.Nr != 110 || r.Ret != ppid || r.Site != sites["site_getppid"] || len(r.Outputs) != 0 {
		t.Errorf("getppid's record: %+v, want ret %d at %#x", r, ppid, sites["site_getppid"])
	}
	r := rs[1]
	var ts [16]byte //
	binary.LittleEndian.PutUint64(ts[:], uint64(sec))
	binary.LittleEndian.PutUint64(ts[8:], uint64(nsec))
	if r.Nr != 228 || r.Ret != 0 || r.Args[0] != 1 || r.Site != sites["site_clock_gettime"] || len(r.Outputs) != 1 ||
		r.Outputs[0].Addr != r.Args[1] || !bytes.Equal(r.Outputs[0].Data, ts[:]) {
		t.Errorf("clock_gettime's record: %+v, want CLOCK_MONOTONIC and the bytes % x at args[1]", r, ts)
	}
}

// TestBufferable checks Bufferable against the calls hook.c's outputs
// knows (a call patched for but not recorded by the hook costs a stop
// anyway, and one recorded but never patched for is never buffered).
func TestBufferable(t *testing.T) {
	src, err := os.ReadFile("src/hook.c")
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)
	for _, tc := range []struct {
		fn   string
		goes func(uint64) bool
	}{
		{"outputs", Bufferable},
	} {
		start := strings.Index(body, "static int "+tc.fn+"(")
		if start < 0 {
			t.Fatalf("no %s function in src/hook.c", tc.fn)
		}
		end := strings.Index(body[start:], "\n}\n")
		known := map[uint64]bool{}
		for _, m := range regexp.MustCompile(`case (\d+):`).FindAllStringSubmatch(body[start:start+end], -1) {
			n, _ := strconv.ParseUint(m[1], 10, 64)
			known[n] = true
		}
		if len(known) == 0 {
			t.Fatalf("no calls in hook.c's %s", tc.fn)
		}
		for nr := uint64(0); nr < 512; nr++ {
			if tc.goes(nr) != known[nr] {
				t.Errorf("call %d: the Go side says %v, hook.c's %s %v", nr, tc.goes(nr), tc.fn, known[nr])
			}
		}
	}
}
