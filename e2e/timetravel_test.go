package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// batch runs `rewind replay --batch --json` with cmds and decodes one
// result per command.
func batch(t *testing.T, trace string, cmds ...string) []map[string]any {
	t.Helper()
	return batchWith(t, runOpts{}, trace, cmds...)
}

// batchWith is batch with options (a longer timeout for many motions).
func batchWith(t *testing.T, opts runOpts, trace string, cmds ...string) []map[string]any {
	t.Helper()
	args := []string{"replay", "--batch", "--json"}
	for _, c := range cmds {
		args = append(args, "-ex", c)
	}
	args = append(args, trace)
	r := run(t, opts, rewind(t), args...)
	out := ndjson[map[string]any](t, r)
	if len(out) != len(cmds) {
		t.Fatalf("%d results for %d commands:\n%s", len(out), len(cmds), r.Stdout)
	}
	// As gdb's batch mode, the exit status is 1 when the last command
	// failed, 0 otherwise.
	if want := map[bool]int{true: 0, false: 1}[out[len(out)-1]["ok"] == true]; r.Code != want {
		t.Fatalf("batch exit %d, want %d: %s", r.Code, want, r.Stderr)
	}
	return out
}

// recorded compiles (with flags added) and records a testdata program,
// returning the trace.
func recorded(t *testing.T, src string, wantCode int, flags ...string) string {
	t.Helper()
	prog := buildC(t, src, flags...)
	trace := filepath.Join(t.TempDir(), "t.rwd")
	_, stderr, code := record(t, trace, prog)
	if code != wantCode {
		t.Fatalf("record %s: exit %d, want %d: %s", src, code, wantCode, stderr)
	}
	return trace
}

func stopOf(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	if r["ok"] != true {
		t.Fatalf("%v failed: %v", r["command"], r["error"])
	}
	st, _ := r["stop"].(map[string]any)
	if st == nil {
		t.Fatalf("%v: no stop in %v", r["command"], r)
	}
	return st
}

func wantOK(t *testing.T, r map[string]any) {
	t.Helper()
	if r["ok"] != true {
		t.Fatalf("%v failed: %v", r["command"], r["error"])
	}
}

// wantError checks that the command of r failed with an error that says
// says.
func wantError(t *testing.T, r map[string]any, says string) {
	t.Helper()
	if r["ok"] != false || !strings.Contains(fmt.Sprint(r["error"]), says) {
		t.Errorf("%v: %v, want an error saying %q", r["command"], r, says)
	}
}

func TestContinueToCrash(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "crash.c", 139)
	rs := batch(t, trace, "continue", "info registers", "reverse-stepi", "stepi", "info registers", "stepi")
	st := stopOf(t, rs[0])
	if st["reason"] != "signal" || st["signal"] != "SIGSEGV" {
		t.Fatalf("continue stopped with %v, want signal SIGSEGV", st)
	}
	crashPC := st["pc"]
	if rsi := stopOf(t, rs[2]); rsi["pc"] == crashPC || rsi["reason"] != "step" {
		t.Errorf("reverse-stepi stayed at %v (%v)", rsi["pc"], rsi["reason"])
	}
	if si := stopOf(t, rs[3]); si["pc"] != crashPC {
		t.Errorf("stepi after reverse-stepi at %v, want %v", si["pc"], crashPC)
	}
	if !reflect.DeepEqual(rs[1]["value"], rs[4]["value"]) {
		t.Errorf("registers differ after reverse-stepi + stepi:\n%v\n%v", rs[1]["value"], rs[4]["value"])
	}
	regs, _ := rs[1]["value"].(map[string]any)
	if regs["rip"] != crashPC || regs["rsp"] == nil {
		t.Errorf("info registers value %v: want an object with rip %v", regs, crashPC)
	}
	wantError(t, rs[5], "ends here")
}

func TestBreakReverseContinue(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "crash.c", 139)
	rs := batch(t, trace, "break sum", "continue", "continue", "continue", "when",
		"reverse-continue", "when", "reverse-continue", "reverse-continue", "reverse-continue", "bogus")
	wantOK(t, rs[0])
	first := stopOf(t, rs[1])
	if first["reason"] != "breakpoint" || first["function"] != "sum" {
		t.Fatalf("first continue: %v, want the breakpoint in sum", first)
	}
	second := stopOf(t, rs[2])
	crash := stopOf(t, rs[3])
	if second["reason"] != "breakpoint" || crash["reason"] != "signal" {
		t.Fatalf("continue past the breakpoint: %v then %v, want breakpoint then the crash", second, crash)
	}
	back := stopOf(t, rs[5])
	if back["reason"] != "breakpoint" || back["event"] != second["event"] || back["pc"] != second["pc"] {
		t.Errorf("reverse-continue from the crash: %v, want the last breakpoint hit %v", back, second)
	}
	if rs[6]["event"] != second["event"] {
		t.Errorf("when after reverse-continue: %v, want event %v", rs[6], second["event"])
	}
	if again := stopOf(t, rs[7]); again["event"] != first["event"] || again["reason"] != "breakpoint" {
		t.Errorf("second reverse-continue: %v, want the first hit %v", again, first)
	}
	if start := stopOf(t, rs[8]); start["reason"] != "start" {
		t.Errorf("third reverse-continue: %v, want reason start", start)
	}
	if rs[9]["ok"] != true || stopOf(t, rs[9])["reason"] != "start" {
		t.Errorf("reverse-continue at the start: %v", rs[9])
	}
	if rs[10]["ok"] != false || rs[10]["error"] != `unknown command "bogus"` {
		t.Errorf("unknown command: %v", rs[10])
	}
}

func TestGotoSameState(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "nondet.c", 0)
	// An event half-way through: how many events a recording has depends
	// on the machine (the loader's, whether cpuid is one).
	end := batch(t, trace, "goto end", "when")
	wantOK(t, end[1])
	n := int(end[1]["event"].(float64)) / 2
	rs := batch(t, trace,
		fmt.Sprintf("goto #%d", n), "when", "info registers", "x/8xg $rsp",
		"goto end", fmt.Sprintf("goto #%d", n), "info registers", "x/8xg $rsp",
		"goto start", "continue", fmt.Sprintf("goto #%d", n), "info registers")
	wantOK(t, rs[0])
	if rs[1]["value"] != fmt.Sprintf("#%d", n) || rs[1]["event"] != float64(n) {
		t.Errorf("when: %v, want #%d", rs[1], n)
	}
	for _, i := range []int{6, 11} {
		if !reflect.DeepEqual(rs[2]["value"], rs[i]["value"]) {
			t.Errorf("registers at #%d differ by route (%s):\n%v\n%v", n, rs[i]["command"], rs[2]["value"], rs[i]["value"])
		}
	}
	if !reflect.DeepEqual(rs[3]["value"], rs[7]["value"]) {
		t.Errorf("stack at #%d differs from the start and from the end:\n%v\n%v", n, rs[3]["value"], rs[7]["value"])
	}
}

func TestWatchHistory(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "counter.c", 0)
	rs := batch(t, trace, "history *(int*)&counter", "watch -l *(int*)&counter", "continue", "continue",
		"goto end", "reverse-continue", "reverse-continue",
		"watch *(int*)&counter+4", "watch *(int*)&counter+8", "watch *(int*)&counter+12", "watch *(int*)&counter+16")
	wantOK(t, rs[0])
	hist, _ := rs[0]["value"].([]any)
	if len(hist) != 5 {
		t.Fatalf("history: %d writes, want 5: %v", len(hist), rs[0]["value"])
	}
	sum := 0
	for i, h := range hist {
		w := h.(map[string]any)
		old := fmt.Sprintf("%#x", sum)
		sum += i + 1
		if w["old"] != old || w["new"] != fmt.Sprintf("%#x", sum) || w["function"] != "bump" {
			t.Errorf("write %d: %v, want %s -> %#x in bump", i+1, w, old, sum)
		}
	}
	w1, w2 := stopOf(t, rs[2]), stopOf(t, rs[3])
	if w1["reason"] != "watchpoint" || w1["watch"].(map[string]any)["new"] != "0x1" || w2["watch"].(map[string]any)["new"] != "0x3" {
		t.Errorf("watch stops: %v, %v", w1, w2)
	}
	last, prev := stopOf(t, rs[5]), stopOf(t, rs[6])
	if last["reason"] != "watchpoint" || last["watch"].(map[string]any)["new"] != "0xf" || prev["watch"].(map[string]any)["new"] != "0xa" {
		t.Errorf("reverse-continue to watch hits: %v, %v; want the writes of 15 then 10", last, prev)
	}
	for i := 7; i <= 9; i++ {
		wantOK(t, rs[i])
	}
	wantError(t, rs[10], "4 hardware watchpoints")
}

func TestThreadsBreakpoints(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "threads.c", 0)
	rs := batch(t, trace, "break worker", "continue", "continue", "continue", "info threads",
		"reverse-continue", "reverse-continue")
	wantOK(t, rs[0])
	var hits []map[string]any
	for i := 1; i <= 3; i++ {
		st := stopOf(t, rs[i])
		if st["reason"] != "breakpoint" || st["function"] != "worker" {
			t.Fatalf("continue %d: %v, want the breakpoint in worker", i, st)
		}
		hits = append(hits, st)
	}
	if hits[0]["thread"] == hits[1]["thread"] || hits[1]["thread"] == hits[2]["thread"] {
		t.Errorf("each worker should hit in its own thread: %v %v %v", hits[0]["thread"], hits[1]["thread"], hits[2]["thread"])
	}
	threads, _ := rs[4]["value"].([]any)
	if len(threads) < 3 {
		t.Errorf("info threads: %v, want the main thread and the workers", rs[4]["value"])
	}
	for i, want := range []map[string]any{hits[1], hits[0]} {
		got := stopOf(t, rs[5+i])
		if got["thread"] != want["thread"] || got["event"] != want["event"] || got["pc"] != want["pc"] {
			t.Errorf("reverse-continue %d: %v, want %v", i+1, got, want)
		}
	}
}

// TestLibraryBreakpoint: a breakpoint on a libc function set before libc is
// loaded resolves when the library is mapped; the registers include AVX.
func TestLibraryBreakpoint(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "counter.c", 0)
	rs := batch(t, trace, "break printf", "continue", "info all-registers", "info mappings")
	wantOK(t, rs[0])
	if v, _ := rs[0]["value"].(map[string]any); v["pending"] != true {
		t.Errorf("break printf at the start: %v, want pending (libc is not loaded yet)", rs[0]["value"])
	}
	st := stopOf(t, rs[1])
	if st["reason"] != "breakpoint" || !strings.Contains(fmt.Sprint(st["function"]), "printf") {
		t.Errorf("continue: %v, want the breakpoint in printf", st)
	}
	regs, _ := rs[2]["value"].(map[string]any)
	if regs["ymm15"] == nil || regs["xmm0"] == nil || regs["mxcsr"] == nil {
		t.Errorf("info all-registers lacks vector registers: %v", regs)
	}
	found := false
	for _, m := range rs[3]["value"].([]any) {
		if strings.Contains(fmt.Sprint(m.(map[string]any)["path"]), "libc.so") {
			found = true
		}
	}
	if !found {
		t.Errorf("info mappings does not name libc: %v", rs[3]["value"])
	}
}

// TestBreakpointGainsLocations: a breakpoint on a function set while only
// the program is loaded gains the location of the library that dlopen
// maps later (a function of the same name), as gdb re-sets breakpoints at
// each load: it stops in both, forwards and backwards, and info
// breakpoints lists both. Before, a breakpoint resolved once kept its
// first locations: `break opendir` set at the start was ld.so's private
// copy only, never libc's.
func TestBreakpointGainsLocations(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(workDir, "bin", "dlscale")
	lib := filepath.Join(dir, "libscale.so")
	prog := cachedBuild(t, "dlscale", filepath.Join(dir, "dlscale"), func(out string) error {
		if err := compile("gcc", testdataDir, "-g", "-O0", "-shared", "-fPIC", "-o", lib, "source/dlscale/lib.c"); err != nil {
			return err
		}
		return compile("gcc", testdataDir, "-g", "-O0", "-o", out, "source/dlscale/main.c")
	})
	trace := filepath.Join(t.TempDir(), "dlscale.rwd")
	stdout, stderr, code := record(t, trace, prog, lib)
	if code != 0 || !strings.Contains(string(stdout), "a=4 b=13") {
		t.Fatalf("record: exit %d: %s%s", code, stdout, stderr)
	}
	rs := batch(t, trace, "break scale", "info breakpoints", "continue", "continue", "info breakpoints", "reverse-continue", "continue", "continue")
	if v, _ := rs[0]["value"].(map[string]any); len(v["locations"].([]any)) != 1 {
		t.Errorf("break scale at the start: %v, want the program's location only", rs[0]["value"])
	}
	wantStop(t, rs[2], "breakpoint", "scale", 9)
	if st := stopOf(t, rs[2]); !strings.HasSuffix(fmt.Sprint(st["file"]), "main.c") {
		t.Errorf("first stop: %v, want the program's scale (main.c)", st)
	}
	libStop := func(r map[string]any) {
		t.Helper()
		wantStop(t, r, "breakpoint", "scale", 4)
		if st := stopOf(t, r); !strings.HasSuffix(fmt.Sprint(st["file"]), "lib.c") {
			t.Errorf("%v: %v, want the library's scale (lib.c)", r["command"], st)
		}
	}
	libStop(rs[3])
	info, _ := rs[4]["value"].([]any)
	if len(info) != 1 || len(info[0].(map[string]any)["addresses"].([]any)) != 2 {
		t.Errorf("info breakpoints after the dlopen: %v, want one breakpoint at two addresses", rs[4]["value"])
	}
	wantStop(t, rs[5], "breakpoint", "scale", 9)
	libStop(rs[6])
	if st := stopOf(t, rs[7]); st["reason"] == "breakpoint" {
		t.Errorf("continue after the last call: %v, want the end", st)
	}
}

// TestAccessWatchpoint: a read+write watchpoint stops on the read of
// `counter += by` before the write changes it.
func TestAccessWatchpoint(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "counter.c", 0)
	rs := batch(t, trace, "awatch *(int*)&counter", "continue", "continue")
	wantOK(t, rs[0])
	read, write := stopOf(t, rs[1]), stopOf(t, rs[2])
	rw := read["watch"].(map[string]any)
	if read["reason"] != "watchpoint" || rw["old"] != "0x0" || rw["new"] != "0x0" {
		t.Errorf("first access stop: %v, want the read (value unchanged 0)", read)
	}
	if ww := write["watch"].(map[string]any); write["reason"] != "watchpoint" || ww["new"] != "0x1" {
		t.Errorf("second access stop: %v, want the write of 1", write)
	}
}

// TestWatchParameterAtBreakpoint: a watch on a parameter set at a
// breakpoint after the prologue. The prologue's store to the parameter
// traps with the thread on the breakpoint's address: the breakpoint is
// still to be reached there (it was stepped over, and setting the watch at
// the breakpoint failed with "the moment was not reached"). The watch is
// on the location (watch -l): a watch on the parameter itself would end
// with the frame, at the first return (watchscope_test.go).
func TestWatchParameterAtBreakpoint(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "counter.c", 0)
	rs := batch(t, trace, "break bump", "continue", "watch -l by", "continue", "continue", "reverse-continue", "reverse-continue")
	wantOK(t, rs[2])
	w := stopOf(t, rs[3])
	if w["reason"] != "watchpoint" {
		t.Fatalf("continue after watch by: %v, want the watchpoint", w)
	}
	b := stopOf(t, rs[4])
	if b["reason"] != "breakpoint" || b["pc"] != w["pc"] || b["event"] != w["event"] {
		t.Errorf("continue after the watch hit: %v, want breakpoint 1 at the same place %v", b, w["pc"])
	}
	if back := stopOf(t, rs[5]); back["reason"] != "watchpoint" || back["moment"] != w["moment"] {
		t.Errorf("reverse-continue: %v, want the watch hit %v", back, w["moment"])
	}
	if first := stopOf(t, rs[6]); first["reason"] != "breakpoint" || first["moment"] != stopOf(t, rs[1])["moment"] {
		t.Errorf("second reverse-continue: %v, want the first breakpoint hit %v", first, stopOf(t, rs[1])["moment"])
	}
}

// TestWatchThroughPointer: watch -l *target, target a global int * into
// a pair whose other int is written beside it, watches the int target
// points at, its 4 bytes: going back stops at the writes through the
// pointer, not at the pointer's own assignment (the symbol was taken for
// the address to watch) nor at the neighbour's writes (8 bytes were
// watched); x reads where target points too.
func TestWatchThroughPointer(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "watchptr.c", 0)
	rs := batch(t, trace, "break 18", "continue", "watch -l *target", "reverse-continue", "reverse-continue", "x/wx target")
	for i, want := range [][2]string{{"3", "4"}, {"2", "3"}} {
		st := stopOf(t, rs[3+i])
		w, _ := st["watch"].(map[string]any)
		if st["reason"] != "watchpoint" || w == nil || w["old"] != want[0] || w["new"] != want[1] {
			t.Errorf("reverse-continue %d: %v, want the watchpoint with %s then %s", i+1, st, want[0], want[1])
		}
	}
	if text, _ := rs[5]["text"].(string); !strings.Contains(text, "0x00000003") {
		t.Errorf("x/wx target: %q, want the int target points at (3 there)", text)
	}
}

// TestStepiInSelectedThread: stepi and reverse-stepi step the thread
// `thread N` selected, as gdb does, not the one the recording runs next:
// stopped in a worker, the main thread (parked in pthread_create) moves
// one instruction forwards and back.
func TestStepiInSelectedThread(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "threads.c", 0)
	rs := batch(t, trace, "break worker", "continue", "info threads")
	var num, tid float64
	var pc string
	threads, _ := rs[2]["value"].([]any)
	for _, th := range threads {
		if m := th.(map[string]any); m["current"] == false {
			num, _ = m["num"].(float64)
			tid, _ = m["id"].(float64)
			pc, _ = m["pc"].(string)
			break
		}
	}
	if num == 0 {
		t.Fatalf("no other thread at the worker's breakpoint: %v", rs[2])
	}
	rs = batch(t, trace, "break worker", "continue", fmt.Sprintf("thread %d", int(num)), "stepi", "reverse-stepi")
	fwd, back := stopOf(t, rs[3]), stopOf(t, rs[4])
	if fwd["thread"] != tid || fwd["pc"] == pc {
		t.Errorf("stepi in thread %v (tid %v at %s): %v", num, tid, pc, fwd)
	}
	if back["thread"] != tid || back["pc"] != pc {
		t.Errorf("reverse-stepi in thread %v (tid %v, back to %s): %v", num, tid, pc, back)
	}
}

// TestWatchLocationInSessionFile: a `watch -l n->next` is saved in the
// session file with the address it watches, and reopening the recording
// (at its start, where n does not exist) watches it again: continue stops
// at the write. It was saved as the expression and failed to reopen with
// `No symbol "n" in current context` (issue 22, item 9).
func TestWatchLocationInSessionFile(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139) // it crashes: SIGSEGV
	rs := batch(t, trace, "break set_name", "continue", "watch -l n->next")
	wantOK(t, rs[2])
	v, _ := rs[2]["value"].(map[string]any)
	loc, _ := v["location"].(string)
	if !strings.HasPrefix(loc, "*(") || !strings.HasSuffix(loc, v["address"].(string)) {
		t.Fatalf("watch -l: location %q for address %v", loc, v["address"])
	}
	// The session file as the UI writes it (SessionFile.SetStops).
	session, _ := json.Marshal(map[string]any{"watchpoints": []map[string]any{{"expr": "n->next", "location": loc}}})
	if err := os.WriteFile(trace+".session", session, 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, runOpts{}, rewind(t), "replay", "--batch", "--json", "--session", "-ex", "continue", trace)
	if !strings.Contains(string(r.Stderr), "1 of 1 breakpoints and watchpoints restored") {
		t.Fatalf("--session: %s", r.Stderr)
	}
	var got map[string]any
	if err := json.Unmarshal(r.Stdout, &got); err != nil {
		t.Fatalf("%v: %s", err, r.Stdout)
	}
	// From the start, the first write to those bytes (main links the
	// nodes) comes before the overflow the first session stopped at. The
	// watchpoint is listed as the user made it.
	st := stopOf(t, got)
	w, _ := st["watch"].(map[string]any)
	if st["reason"] != "watchpoint" || w == nil || w["expr"] != "n->next" || !strings.HasSuffix(fmt.Sprint(st["moment"]), v["address"].(string)) {
		t.Errorf("reopened, continue stopped at %v, want a write to %v", st, v["address"])
	}
}

// TestStepsWithWatchAfterBusyLoop: at a breakpoint after a loop that wrote
// a watched counter without a system call, source-level steps both ways
// with the watchpoint armed stop where they stop after a short loop: the
// same lines, the counter at the same distance from its last value. A
// loop of 5000 writes is counted in the program (timeline/counted.go), one
// of 100 is trapped write by write, so the two take different routes.
func TestStepsWithWatchAfterBusyLoop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src, opt, bp string
		args         []string
	}{
		{"watchbp.c", "-O0", "done", nil},
		{"watchbp.c", "-O1", "done", nil},
		// The loop's write leaves the thread on the next line's start:
		// a reverse-next from the write goes back to its own line.
		{"bench/watchcount.c", "-O1", "watchcount.c:20", []string{"0"}},
	} {
		t.Run(tc.src+tc.opt, func(t *testing.T) { stepsWithWatchAfterBusyLoop(t, tc.src, tc.opt, tc.bp, tc.args...) })
	}
}

func stepsWithWatchAfterBusyLoop(t *testing.T, src, opt, bp string, args ...string) {
	prog := buildC(t, src, opt)
	cmds := []string{"break " + bp, "continue", "watch counter", "reverse-next", "reverse-next", "reverse-step",
		"reverse-continue", "reverse-next", "reverse-next", "next", "step", "next", "continue", "continue"}
	type stop struct {
		line  float64
		back  int64 // n - counter
		watch bool
	}
	stops := func(n int) []stop {
		trace := filepath.Join(t.TempDir(), "t.rwd")
		mustRecord(t, trace, prog, append([]string{strconv.Itoa(n)}, args...)...)
		var line []string
		for _, c := range cmds {
			line = append(line, c, "print counter")
		}
		rs := batch(t, trace, line...)
		var out []stop
		for i := 3; i < len(cmds); i++ {
			st, p := stopOf(t, rs[2*i]), rs[2*i+1]
			v, err := strconv.ParseInt(fmt.Sprint(p["value"]), 10, 64)
			if err != nil {
				t.Fatalf("print counter after %q: %v", cmds[i], p)
			}
			l, _ := st["line"].(float64)
			out = append(out, stop{line: l, back: int64(n) - v, watch: st["reason"] == "watchpoint"})
		}
		return out
	}
	short, busy := stops(100), stops(5000)
	if !reflect.DeepEqual(short, busy) {
		t.Fatalf("after %v:\n 100 writes:  %+v\n 5000 writes: %+v", cmds[3:], short, busy)
	}
}

// TestReverseNextFromCountedWrite: going back to a write in a busy loop
// (named by the loop's arrivals and steps after one), `reverse-next` then
// `next` come back to the write's place. The line start between that
// arrival and the write was passed over by the reverse step, which went
// back a whole line too far.
func TestReverseNextFromCountedWrite(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "bench/watchcount.c", "-O1")
	trace := filepath.Join(t.TempDir(), "t.rwd")
	mustRecord(t, trace, prog, "5000", "0")
	rs := batch(t, trace, "break watchcount.c:20", "continue", "watch counter", "reverse-continue", "reverse-next", "next")
	write, back, again := stopOf(t, rs[3]), stopOf(t, rs[4]), stopOf(t, rs[5])
	if write["reason"] != "watchpoint" {
		t.Fatalf("reverse-continue: %v, want the last write", write)
	}
	if back["line"] == write["line"] || again["pc"] != write["pc"] {
		t.Errorf("reverse-next from the write at %v (line %v) went to line %v, and next from there to %v (line %v)",
			write["pc"], write["line"], back["line"], again["pc"], again["line"])
	}
}
