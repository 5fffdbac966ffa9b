package ptrace

import (
	"hash/crc32"
	"hash/fnv"
	"os"
	"testing"
	"unsafe"
)

// TestDataSum: the data hashes of a process's memory are what their
// functions compute on its bytes (the CRC-32C and CRC-32 of all ranges,
// or FNV-1a), change with one byte, and are never 0.
func TestDataSum(t *testing.T) {
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	defer m.Close()
	a, b := make([]byte, 5000), make([]byte, 300)
	for i := range a {
		a[i] = byte(i * 7)
	}
	ranges := []Range{
		{Addr: uint64(uintptr(unsafe.Pointer(&a[0]))), Len: uint64(len(a))},
		{Addr: uint64(uintptr(unsafe.Pointer(&b[0]))), Len: uint64(len(b))},
	}
	all := append(append([]byte(nil), a...), b...)
	h := fnv.New64a()
	h.Write(all)
	want := uint64(crc32.Checksum(all, crc32.MakeTable(crc32.Castagnoli)))<<32 | uint64(crc32.ChecksumIEEE(all)) | 1
	if got := m.DataSum(ranges); got != want {
		t.Errorf("DataSum %#x, want %#x", got, want)
	}
	if got := m.DataHash(ranges); got != h.Sum64()|1 {
		t.Errorf("DataHash %#x, want %#x", got, h.Sum64()|1)
	}
	before := m.DataSum(ranges)
	b[299]++
	if m.DataSum(ranges) == before {
		t.Error("DataSum did not change with a byte")
	}
	if m.DataSum(nil) == 0 || m.DataHash(nil) == 0 {
		t.Error("a data hash is 0")
	}
}

// TestWideStack: the stack a wide sum covers starts where the words kept
// whole end and stops 64 KiB from rsp, at the mapping's end or at the
// thread's control block, whichever comes first; nothing where the words
// kept whole reach one of them.
func TestWideStack(t *testing.T) {
	const rsp = 0x7fff_0000_0000
	lo := uint64(rsp + stackAbove + deepStack)
	for _, c := range []struct {
		name        string
		end, fsBase uint64
		want        Range
	}{
		{"deep stack", rsp + 1<<20, 0, Range{lo, wideStack - (lo - rsp)}},
		{"mapping ends", rsp + 20000, 0, Range{lo, 20000 - (lo - rsp)}},
		{"control block", rsp + 1<<20, rsp + 9000, Range{lo, 9000 - (lo - rsp)}},
		{"control block below rsp", rsp + 1<<20, rsp - 8, Range{lo, wideStack - (lo - rsp)}},
		{"within the words kept whole", rsp + 3000, 0, Range{}},
		{"block within the words kept whole", rsp + 1<<20, rsp + 4000, Range{}},
	} {
		if got := WideStack(rsp, c.end, c.fsBase); got != c.want {
			t.Errorf("%s: WideStack %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestWideSum: a wide sum is the CRC-32C of the bytes and their length,
// changes with one byte, and is 0 where the range cannot be read whole.
func TestWideSum(t *testing.T) {
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	defer m.Close()
	b := make([]byte, 12000)
	for i := range b {
		b[i] = byte(i * 13)
	}
	r := Range{Addr: uint64(uintptr(unsafe.Pointer(&b[0]))), Len: uint64(len(b))}
	want := uint64(crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))<<32 | uint64(len(b))
	got := m.WideSum(r)
	if got != want {
		t.Fatalf("WideSum %#x, want %#x", got, want)
	}
	if of := WideStackOf(r.Addr-stackAbove-deepStack, got); of != r {
		t.Errorf("WideStackOf %+v, want %+v", of, r)
	}
	b[11999]++
	if m.WideSum(r) == got {
		t.Error("WideSum did not change with a byte")
	}
	if m.WideSum(Range{Addr: 8, Len: 4096}) != 0 || m.WideSum(Range{}) != 0 {
		t.Error("WideSum of memory that cannot be read is not 0")
	}
}
