package prefault

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestBytes: a big buffer's pages are resident before anything touches
// them (the process's resident size grows by about its size), a small one
// is plain memory, and both are empty with room for what was asked.
func TestBytes(t *testing.T) {
	for _, tt := range []struct {
		n            int
		wantResident bool
	}{
		{64 << 20, true},
		{Min / 2, false},
	} {
		before := resident(t)
		b := Bytes(tt.n)
		grew := resident(t) - before
		if len(b) != 0 || cap(b) != tt.n {
			t.Errorf("Bytes(%d): len %d cap %d", tt.n, len(b), cap(b))
		}
		if got := grew >= tt.n/2; got != tt.wantResident {
			t.Errorf("Bytes(%d): resident size grew by %d bytes; want resident %v", tt.n, grew, tt.wantResident)
		}
		b = append(b, 1)
	}
}

// resident is this process's resident size in bytes (/proc/self/statm).
func resident(t *testing.T) int {
	t.Helper()
	s, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(s))
	pages, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	return pages * os.Getpagesize()
}
