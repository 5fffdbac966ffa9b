package prefault

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestBytes: a big buffer's pages are resident before anything touches
// them (mincore says so of its own pages, whatever else the process does
// meanwhile); both a big and a small one are empty with room for what was
// asked.
func TestBytes(t *testing.T) {
	for _, tt := range []struct {
		n            int
		wantResident bool
	}{
		{64 << 20, true},
		{Min / 2, false},
	} {
		b := Bytes(tt.n)
		if len(b) != 0 || cap(b) != tt.n {
			t.Errorf("Bytes(%d): len %d cap %d", tt.n, len(b), cap(b))
		}
		if tt.wantResident {
			if in, pages := resident(t, b[:cap(b)]); in < pages*9/10 {
				t.Errorf("Bytes(%d): %d of its %d whole pages resident; want them all", tt.n, in, pages)
			}
		}
		b = append(b, 1)
	}
}

// resident says how many of the whole pages of b are resident (mincore),
// of how many.
func resident(t *testing.T, b []byte) (in, pages int) {
	t.Helper()
	const page = 4096
	off := (page - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%page)) % page
	whole := (len(b) - off) / page * page
	if whole == 0 {
		return 0, 0
	}
	vec := make([]byte, whole/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[off])), uintptr(whole), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return in, len(vec)
}
