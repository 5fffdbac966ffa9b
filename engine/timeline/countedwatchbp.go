package timeline

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rewind-debugger/rewind/engine/replay"
)

// Going back one write from a breakpoint. A user who stops at a
// breakpoint after a loop that wrote a watched variable a million times,
// in one segment, and reverse-continues stands at a moment named by the
// breakpoint's arrivals, with the breakpoints armed: the counted search of
// counted.go (a clock near the writes, windows of its arrivals) counts up
// to an arrival of its own clock and knows nothing of breakpoints, so the
// search trapped every write of the segment (minutes). Here the clock is
// counted up to the target's anchor instead, and the windows end there;
// the breakpoints are weighed first with their own counted search
// (lastCountedBP): when one was hit between the segment's start and the
// target, which of that hit and the last write comes later is not known,
// and the search traps as before. The target's anchor may be a function
// too short for a counter (a breakpoint on it, hit once): it is trapped
// alone then, while the clock is counted.
//
// A busy segment met on the way back from later (the end of the
// recording) with breakpoints armed is counted too (lastInBusySegment):
// the arrivals of every breakpoint over the segment first, then the last
// write, or the last breakpoint hit when no write follows it.

// lastWriteBeforeAnchor returns the last write of the watchpoints before
// target, an arrival anchor in its segment with breakpoints and
// watchpoints armed (nil: none), found with counters; ok is false where
// this does not apply, the live replay then back at the segment's start.
func (tl *Timeline) lastWriteBeforeAnchor(target Moment) (last *Stop, ok bool, err error) {
	seg := target.Event
	var after *Moment // the last breakpoint stop before target
	if bps := tl.armedBPs(); len(bps) > 0 && !firstArrivalOnly(bps, target) {
		quiet := tl.quiet
		tl.quiet = true // breakpoints alone: the writes are searched below
		b, ok, err := tl.lastCountedBP(target)
		tl.quiet = quiet
		if err != nil {
			return nil, false, err
		}
		if !ok || b != nil && (b.proxy != nil || b.Moment.Steps > 0 || b.Moment.Hits == 0) {
			return nil, false, tl.seek(seg)
		}
		if b != nil {
			// The answer unless a write follows it (a `reverse-next`'s
			// line start in a loop, say: the write of the line is after).
			write, _, err := tl.firstWriteBetween(&b.Moment, target)
			if errors.Is(err, replay.ErrNoCounter) {
				return nil, false, tl.seek(seg)
			}
			if err != nil {
				return nil, false, err
			}
			if write == 0 {
				tl.counted++
				return b, true, nil
			}
			after = &b.Moment
		}
	}
	write, rets, err := tl.firstWriteBetween(after, target)
	if err != nil || write == 0 {
		if errors.Is(err, replay.ErrNoCounter) {
			return nil, false, tl.seek(seg)
		}
		return nil, err == nil, err
	}
	// The clock: the busiest counter site near the write, counted up to
	// the anchor.
	if err := tl.seek(seg); err != nil {
		return nil, false, err
	}
	near := tl.live.CounterSites(append([]uint64{write}, rets...), 6)
	if len(near) == 0 {
		return nil, false, tl.seek(seg)
	}
	counts, sites, err := tl.countsTo(seg, target.PC, target.Hits, near)
	if errors.Is(err, replay.ErrNoCounter) {
		return nil, false, tl.seek(seg)
	}
	if err != nil {
		return nil, false, err
	}
	clock, ticks := uint64(0), 0
	for _, a := range sites {
		// The anchor's own address may be the clock (a write found
		// from the loop's head, gone back from): one counter then
		// stops at the window's start, then at the anchor.
		if counts[a] > ticks {
			clock, ticks = a, counts[a]
		}
	}
	if clock == 0 {
		return nil, false, tl.seek(seg)
	}
	tl.counted++
	for k := firstWindow; ; k *= 8 {
		start := ticks + 1 - k
		h, err := tl.trapWindowTo(target, clock, start)
		if errors.Is(err, replay.ErrNoCounter) {
			return nil, false, tl.seek(seg)
		}
		if err != nil {
			return nil, false, err
		}
		if h != nil {
			st, err := tl.nameHit(seg, clock, start < 1, *h)
			return st, true, err
		}
		if start < 1 {
			return nil, true, nil
		}
		if tl.Progress != nil && !tl.Progress(seg, tl.index.Total()) {
			return nil, false, ErrCancelled
		}
	}
}

// firstArrivalOnly says whether target is the first arrival at the only
// armed breakpoint, with no steps after it: no breakpoint stop can come
// before it in its segment (the user's first hit of their breakpoint).
func firstArrivalOnly(bps []uint64, target Moment) bool {
	return len(bps) == 1 && bps[0] == target.PC && target.Hits == 1 && target.Steps == 0
}

// anchorArrivals follows the arrivals at a counted search's anchor, where
// the user stands: counted in the program where a counter can go, trapped
// where none can (a breakpoint on a function too short to move its first
// instructions, which a user's first hit reaches once).
type anchorArrivals struct {
	pc      uint64
	hits    int
	counted bool
	trapped int
}

// armAnchor follows target's anchor among the counters opened at sites
// (those of the search's OpenCountersWhere): counted, or to be trapped
// (the caller arms the traps) when it has no counter and no counted run
// covers it. ok is false when neither can.
func (tl *Timeline) armAnchor(target Moment, sites []uint64) (a *anchorArrivals, ok bool) {
	a = &anchorArrivals{pc: target.PC, hits: target.Hits}
	switch {
	case slices.Contains(sites, target.PC):
		a.counted = true
	case tl.live.CounterCovers(target.PC):
		return nil, false
	}
	return a, true
}

// stopAtAnchor makes a counted anchor stop the replay at its arrival
// (a trapped one stops at each).
func (tl *Timeline) stopAtAnchor(a *anchorArrivals) error {
	if !a.counted {
		return nil
	}
	return tl.live.SetCounterStop(a.pc, a.hits)
}

// reached says whether stop st is the anchor's arrival; a trapped arrival
// before it is counted.
func (a *anchorArrivals) reached(st *replay.Stop) bool {
	if st.PC != a.pc {
		return false
	}
	if a.counted {
		return st.Kind == replay.StopCounter
	}
	if st.Kind != replay.StopBreakpoint {
		return false
	}
	a.trapped++
	return a.trapped >= a.hits
}

// arrivalNamesWrite says whether a write that leaves a thread at site,
// about to run it, is named as that arrival at site: not where a
// breakpoint is armed, whose stop at the same arrival comes after the
// write's (a parameter's store in a prologue, before a breakpoint after
// it): the two would share one name, and going back from the breakpoint
// would not see the write. Such a write is named from the arrival before
// and the steps from there.
func (tl *Timeline) arrivalNamesWrite(site uint64) bool {
	return !slices.Contains(tl.armedBPs(), site)
}

// isAnchor says whether st, a watchpoint's trap, leaves the thread at the
// anchor's arrival itself: the moment the search goes back from when no
// steps follow the anchor, so not a write before it.
func (tl *Timeline) isAnchor(a *anchorArrivals, target Moment, st *replay.Stop) (bool, error) {
	if st.PC != a.pc || target.Steps > 0 || !tl.arrivalNamesWrite(a.pc) {
		return false, nil
	}
	if !a.counted {
		return a.trapped == a.hits-1, nil
	}
	c, err := tl.live.CounterValue(a.pc)
	return c == a.hits-1, err
}

// firstWriteBetween runs target's segment with target's anchor followed
// and the watchpoints trapping from moment after (an arrival anchor of the
// segment, no steps, reached with counters; nil: the segment's start), and
// returns where the first write before the anchor trapped (0: none) with
// the likely return addresses of its frame there (a write in a function
// called from a loop is counted at the loop).
func (tl *Timeline) firstWriteBetween(after *Moment, target Moment) (uint64, []uint64, error) {
	seg := target.Event
	if err := tl.seek(seg); err != nil {
		return 0, nil, err
	}
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	tl.ownBPs()
	if err := tl.live.SetWatchpoints(nil); err != nil {
		return 0, nil, err
	}
	pcs := []uint64{target.PC}
	if after != nil && after.PC != target.PC {
		pcs = append(pcs, after.PC)
	}
	sites, err := tl.live.OpenCountersWhere(pcs, pcs)
	if err != nil {
		return 0, nil, err
	}
	defer tl.live.CloseCounters()
	anchor, ok := tl.armAnchor(target, sites)
	if !ok {
		return 0, nil, fmt.Errorf("%w: %#x can be neither counted nor trapped", replay.ErrNoCounter, target.PC)
	}
	traps := []uint64{}
	if !anchor.counted {
		traps = append(traps, anchor.pc)
	}
	if after != nil {
		// First to after (the target's own counter or trap when they
		// share their address), then the writes.
		from := anchor
		if after.PC != target.PC {
			if from, ok = tl.armAnchor(*after, sites); !ok {
				return 0, nil, fmt.Errorf("%w: %#x can be neither counted nor trapped", replay.ErrNoCounter, after.PC)
			}
			if !from.counted {
				traps = append(traps, from.pc)
			}
		}
		hits := from.hits
		from.hits = after.Hits
		tl.ownBPs(traps...)
		if err := tl.stopAtAnchor(from); err != nil {
			return 0, nil, err
		}
		for reached := false; !reached; {
			st, err := tl.live.Continue(seg + 1)
			if err != nil {
				return 0, nil, err
			}
			if st == nil || tl.live.Next() != seg {
				return 0, nil, fmt.Errorf("%w: %v not reached before the segment's end", replay.ErrNoCounter, *after)
			}
			reached = from.reached(st)
			if !reached && st.PC == anchor.pc && from != anchor {
				anchor.reached(st) // an arrival at the target's trap before after
			}
		}
		from.hits = hits
	}
	tl.ownBPs(traps...)
	if err := tl.stopAtAnchor(anchor); err != nil {
		return 0, nil, err
	}
	if err := tl.live.SetWatchpoints(tl.watches); err != nil {
		return 0, nil, err
	}
	for {
		st, err := tl.live.Continue(seg + 1)
		if err != nil {
			return 0, nil, err
		}
		switch {
		case st == nil || tl.live.Next() != seg || anchor.reached(st):
			return 0, nil, nil
		case st.Kind == replay.StopWatchpoint && !st.Event:
			if at, err := tl.isAnchor(anchor, target, st); at || err != nil {
				return 0, nil, err
			}
			return st.PC, tl.returnAddresses(st.Tid), nil
		}
	}
}

// trapWindowTo is trapWindow for a window that ends at target's anchor:
// the watchpoints trap from the start-th arrival at clock (the segment's
// start if start < 1) until the thread arrives at target.PC for the
// target.Hits-th time.
func (tl *Timeline) trapWindowTo(target Moment, clock uint64, start int) (*windowHit, error) {
	seg := target.Event
	if err := tl.seek(seg); err != nil {
		return nil, err
	}
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	tl.ownBPs()
	if err := tl.live.SetWatchpoints(nil); err != nil {
		return nil, err
	}
	sites, err := tl.live.OpenCountersWhere(slices.Compact([]uint64{clock, target.PC}), []uint64{target.PC})
	if err != nil {
		return nil, err
	}
	defer tl.live.CloseCounters()
	anchor, ok := tl.armAnchor(target, sites)
	if !slices.Contains(sites, clock) || !ok {
		return nil, fmt.Errorf("%w: %#x and %#x cannot be followed together", replay.ErrNoCounter, clock, target.PC)
	}
	if !anchor.counted {
		tl.ownBPs(anchor.pc)
	}
	if start >= 1 {
		if err := tl.live.SetCounterStop(clock, start); err != nil {
			return nil, err
		}
		for {
			st, err := tl.live.Continue(seg + 1)
			if err != nil {
				return nil, err
			}
			if st != nil && tl.live.Next() == seg && st.Kind == replay.StopBreakpoint && !anchor.counted && st.PC == anchor.pc {
				anchor.reached(st) // an arrival before the window
				continue
			}
			if st == nil || st.Kind != replay.StopCounter || st.PC != clock {
				return nil, fmt.Errorf("arrival %d at %#x in segment %d was not reached (stopped by %+v)", start, clock, seg, st)
			}
			break
		}
	}
	if err := tl.stopAtAnchor(anchor); err != nil {
		return nil, err
	}
	tl.refreshValues()
	if err := tl.live.SetWatchpoints(tl.watches); err != nil {
		return nil, err
	}
	var last *windowHit
	wcounts := make([]int, len(tl.watches))
	lastC, after := -1, 0
	for traps := 1; ; traps++ {
		st, err := tl.live.Continue(seg + 1)
		if err != nil {
			return nil, err
		}
		if st == nil || tl.live.Next() != seg || anchor.reached(st) {
			return last, nil // the anchor (or, not reached, the segment's end)
		}
		if st.Kind != replay.StopWatchpoint {
			continue
		}
		if st.Event {
			continue // a system call's write: at the segment's end, after the anchor
		}
		if at, err := tl.isAnchor(anchor, target, st); at || err != nil {
			return last, err
		}
		c, err := tl.live.CounterValue(clock)
		if err != nil {
			return nil, err
		}
		if c != lastC {
			lastC, after = c, 0
		}
		after++
		countTrap(wcounts, st)
		last = &windowHit{stop: *tl.stopFor(st), pc: st.PC, c: c, after: after, hits: wcounts[st.Watch]}
		if traps%1024 == 0 && tl.Progress != nil && !tl.Progress(seg, tl.index.Total()) {
			return nil, ErrCancelled
		}
	}
}

// busyCountable says whether a busy segment of a reverse search can be
// counted (lastInBusySegment): watchpoints stop it, and no step's
// temporary breakpoints are armed.
func (tl *Timeline) busyCountable() bool {
	return len(tl.temp) == 0 && len(tl.watches) > 0 && !tl.quiet
}

// lastInBusySegment is lastCounted for a whole busy segment (stop 0) with
// the user's breakpoints armed besides the watchpoints: the arrivals at
// every breakpoint over the segment are counted first. None: the last
// write is the answer. Arrivals at one address only: the last of them,
// reached with a counter, is the answer unless a write follows it in the
// segment (then the last write is, found as without breakpoints). Anything
// else fails with replay.ErrNoCounter, and the caller traps.
func (tl *Timeline) lastInBusySegment(seg int64, p uint64, near ...uint64) (*Stop, error) {
	if err := tl.seek(seg); err != nil {
		return nil, err
	}
	all := tl.mappedSites(tl.armedBPs())
	counts, err := tl.segmentArrivals(seg, all)
	if err != nil {
		return nil, err
	}
	var hitAt uint64
	hits := 0
	for _, a := range all {
		if n := counts[a]; n > 0 && hitAt != 0 {
			return nil, fmt.Errorf("%w: breakpoints %#x and %#x both hit in segment %d", replay.ErrNoCounter, hitAt, a, seg)
		} else if n > 0 {
			hitAt, hits = a, n
		}
	}
	if err := tl.seek(seg); err != nil {
		return nil, err
	}
	if hits == 0 {
		return tl.lastCounted(seg, p, 0, false, near...)
	}
	b := Moment{Event: seg, Tid: tl.index.TidAt(seg), PC: hitAt, Hits: hits}
	if err := tl.reachAnchor(b); err != nil {
		return nil, err
	}
	reason, wanted := tl.wantedAt(b.Tid, b.PC)
	if !wanted {
		return nil, fmt.Errorf("%w: the last hit of %#x does not stop", replay.ErrNoCounter, hitAt)
	}
	// Does a write follow it?
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	tl.ownBPs()
	if err := tl.live.SetWatchpoints(tl.watches); err != nil {
		return nil, err
	}
	st, err := tl.live.Continue(seg + 1)
	if err != nil {
		return nil, err
	}
	if st != nil && st.Kind == replay.StopWatchpoint && !st.Event && tl.live.Next() == seg {
		if err := tl.seek(seg); err != nil {
			return nil, err
		}
		return tl.lastCounted(seg, p, 0, false, near...)
	}
	tl.counted++
	return &Stop{Reason: reason, Moment: b}, nil
}

// segmentArrivals counts the arrivals at each of pcs over segment seg,
// from its start (where the live replay stands) to its end: in the program
// where a counter can go, trapped elsewhere (a breakpoint on a function
// too short for one, hit a few times).
func (tl *Timeline) segmentArrivals(seg int64, pcs []uint64) (map[uint64]int, error) {
	counts := map[uint64]int{}
	if len(pcs) == 0 {
		return counts, nil
	}
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	tl.ownBPs()
	if err := tl.live.SetWatchpoints(nil); err != nil {
		return nil, err
	}
	sites, err := tl.live.OpenCountersWhere(pcs, nil)
	if err != nil && !errors.Is(err, replay.ErrNoCounter) {
		return nil, err
	}
	var traps []uint64
	for _, a := range pcs {
		if !slices.Contains(sites, a) && (len(sites) == 0 || !tl.live.CounterCovers(a)) {
			traps = append(traps, a)
		}
	}
	tl.ownBPs(traps...)
	for n := 1; ; n++ {
		st, err := tl.live.Continue(seg + 1)
		if err != nil {
			return nil, err
		}
		if st == nil || tl.live.Next() != seg {
			break
		}
		if st.Kind == replay.StopBreakpoint {
			counts[st.PC]++
		}
		if n%1024 == 0 && tl.Progress != nil && !tl.Progress(seg, tl.index.Total()) {
			tl.live.CloseCounters()
			return nil, ErrCancelled
		}
	}
	tl.ownBPs()
	if len(sites) == 0 {
		return counts, nil
	}
	if err := tl.live.CloseCounters(); err != nil {
		return nil, err
	}
	for _, a := range pcs {
		if !slices.Contains(traps, a) {
			n, err := tl.live.CounterValue(a)
			if err != nil {
				return nil, err
			}
			counts[a] = n
		}
	}
	return counts, nil
}
