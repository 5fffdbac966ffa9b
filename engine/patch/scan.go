package patch

import (
	"bytes"
	"sort"
)

// ops are the instructions a scan traps beyond rdrand and rdseed.
type ops uint8

// The instructions a scan may trap too.
const (
	opsCpuid  ops = 1 << iota // Space.Cpuid
	opsXgetbv                 // Space.Xgetbv
)

// candidates returns the offsets in code of every 0f c7 followed by a ModRM
// byte of a register form with /6 or /7: all the places an rdrand or rdseed
// could be, most of them inside other instructions; with opsCpuid, of
// every 0f a2 too, with opsXgetbv of every 0f 01 d0. Only functions holding
// one are decoded, so a mapping without any costs a byte search.
func candidates(code []byte, also ops) []int {
	var out []int
	for i := 0; i+2 < len(code); {
		j := bytes.Index(code[i:], []byte{0x0f, 0xc7})
		if j < 0 {
			break
		}
		k := i + j
		if k+2 < len(code) && code[k+2] >= 0xf0 {
			out = append(out, k)
		}
		i = k + 1
	}
	for _, p := range []struct {
		op  ops
		pat []byte
	}{{opsCpuid, []byte{0x0f, 0xa2}}, {opsXgetbv, []byte{0x0f, 0x01, 0xd0}}} {
		if also&p.op == 0 {
			continue
		}
		for i := 0; i+len(p.pat) <= len(code); {
			j := bytes.Index(code[i:], p.pat)
			if j < 0 {
				break
			}
			out = append(out, i+j)
			i += j + 1
		}
	}
	sort.Ints(out)
	return out
}

// findSites decodes code (the bytes at base) from the start of each span of
// plan that holds a candidate, and returns the rdrand and rdseed
// instructions met (and those of also), by address. A span's decoding stops at its end, at an
// instruction that would cross it, or at bytes that do not decode (the
// boundaries are lost from there: candidates after it are missed). A strict
// span's sites count only if all of it is valid code, to its exact end.
func findSites(code []byte, base uint64, plan []span, cands []int, also ops) map[uint64]Site {
	sites := map[uint64]Site{}
	for _, sp := range plan {
		if sp.start < base || sp.end > base+uint64(len(code)) || sp.start >= sp.end {
			continue
		}
		lo, hi := int(sp.start-base), int(sp.end-base)
		// The first candidate at or after lo; none before hi: nothing to do.
		c := sort.SearchInts(cands, lo)
		if c == len(cands) || cands[c] >= hi {
			continue
		}
		var found []Site
		pos := lo
		for pos < hi && (sp.strict || c < len(cands) && cands[c] < hi) {
			b := code[pos:min(pos+maxInsnLen, hi)]
			n, err := decodeLen(b)
			if err != nil || sp.strict && !validInsn(b[:n]) {
				break
			}
			// Candidates inside this instruction: is it one of ours?
			hit := false
			for c < len(cands) && cands[c] < pos+n {
				if cands[c] >= pos {
					hit = true
				}
				c++
			}
			if hit {
				if s, ok := randInsn(code[pos:], n); ok {
					s.Addr = base + uint64(pos)
					found = append(found, s)
				} else if s, ok := cpuidInsn(code[pos:], n); ok && also&opsCpuid != 0 {
					s.Addr = base + uint64(pos)
					found = append(found, s)
				} else if s, ok := xgetbvInsn(code[pos:], n); ok && also&opsXgetbv != 0 {
					s.Addr = base + uint64(pos)
					found = append(found, s)
				}
			}
			pos += n
		}
		if sp.strict && pos != hi {
			continue // not code throughout: its candidates may be data
		}
		for _, s := range found {
			sites[s.Addr] = s
		}
	}
	return sites
}
