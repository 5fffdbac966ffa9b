package replay

import (
	"testing"

	"github.com/rewind-debugger/rewind/engine/insn"
)

// TestNearestPage: the trampoline's page is the free page nearest the
// patched address whose jump displacement has trap bytes where the run's
// instructions begin, as a search of every page finds: near a non-PIE
// executable (low addresses), a PIE one and a library, for every set of
// constrained bytes.
func TestNearestPage(t *testing.T) {
	// Free spans of a typical process: below a non-PIE executable, between
	// its heap and a PIE mapping, between libraries, below the stack.
	free := []span{
		{lowestPage, 0x400000},
		{0x406000, 0x555555554000},
		{0x555555559000, 0x7ffff7d80000},
		{0x7ffff7d82000, 0x7ffff7fc0000},
		{0x7ffff7fff000, 0x7ffffffde000 - stackGuard},
	}
	const size = trampolineSize
	brute := func(at uint64, want [4]bool) (uint64, bool) {
		base := int64(at + insn.JumpLen)
		best, found := uint64(0), false
		dist := func(a uint64) uint64 {
			if a > at {
				return a - at
			}
			return at - a
		}
		for _, f := range free {
			lo, hi := f.lo, f.hi
			if at > reach {
				lo = max(lo, at-reach)
			}
			hi = min(hi, at+reach)
			for p := (lo + size - 1) &^ (size - 1); p+size <= hi; p += size {
				if !within(p, at) {
					continue
				}
				d := int64(p) - base
				ok := true
				for i := 0; i < 4; i++ {
					if want[i] && !insn.TrapByte(byte(d>>(8*i))) {
						ok = false
					}
				}
				if ok && (!found || dist(p) < dist(best) || (dist(p) == dist(best) && p < best)) {
					best, found = p, true
				}
			}
		}
		return best, found
	}
	ats := []uint64{0x401234, 0x4011b9, 0x555555555123, 0x555555556ffa, 0x7ffff7d81010, 0x7ffff7e2c3a7}
	for _, at := range ats {
		for mask := 0; mask < 16; mask++ {
			var want [4]bool
			for i := range want {
				want[i] = mask&(1<<i) != 0
			}
			got, ok := nearestPage(free, at, want, []uint64{at})
			exp, eok := brute(at, want)
			if got != exp || ok != eok {
				t.Errorf("at %#x, trap bytes wanted %v: page %#x (%v), a search of every page finds %#x (%v)", at, want, got, ok, exp, eok)
			}
		}
	}
}
