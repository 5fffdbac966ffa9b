package dwarf

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// buildC compiles a testdata program with gcc into a temporary directory.
func buildC(t *testing.T, src string, flags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(src)+".exe")
	compiler := "gcc"
	if filepath.Ext(src) == ".cpp" {
		compiler = "g++"
	}
	args := append([]string{"-g", "-o", out, src}, flags...)
	if b, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", compiler, args, err, b)
	}
	return out
}

// loadAtLink loads an executable as if mapped at its link address.
func loadAtLink(t *testing.T, path string) *Table {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	base := uint64(0)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			base = p.Vaddr - p.Off
			break
		}
	}
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
