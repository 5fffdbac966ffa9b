package trace

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestCRCCombine: the CRC made from the CRCs of two parts is the CRC of
// the whole, whatever the parts' lengths (none, one byte, across the
// powers of two the combination squares through).
func TestCRCCombine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tt := range []struct{ a, b int }{
		{0, 0}, {0, 5}, {5, 0}, {1, 1}, {13, 1}, {1, 255}, {100, 4096}, {7, 65537}, {4000, 1 << 20},
	} {
		a, b := randBytes(rng, tt.a), randBytes(rng, tt.b)
		whole := crc32.Checksum(append(append([]byte{}, a...), b...), castagnoli)
		got := crcCombine(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), int64(len(b)))
		if got != whole {
			t.Errorf("%d+%d bytes: combined %08x, want %08x", tt.a, tt.b, got, whole)
		}
	}
}
