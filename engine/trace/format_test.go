package trace

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteSum(t *testing.T) {
	tests := []struct {
		alg  string
		data string
		want uint64
	}{
		// CRC-32C's check value (0xe3069283), shifted, low bit set.
		{WriteHashCRC, "123456789", 0xe3069283<<1 | 1},
		{WriteHashCRC, "", 1},
		// FNV-1a 64's, as traces before WriteHash hold.
		{"", "", 0xcbf29ce484222325 | 1},
		{"", "a", 0xaf63dc4c8601ec8c | 1},
	}
	for _, tt := range tests {
		if got := WriteSum(tt.alg, []byte(tt.data)); got != tt.want {
			t.Errorf("WriteSum(%q, %q) = %#x, want %#x", tt.alg, tt.data, got, tt.want)
		}
	}
}

// TestRawFrames: big data that does not compress (random bytes) goes into
// the trace as it is, in raw zstd blocks, and reads back, as an event's
// memory and as a blob; big data that compresses is compressed; raw
// frames of any length decode.
func TestRawFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	random := randBytes(rng, 3<<20)
	text := bytes.Repeat([]byte("a line of text that compresses\n"), (3<<20)/31)
	for _, tt := range []struct {
		name    string
		data    []byte
		wantRaw bool
	}{
		{"random", random, true},
		{"text", text, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.rwd")
			w := createTest(t, path)
			if err := w.Append(&Event{Kind: KindSyscall, Tid: 1, Syscall: 0, Mem: []Mem{{Addr: 0x1000, Data: tt.data}}}); err != nil {
				t.Fatal(err)
			}
			id, err := w.AddBlob(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			r := closeAndOpen(t, w, nil, path)
			defer r.Close()
			e, err := r.Next()
			if err != nil || len(e.Mem) != 1 || !bytes.Equal(e.Mem[0].Data, tt.data) {
				t.Fatalf("the event's memory did not read back (%v)", err)
			}
			if b, err := r.Blob(id); err != nil || !bytes.Equal(b, tt.data) {
				t.Fatalf("the blob did not read back (%v)", err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if raw := fi.Size() > int64(2*len(tt.data)); raw != tt.wantRaw {
				t.Errorf("trace of %d bytes for twice %d bytes: stored raw %v, want %v", fi.Size(), len(tt.data), raw, tt.wantRaw)
			}
		})
	}
	enc, err := newEncoder()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(compress(enc, random, nil), appendRawFrame(nil, random)) {
		t.Error("random data was not stored in a raw frame (compress looked for matches in it)")
	}
	dec, err := decoder()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 128 << 10, 128<<10 + 1, 1 << 20} {
		src := randBytes(rng, n)
		got, err := dec.DecodeAll(appendRawFrame(nil, src), make([]byte, 0, n))
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("raw frame of %d bytes: %d bytes back, %v", n, len(got), err)
		}
	}
}
