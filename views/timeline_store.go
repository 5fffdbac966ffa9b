package views

// The Timeline's cache of event descriptions: spans of loaded events,
// bounded, trimmed around the cursor, and the gaps still to load.

import "sort"

// tlSpan is the events [lo, hi).
type tlSpan struct{ lo, hi int64 }

// tlStore is loaded event descriptions: items sorted by event number, and
// the spans of events whose descriptions (those that pass, for a filtered
// store) are all in items. Lookups are binary searches, so drawing costs
// the same whatever the recording's size.
type tlStore struct {
	items []EventItem
	spans []tlSpan // sorted, disjoint, not adjacent
}

// lower is the index of the first item at or after event n.
func (s *tlStore) lower(n int64) int {
	return sort.Search(len(s.items), func(i int) bool { return s.items[i].N >= n })
}

// get returns the item of event n.
func (s *tlStore) get(n int64) (EventItem, bool) {
	if i := s.lower(n); i < len(s.items) && s.items[i].N == n {
		return s.items[i], true
	}
	return EventItem{}, false
}

// spanAt returns the loaded span holding event n.
func (s *tlStore) spanAt(n int64) (tlSpan, bool) {
	i := sort.Search(len(s.spans), func(i int) bool { return s.spans[i].hi > n })
	if i < len(s.spans) && s.spans[i].lo <= n {
		return s.spans[i], true
	}
	return tlSpan{}, false
}

func (s *tlStore) covers(n int64) bool {
	_, ok := s.spanAt(n)
	return ok
}

// add stores the items of events [lo, hi), replacing what was there.
func (s *tlStore) add(lo, hi int64, items []EventItem) {
	i, j := s.lower(lo), s.lower(hi)
	out := make([]EventItem, 0, i+len(items)+len(s.items)-j)
	out = append(out, s.items[:i]...)
	out = append(out, items...)
	out = append(out, s.items[j:]...)
	s.items = out
	s.spans = tlAddSpan(s.spans, tlSpan{lo, hi})
}

// trim keeps at most limit items, dropping the ones farthest from event
// around down to three quarters of the limit, and forgets the spans where
// they were.
func (s *tlStore) trim(limit int, around int64) {
	if len(s.items) <= limit {
		return
	}
	keep := limit * 3 / 4
	a, b := 0, len(s.items)
	for b-a > keep {
		if around-s.items[a].N > s.items[b-1].N-around {
			a++
		} else {
			b--
		}
	}
	lo, hi := int64(-1<<62), int64(1<<62)
	if a > 0 {
		lo = s.items[a-1].N + 1
	}
	if b < len(s.items) {
		hi = s.items[b].N
	}
	s.items = append([]EventItem{}, s.items[a:b]...)
	var spans []tlSpan
	for _, sp := range s.spans {
		sp.lo, sp.hi = max(sp.lo, lo), min(sp.hi, hi)
		if sp.lo < sp.hi {
			spans = append(spans, sp)
		}
	}
	s.spans = spans
}

// tlAddSpan adds a span to a sorted list, merging what touches it.
func tlAddSpan(spans []tlSpan, n tlSpan) []tlSpan {
	out := make([]tlSpan, 0, len(spans)+1)
	done := false
	for _, sp := range spans {
		switch {
		case sp.hi < n.lo:
			out = append(out, sp)
		case sp.lo > n.hi:
			if !done {
				out = append(out, n)
				done = true
			}
			out = append(out, sp)
		default:
			n.lo, n.hi = min(n.lo, sp.lo), max(n.hi, sp.hi)
		}
	}
	if !done {
		out = append(out, n)
	}
	return out
}

// tlCovering returns a span of any list that holds event n.
func tlCovering(n int64, lists ...[]tlSpan) (tlSpan, bool) {
	for _, l := range lists {
		for _, sp := range l {
			if n >= sp.lo && n < sp.hi {
				return sp, true
			}
		}
	}
	return tlSpan{}, false
}

// tlNextStart is the first span start after n in the lists.
func tlNextStart(n int64, lists ...[]tlSpan) int64 {
	next := int64(1 << 62)
	for _, l := range lists {
		for _, sp := range l {
			if sp.lo > n {
				next = min(next, sp.lo)
			}
		}
	}
	return next
}

// tlPrevEnd is the last span end at or before n in the lists.
func tlPrevEnd(n int64, lists ...[]tlSpan) int64 {
	prev := int64(0)
	for _, l := range lists {
		for _, sp := range l {
			if sp.hi <= n {
				prev = max(prev, sp.hi)
			}
		}
	}
	return prev
}

// tlGaps is the smallest span holding every event of [lo, hi) that no
// list covers.
func tlGaps(lo, hi int64, lists ...[]tlSpan) (tlSpan, bool) {
	first, last := int64(-1), int64(-1)
	for n := lo; n < hi; {
		if sp, ok := tlCovering(n, lists...); ok {
			n = sp.hi
			continue
		}
		e := min(hi, tlNextStart(n, lists...))
		if first < 0 {
			first = n
		}
		last = e
		n = e
	}
	if first < 0 {
		return tlSpan{}, false
	}
	return tlSpan{first, last}, true
}
