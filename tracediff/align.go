package tracediff

// pair is one step of an alignment: indexes into the two sequences, -1
// where the step exists in one only.
type pair struct{ a, b int }

// maxEdits bounds the work of align: two histories that differ in more
// steps than this are aligned on their common start and end only.
const maxEdits = 1000

// align matches two sequences of keys with the fewest insertions and
// deletions (Myers' diff), in order. Two runs of one program mostly
// agree, so the cost, proportional to the length times the number of
// differences, stays small; past maxEdits the middle is left unmatched.
func align(a, b []string) []pair {
	// The common start and end need no search.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]pair, 0, max(len(a), len(b)))
	for i := range pre {
		out = append(out, pair{i, i})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	mid, ok := myers(ma, mb)
	if !ok {
		mid = nil
		for i := range ma {
			mid = append(mid, pair{i, -1})
		}
		for j := range mb {
			mid = append(mid, pair{-1, j})
		}
	}
	for _, p := range mid {
		if p.a >= 0 {
			p.a += pre
		}
		if p.b >= 0 {
			p.b += pre
		}
		out = append(out, p)
	}
	for k := range suf {
		out = append(out, pair{len(a) - suf + k, len(b) - suf + k})
	}
	return out
}

// myers is the O((N+M)D) shortest edit script, with the frontier of each
// D kept (2D+1 entries: O(D²) memory in all) to walk the path back; false
// when it needs more than maxEdits.
func myers(a, b []string) ([]pair, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		var out []pair
		for i := range n {
			out = append(out, pair{i, -1})
		}
		for j := range m {
			out = append(out, pair{-1, j})
		}
		return out, true
	}
	limit := min(n+m, maxEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m, d), true
			}
		}
	}
	return nil, false
}

// backtrack walks the saved frontiers from the end back to the start.
func backtrack(trace [][]int, x, y, d int) []pair {
	var rev []pair
	for ; d > 0; d-- {
		v := trace[d] // v[d+k] is the frontier of diagonal k before step d
		k := x - y
		var pk int
		if k == -d || (k != d && v[d+k-1] < v[d+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v[d+pk]
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, pair{x, y})
		}
		if x == px {
			y--
			rev = append(rev, pair{-1, y})
		} else {
			x--
			rev = append(rev, pair{x, -1})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, pair{x, y})
	}
	out := make([]pair, len(rev))
	for i, p := range rev {
		out[len(rev)-1-i] = p
	}
	return out
}
