package tracediff

import (
	"slices"
	"strings"
	"testing"
)

// TestAlign checks that the alignment keeps every element once, in order,
// pairs only equal keys, and pairs as many as the longest common
// subsequence has.
func TestAlign(t *testing.T) {
	for _, tc := range []struct {
		a, b  string // keys separated by spaces
		pairs int
	}{
		{"", "", 0},
		{"a b c", "a b c", 3},
		{"a b c", "", 0},
		{"", "x y", 0},
		{"a b c a b b a", "c b a b a c", 4},
		{"read read write close", "read write close", 3},
		{"open read close exit", "open read read close exit", 4},
		{"x a b c", "y a b c", 3},
	} {
		a, b := strings.Fields(tc.a), strings.Fields(tc.b)
		got := align(a, b)
		var ia, ib []int
		n := 0
		for _, p := range got {
			if p.a >= 0 {
				ia = append(ia, p.a)
			}
			if p.b >= 0 {
				ib = append(ib, p.b)
			}
			if p.a >= 0 && p.b >= 0 {
				n++
				if a[p.a] != b[p.b] {
					t.Errorf("%q / %q: paired %q with %q", tc.a, tc.b, a[p.a], b[p.b])
				}
			}
		}
		if !slices.IsSorted(ia) || len(ia) != len(a) || !slices.IsSorted(ib) || len(ib) != len(b) {
			t.Errorf("%q / %q: not every element once in order: %v", tc.a, tc.b, got)
		}
		if n != tc.pairs {
			t.Errorf("%q / %q: %d pairs, want %d: %v", tc.a, tc.b, n, tc.pairs, got)
		}
	}
}

// TestAlignBounded checks that two sequences too different to search are
// still aligned, on their common start and end.
func TestAlignBounded(t *testing.T) {
	var a, b []string
	a = append(a, "start")
	b = append(b, "start")
	for i := range 3 * maxEdits {
		a = append(a, "a"+string(rune('a'+i%20)))
		b = append(b, "b"+string(rune('a'+i%20)))
	}
	a, b = append(a, "end"), append(b, "end")
	got := align(a, b)
	if got[0] != (pair{0, 0}) || got[len(got)-1] != (pair{len(a) - 1, len(b) - 1}) {
		t.Errorf("start or end not paired: %v … %v", got[0], got[len(got)-1])
	}
	if len(got) != len(a)+len(b)-2 {
		t.Errorf("%d steps, want %d", len(got), len(a)+len(b)-2)
	}
}
