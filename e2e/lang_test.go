package e2e

// Language-specific debugging end to end: C++ templates and values, Go
// locals, stepping and goroutines, Rust panics and symbol names.

import (
	gdwarf "debug/dwarf"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/dwarf"
)

// TestCXXTemplatesAndValues: template frames demangled in bt, std::string,
// std::vector and references printed.
func TestCXXTemplatesAndValues(t *testing.T) {
	t.Parallel()
	prog := buildCXX(t, "source/templates.cpp")
	trace := filepath.Join(t.TempDir(), "t.rwd")
	mustRecord(t, trace, prog)
	rs := batch(t, trace, "break ns::scale<int>", "continue", "bt", "print a", "print b", "up 2",
		"print name", "print v", "print sq.side", "print ref.id")
	wantStop(t, rs[1], "breakpoint", "ns::scale<int>(int, int)", 10)
	text := field(rs[2], "text")
	for _, want := range []string{"ns::scale<int>(int, int) (a=2, b=4)", "ns::fn<int>(int, int) (a=2, b=4)", "main ()"} {
		if !strings.Contains(text, want) {
			t.Errorf("bt lacks %q:\n%s", want, text)
		}
	}
	wantValue(t, rs[3], "2")
	wantValue(t, rs[4], "4")
	wantOK(t, rs[5])
	wantValue(t, rs[6], `"squares"`)
	if v := field(rs[7], "value"); !strings.Contains(v, "{1, 2, 3}") {
		t.Errorf("print v = %s", v)
	}
	wantValue(t, rs[8], "4")
	wantValue(t, rs[9], "7")
}

// TestGoLocals: break main.go:N in a Go program and print its locals.
func TestGoLocals(t *testing.T) {
	t.Parallel()
	trace := recordedGo(t, "locals")
	rs := batch(t, trace, "break main.go:27", "continue", "print greeting", "print primes", "print counts",
		"print origin", "print origin.Name", "print primes[4]", "info locals", "bt",
		"ptype origin", "whatis counts", "ptype err", "whatis primes")
	// The stop first: every other answer depends on it (a missed
	// breakpoint reads as "No symbol" below).
	wantStop(t, rs[1], "breakpoint", "main.main", 27)
	wantValue(t, rs[10], "struct main.point {\n    X int\n    Y int\n    Name string\n}")
	wantValue(t, rs[11], "map[string]int")
	wantValue(t, rs[12], "error")
	wantValue(t, rs[13], "[]int")
	wantValue(t, rs[2], `"hello, rewind"`)
	if v := field(rs[3], "value"); !strings.Contains(v, "len: 5, cap: 5") || !strings.Contains(v, "2,3,5,7,11") {
		t.Errorf("print primes = %s", v)
	}
	if v := field(rs[4], "value"); !strings.Contains(v, `"alpha": 1`) || !strings.Contains(v, `"beta": 2`) || !strings.Contains(v, `"gamma": 3`) {
		t.Errorf("print counts = %s", v)
	}
	if v := field(rs[5], "value"); !strings.Contains(v, "X: 3") || !strings.Contains(v, "Y: -4") {
		t.Errorf("print origin = %s", v)
	}
	wantValue(t, rs[6], `"p"`)
	wantValue(t, rs[7], "11")
	locals := field(rs[8], "text")
	for _, name := range []string{"counts", "primes", "greeting", "origin", "n"} {
		if !regexp.MustCompile(`(?m)^` + name + ` = `).MatchString(locals) {
			t.Errorf("info locals lacks %s:\n%s", name, locals)
		}
	}
	if !strings.Contains(field(rs[9], "text"), "main.main") {
		t.Errorf("bt: %s", rs[9]["text"])
	}
}

// TestRustPanicBacktrace: an out-of-bounds index panics (panic=abort);
// the backtrace at SIGABRT goes through the panic machinery to main.
func TestRustPanicBacktrace(t *testing.T) {
	t.Parallel()
	need(t, "rustc")
	prog := filepath.Join(t.TempDir(), "panic")
	if out, err := exec.Command("rustc", "-g", "-C", "panic=abort", "-o", prog, srcPath("rust/panic.rs")).CombinedOutput(); err != nil {
		t.Fatalf("rustc: %v\n%s", err, out)
	}
	trace := filepath.Join(t.TempDir(), "r.rwd")
	if _, stderr, code := record(t, trace, prog); code != 134 {
		t.Fatalf("record: exit %d, want 134 (SIGABRT): %s", code, stderr)
	}
	rs := batch(t, trace, "continue", "bt")
	if st := stopOf(t, rs[0]); st["signal"] != "SIGABRT" {
		t.Fatalf("continue: %v", st)
	}
	text := field(rs[1], "text")
	last := -1
	for _, fn := range []string{"core::panicking::panic_bounds_check", "panic::pick", "panic::main"} {
		i := strings.Index(text, fn)
		if i < 0 || i < last {
			t.Errorf("bt lacks %s (in order):\n%s", fn, text)
		}
		last = i
	}
	if !strings.Contains(text, "panic.rs:4") {
		t.Errorf("bt lacks the panicking line panic.rs:4:\n%s", text)
	}
	// Types in Rust's syntax, as gdb writes them.
	rs = batch(t, trace, "break panic::pick", "continue", "ptype v", "whatis v", "whatis i")
	wantStop(t, rs[1], "breakpoint", "panic::pick", 4)
	wantValue(t, rs[2], "struct &[i32] {\n  data_ptr: *mut i32,\n  length: usize,\n}")
	wantValue(t, rs[3], "&[i32]")
	wantValue(t, rs[4], "usize")
}

// TestRustBreakNames: besides gdb's names of Rust functions
// (TestCompareWithGDBRustNames), `break` takes the names their symbols
// demangle to, which rewind showed before it took gdb's (a closure
// names::main::{{closure}}, with rustc's default legacy mangling, is both
// closures of main; core's <u64>::wrapping_mul), and, where nothing else
// has the name, the end of a path with or without generic arguments
// (bump, Counter::bump, largest, area), which gdb refuses; `break main`
// is still C's main that std's runtime calls, as gdb's.
// demangledLinkage returns the demangled DW_AT_linkage_name of a function
// of prog's debug information named name whose demangled linkage name
// holds part (a function inlined everywhere has no ELF symbol).
func demangledLinkage(t *testing.T, prog, name, part string) string {
	t.Helper()
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != gdwarf.TagSubprogram || e.Val(gdwarf.AttrName) != name {
			continue
		}
		if l, ok := e.Val(gdwarf.AttrLinkageName).(string); ok && strings.Contains(dwarf.Demangle(l), part) {
			return dwarf.Demangle(l)
		}
	}
	t.Fatalf("%s has no function %s with %q in its linkage name", prog, name, part)
	return ""
}

func TestRustBreakNames(t *testing.T) {
	t.Parallel()
	prog := buildRust(t, "rust/names.rs")
	trace := filepath.Join(t.TempDir(), "t.rwd")
	record(t, trace, prog)
	// The name wrapping_mul's symbol demangles to depends on the rustc
	// that built it (<u64>::wrapping_mul, core::num::<impl u64>::…), and
	// core's impl numbers on its version: both are read from the binary.
	mulSym := demangledLinkage(t, prog, "wrapping_mul", "u64")
	mulImpl := regexp.MustCompile(`^core::num::\{impl#\d+\}::wrapping_mul$`)
	for _, c := range []struct {
		spec, stop      string
		line, locations int // 0: not checked (in std, as built)
	}{
		{"names::main::{{closure}}", "names::main::{closure#0}", 47, 2},
		{mulSym, "", 0, 0},
		{"wrapping_mul", "", 0, 0},
		{"bump", "names::Counter::bump", 13, 1},
		{"Counter::bump", "names::Counter::bump", 13, 1},
		{"largest", "names::largest<u32>", 35, 1},
		{"area", "names::{impl#1}::area", 30, 1},
	} {
		rs := batch(t, trace, "break "+c.spec, "continue")
		wantOK(t, rs[0])
		locs, _ := rs[0]["value"].(map[string]any)["locations"].([]any)
		if c.locations > 0 && len(locs) != c.locations {
			t.Errorf("break %s: %d locations, want %d: %v", c.spec, len(locs), c.locations, locs)
		}
		if c.stop == "" {
			if st := stopOf(t, rs[1]); st["reason"] != "breakpoint" || !mulImpl.MatchString(field(st, "function")) {
				t.Errorf("break %s, continue: %v, want a breakpoint stop in core::num::{impl#N}::wrapping_mul", c.spec, st)
			}
			continue
		}
		wantStop(t, rs[1], "breakpoint", c.stop, c.line)
	}
	rs := batch(t, trace, "break main", "break nosuch", "break names::nosuch")
	locs, _ := rs[0]["value"].(map[string]any)["locations"].([]any)
	if len(locs) != 1 || locs[0].(map[string]any)["function"] != "main" || locs[0].(map[string]any)["file"] != nil {
		t.Errorf("break main: %v, want C's main alone", rs[0])
	}
	for _, r := range rs[1:] {
		if r["ok"] == true && !strings.Contains(field(r, "text"), "pending") {
			t.Errorf("%v: %v, want no location", r["command"], r)
		}
	}
}

// TestGoStepping: finish out of a Go function whose goroutine stack grew
// (frames are told apart by their offset from the stack top, which
// survives Go's stack copying), then next and reverse-step.
func TestGoStepping(t *testing.T) {
	t.Parallel()
	trace := recordedGo(t, "locals")
	rs := batch(t, trace, "break main.describe", "continue", "next", "finish", "next", "delete", "reverse-next", "reverse-step")
	wantStop(t, rs[1], "breakpoint", "main.describe", 15)
	wantStop(t, rs[2], "step", "main.describe", 16)
	wantStop(t, rs[3], "step", "main.main", 26)
	wantStop(t, rs[4], "step", "main.main", 27)
	wantStop(t, rs[6], "step", "main.main", 26)
	wantStop(t, rs[7], "step", "main.main", 25)
}

// TestGoStepFollowsGoroutine: testdata/go/migrate moves main.main to
// another thread while it waits on a channel, on every run. next over the
// receive follows the goroutine there (a step that followed the thread ran
// to the end of the recording), and reverse-next comes back across.
func TestGoStepFollowsGoroutine(t *testing.T) {
	t.Parallel()
	trace := recordedGo(t, "migrate")
	rs := batch(t, trace, "break main.go:22", "continue", "next", "next", "reverse-next", "reverse-next")
	before := wantStop(t, rs[1], "breakpoint", "main.main", 22)
	after := wantStop(t, rs[2], "step", "main.main", 23)
	if before["thread"] == after["thread"] {
		t.Fatalf("main.main stayed on thread %v: the program no longer moves it, so this tests nothing", before["thread"])
	}
	wantStop(t, rs[3], "step", "main.main", 24)
	wantStop(t, rs[4], "step", "main.main", 23)
	if back := wantStop(t, rs[5], "breakpoint", "main.main", 22); back["thread"] != before["thread"] {
		t.Errorf("reverse-next back to line 22 on thread %v, want %v", back["thread"], before["thread"])
	}
}

// recordedGo builds and records a testdata Go program that exits 0.
func recordedGo(t *testing.T, dir string) string {
	t.Helper()
	prog := buildGo(t, dir)
	trace := filepath.Join(t.TempDir(), dir+".rwd")
	mustRecord(t, trace, prog)
	return trace
}
