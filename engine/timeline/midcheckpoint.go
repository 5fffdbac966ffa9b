package timeline

import (
	"slices"
	"time"

	"github.com/rewind-debugger/rewind/engine/replay"
)

// Checkpoints inside a segment. A segment can be long: a loop writing a
// counter a million times without a system call is one segment, and a
// moment in it counts watchpoint traps (or breakpoint arrivals) from its
// start. Going to such a moment, or back from it, would trap every write
// from the segment start each time. So while traps are counted, a
// checkpoint is taken now and then at a trap, with the counts of every
// watchpoint and breakpoint armed then: a later operation in the same
// segment that needs only those counts restores it and goes on counting
// from there.

// maxMids bounds the checkpoints inside segments; the oldest taken goes
// first.
const maxMids = 32

// midCheckpoint is a checkpoint at a trap inside segment event.
type midCheckpoint struct {
	event   int64
	cp      *replay.Checkpoint
	mem     int64                     // its memory, within the checkpoints' budget
	counts  map[uint64]int            // arrivals at each breakpoint armed then
	wcounts map[replay.Watchpoint]int // traps of each watchpoint armed then
}

// covers says whether the checkpoint knows the counts of ws and bps, and
// is before the hits-th trap of anchor w (or arrival at pc).
func (c *midCheckpoint) covers(ws []replay.Watchpoint, bps []uint64, m Moment) bool {
	if !c.knows(ws, bps) {
		return false
	}
	if m.Watch != nil {
		n, ok := c.wcounts[*m.Watch]
		return ok && n < m.Hits
	}
	n, ok := c.counts[m.PC]
	return ok && n < m.Hits
}

// bestMid returns the latest checkpoint inside segment m.Event that covers
// ws and bps and is before m's anchor (nil: none).
func (tl *Timeline) bestMid(m Moment, ws []replay.Watchpoint, bps []uint64) *midCheckpoint {
	if m.Hits == 0 {
		return nil
	}
	var best *midCheckpoint
	for _, c := range tl.mids {
		if c.event != m.Event || !c.covers(ws, bps, m) {
			continue
		}
		// Counts only grow within a segment: more traps of the anchor is
		// later.
		if best == nil || anchorCount(c, m) > anchorCount(best, m) {
			best = c
		}
	}
	return best
}

// windowMid returns the latest checkpoint inside the segments from
// from to target that knows the counts of the armed watchpoints ws and
// breakpoints bps (with target's anchor, when target is inside its own
// segment, it must be before it).
func (tl *Timeline) windowMid(from int64, target Moment, ws []replay.Watchpoint, bps []uint64) *midCheckpoint {
	if target.Hits > 0 {
		if c := tl.bestMid(target, ws, bps); c != nil {
			return c
		}
	}
	var best *midCheckpoint
	for _, c := range tl.mids {
		if c.event < from || c.event >= target.Event || !c.knows(tl.watches, tl.armedBPs()) {
			continue
		}
		if best == nil || c.event > best.event || (c.event == best.event && c.total() > best.total()) {
			best = c
		}
	}
	return best
}

// knows says whether the checkpoint has the counts of ws and bps.
func (c *midCheckpoint) knows(ws []replay.Watchpoint, bps []uint64) bool {
	for _, w := range ws {
		if _, ok := c.wcounts[w]; !ok {
			return false
		}
	}
	for _, a := range bps {
		if _, ok := c.counts[a]; !ok {
			return false
		}
	}
	return true
}

// total orders checkpoints of one segment taken with the same things
// armed: every count only grows.
func (c *midCheckpoint) total() int {
	n := 0
	for _, v := range c.counts {
		n += v
	}
	for _, v := range c.wcounts {
		n += v
	}
	return n
}

func anchorCount(c *midCheckpoint, m Moment) int {
	if m.Watch != nil {
		return c.wcounts[*m.Watch]
	}
	return c.counts[m.PC]
}

// restoreMid puts the live replay at a checkpoint inside a segment, with
// the counts of ws and bps it saved.
func (tl *Timeline) restoreMid(c *midCheckpoint, ws []replay.Watchpoint) error {
	if err := tl.live.Restore(c.cp); err != nil {
		return err
	}
	tl.reresolve()
	tl.counts = map[uint64]int{}
	for a, n := range c.counts {
		tl.counts[a] = n
	}
	tl.wcounts = make([]int, len(ws))
	for i, w := range ws {
		tl.wcounts[i] = c.wcounts[w]
	}
	tl.countsAt, tl.guessed = c.event, -1
	tl.pos = Moment{Event: -1} // inside a segment: no moment of its own
	tl.cps.last = time.Now()
	return nil
}

// maybeMid takes a checkpoint at the current trap when enough work was done
// since the last one, with the counts of ws (indexed like tl.wcounts) and
// of the breakpoints bps.
func (tl *Timeline) maybeMid(ws []replay.Watchpoint, bps []uint64) {
	if tl.cps.budget <= 0 || time.Since(tl.cps.last) < checkpointEvery || tl.countsAt != tl.live.Next() || tl.guessed == tl.countsAt {
		return
	}
	cp, err := tl.live.Checkpoint()
	tl.cps.last = time.Now()
	if err != nil {
		return // not at this trap; the next chance comes later
	}
	c := &midCheckpoint{event: tl.live.Next(), cp: cp, mem: cp.Memory(), counts: map[uint64]int{}, wcounts: map[replay.Watchpoint]int{}}
	for _, a := range bps {
		c.counts[a] = tl.counts[a]
	}
	for i, w := range ws {
		if i < len(tl.wcounts) {
			c.wcounts[w] = tl.wcounts[i]
		}
	}
	tl.mids = append(tl.mids, c)
	if len(tl.mids) > maxMids {
		tl.dropOldestMid()
	}
	tl.enforceBudget()
}

// dropOldestMid releases the checkpoint inside a segment taken first.
func (tl *Timeline) dropOldestMid() {
	tl.live.Release(tl.mids[0].cp)
	tl.mids = slices.Delete(tl.mids, 0, 1)
}

// releaseMids frees the checkpoints inside segments.
func (tl *Timeline) releaseMids() {
	if tl.live != nil {
		for _, c := range tl.mids {
			tl.live.Release(c.cp)
		}
	}
	tl.mids = nil
}

// armedBPs is every breakpoint address armed for an operation: the user's,
// the temporary ones and extra anchors.
func (tl *Timeline) armedBPs(extra ...uint64) []uint64 {
	return append(append(append([]uint64(nil), tl.userBPs()...), tl.temps()...), extra...)
}
