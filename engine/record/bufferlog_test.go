package record

import (
	"testing"
	"unsafe"
)

// TestLoggerKeepsBigBuffers: the copy of a big flush, whose pages are
// backed, serves the next big flush even after more small flushes than
// the pool holds were recycled; a small flush does not take it.
func TestLoggerKeepsBigBuffers(t *testing.T) {
	l := &bufLogger{free: make(chan []byte, maxLogFlushes+1), big: make(chan []byte, maxLogFlushes+1)}
	bigOne := l.buffer(4 * asyncFlush)
	l.recycle(bigOne)
	for range 2 * cap(l.free) {
		l.recycle(l.buffer(64))
	}
	for _, tc := range []struct {
		name string
		n    int
		want bool // the big flush's copy
	}{
		{"small", 64, false},
		{"big", 2 * asyncFlush, true},
	} {
		got := l.buffer(tc.n)
		if len(got) != tc.n {
			t.Errorf("%s: buffer(%d) has %d bytes", tc.name, tc.n, len(got))
		}
		if same := unsafe.SliceData(got) == unsafe.SliceData(bigOne); same != tc.want {
			t.Errorf("%s: buffer(%d) is the big flush's copy: %v, want %v", tc.name, tc.n, same, tc.want)
		}
	}
}
