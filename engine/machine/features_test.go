package machine

import (
	"slices"
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestParseHide: each spec hides what its level and items say, bounded by
// what the CPU has; bad specs are one-line errors naming the bad part.
func TestParseHide(t *testing.T) {
	have := []string{"sse", "sse2", "pni", "ssse3", "sse4_1", "sse4_2", "popcnt", "cx16", "lahf_lm", "aes",
		"avx", "avx2", "xsave", "xsavec", "avx512f", "avx512vl", "sha_ni", "fpu", "cpuid_fault"}
	for _, c := range []struct {
		spec string
		want []string // hidden, in the table's order
		err  string
	}{
		{"native", nil, ""},
		{"x86-64-v4", []string{"aes", "sha_ni", "xsavec"}, ""},
		{"x86-64-v3", []string{"aes", "avx512f", "sha_ni", "avx512vl", "xsavec"}, ""},
		{"x86-64-v3,+aes", []string{"avx512f", "sha_ni", "avx512vl", "xsavec"}, ""},
		{"x86-64-v2", []string{"aes", "xsave", "avx", "avx2", "avx512f", "sha_ni", "avx512vl", "xsavec"}, ""},
		{"x86-64", []string{"pni", "ssse3", "cx16", "sse4_1", "sse4_2", "popcnt", "aes", "xsave", "avx", "avx2",
			"avx512f", "sha_ni", "avx512vl", "xsavec", "lahf_lm"}, ""},
		{"-avx512f,-avx512vl", []string{"avx512f", "avx512vl"}, ""},
		{"native,-sha_ni,-amx_tile", []string{"sha_ni"}, ""}, // amx_tile: not this CPU's
		{"x86-64-v5", nil, `"x86-64-v5" is not native or a level`},
		{"x86-64-v3,aes", nil, `"aes": after the level`},
		{"x86-64-v3,-avx1024", nil, `"avx1024" is not a feature`},
	} {
		t.Run(c.spec, func(t *testing.T) {
			got, err := ParseHide(c.spec, have)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("ParseHide(%q) = %v, %v; want one line with %q", c.spec, got, err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, Hide(c.want)) {
				t.Fatalf("ParseHide(%q) = %q, %v; want %q", c.spec, got, err, c.want)
			}
		})
	}
}

// TestHideApply: hiding a feature clears its bit in the answer of its
// leaf and subleaf only (xsave's OSXSAVE with it), and nothing else.
func TestHideApply(t *testing.T) {
	all := [4]uint32{^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)}
	for _, c := range []struct {
		hide      Hide
		leaf, sub uint32
		want      [4]uint32
	}{
		{Hide{"avx2", "avx512f"}, 7, 0, [4]uint32{all[0], all[1] &^ (1<<5 | 1<<16), all[2], all[3]}},
		{Hide{"avx2"}, 7, 1, all},
		{Hide{"avx2"}, 1, 0, all},
		{Hide{"avx", "sse4_2"}, 1, 0x444d4163, [4]uint32{all[0], all[1], all[2] &^ (1<<28 | 1<<20), all[3]}}, // leaf 1: any ecx
		{Hide{"avx512f"}, 7, 0x444d4163, all},
		{Hide{"xsave"}, 1, 0, [4]uint32{all[0], all[1], all[2] &^ (1<<26 | 1<<27), all[3]}},
		{Hide{"xsavec", "xsaves"}, 0xd, 1, [4]uint32{all[0] &^ (1<<1 | 1<<3), all[1], all[2], all[3]}},
		{Hide{"abm", "rdtscp"}, 0x80000001, 0, [4]uint32{all[0], all[1], all[2] &^ (1 << 5), all[3] &^ (1 << 27)}},
		{Hide{"avx512_bf16"}, 7, 1, [4]uint32{all[0] &^ (1 << 5), all[1], all[2], all[3]}},
	} {
		regs := all
		c.hide.Apply(c.leaf, c.sub, &regs)
		if regs != c.want {
			t.Errorf("%q on leaf %#x.%d: %#x, want %#x", c.hide, c.leaf, c.sub, regs, c.want)
		}
	}
}

// TestMissingFeaturesHidden: a feature this CPU lacks makes a recording
// that showed it to the program refused; hidden from the program, it
// does not.
func TestMissingFeaturesHidden(t *testing.T) {
	_, flags := CPUInfo()
	if len(flags) == 0 {
		t.Skip("no /proc/cpuinfo flags here")
	}
	i := slices.IndexFunc(features, func(f Feature) bool { return !slices.Contains(flags, f.Name) })
	if i < 0 {
		t.Skip("this CPU has every feature of the table")
	}
	lacked := features[i].Name
	rec := append(slices.Clone(flags), lacked)
	if got := MissingFeatures(&trace.Header{CPUFlags: rec}); !slices.Equal(got, []string{lacked}) {
		t.Fatalf("shown %s: missing %q, want [%s]", lacked, got, lacked)
	}
	hide := Hide{lacked}
	if got := MissingFeatures(&trace.Header{CPUFlags: hide.Without(rec), CPUHidden: hide}); len(got) > 0 {
		t.Fatalf("hidden %s: missing %q, want none", lacked, got)
	}
}
