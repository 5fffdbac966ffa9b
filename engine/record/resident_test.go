package record

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDataRanges: a check reads only the pages of a sparse object that
// hold data, within the ranges mapped, whatever the object's size.
func TestDataRanges(t *testing.T) {
	f := sparseMemfd(t, 1<<40)
	for _, page := range []int64{3, 4, 1000, 1 << 27} {
		if _, err := f.WriteAt([]byte("x"), page*pageSize+10); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		ranges [][2]uint64
		want   string
	}{
		{"the whole terabyte", [][2]uint64{{0, 1 << 28}}, "[[3 5] [1000 1001] [134217728 134217729]]"},
		{"a range of holes", [][2]uint64{{5, 1000}}, "[]"},
		{"ranges cut the data", [][2]uint64{{4, 6}, {999, 1001}}, "[[4 5] [1000 1001]]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(dataRanges(f, tt.ranges)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestToCompareSmall: the mapped pages of a small file are read whole (no
// SEEK_DATA and SEEK_HOLE: a hole reads zero in replay's copy too), those
// of a big one where it holds data, with the pages replay's copy holds.
func TestToCompareSmall(t *testing.T) {
	f := sparseMemfd(t, 1<<30)
	if _, err := f.WriteAt([]byte("x"), 2*pageSize); err != nil {
		t.Fatal(err)
	}
	var sm sharedMem
	obj := &sharedObject{file: f, pages: map[uint64]uint64{7: 1}}
	tests := []struct {
		name   string
		ranges [][2]uint64
		want   string
	}{
		{"small: whole", [][2]uint64{{0, 7}}, "[[0 7]]"},
		{"small, with a page replay holds", [][2]uint64{{0, 8}}, "[[0 8]]"},
		{"big: its data and the page replay holds", [][2]uint64{{0, 1 << 18}}, "[[2 3] [7 8]]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(sm.toCompare(sharedProc{}, obj, tt.ranges)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// sparseMemfd is a memfd of size bytes, all holes, closed at the test's end.
func sparseMemfd(t *testing.T, size int64) *os.File {
	t.Helper()
	fd, err := unix.MemfdCreate("rewind-test-sparse", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "memfd")
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return f
}
