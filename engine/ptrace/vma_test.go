package ptrace

import (
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestVMAs looks up mappings of this process by address, with
// PROCMAP_QUERY where the kernel has it and with /proc/PID/maps: each
// kind of mapping is found with its permissions, and an address no
// mapping holds gives a zero VMA.
func TestVMAs(t *testing.T) {
	const size = 3 * 4096
	var hole []byte
	mk := func(prot, flags int) uint64 {
		b, err := unix.Mmap(-1, 0, size, prot, flags|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		if prot == unix.PROT_NONE {
			hole = b
		} else {
			t.Cleanup(func() { unix.Munmap(b) })
		}
		return uint64(uintptr(unsafe.Pointer(&b[0])))
	}
	private := mk(unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	shared := mk(unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	readOnly := mk(unix.PROT_READ, unix.MAP_PRIVATE)
	code := mk(unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE)
	unmapped := mk(unix.PROT_NONE, unix.MAP_PRIVATE)
	if err := unix.Munmap(hole); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		addr uint64
		want VMA
	}{
		{"private", private + 5000, VMA{Start: private, End: private + size, Read: true, Write: true}},
		{"shared", shared, VMA{Start: shared, End: shared + size, Read: true, Write: true, Shared: true}},
		{"read-only", readOnly + size - 1, VMA{Start: readOnly, End: readOnly + size, Read: true}},
		{"code", code + 8, VMA{Start: code, End: code + size, Read: true, Exec: true}},
		{"unmapped", unmapped + 4096, VMA{}},
	}
	for _, fallback := range []bool{false, true} {
		m, err := OpenMem(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		m.noQuery = fallback
		var addrs []uint64
		for _, c := range cases {
			addrs = append(addrs, c.addr)
		}
		got, err := m.VMAs(addrs)
		m.Close()
		if err != nil {
			t.Fatalf("fallback %v: %v", fallback, err)
		}
		for i, c := range cases {
			// Anonymous private memory merges with its neighbours: the
			// mapping found holds the one made, with its permissions.
			g := got[i]
			if g.Start <= c.want.Start && g.End >= c.want.End && g.End > g.Start {
				g.Start, g.End = c.want.Start, c.want.End
			}
			if g != c.want {
				t.Errorf("fallback %v: %s at %#x: %+v, want %+v", fallback, c.name, c.addr, got[i], c.want)
			}
		}
	}
}
