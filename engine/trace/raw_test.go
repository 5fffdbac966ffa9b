package trace

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// writeBehind writes a trace whose writer falls behind: a big read first,
// whose compression keeps the writer busy while the frames after it queue
// up. It returns the trace's path and its events.
func writeBehind(t *testing.T) (string, []*Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 10))
	big := bytes.Repeat(append(randBytes(rng, 5000), "text of a big file "...), 4*tailChunk/5019)
	small := bytes.Repeat([]byte("a line of a file that a program reads\n"), 1000)
	path := filepath.Join(t.TempDir(), "raw.rwd")
	w := createTest(t, path)
	events := []*Event{{Kind: KindSyscall, Tid: 1, Syscall: 0, Mem: []Mem{{Addr: 0x10000, Data: big}}}}
	for i := range queueLen * frameTarget / len(small) {
		events = append(events, &Event{Kind: KindSyscall, Tid: 1, Syscall: 0, Mem: []Mem{{Addr: uint64(0x20000 + i), Data: small}}})
	}
	for _, e := range events {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	if w.RawFrames() == 0 {
		t.Error("no frame stored raw behind the big one")
	}
	return path, events
}

// readsBack checks that the trace at path holds events.
func readsBack(t *testing.T, path string, events []*Event) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, want := range events {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if len(e.Mem) != 1 || e.Mem[0].Addr != want.Mem[0].Addr || !bytes.Equal(e.Mem[0].Data, want.Mem[0].Data) {
			t.Fatalf("event %d reads back otherwise", i)
		}
	}
}

// TestRawWhenBehind: events frames that wait behind one the writer is
// still compressing (a program reading faster than zstd compresses) are
// stored raw, and every event reads back as appended.
func TestRawWhenBehind(t *testing.T) {
	path, events := writeBehind(t)
	readsBack(t, path, events)
	if n := rawEventBytes(t, path); n < frameTarget {
		t.Errorf("RawEvents = %d, want at least a frame's %d", n, frameTarget)
	}
}

// rawEventBytes is what RawEvents says of the trace at path.
func rawEventBytes(t *testing.T, path string) int64 {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.RawEvents()
}

// TestPackCompressesRaw: pack compresses the events frames a recording
// stored raw (the trace shrinks, its events read back), and packing again
// leaves the file as it is.
func TestPackCompressesRaw(t *testing.T) {
	path, events := writeBehind(t)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Pack(path, nil, PackLimits{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Rewritten || rep.Compressed == 0 || after.Size() >= before.Size() {
		t.Errorf("pack: rewritten %v, %d frames compressed, %d -> %d bytes; want fewer bytes", rep.Rewritten, rep.Compressed, before.Size(), after.Size())
	}
	readsBack(t, path, events)
	if n := rawEventBytes(t, path); n != 0 {
		t.Errorf("after pack, RawEvents = %d, want 0 (the frames compress)", n)
	}
	if rep, err := Pack(path, nil, PackLimits{}); err != nil || rep.Rewritten || rep.Compressed != 0 {
		t.Errorf("pack again: %+v, %v; want the file left as it is", rep, err)
	}
}
