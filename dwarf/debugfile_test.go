package dwarf

import (
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSeparateDebugFile strips a program and keeps its DWARF in a separate
// file, found by build-id under a debug root and by .gnu_debuglink next to
// the program, as gdb finds them.
func TestSeparateDebugFile(t *testing.T) {
	exe := buildC(t, "../testdata/source/corrupt.c", "-O0", "-Wl,--build-id")
	dir := t.TempDir()
	debug := filepath.Join(dir, "corrupt.debug")
	stripped := filepath.Join(dir, "corrupt")
	for _, args := range [][]string{
		{"--only-keep-debug", exe, debug},
		{"--strip-debug", exe, stripped},
	} {
		if out, err := exec.Command("objcopy", args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, out)
		}
	}
	f, err := elf.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	id := hex.EncodeToString(buildID(f))
	f.Close()
	if len(id) < 4 {
		t.Fatal("no build-id")
	}
	root := t.TempDir()
	byID := filepath.Join(root, ".build-id", id[:2], id[2:]+".debug")
	os.MkdirAll(filepath.Dir(byID), 0o755)
	data, _ := os.ReadFile(debug)
	os.WriteFile(byID, data, 0o644)

	linked := filepath.Join(t.TempDir(), "corrupt")
	if out, err := exec.Command("objcopy", "--add-gnu-debuglink="+debug, stripped, linked).CombinedOutput(); err != nil {
		t.Fatalf("objcopy debuglink: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(filepath.Dir(linked), "corrupt.debug"), data, 0o644)

	saved := DebugRoots
	defer func() { DebugRoots = saved }()
	for _, c := range []struct {
		name, exe, roots, wantDebug string
	}{
		{"build-id", stripped, root, byID},
		{"debuglink", linked, t.TempDir(), filepath.Join(filepath.Dir(linked), "corrupt.debug")},
		{"none", stripped, t.TempDir(), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			DebugRoots = []string{c.roots}
			tab := loadAtLink(t, c.exe)
			img := tab.Images[0]
			if img.DebugPath != c.wantDebug {
				t.Fatalf("debug file %q, want %q", img.DebugPath, c.wantDebug)
			}
			locs, err := tab.FindLine("corrupt.c", 16)
			if c.wantDebug == "" {
				if err == nil {
					t.Fatalf("line found without debug information: %v", locs)
				}
				return
			}
			if err != nil || len(locs) != 1 {
				t.Fatalf("corrupt.c:16: %v %v", locs, err)
			}
			if fn := tab.FunctionAt(locs[0].Addr); fn == nil || fn.Name != "set_name" {
				t.Fatalf("function at corrupt.c:16: %+v", fn)
			}
		})
	}
}
