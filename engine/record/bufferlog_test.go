package record

import (
	"testing"
	"unsafe"

	"github.com/rewind-debugger/rewind/engine/trace"
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

// TestHandOver: the logger's copy of an event the recorder owns shares
// its outputs' bytes (a big read's megabytes are not copied at the stop)
// and nothing else: the recorder reuses its event, its lists and its
// inputs' bytes once log returns.
func TestHandOver(t *testing.T) {
	out, in := make([]byte, bigEvent), []byte("/etc/passwd\x00")
	e := &trace.Event{Kind: trace.KindSyscall, Tid: 7, Mem: []trace.Mem{{Addr: 0x1000, Data: out}}, In: []trace.Mem{{Addr: 0x2000, Data: in}}}
	if outputBytes(e) < bigEvent {
		t.Fatalf("outputBytes = %d, want at least %d", outputBytes(e), bigEvent)
	}
	c := handOver(e)
	e.Mem[0] = trace.Mem{Addr: 0x3000}
	e.In[0].Data[0] = 'X'
	e.Tid = 8
	if c.Tid != 7 || len(c.Mem) != 1 || c.Mem[0].Addr != 0x1000 || unsafe.SliceData(c.Mem[0].Data) != unsafe.SliceData(out) {
		t.Errorf("the copy's outputs: %d at %#x, tid %d; want the read's bytes themselves at 0x1000, tid 7", len(c.Mem), c.Mem[0].Addr, c.Tid)
	}
	if string(c.In[0].Data) != "/etc/passwd\x00" {
		t.Errorf("the copy's input %q changed with the recorder's", c.In[0].Data)
	}
}
