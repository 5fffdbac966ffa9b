package ptrace

import (
	"os"
	"strings"
	"testing"
)

// TestReadMaps reads this test's own mappings: the test binary mapped at
// offset 0, the stack and heap-like anonymous memory, every range sane.
func TestReadMaps(t *testing.T) {
	maps, err := ReadMaps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var sawExe, sawStack bool
	for _, m := range maps {
		if m.End <= m.Start || len(m.Perms) != 4 {
			t.Errorf("bad entry %+v", m)
		}
		if m.Path == exe && m.Offset == 0 && m.Inode != 0 {
			sawExe = true
		}
		if m.Path == "[stack]" {
			sawStack = true
		}
		if strings.HasPrefix(m.Path, " ") || strings.HasSuffix(m.Path, " ") {
			t.Errorf("path with blanks around it: %q", m.Path)
		}
	}
	if !sawExe || !sawStack {
		t.Errorf("the test binary at offset 0 (%v) or the stack (%v) missing from %d mappings", sawExe, sawStack, len(maps))
	}
}
