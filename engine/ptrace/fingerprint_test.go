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
