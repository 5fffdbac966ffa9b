package trace

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestTailEncoder: a big blob is compressed in frames of tailChunk bytes,
// one after the other while the recording goes on and on every CPU once
// the writer closes, and decodes to itself either way; a small one, or one
// that does not compress, is one frame as before.
func TestTailEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	big := bytes.Repeat(append(randBytes(rng, 1000), "compressible text "...), 3*tailChunk/1018+7)
	random := randBytes(rng, 2*tailChunk+10)
	tests := []struct {
		name   string
		src    []byte
		tail   bool
		frames int
	}{
		{"big, recording", big, false, (len(big) + tailChunk - 1) / tailChunk},
		{"big, closing", big, true, (len(big) + tailChunk - 1) / tailChunk},
		{"small", big[:tailChunk], true, 1},
		{"random", random, true, 1},
	}
	enc, err := newEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var te tailEncoder
			defer te.close()
			te.tail.Store(tt.tail)
			z := te.compress(enc, tt.src, []byte("prefix"))
			if !bytes.HasPrefix(z, []byte("prefix")) {
				t.Fatal("what dst held is gone")
			}
			z = z[len("prefix"):]
			if n := bytes.Count(z, []byte{0x28, 0xb5, 0x2f, 0xfd}); n < tt.frames {
				t.Errorf("%d zstd frames, want %d", n, tt.frames)
			}
			dec, err := decoder()
			if err != nil {
				t.Fatal(err)
			}
			got, err := dec.DecodeAll(z, make([]byte, 0, len(tt.src)))
			if err != nil || !bytes.Equal(got, tt.src) {
				t.Errorf("decoded %d bytes (%v), want the %d compressed", len(got), err, len(tt.src))
			}
		})
	}
}

// TestBigEventFrames: the events frame of a big read (a program reading a
// whole file in one call) is compressed in frames of tailChunk bytes, as
// a big blob is, and reads back as the event appended.
func TestBigEventFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	data := bytes.Repeat(append(randBytes(rng, 3000), "some text of a file "...), 3*tailChunk/3020+5)
	path := filepath.Join(t.TempDir(), "big.rwd")
	w := createTest(t, path)
	small := &Event{Kind: KindSyscall, Tid: 1, Syscall: 39}
	read := &Event{Kind: KindSyscall, Tid: 1, Syscall: 0, Mem: []Mem{{Addr: 0x10000, Data: data}}}
	for _, e := range []*Event{small, read, small} {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
		if e == read {
			// Written before more comes: with frames waiting
			// behind it, it would be stored raw (raw.go).
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	most := 0
	for i, fi := range r.frames {
		if fi.typ != FrameEvents {
			continue
		}
		raw, err := r.readRaw(i, nil)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, bytes.Count(raw, []byte{0x28, 0xb5, 0x2f, 0xfd}))
	}
	if want := len(data) / tailChunk; most < want {
		t.Errorf("the big read's events frame holds %d zstd frames, want at least %d", most, want)
	}
	var got []*Event
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		got = append(got, e)
	}
	if len(got) != 3 || len(got[1].Mem) != 1 || !bytes.Equal(got[1].Mem[0].Data, data) {
		t.Fatalf("read back %d events; want 3, the second the read of %d bytes", len(got), len(data))
	}
}
