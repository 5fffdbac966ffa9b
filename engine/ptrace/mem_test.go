package ptrace

import (
	"bytes"
	"os"
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
