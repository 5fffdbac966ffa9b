package dwarf

import (
	"debug/elf"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

// buildC compiles a testdata program with gcc (g++ for .cpp) and -g.
func buildC(t *testing.T, src string, flags ...string) string {
	t.Helper()
	return compileTest(t, cc.For(src), src, append([]string{"-g"}, flags...)...)
}

// compileTest builds src with a C or C++ compiler into a temporary
// directory, skipping the test when the compiler is not installed.
func compileTest(t *testing.T, compiler, src string, flags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	return cc.BuildWith(t, compiler, src, out, flags...)
}

// loadAtLink loads an executable as if mapped at its link address.
func loadAtLink(t *testing.T, path string) *Table {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := linkBase(f)
	f.Close()
	img, err := LoadImage(path, base)
	if err != nil {
		t.Fatal(err)
	}
	tab := &Table{Images: []*Image{img}}
	t.Cleanup(tab.Close)
	return tab
}

// gdbBreak asks gdb where it puts a breakpoint on loc in the unstarted
// exe: every location's address, and the line.
func gdbBreak(t *testing.T, exe, loc string) ([]uint64, int) {
	t.Helper()
	out, err := exec.Command("gdb", "-nx", "-batch", "-ex", "break "+loc, "-ex", "info breakpoints", exe).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	var addrs []uint64
	line := 0
	for _, m := range regexp.MustCompile(`(?m)^1(?:\.\d+)?\s.*?0x([0-9a-f]+) in .* at .*:(\d+)$`).FindAllSubmatch(out, -1) {
		a, _ := strconv.ParseUint(string(m[1]), 16, 64)
		addrs = append(addrs, a)
		line, _ = strconv.Atoi(string(m[2]))
	}
	if len(addrs) == 0 {
		t.Fatalf("gdb break %s: %s", loc, out)
	}
	return addrs, line
}

// TestBreakpointLocationsMatchGDB resolves FILE:LINE and FUNC like gdb
// does, at -O0 and -O2, for C and C++.
func TestBreakpointLocationsMatchGDB(t *testing.T) {
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not installed")
	}
	cases := []struct {
		src   string
		flags []string
		locs  []string
	}{
		{"../testdata/source/corrupt.c", []string{"-O0"}, []string{"corrupt.c:16", "corrupt.c:14", "corrupt.c:23", "set_name", "sum", "main", "corrupt.c:31"}},
		{"../testdata/source/steps.c", []string{"-O0"}, []string{"steps.c:19", "steps.c:20", "square", "add", "steps.c:24"}},
		{"../testdata/source/digest.c", []string{"-O2"}, []string{"digest.c:41", "main"}},
		{"../testdata/source/templates.cpp", []string{"-O0"}, []string{"templates.cpp:11", "templates.cpp:36", "ns::scale<int>", "ns::fn<double>", "main"}},
	}
	goExe := filepath.Join(t.TempDir(), "locals")
	if b, err := goBuild(goExe).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	cases = append(cases, struct {
		src   string
		flags []string
		locs  []string
	}{goExe, nil, []string{"main.go:21", "main.go:27", "main.main", "main.describe"}})
	for _, c := range cases {
		exe := c.src
		if filepath.Ext(exe) == ".c" || filepath.Ext(exe) == ".cpp" {
			exe = buildC(t, c.src, c.flags...)
		}
		tab := loadAtLink(t, exe)
		for _, loc := range c.locs {
			wantAddrs, wantLine := gdbBreak(t, exe, loc)
			var got []Line
			if file, line, ok := splitFileLine(loc); ok {
				var err error
				got, err = tab.FindLine(file, line)
				if err != nil {
					t.Errorf("%s %s: %v", c.src, loc, err)
					continue
				}
			} else {
				fns := tab.FindFunction(loc)
				if len(fns) == 0 {
					t.Errorf("%s: no function %s", c.src, loc)
					continue
				}
				l, _ := tab.LineAt(fns[0].Entry)
				got = []Line{{Addr: fns[0].Entry, Line: l.Line}}
			}
			var gotAddrs []uint64
			for _, g := range got {
				gotAddrs = append(gotAddrs, g.Addr)
				if g.Line != wantLine {
					t.Errorf("%s %v: break %s: line %d, gdb line %d", c.src, c.flags, loc, g.Line, wantLine)
				}
			}
			if fmt.Sprint(gotAddrs) != fmt.Sprint(wantAddrs) {
				t.Errorf("%s %v: break %s: %#x, gdb %#x", c.src, c.flags, loc, gotAddrs, wantAddrs)
			}
		}
	}
}

func splitFileLine(loc string) (string, int, bool) {
	m := regexp.MustCompile(`^(.+):(\d+)$`).FindStringSubmatch(loc)
	if m == nil {
		return "", 0, false
	}
	n, _ := strconv.Atoi(m[2])
	return m[1], n, true
}

// goBuild builds testdata/go/locals without optimizations, in the testdata
// Go module.
func goBuild(out string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-gcflags=all=-N -l", "-o", out, "./locals")
	cmd.Dir = "../testdata/go"
	return cmd
}

func TestDemangle(t *testing.T) {
	cases := []struct{ in, want string }{
		{"_ZN2ns5scaleIiEET_S1_S1_", "ns::scale<int>(int, int)"},
		{"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv", "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::size() const"},
		{"_ZN5panic4pick17h8f4b2b0d8b6a2c1eE", "panic::pick"},
		{"_RNvCs1234_5panic4pick", "panic::pick"},
		{"main", "main"},
		{"_Znotvalid", "_Znotvalid"},
	}
	for _, c := range cases {
		got := Demangle(c.in)
		if c.in == "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv" {
			// Not const in the mangling: check the qualified name only.
			if !strings.HasPrefix(got, "std::__cxx11::basic_string<char") {
				t.Errorf("Demangle(%s) = %q", c.in, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("Demangle(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestLineTableVersions reads DWARF 4 and 5 line tables the same way.
func TestLineTableVersions(t *testing.T) {
	for _, v := range []string{"-gdwarf-4", "-gdwarf-5"} {
		exe := buildC(t, "../testdata/source/steps.c", "-O0", v)
		tab := loadAtLink(t, exe)
		wantAddrs, wantLine := gdbBreak(t, exe, "steps.c:20")
		got, err := tab.FindLine("steps.c", 20)
		if err != nil || len(got) != 1 || got[0].Addr != wantAddrs[0] || got[0].Line != wantLine {
			t.Errorf("%s: steps.c:20 = %+v %v, gdb %#x line %d", v, got, err, wantAddrs, wantLine)
		}
		if fn := tab.FunctionAt(got[0].Addr); fn == nil || fn.Name != "main" {
			t.Errorf("%s: function at steps.c:20: %+v", v, fn)
		}
	}
}

// TestAmbiguousFile lists the candidates of a file name that matches two
// source files, and accepts a longer suffix that picks one.
func TestAmbiguousFile(t *testing.T) {
	exe := buildC(t, "../testdata/source/twofiles.c", "-O0", "../testdata/source/a/util.c", "../testdata/source/b/util.c")
	tab := loadAtLink(t, exe)
	_, err := tab.FindLine("util.c", 3)
	if !errors.Is(err, ErrAmbiguousFile) || !strings.Contains(err.Error(), "a/util.c") || !strings.Contains(err.Error(), "b/util.c") {
		t.Fatalf("util.c:3: %v, want an ambiguity listing a/util.c and b/util.c", err)
	}
	// Compiled with relative paths: names are made absolute with the
	// unit's directory, so that the files can be read.
	for _, f := range tab.Files() {
		if strings.Contains(f, "util.c") && !filepath.IsAbs(f) {
			t.Errorf("file name %q is relative", f)
		}
	}
	locs, err := tab.FindLine("b/util.c", 3)
	if err != nil || len(locs) != 1 {
		t.Fatalf("b/util.c:3: %v %v", locs, err)
	}
	if fn := tab.FunctionAt(locs[0].Addr); fn == nil || fn.Name != "util_b" {
		t.Errorf("b/util.c:3 is in %+v, want util_b", fn)
	}
}

func TestOptimizedBy(t *testing.T) {
	for _, c := range []struct {
		producer string
		want     bool
	}{
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O0", false},
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2", true},
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O0 -O2", true},
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2 -O0", false},
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g", false},
		{"GNU C17 12.2.0 -g -Og", true},
	} {
		if got := optimizedBy(c.producer); got != c.want {
			t.Errorf("optimizedBy(%q) = %v, want %v", c.producer, got, c.want)
		}
	}
}
