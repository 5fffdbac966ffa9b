package patch

import (
	"bytes"
	"testing"
)

// TestPickWindow: the window a cpuid's patch replaces is the smallest run
// of whole instructions around it as long as a jump, none of which but the
// first is a jump's target, and only instructions that run the same
// anywhere besides the cpuid.
func TestPickWindow(t *testing.T) {
	mov4 := []byte{0xb8, 0x04, 0x00, 0x00, 0x00} // mov $4,%eax
	xor := []byte{0x31, 0xc9}                    // xor %ecx,%ecx
	cpuid := []byte{0x0f, 0xa2}
	and := []byte{0x83, 0xe0, 0x1f}                     // and $0x1f,%eax
	store := []byte{0x89, 0x05, 0x10, 0x00, 0x00, 0x00} // mov %eax,0x10(%rip)
	je := []byte{0x74, 0x02}                            // je +2
	ret := []byte{0xc3}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	const at = 0x1000
	site := uint64(at + len(mov4) + len(xor))
	tests := []struct {
		name    string
		code    []byte
		targets []uint64
		want    []byte // the window's bytes; nil: none
	}{
		{"the cpuid and what follows", cat(mov4, xor, cpuid, and, ret), nil, cat(cpuid, and)},
		{"what follows is a target", cat(mov4, xor, cpuid, and, ret), []uint64{site + 2}, cat(mov4, xor, cpuid)},
		{"the cpuid is a target", cat(mov4, xor, cpuid, and, ret), []uint64{site}, cat(cpuid, and)},
		{"the cpuid and the xor are targets", cat(mov4, xor, cpuid, and, ret), []uint64{site, site - 2, site + 2}, nil},
		{"rip-relative after, a branch", cat(mov4, xor, cpuid, store, ret), nil, cat(mov4, xor, cpuid)},
		{"a branch after, a target before", cat(mov4, xor, cpuid, je, ret), []uint64{site - 2}, nil},
		{"a branch after", cat(mov4, xor, cpuid, je, ret), nil, cat(mov4, xor, cpuid)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			targets := map[uint64]bool{}
			for _, a := range tc.targets {
				targets[a] = true
			}
			lo, hi, ok := pickWindow(tc.code, at, site, 2, targets)
			switch {
			case tc.want == nil && ok:
				t.Errorf("window % x, want none", tc.code[lo:hi])
			case tc.want != nil && !ok:
				t.Errorf("no window, want % x", tc.want)
			case ok && !bytes.Equal(tc.code[lo:hi], tc.want):
				t.Errorf("window % x, want % x", tc.code[lo:hi], tc.want)
			}
		})
	}
}
