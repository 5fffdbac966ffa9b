package ptrace

import (
	"bytes"
	"os"
	"slices"
	"testing"
	"unsafe"
)

// TestWrites batches writes into this process's own memory: contiguous
// ones are merged, overlapping ones land as if made in order, ReadMany
// reads them back, and WriteMany writes scattered bytes at once.
func TestWrites(t *testing.T) {
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	type write struct {
		off  int
		data string
	}
	for _, tc := range []struct {
		name   string
		writes []write
		want   string
	}{
		{"contiguous, out of order", []write{{4, "EFGH"}, {0, "ABCD"}, {8, "IJ"}}, "ABCDEFGHIJ......"},
		{"gaps", []write{{0, "AB"}, {6, "GH"}, {2, "C"}}, "ABC...GH........"},
		{"overlapping: the last one wins", []write{{0, "AAAA"}, {2, "BB"}, {1, "C"}}, "ACBB............"},
		{"none", nil, "................"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := bytes.Repeat([]byte("."), 16)
			base := uint64(uintptr(unsafe.Pointer(&buf[0])))
			w := m.Writes()
			for _, wr := range tc.writes {
				w.Add(base+uint64(wr.off), []byte(wr.data))
			}
			if len(tc.writes) > 0 && !w.Pending(base+uint64(tc.writes[0].off), 1) {
				t.Errorf("Pending misses the first write")
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if w.Pending(base, 16) {
				t.Errorf("Pending after Flush")
			}
			if string(buf) != tc.want {
				t.Errorf("memory %q, want %q", buf, tc.want)
			}
			halves := [][]byte{make([]byte, 8), make([]byte, 8)}
			if err := m.ReadMany(halves, []uint64{base + 8, base}); err != nil {
				t.Fatal(err)
			}
			if got := string(halves[1]) + string(halves[0]); got != tc.want {
				t.Errorf("ReadMany read %q, want %q", got, tc.want)
			}
			if err := m.WriteMany([][]byte{[]byte("yz"), []byte("x")}, []uint64{base + 14, base}); err != nil {
				t.Fatal(err)
			}
			if want := "x" + tc.want[1:14] + "yz"; string(buf) != want {
				t.Errorf("after WriteMany: %q, want %q", buf, want)
			}
		})
	}
}

// TestWritesApart: writes less than a page apart are made as one run
// over the bytes between them, which keep their values; writes further
// apart each on their own.
func TestWritesApart(t *testing.T) {
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	buf := make([]byte, 3*4096)
	for i := range buf {
		buf[i] = byte(i % 251)
	}
	want := slices.Clone(buf)
	base := uint64(uintptr(unsafe.Pointer(&buf[0])))
	w := m.Writes()
	for _, wr := range []struct {
		off  int
		data []byte
	}{
		{9000, []byte{0xAA, 0xBB, 0xCC}}, {0, []byte{1, 2, 3}}, {100, []byte{4, 5, 6}},
		{4195, []byte{7, 8, 9}}, {4198, []byte{10}}, {12000, []byte{11, 12}},
		{101, []byte{13}}, // over the write at 100, added after it
	} {
		w.Add(base+uint64(wr.off), wr.data)
		copy(want[wr.off:], wr.data)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, want) {
		for i := range buf {
			if buf[i] != want[i] {
				t.Fatalf("byte %d is %#x, want %#x", i, buf[i], want[i])
			}
		}
	}
}

// TestWritesReadThrough: a batch reads memory as its writes will leave
// it, before they are made, also from what Preread read at once.
func TestWritesReadThrough(t *testing.T) {
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	buf := []byte("0123456789abcdef")
	base := uint64(uintptr(unsafe.Pointer(&buf[0])))
	for _, pre := range []bool{false, true} {
		w := m.Writes()
		if pre {
			w.Preread(base, base+uint64(len(buf)))
		}
		w.WriteAt([]byte("XY"), base+4)
		w.WriteAt([]byte("Z"), base+5)
		got := make([]byte, 8)
		if _, err := w.ReadAt(got, base+2); err != nil {
			t.Fatal(err)
		}
		if string(got) != "23XZ6789" {
			t.Errorf("preread %v: read %q through the batch, want %q", pre, got, "23XZ6789")
		}
		if string(buf) != "0123456789abcdef" {
			t.Errorf("preread %v: memory changed before Flush: %q", pre, buf)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if string(buf) != "0123XZ6789abcdef" {
			t.Errorf("preread %v: memory after Flush %q", pre, buf)
		}
		copy(buf, "0123456789abcdef")
	}
}
