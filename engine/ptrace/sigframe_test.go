package ptrace

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestFitFPState: the FPU state of one CPU's signal frame, fitted into the
// room the recorded frame's took: kept whole where it fits, cut after its
// last component in use, without PKRU if need be, refused when a
// component in use does not fit; what is kept says its own length and
// ends with the closing magic, as rt_sigreturn checks.
func TestFitFPState(t *testing.T) {
	// The standard format's offsets of an Intel CPU with MPX and PKRU.
	intel := map[uint32][2]uint32{2: {576, 256}, 3: {960, 64}, 4: {1024, 64}, 5: {1088, 64}, 7: {1664, 1024}, 9: {2688, 8}}
	comp := func(i uint32) (uint32, uint32) { c := intel[i]; return c[0], c[1] }
	state := func(size int, features, inUse uint64) []byte {
		b := make([]byte, size+4)
		for i := range b {
			b[i] = byte(i)
		}
		binary.LittleEndian.PutUint32(b[fxSWBytesOff:], fpXstateMagic1)
		binary.LittleEndian.PutUint32(b[fxSWExtendedOff:], uint32(size+4))
		binary.LittleEndian.PutUint64(b[fxSWXfeaturesOff:], features)
		binary.LittleEndian.PutUint32(b[fxSWXstateSizeOff:], uint32(size))
		binary.LittleEndian.PutUint64(b[xstateBVOff:], inUse)
		binary.LittleEndian.PutUint32(b[size:], fpXstateMagic2)
		return b
	}
	// zeroed clears the byte ranges [from, to) of b, pairwise.
	zeroed := func(b []byte, ranges ...int) []byte {
		for i := 0; i+1 < len(ranges); i += 2 {
			clear(b[ranges[i]:ranges[i+1]])
		}
		return b
	}
	for _, c := range []struct {
		name            string
		st              []byte
		room            int
		wantLen         int // 0: refused
		features, inUse uint64
		err             string
	}{
		{"fits", state(832, 0x7, 0x7), 2436, 836, 0x7, 0x7, ""},
		{"cut after AVX", state(2696, 0x21f, 0x7), 836, 836, 0x21f, 0x7, ""},
		{"PKRU in use dropped", state(2696, 0x21f, 0x207), 2436, 836, 0x01f, 0x7, ""},
		{"x87 and SSE only", state(2696, 0x21f, 0x3), 600, 580, 0x21f, 0x3, ""},
		{"AVX in use, no room", state(2696, 0x21f, 0x7), 700, 0, 0, 0, "room for 700 bytes of FPU state, this CPU's needs 836"},
		{"no XSAVE", make([]byte, 1024), 600, 0, 0, 0, "without XSAVE"},
		{"AVX-512 said in use, zeros", zeroed(state(2696, 0x2ff, 0xa7), 1088, 1152, 1664, 2688), 836, 836, 0x2ff, 0x7, ""},
		{"AVX-512 in use", zeroed(state(2696, 0x2ff, 0xa7), 1664, 2688), 836, 0, 0, 0, "this CPU's needs 1156"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := FitFPState(c.st, c.room, comp)
			if c.wantLen == 0 {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %d bytes, %v; want an error with %q", len(got), err, c.err)
				}
				return
			}
			if err != nil || len(got) != c.wantLen {
				t.Fatalf("got %d bytes, %v; want %d", len(got), err, c.wantLen)
			}
			size := c.wantLen - 4
			for _, f := range []struct {
				name      string
				got, want uint64
			}{
				{"extended size", uint64(binary.LittleEndian.Uint32(got[fxSWExtendedOff:])), uint64(c.wantLen)},
				{"xstate size", uint64(binary.LittleEndian.Uint32(got[fxSWXstateSizeOff:])), uint64(size)},
				{"features", binary.LittleEndian.Uint64(got[fxSWXfeaturesOff:]), c.features},
				{"XSTATE_BV", binary.LittleEndian.Uint64(got[xstateBVOff:]), c.inUse},
				{"closing magic", uint64(binary.LittleEndian.Uint32(got[size:])), fpXstateMagic2},
			} {
				if f.got != f.want {
					t.Errorf("%s %#x, want %#x", f.name, f.got, f.want)
				}
			}
			for _, i := range []int{0, 160, 575} { // registers, whatever the cut
				if got[i] != c.st[i] {
					t.Errorf("byte %d changed", i)
				}
			}
		})
	}
}
