package machine

import (
	"fmt"
	"slices"
	"strings"
)

// CPUID executes cpuid on this CPU: the recorder answers a trapped cpuid
// of the program with it, and replay reads this CPU's XSAVE layout.
func CPUID(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// XGETBV executes xgetbv on this CPU (ecx 0: XCR0, the register states
// the kernel enabled), for a trapped xgetbv of the program.
func XGETBV(ecx uint32) (eax, edx uint32)

// Reg names the register of a cpuid answer a feature bit is in.
type Reg uint8

// The registers of a cpuid answer.
const (
	EAX Reg = iota
	EBX
	ECX
	EDX
)

// Feature is an instruction set extension: its /proc/cpuinfo name and
// where cpuid reports it (Intel SDM vol. 2 "CPUID", AMD APM vol. 3 E.3).
type Feature struct {
	Name      string
	Leaf, Sub uint32
	Reg       Reg
	Bit       uint
}

// features are the instruction set extensions a program told of one (by
// the recording's cpuid answers) may execute, and which fault on a CPU
// without it. rdrand, rdseed, hle and rtm are not among them: the recorder
// always hides them from the program.
var features = []Feature{
	{"sse", 1, 0, EDX, 25}, {"sse2", 1, 0, EDX, 26},
	{"pni", 1, 0, ECX, 0}, {"pclmulqdq", 1, 0, ECX, 1}, {"ssse3", 1, 0, ECX, 9}, {"fma", 1, 0, ECX, 12},
	{"cx16", 1, 0, ECX, 13}, {"sse4_1", 1, 0, ECX, 19}, {"sse4_2", 1, 0, ECX, 20}, {"movbe", 1, 0, ECX, 22},
	{"popcnt", 1, 0, ECX, 23}, {"aes", 1, 0, ECX, 25}, {"xsave", 1, 0, ECX, 26}, {"avx", 1, 0, ECX, 28},
	{"f16c", 1, 0, ECX, 29},
	{"bmi1", 7, 0, EBX, 3}, {"avx2", 7, 0, EBX, 5}, {"bmi2", 7, 0, EBX, 8}, {"avx512f", 7, 0, EBX, 16},
	{"avx512dq", 7, 0, EBX, 17}, {"adx", 7, 0, EBX, 19}, {"avx512ifma", 7, 0, EBX, 21},
	{"clflushopt", 7, 0, EBX, 23}, {"clwb", 7, 0, EBX, 24}, {"avx512cd", 7, 0, EBX, 28},
	{"sha_ni", 7, 0, EBX, 29}, {"avx512bw", 7, 0, EBX, 30}, {"avx512vl", 7, 0, EBX, 31},
	{"avx512vbmi", 7, 0, ECX, 1}, {"waitpkg", 7, 0, ECX, 5}, {"avx512_vbmi2", 7, 0, ECX, 6},
	{"gfni", 7, 0, ECX, 8}, {"vaes", 7, 0, ECX, 9}, {"vpclmulqdq", 7, 0, ECX, 10},
	{"avx512_vnni", 7, 0, ECX, 11}, {"avx512_bitalg", 7, 0, ECX, 12}, {"avx512_vpopcntdq", 7, 0, ECX, 14},
	{"rdpid", 7, 0, ECX, 22}, {"movdiri", 7, 0, ECX, 27}, {"movdir64b", 7, 0, ECX, 28},
	{"serialize", 7, 0, EDX, 14}, {"amx_bf16", 7, 0, EDX, 22}, {"avx512_fp16", 7, 0, EDX, 23},
	{"amx_tile", 7, 0, EDX, 24}, {"amx_int8", 7, 0, EDX, 25},
	{"avx_vnni", 7, 1, EAX, 4}, {"avx512_bf16", 7, 1, EAX, 5},
	{"xsaveopt", 0xd, 1, EAX, 0}, {"xsavec", 0xd, 1, EAX, 1}, {"xsaves", 0xd, 1, EAX, 3},
	{"lahf_lm", 0x80000001, 0, ECX, 0}, {"abm", 0x80000001, 0, ECX, 5}, {"sse4a", 0x80000001, 0, ECX, 6},
	{"3dnowprefetch", 0x80000001, 0, ECX, 8}, {"fma4", 0x80000001, 0, ECX, 16},
	{"rdtscp", 0x80000001, 0, EDX, 27},
}

// also are the bits hidden with a feature that /proc/cpuinfo does not name:
// OSXSAVE (leaf 1 ECX 27) says the kernel enabled XSAVE, and a program that
// sees it goes on to XGETBV.
var also = map[string][]Feature{
	"xsave": {{"osxsave", 1, 0, ECX, 27}},
}

// Level is an x86-64 micro-architecture level of the psABI (the
// -march=x86-64-vN of gcc and clang): a recording made at a level runs on
// any CPU of that level.
type Level struct {
	Name string
	// Adds are the features of the table the level adds to the one before.
	Adds []string
}

// Levels are the x86-64 levels, lowest first.
var Levels = []Level{
	{"x86-64", []string{"sse", "sse2"}},
	{"x86-64-v2", []string{"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"}},
	{"x86-64-v3", []string{"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}},
	{"x86-64-v4", []string{"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}},
}

// FeatureNames are the names ParseHide takes, in the table's order.
func FeatureNames() []string {
	out := make([]string, len(features))
	for i, f := range features {
		out[i] = f.Name
	}
	return out
}

// Hide is a set of features hidden from a recorded program: cpuid's
// answers do not show them, so that the program (its libraries' ifunc
// choices, a JIT's code generation) does not use them and the recording
// replays on a CPU without them (rewind record --cpu-features, rr's
// --disable-cpuid-features).
type Hide []string

// ParseHide reads record's --cpu-features SPEC: "native" (hide nothing) or a level
// of Levels, then, comma-separated, "-FEATURE" items to hide more and
// "+FEATURE" items to keep one the level hides ("x86-64-v3,+aes"; a spec
// may also start with the items). have, this CPU's flags, bounds what is
// hidden to what it has.
func ParseHide(spec string, have []string) (Hide, error) {
	allowed := map[string]bool{}
	for _, f := range features {
		allowed[f.Name] = true
	}
	items := strings.Split(spec, ",")
	if lvl := strings.TrimSpace(items[0]); !strings.HasPrefix(lvl, "+") && !strings.HasPrefix(lvl, "-") {
		items = items[1:]
		if lvl != "native" {
			i := slices.IndexFunc(Levels, func(l Level) bool { return l.Name == lvl })
			if i < 0 {
				return nil, fmt.Errorf("--cpu-features %s: %q is not native or a level (x86-64, x86-64-v2, x86-64-v3, x86-64-v4)", spec, lvl)
			}
			clear(allowed)
			for _, l := range Levels[:i+1] {
				for _, n := range l.Adds {
					allowed[n] = true
				}
			}
		}
	}
	for _, it := range items {
		it = strings.TrimSpace(it)
		if len(it) < 2 || (it[0] != '+' && it[0] != '-') {
			return nil, fmt.Errorf("--cpu-features %s: %q: after the level, each item is -FEATURE or +FEATURE", spec, it)
		}
		name := it[1:]
		if !slices.ContainsFunc(features, func(f Feature) bool { return f.Name == name }) {
			return nil, fmt.Errorf("--cpu-features %s: %q is not a feature rewind can hide (%s)", spec, name, strings.Join(FeatureNames(), " "))
		}
		allowed[name] = it[0] == '+'
	}
	var h Hide
	for _, f := range features {
		if !allowed[f.Name] && slices.Contains(have, f.Name) {
			h = append(h, f.Name)
		}
	}
	return h, nil
}

// Apply clears the bits of h's features from the answer of cpuid leaf,
// sub (regs: eax, ebx, ecx, edx).
func (h Hide) Apply(leaf, sub uint32, regs *[4]uint32) {
	for _, n := range h {
		for _, f := range features {
			if f.Name != n {
				continue
			}
			for _, b := range append([]Feature{f}, also[n]...) {
				if b.Leaf == leaf && (b.Sub == sub || !hasSubleaves(leaf)) {
					regs[b.Reg] &^= 1 << b.Bit
				}
			}
		}
	}
}

// xcr0Bits are the register states of XCR0 that a hidden feature hides
// too: a program that sees the state enabled may look for the feature
// otherwise (libgcc asks cpuid other questions then).
var xcr0Bits = map[string]uint64{
	"avx":      1 << 2,        // YMM's upper halves
	"avx512f":  0xe0,          // opmask, ZMM0-15's upper halves, ZMM16-31
	"amx_tile": 1<<17 | 1<<18, // tile configuration and data
}

// XCR0 is v, an XCR0 (or the XINUSE xgetbv's ecx 1 gives), without the
// states of h's features.
func (h Hide) XCR0(v uint64) uint64 {
	for _, n := range h {
		v &^= xcr0Bits[n]
	}
	return v
}

// hasSubleaves says whether cpuid's answer for leaf depends on the
// subleaf (ecx), among the leaves of the table: for the others, ecx is
// whatever the program left there (glibc's __cpuid sets none).
func hasSubleaves(leaf uint32) bool { return leaf == 7 || leaf == 0xd }

// Without returns flags less h's features.
func (h Hide) Without(flags []string) []string {
	return slices.DeleteFunc(slices.Clone(flags), func(f string) bool { return slices.Contains(h, f) })
}
