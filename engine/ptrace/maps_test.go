package ptrace

import (
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
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

// TestReadSmaps reads this test's own smaps: as many mappings as maps, in
// the same order, a resident stack, and the flags of memory this test marks
// MADV_DONTFORK.
func TestReadSmaps(t *testing.T) {
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Madvise(mem, unix.MADV_DONTFORK); err != nil {
		t.Fatal(err)
	}
	addr := uint64(uintptr(unsafe.Pointer(&mem[0])))
	// The Go runtime maps memory while the test runs (heap arenas, thread
	// stacks): compare with a maps read that the same read after smaps
	// confirms, the mappings unchanged meanwhile.
	var smaps []Smaps
	var maps []MapEntry
	for try := 0; try < 20; try++ {
		before, err := ReadMaps(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if smaps, err = ReadSmaps(os.Getpid()); err != nil {
			t.Fatal(err)
		}
		if maps, err = ReadMaps(os.Getpid()); err != nil {
			t.Fatal(err)
		}
		if sameSpans(before, maps) {
			break
		}
	}
	if len(smaps) != len(maps) {
		t.Fatalf("%d mappings in smaps, %d in maps", len(smaps), len(maps))
	}
	var sawStack, sawMarked bool
	for i, s := range smaps {
		if s.Start != maps[i].Start || s.End != maps[i].End {
			t.Errorf("smaps %d is %#x-%#x, maps says %#x-%#x", i, s.Start, s.End, maps[i].Start, maps[i].End)
		}
		if maps[i].Path == "[stack]" && s.KB["Rss"] > 0 {
			sawStack = true
		}
		if addr >= s.Start && addr < s.End && slices.Contains(s.Flags, "dc") {
			sawMarked = true
		}
	}
	if !sawStack || !sawMarked {
		t.Errorf("a resident stack (%v) or the dc flag of %#x (%v) missing", sawStack, addr, sawMarked)
	}
}

// sameSpans says whether two reads of maps list the same address ranges.
func sameSpans(a, b []MapEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Start != b[i].Start || a[i].End != b[i].End {
			return false
		}
	}
	return true
}
