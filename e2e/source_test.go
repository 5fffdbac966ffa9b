package e2e

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Source-level debugging scenarios (issue 4): each records a real program
// and drives `rewind replay --batch --json` as a user would.

func field(r map[string]any, k string) string { return fmt.Sprint(r[k]) }

// wantStop checks the reason, function and line of a stop.
func wantStop(t *testing.T, r map[string]any, reason, function string, line int) map[string]any {
	t.Helper()
	st := stopOf(t, r)
	if st["reason"] != reason || (function != "" && st["function"] != function) || (line != 0 && st["line"] != float64(line)) {
		t.Fatalf("%v: stop %v, want %s in %s line %d", r["command"], st, reason, function, line)
	}
	if st["file"] == nil || st["function"] == nil {
		t.Fatalf("%v: stop without function/file: %v", r["command"], st)
	}
	return st
}

func wantValue(t *testing.T, r map[string]any, want string) {
	t.Helper()
	wantOK(t, r)
	if got := field(r, "value"); got != want {
		t.Errorf("%v = %s, want %s", r["command"], got, want)
	}
}

// TestCorruptedPointer is the classic: a name overflows char name[8] into
// the next pointer; the crash comes later. From the crash, go up, watch the
// pointer, reverse-continue to the overflowing line, read the loop index,
// and reverse-finish to the call.
func TestCorruptedPointer(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	rs := batch(t, trace,
		"continue", "bt", "up", "print b->next", "watch -l b->next",
		"reverse-continue", "print i", "print n->name", "bt", "reverse-finish", "info locals")
	wantStop(t, rs[0], "signal", "sum", 24)
	if st := stopOf(t, rs[0]); st["signal"] != "SIGSEGV" {
		t.Fatalf("crash: %v", st)
	}
	bt := fmt.Sprint(rs[1]["value"])
	if !regexp.MustCompile(`function:sum .*function:main`).MatchString(bt) {
		t.Errorf("bt at the crash: %v", rs[1]["text"])
	}
	wantOK(t, rs[2])
	up, _ := rs[2]["value"].(map[string]any)
	if up["function"] != "main" || up["line"] != float64(41) {
		t.Errorf("up: %v, want main at line 41", up)
	}
	// "bravo-overflowing": bytes 8..15 of the name land in next.
	next := fmt.Sprintf("%#x", binary.LittleEndian.Uint64([]byte("bravo-overflowing")[8:16]))
	prev := fmt.Sprintf("%#x", binary.LittleEndian.Uint64(append([]byte("bravo-overflowing")[8:15], 0)))
	wantValue(t, rs[3], next)
	wantOK(t, rs[4])
	// The stop names the line to run next, as gdb and bt do (the copy
	// loop's head); the writing instruction is the watch's writer.
	st := wantStop(t, rs[5], "watchpoint", "set_name", 15)
	w, _ := st["watch"].(map[string]any)
	if w["new"] != next || w["old"] != prev {
		t.Errorf("watch values: %v", w)
	}
	if w["writer"] == nil || w["writer"] == st["pc"] {
		t.Errorf("watch writer %v at pc %v: want the instruction before", w["writer"], st["pc"])
	}
	wantValue(t, rs[6], "15")
	if v := field(rs[7], "value"); !strings.HasPrefix(v, `"bravo-ov`) {
		t.Errorf("print n->name = %s", v)
	}
	if bt := fmt.Sprint(rs[8]["value"]); !strings.Contains(bt, "function:set_name") || !strings.Contains(bt, "function:main") {
		t.Errorf("bt in set_name: %v", rs[8]["text"])
	}
	wantStop(t, rs[9], "step", "main", 39)
	if locals := fmt.Sprint(rs[10]["value"]); !strings.Contains(locals, "name:a") || !strings.Contains(locals, "name:b") {
		t.Errorf("info locals in main: %v", rs[10]["text"])
	}
}

// TestPrintMatchesProgramOutput prints values computed from random data
// at a breakpoint and compares them with what the recorded program printed.
func TestPrintMatchesProgramOutput(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "source/digest.c")
	trace := filepath.Join(t.TempDir(), "d.rwd")
	stdout := mustRecord(t, trace, prog).Stdout
	var digest, min, max, total, first string
	if _, err := fmt.Sscanf(string(stdout), "digest %s min %s max %s total %s first %s", &digest, &min, &max, &total, &first); err != nil {
		t.Fatalf("program output %q: %v", stdout, err)
	}
	rs := batch(t, trace, "break digest.c:45", "continue", "print s.digest", "print s.min", "print s.max",
		"print total", "print s.first[0]", "print/x s.max", "print s.label", "print s.min < s.max", "print s.max - s.min")
	wantStop(t, rs[1], "breakpoint", "main", 45)
	wantValue(t, rs[2], digest)
	wantValue(t, rs[3], min)
	wantValue(t, rs[4], max)
	wantValue(t, rs[5], total)
	var f, mn, mx int
	fmt.Sscan(first, &f)
	fmt.Sscan(min, &mn)
	fmt.Sscan(max, &mx)
	if v := field(rs[6], "value"); !strings.HasPrefix(v, fmt.Sprint(f)+" ") {
		t.Errorf("print s.first[0] = %s, want %d '...'", v, f)
	}
	wantValue(t, rs[7], fmt.Sprintf("%#x", mx))
	if v := field(rs[8], "value"); !strings.HasSuffix(v, `"random"`) {
		t.Errorf("print s.label = %s", v)
	}
	wantValue(t, rs[9], "1")
	wantValue(t, rs[10], fmt.Sprint(mx-mn))
}

// TestStepRoundTrips steps forwards with next and step, then backwards:
// reverse-next retraces the lines next went through.
func TestStepRoundTrips(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	cmds := []string{"break main", "continue"}
	for i := 0; i < 6; i++ {
		cmds = append(cmds, "next")
	}
	for i := 0; i < 6; i++ {
		cmds = append(cmds, "reverse-next")
	}
	cmds = append(cmds, "step", "step", "step", "bt", "finish", "reverse-step", "reverse-finish", "until", "until", "until")
	rs := batch(t, trace, cmds...)
	start := wantStop(t, rs[1], "breakpoint", "main", 18)
	var fwd []float64
	fwd = append(fwd, start["line"].(float64))
	for i := 0; i < 6; i++ {
		fwd = append(fwd, wantStop(t, rs[2+i], "step", "main", 0)["line"].(float64))
	}
	if fmt.Sprint(fwd) != "[18 19 20 21 19 20 21]" {
		t.Errorf("next went through lines %v", fwd)
	}
	for i := 0; i < 6; i++ {
		reason := "step"
		if i == 5 {
			reason = "breakpoint" // line 18 is where breakpoint 1 is
		}
		st := wantStop(t, rs[8+i], reason, "main", 0)
		if want := fwd[5-i]; st["line"] != want {
			t.Errorf("reverse-next %d: line %v, want %v", i+1, st["line"], want)
		}
	}
	// Back at line 18: step goes to 19, 20, then into square.
	wantStop(t, rs[14], "step", "main", 19)
	wantStop(t, rs[15], "step", "main", 20)
	wantStop(t, rs[16], "step", "square", 6)
	if bt := fmt.Sprint(rs[17]["value"]); !strings.Contains(bt, "function:square") || !strings.Contains(bt, "function:main") {
		t.Errorf("bt in square: %v", rs[17]["text"])
	}
	wantStop(t, rs[18], "step", "main", 20)
	if !strings.Contains(field(rs[18], "text"), "Value returned is $1 = 1") {
		t.Errorf("finish text: %v", rs[18]["text"])
	}
	// Back into square's last line, then out to the call.
	wantStop(t, rs[19], "step", "square", 8)
	wantStop(t, rs[20], "step", "main", 20)
	// until does not go back into the loop once it is past the body.
	wantStop(t, rs[21], "step", "main", 21)
	wantStop(t, rs[22], "step", "main", 19)
	wantStop(t, rs[23], "step", "main", 23)
}

// TestConditionsAndHistory: a conditional breakpoint stops only where its
// condition holds, in both directions; history lists every write with the
// source line that made it.
func TestConditionsAndHistory(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	rs := batch(t, trace, "break square if x == 2", "continue", "print x", "continue", "print x",
		"reverse-continue", "print x", "reverse-continue", "info breakpoints", "break steps.c:12 if",
		"break nosuch.c:3", "delete", "break main", "continue", "history total", "list 20,21",
		"break steps.c:20 if i == 1", "continue", "watch total", "continue", "continue", "reverse-continue", "reverse-continue")
	wantOK(t, rs[0])
	wantStop(t, rs[1], "breakpoint", "square", 6)
	wantValue(t, rs[2], "2")
	if st := stopOf(t, rs[3]); st["reason"] != "exit" {
		t.Errorf("continue after the only x == 2: %v", st)
	}
	wantStop(t, rs[5], "breakpoint", "square", 6)
	wantValue(t, rs[6], "2")
	if st := stopOf(t, rs[7]); st["reason"] != "start" {
		t.Errorf("reverse-continue before x == 2: %v", st)
	}
	if !strings.Contains(field(rs[8], "text"), "stop only if x == 2") {
		t.Errorf("info breakpoints: %s", rs[8]["text"])
	}
	if rs[9]["ok"] != false || rs[10]["ok"] != false || !strings.Contains(field(rs[10], "error"), "nosuch.c") {
		t.Errorf("bad breakpoints accepted: %v / %v", rs[9], rs[10])
	}
	hist, _ := rs[14]["value"].([]any)
	var lines []string
	for _, h := range hist {
		w := h.(map[string]any)
		// The stack slot is also written by the loader before main and
		// by exit handlers after it: history covers the whole recording.
		if w["function"] == "main" {
			lines = append(lines, fmt.Sprintf("%v:%v=%v", w["function"], w["line"], w["new"]))
		}
	}
	// total = 0, then add() results 1, 5, 14 at line 21, then 15 at line 24.
	if got := strings.Join(lines, " "); got != "main:18=0 main:21=1 main:21=5 main:21=14 main:24=15" {
		t.Errorf("history total: %s\n%s", got, rs[14]["text"])
	}
	// A write watchpoint stops where the value changes, at the line of
	// the writing instruction, in both directions. It is set once line 18
	// has run: before, total holds whatever the stack held (the loader's
	// leftovers, which change with the environment), and total = 0 may or
	// may not change it. The breakpoint on line 20 (first iteration only)
	// is after that write, so going back stops there in any case.
	wantStop(t, rs[17], "breakpoint", "main", 20)
	wantOK(t, rs[18])
	for i, want := range []struct {
		line     int
		old, new string
	}{{19, "0", "1"}, {19, "1", "5"}, {19, "0", "1"}, {0, "", ""}} { // after line 21's write: the loop, as gdb says
		r := rs[19+i]
		if want.line == 0 {
			wantStop(t, r, "breakpoint", "main", 20)
			continue
		}
		st := wantStop(t, r, "watchpoint", "main", want.line)
		if w, _ := st["watch"].(map[string]any); w["old"] != want.old || w["new"] != want.new {
			t.Errorf("%v %d: watch %v, want %s -> %s", r["command"], i, w, want.old, want.new)
		}
	}
	if got := field(rs[15], "text"); !strings.HasPrefix(got, "20\t\t\tint sq = square(i);\n21\t") {
		t.Errorf("list 20,21:\n%s", got)
	}
}

// TestSourceCommandsBadInput: at the start of a recording (in ld.so, no
// line numbers) and with bad arguments, every command answers with a
// one-line error and the session goes on.
func TestSourceCommandsBadInput(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	bad := []string{"info locals", "print nosuch", "print 1+", "print (struct nope *)0", "frame 99", "down",
		"list nosuch", "finish", "reverse-finish", "next", "reverse-next", "advance nosuch",
		"watch 1+2", "history nosuch", "break steps.c:999", "break if", "break main if", "print/q 1",
		"x/4x 0", "info args", "until nosuch", "x/s 0", "x/4611686018427387904x $sp", "list -1,3", "history watchpoint 9"}
	rs := batch(t, trace, append(bad, "bt", "break add", "continue", "bt")...)
	for i, c := range bad {
		if rs[i]["ok"] != false || strings.Contains(field(rs[i], "error"), "\n") || field(rs[i], "error") == "" {
			t.Errorf("%s: %v, want a one-line error", c, rs[i])
		}
	}
	// The loader's entry: _start with its debug information (libc6-dbg),
	// "?? () from …/ld-linux…" without it, as in gdb.
	if got := field(rs[len(bad)], "text"); !strings.Contains(got, "_start") && !regexp.MustCompile(`^#0 +0x[0-9a-f]+ in \?\? \(\) from \S*/ld-linux`).MatchString(got) {
		t.Errorf("bt at the start: %v", rs[len(bad)]["text"])
	}
	// Before main runs, list and a bare line number mean main's file, as
	// in gdb.
	start := batch(t, trace, "list", "break 20")
	if got := field(start[0], "text"); !strings.HasPrefix(got, "4\tstatic int square(int x)\n") {
		t.Errorf("list at the start:\n%s", got)
	}
	if got := field(start[1], "text"); !strings.Contains(got, "file steps.c, line 20.") {
		t.Errorf("break 20 at the start: %s", got)
	}
	wantStop(t, rs[len(bad)+2], "breakpoint", "add", 12)
}

// TestStepInSelectedFrame: after up, next and step work in the selected
// frame (the inner ones run to their return first), as in gdb.
func TestStepInSelectedFrame(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	rs := batch(t, trace, "break square", "continue", "up", "next", "step", "up", "step")
	wantStop(t, rs[1], "breakpoint", "square", 6)
	wantStop(t, rs[3], "step", "main", 21)
	wantStop(t, rs[4], "step", "add", 12)
	wantStop(t, rs[6], "step", "main", 19)
}

// TestReverseToAnchor: going back from a few steps after a breakpoint hit
// stops at that very hit (the moment the steps started from).
func TestReverseToAnchor(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	rs := batch(t, trace, "break corrupt.c:16", "continue", "continue", "reverse-continue", "when",
		"next", "reverse-next", "when", "stepi", "stepi", "reverse-continue", "when")
	hit := field(rs[4], "value")
	wantStop(t, rs[5], "step", "set_name", 15)
	wantStop(t, rs[6], "breakpoint", "set_name", 16)
	for _, i := range []int{7, 11} {
		if got := field(rs[i], "value"); got != hit {
			t.Errorf("%v after going back: %s, want the hit %s", rs[i-1]["command"], got, hit)
		}
	}
	if rs[7]["text"] != rs[4]["text"] || rs[11]["text"] != rs[4]["text"] {
		t.Errorf("moments differ: %v / %v / %v", rs[4]["text"], rs[7]["text"], rs[11]["text"])
	}
}

// TestGotoWrite: every write history lists can be returned to exactly
// with `goto MOMENT`, where the watched value is the write's new value.
func TestGotoWrite(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	rs := batch(t, trace, "break main", "continue", "history total")
	hist, _ := rs[2]["value"].([]any)
	var cmds []string
	var want []string
	for _, h := range hist {
		w := h.(map[string]any)
		if w["function"] == "main" {
			cmds = append(cmds, "goto "+fmt.Sprint(w["moment"]), "print total")
			want = append(want, fmt.Sprint(w["new"]))
		}
	}
	if len(want) < 4 {
		t.Fatalf("history: %v", rs[2]["text"])
	}
	out := batch(t, trace, append([]string{"break main", "continue", "history total"}, cmds...)...)[3:]
	for i, v := range want {
		wantOK(t, out[2*i])
		wantValue(t, out[2*i+1], v)
	}
}

// TestValueHistoryAndConditionErrors: $N and $ read printed values back
// (as they were when printed); a condition that cannot be evaluated stops
// and says why, as gdb.
func TestValueHistoryAndConditionErrors(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	rs := batch(t, trace, "break square", "continue", "print x", "print x * 10", "print $1 + $", "continue", "print $1",
		"delete", "break add if nosuch > 1", "continue", "up", "watch -l total", "history watchpoint 3")
	wantValue(t, rs[2], "1")
	wantValue(t, rs[3], "10")
	wantValue(t, rs[4], "11")
	wantValue(t, rs[6], "1") // still the value printed then, not x now (2)
	wantStop(t, rs[9], "breakpoint", "add", 12)
	if !strings.Contains(field(rs[9], "text"), `Error in testing condition for breakpoint 2: No symbol "nosuch"`) {
		t.Errorf("condition error not reported: %s", rs[9]["text"])
	}
	wantOK(t, rs[11])
	if !strings.Contains(field(rs[12], "text"), "writes to total") {
		t.Errorf("history watchpoint 3: %v", rs[12])
	}
}

// TestMomentsAcrossSessions: a moment printed by one session is reached
// by another (moments are canonical, DESIGN §3).
func TestMomentsAcrossSessions(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	rs := batch(t, trace, "break corrupt.c:16", "continue", "continue", "stepi 3", "info registers rip", "print i")
	moment := fmt.Sprint(stopOf(t, rs[3])["moment"])
	if !strings.Contains(moment, "hit 2 of") || !strings.HasSuffix(moment, "+3") {
		t.Fatalf("moment %q", moment)
	}
	again := batch(t, trace, "goto "+moment, "info registers rip", "print i", "goto #1 hit 99 of 0x1")
	wantOK(t, again[0])
	if fmt.Sprint(again[1]["value"]) != fmt.Sprint(rs[4]["value"]) || again[2]["value"] != rs[5]["value"] {
		t.Errorf("goto %s in a new session: rip %v i %v, want %v %v", moment, again[1]["value"], again[2]["value"], rs[4]["value"], rs[5]["value"])
	}
	if again[3]["ok"] != false {
		t.Errorf("a moment that does not exist: %v", again[3])
	}
}

// TestLibraryThreadLocals: thread-local variables of shared libraries (a
// library of the test's, and libc's errno when its debug information is
// installed) have the values and addresses each thread printed.
func TestLibraryThreadLocals(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(workDir, "bin", "tls")
	prog := cachedBuild(t, "tls", filepath.Join(dir, "tlsmain"), func(out string) error {
		if err := compile("gcc", testdataDir, "-g", "-O0", "-shared", "-fPIC", "-o", filepath.Join(dir, "libtls.so"), "source/tls/lib.c"); err != nil {
			return err
		}
		return compile("gcc", testdataDir, "-g", "-O0", "-pthread", "-o", out, "source/tls/main.c",
			"-L"+dir, "-ltls", "-Wl,-rpath,"+dir)
	})
	trace := filepath.Join(t.TempDir(), "tls.rwd")
	stdout := mustRecord(t, trace, prog).Stdout
	type printed struct{ counter, counterAt, errno, errnoAt string }
	var threads []printed
	var mainCounter, mainAt string
	for _, l := range lines(stdout) {
		var p printed
		var id, r int
		if n, _ := fmt.Sscanf(l, "thread %d: lib_counter=%s at %s errno=%s at %s r=%d", &id, &p.counter, &p.counterAt, &p.errno, &p.errnoAt, &r); n == 6 {
			p.counterAt, p.errno, p.errnoAt = strings.TrimSuffix(p.counterAt, ","), strings.TrimSuffix(p.errno, ","), strings.TrimSuffix(p.errnoAt, ",")
			threads = append(threads, p)
		}
		fmt.Sscanf(l, "main: lib_counter=%s at %s", &mainCounter, &mainAt)
	}
	if len(threads) != 2 || mainAt == "" {
		t.Fatalf("program output: %q", stdout)
	}
	var cmds []string
	cmds = append(cmds, "break main.c:22", "break main.c:32")
	for range threads {
		cmds = append(cmds, "continue", "print lib_counter", "print &lib_counter", "print lib_tag", "print errno", "print &errno")
	}
	cmds = append(cmds, "continue", "print lib_counter", "print &lib_counter", "print lib_tag", "info mappings")
	rs := batch(t, trace, cmds...)
	// errno is a variable only in libc's debug information (libc6-dbg);
	// without it there is no such symbol, as in gdb.
	withErrno := libcDebugInfo(t, rs[len(rs)-1])
	t.Logf("libc's debug information installed: %v", withErrno)
	i := 2
	for n, p := range threads {
		wantStop(t, rs[i], "breakpoint", "worker", 22)
		wantValue(t, rs[i+1], p.counter)
		if got := field(rs[i+2], "value"); !strings.HasSuffix(got, p.counterAt) {
			t.Errorf("thread %d: &lib_counter = %s, the program printed %s", n+1, got, p.counterAt)
		}
		tag := []string{"one", "two"}[n]
		wantValue(t, rs[i+3], `"`+tag+`\000ial\000\000\000\000\000\000\000\000"`)
		if !withErrno {
			if e := field(rs[i+4], "error"); !strings.Contains(e, `No symbol "errno"`) {
				t.Errorf("print errno without libc's debug information: %v", rs[i+4])
			}
		} else {
			wantValue(t, rs[i+4], p.errno)
			if got := field(rs[i+5], "value"); !strings.HasSuffix(got, p.errnoAt) {
				t.Errorf("thread %d: &errno = %s, the program printed %s", n+1, got, p.errnoAt)
			}
		}
		i += 6
	}
	wantStop(t, rs[i], "breakpoint", "main", 32)
	wantValue(t, rs[i+1], mainCounter)
	if got := field(rs[i+2], "value"); !strings.HasSuffix(got, mainAt) {
		t.Errorf("main: &lib_counter = %s, the program printed %s", got, mainAt)
	}
	wantValue(t, rs[i+3], `"initial\000\000\000\000\000\000\000\000"`)
}

// libcDebugInfo says whether the libc of a recording (named by the result
// of "info mappings") has its separate debug information installed where
// gdb looks: by build-id under /usr/lib/debug/.build-id/, or by the name
// in its .gnu_debuglink.
func libcDebugInfo(t *testing.T, mappings map[string]any) bool {
	t.Helper()
	wantOK(t, mappings)
	var libc string
	for _, m := range mappings["value"].([]any) {
		if p := fmt.Sprint(m.(map[string]any)["path"]); strings.Contains(filepath.Base(p), "libc.so") {
			libc = p
		}
	}
	f, err := elf.Open(libc)
	if err != nil {
		t.Fatalf("libc of the recording (%q): %v", libc, err)
	}
	defer f.Close()
	var cands []string
	if sec := f.Section(".note.gnu.build-id"); sec != nil {
		// namesz, descsz, type, then the name "GNU\0" and the id.
		if note, err := sec.Data(); err == nil && len(note) >= 16 {
			namesz, descsz := binary.LittleEndian.Uint32(note), binary.LittleEndian.Uint32(note[4:])
			if off := 12 + (namesz+3)&^3; uint32(len(note)) >= off+descsz && descsz >= 2 {
				id := hex.EncodeToString(note[off : off+descsz])
				cands = append(cands, filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug"))
			}
		}
	}
	if sec := f.Section(".gnu_debuglink"); sec != nil {
		if data, err := sec.Data(); err == nil {
			if name, _, _ := strings.Cut(string(data), "\x00"); name != "" {
				dir := filepath.Dir(libc)
				if real, err := filepath.EvalSymlinks(libc); err == nil {
					dir = filepath.Dir(real)
				}
				cands = append(cands, filepath.Join(dir, name), filepath.Join(dir, ".debug", name), filepath.Join("/usr/lib/debug", dir, name))
			}
		}
	}
	for _, c := range cands {
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() && c != libc {
			return true
		}
	}
	return false
}

// TestTemporaryAndDisabledBreakpoints: a tbreak stops once and is gone; a
// disabled breakpoint or watchpoint is listed but does not stop, in either
// direction, until enabled.
func TestTemporaryAndDisabledBreakpoints(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	rs := batch(t, trace, "tbreak set_name", "break sum", "disable 2", "info breakpoints", "continue",
		"continue", "info breakpoints", "enable 2", "reverse-continue", "reverse-continue",
		"disable 7", "enable x")
	if !strings.HasPrefix(field(rs[0], "text"), "Temporary breakpoint 1 at ") {
		t.Errorf("tbreak: %s", rs[0]["text"])
	}
	if got := field(rs[3], "text"); !regexp.MustCompile(`(?m)^1 +breakpoint +del +y .* in set_name `).MatchString(got) ||
		!regexp.MustCompile(`(?m)^2 +breakpoint +keep +n .* in sum `).MatchString(got) {
		t.Errorf("info breakpoints:\n%s", got)
	}
	wantStop(t, rs[4], "breakpoint", "set_name", 0)
	if got := field(rs[4], "text"); !strings.HasPrefix(got, "Temporary breakpoint 1, set_name (") {
		t.Errorf("tbreak stop: %s", got)
	}
	// Breakpoint 2 is disabled: the next stop is the crash.
	wantStop(t, rs[5], "signal", "sum", 24)
	if got := field(rs[5], "text"); !strings.HasPrefix(got, "Program received signal SIGSEGV, Segmentation fault.\n") {
		t.Errorf("crash: %s", got)
	}
	if got := fmt.Sprint(rs[6]["value"]); strings.Contains(got, "id:1 ") || !strings.Contains(got, "enabled:false") {
		t.Errorf("after the tbreak stop: %v", got)
	}
	wantStop(t, rs[8], "breakpoint", "sum", 22)
	// The temporary breakpoint is gone: back to the start.
	if st := stopOf(t, rs[9]); st["reason"] != "start" {
		t.Errorf("reverse-continue past the deleted tbreak: %v", st)
	}
	for _, r := range rs[10:] {
		if r["ok"] != false {
			t.Errorf("%v: %v, want an error", r["command"], r)
		}
	}
}

// TestContinueAfterSteppingBack: a moment reached by single-steps (here
// reverse-stepi from the first instruction of line 39, which replays the
// segment from its start) counts the arrivals the steps made at a
// breakpoint set there afterwards: continue then names bravo's set_name
// as that breakpoint's second hit, and going to that moment in another
// session reaches bravo's call, not alpha's.
func TestContinueAfterSteppingBack(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	rs := batch(t, trace, "break 39", "continue", "delete", "reverse-stepi", "break set_name", "continue", "print src", "when")
	wantStop(t, rs[5], "breakpoint", "set_name", 15)
	if v := field(rs[6], "value"); !strings.Contains(v, "bravo") {
		t.Fatalf("continue after reverse-stepi stopped in set_name with src %s, want bravo's call", v)
	}
	// "#N (MOMENT)": the moment, to go to in a fresh session.
	when := field(rs[7], "text")
	moment := strings.TrimSuffix(when[strings.Index(when, "(")+1:], ")")
	again := batch(t, trace, "goto "+moment, "print src")
	if v := field(again[1], "value"); !strings.Contains(v, "bravo") {
		t.Errorf("goto %s in a fresh session: src %s, want bravo's call", moment, v)
	}
}

// TestReverseFromFunctionEntry: from the first instruction of a function
// called in a loop (a breakpoint there at -O2, which has no prologue),
// reverse-step and reverse-next go back to the caller, at the line of this
// call, as gdb does; they once landed in the previous call, whose frame
// has the same CFA (issue 22). step then enters the same call again.
func TestReverseFromFunctionEntry(t *testing.T) {
	t.Parallel()
	for _, opt := range []string{"-O0", "-O2"} {
		for _, motion := range []string{"reverse-step", "reverse-next"} {
			t.Run(opt+"/"+motion, func(t *testing.T) {
				t.Parallel()
				trace := recorded(t, "source/calls.c", 0, opt)
				rs := batch(t, trace, "break work", "ignore 1 5", "continue", "print a", "delete",
					motion, "print k", "step", "print a")
				wantStop(t, rs[2], "breakpoint", "work", 0)
				wantValue(t, rs[3], "19")
				wantStop(t, rs[5], "step", "main", 18)
				wantValue(t, rs[6], "6")
				wantStop(t, rs[7], "step", "work", 0)
				wantValue(t, rs[8], "19")
			})
		}
		// reverse-finish from inside the 6th call goes to that call in
		// main (found by its call instruction, not by stepping back
		// through the 5th call).
		t.Run(opt+"/reverse-finish", func(t *testing.T) {
			t.Parallel()
			trace := recorded(t, "source/calls.c", 0, opt)
			rs := batch(t, trace, "break work", "ignore 1 5", "continue", "delete", "next", "reverse-finish", "print k", "step", "print a")
			wantStop(t, rs[5], "step", "main", 18)
			wantValue(t, rs[6], "6")
			wantStop(t, rs[7], "step", "work", 0)
			wantValue(t, rs[8], "19")
		})
	}
}

// TestInlinedCallStart: at -O2, column_double's first instruction is also
// where the inlined column_mem starts. As gdb: the breakpoint stop, bt and
// info breakpoints name column_double at the line of the call; step enters
// column_mem without running; finish leaves it back to column_double
// (issue 22, items 3 and 5: they named column_mem, and finish landed in
// the next inlined call).
func TestInlinedCallStart(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/inlinestart.c", 0, "-O2")
	rs := batch(t, trace, "break column_double", "continue", "bt", "info breakpoints", "step", "bt", "finish", "bt 1")
	wantStop(t, rs[1], "breakpoint", "column_double", 23)
	// main's argc lives in xmm5 there: read as gdb reads it.
	if bt := field(rs[2], "text"); !strings.HasPrefix(bt, "#0  column_double (") || !strings.Contains(bt, " in main (argc=1, ") {
		t.Errorf("bt at the breakpoint:\n%s", bt)
	}
	if info := field(rs[3], "text"); !strings.Contains(info, " in column_double at ") {
		t.Errorf("info breakpoints:\n%s", info)
	}
	step := wantStop(t, rs[4], "step", "column_mem", 0)
	if step["pc"] != stopOf(t, rs[1])["pc"] {
		t.Errorf("step into the inlined call ran: pc %v, was %v", step["pc"], stopOf(t, rs[1])["pc"])
	}
	if bt := field(rs[5], "text"); !strings.HasPrefix(bt, "#0  column_mem (") || !strings.Contains(bt, "#1  column_double (") {
		t.Errorf("bt in the inlined call:\n%s", bt)
	}
	wantStop(t, rs[6], "step", "column_double", 0)
	if bt := field(rs[7], "text"); !strings.HasPrefix(bt, "#0  column_double (") {
		t.Errorf("bt after finish:\n%s", bt)
	}
}

// TestInlinedCallerFrame: a backtrace through a call made from inside an
// inlined function at -O2 (testdata/source/inlinemid.c): the inlined frame
// shows its return address, the function it is inlined into none, as gdb
// (frame_show_address); it showed one on cJSON's parse_value. (gdb also
// shows outer frames' arguments from scratch registers, which rewind does
// not claim: they are not compared.)
func TestInlinedCallerFrame(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/inlinemid.c", 0, "-O2")
	rs := batch(t, trace, "break leaf", "continue", "bt")
	bt := lines([]byte(field(rs[2], "text")))
	if len(bt) < 3 || !strings.HasPrefix(bt[1], "#1  0x") || !strings.Contains(bt[1], " in mid (") || !strings.HasPrefix(bt[2], "#2  outer (") {
		t.Errorf("bt:\n%s", strings.Join(bt, "\n"))
	}
}

// TestReverseInLongSegment: in the 2001st of 3000 calls made without a
// system call between (testdata/source/calls.c), reverse motions land in
// this call, not in an earlier one: reverse-next retraces next's stops,
// reverse-step from the function's first line goes to this call's line in
// main, step goes back in, reverse-finish goes to the call, and
// reverse-continue to a breakpoint on the function stops in the previous
// call, continue in this one. Counted arrivals name these moments (issue
// 22, item 4); the values read there tell the calls apart.
func TestReverseInLongSegment(t *testing.T) {
	t.Parallel()
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			t.Parallel()
			trace := recorded(t, "source/calls.c", 0, opt, "-DCALLS=3000")
			rs := batch(t, trace, "break work", "ignore 1 2000", "continue", "delete",
				"next", "next", "reverse-next", "print b", "reverse-next", "print b",
				"reverse-step", "print k", "step", "print b", "reverse-finish", "print k",
				"break work", "reverse-continue", "print b", "continue", "print b")
			first := wantStop(t, rs[2], "breakpoint", "work", 0)
			once := wantStop(t, rs[4], "step", "work", 0)
			wantStop(t, rs[5], "step", "", 0)
			wantStop(t, rs[6], "step", "work", int(once["line"].(float64)))
			wantValue(t, rs[7], "2001")
			wantStop(t, rs[8], "step", "work", int(first["line"].(float64)))
			wantValue(t, rs[9], "2001")
			wantStop(t, rs[10], "step", "main", 18)
			wantValue(t, rs[11], "2001")
			wantStop(t, rs[12], "step", "work", 0)
			wantValue(t, rs[13], "2001")
			wantStop(t, rs[14], "step", "main", 18)
			wantValue(t, rs[15], "2001")
			// A breakpoint, back to the previous call and on to this one.
			wantStop(t, rs[17], "breakpoint", "work", 0)
			wantValue(t, rs[18], "2000")
			wantStop(t, rs[19], "breakpoint", "work", 0)
			wantValue(t, rs[20], "2001")
		})
	}
}
