package trace

import (
	"bytes"
	"math/rand/v2"
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
