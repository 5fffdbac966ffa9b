package timeline

import (
	"time"

	"github.com/rewind-debugger/rewind/engine/replay"
)

// checkpointEvery is the replay work between two checkpoints: going back
// then costs at most about this much replay, plus the steps to the target.
var checkpointEvery = 250 * time.Millisecond

// checkpoint is a saved replay position to restart from.
type checkpoint struct {
	event int64
	cp    *replay.Checkpoint
	mem   int64
}

// checkpoints holds the saved positions within a memory budget (bytes).
type checkpoints struct {
	budget int64
	list   []*checkpoint // in event order
	last   time.Time     // when replay work since the last checkpoint began
}

func newCheckpoints(budget int64) *checkpoints { return &checkpoints{budget: budget} }

// best returns the latest checkpoint at or before event n.
func (c *checkpoints) best(n int64) *checkpoint {
	var out *checkpoint
	for _, cp := range c.list {
		if cp.event <= n {
			out = cp
		}
	}
	return out
}

// Memory returns the checkpoints' estimated memory use and how many there are.
func (tl *Timeline) CheckpointMemory() (bytes int64, count int) {
	for _, cp := range tl.cps.list {
		bytes += cp.mem
	}
	for _, c := range tl.mids {
		bytes += c.mem
	}
	return bytes, len(tl.cps.list) + len(tl.mids)
}

func (c *checkpoints) drop() { c.list = nil }

// releaseAll frees every checkpoint's process.
func (tl *Timeline) releaseAll() {
	tl.releaseMids()
	if tl.live != nil {
		for _, cp := range tl.cps.list {
			tl.live.Release(cp.cp)
		}
	}
	tl.cps.drop()
}

// restore puts the live replay at the best saved position at or before
// event n: a checkpoint, or the beginning of the recording.
func (tl *Timeline) restore(n int64) error {
	if cp := tl.cps.best(n); cp != nil && tl.live != nil {
		if err := tl.live.Restore(cp.cp); err == nil {
			tl.pos = Moment{Event: cp.event, Tid: tl.index.TidAt(cp.event)}
			tl.resetCounts()
			tl.reresolve()
			tl.cps.last = time.Now()
			return nil
		}
	}
	err := tl.restart()
	tl.cps.last = time.Now()
	return err
}

// maybeCheckpoint saves the current position when enough replay work was
// done since the last checkpoint and no checkpoint exists here yet.
func (tl *Timeline) maybeCheckpoint() {
	if time.Since(tl.cps.last) < checkpointEvery {
		return
	}
	tl.saveCheckpoint()
}

// slowSeek is the time reaching a segment's start may take before it is
// saved there: searches seek the same segment again and again (a counted
// reverse search, five or six times), and a recording too short for the
// time-driven checkpoints would restart from its beginning each time.
const slowSeek = 20 * time.Millisecond

// saveCheckpoint saves the current position, a segment's start, unless
// one is saved there or the budget is spent.
func (tl *Timeline) saveCheckpoint() {
	if tl.cps.budget <= 0 {
		return
	}
	n := tl.live.Next()
	if b := tl.cps.best(n); b != nil && b.event == n {
		return
	}
	cp, err := tl.live.Checkpoint()
	if err != nil {
		// Not here (a thread mid-delivery) or not possible: try again at
		// the next chunk; going back then just starts from further away.
		return
	}
	tl.cps.last = time.Now()
	c := &checkpoint{event: n, cp: cp, mem: cp.Memory()}
	i := 0
	for i < len(tl.cps.list) && tl.cps.list[i].event < n {
		i++
	}
	tl.cps.list = append(tl.cps.list[:i], append([]*checkpoint{c}, tl.cps.list[i:]...)...)
	tl.enforceBudget()
}

// enforceBudget drops checkpoints until their memory, those inside
// segments included, fits the budget: the oldest inside a segment first
// (they only serve searches in their own segment), then each time the one
// closest to its predecessor, so the survivors stay spread over the
// recording.
func (tl *Timeline) enforceBudget() {
	for {
		total, _ := tl.CheckpointMemory()
		if total <= tl.cps.budget || len(tl.cps.list)+len(tl.mids) == 0 {
			return
		}
		if len(tl.mids) > 0 {
			tl.dropOldestMid()
			continue
		}
		drop := len(tl.cps.list) - 1
		if len(tl.cps.list) > 1 {
			best := int64(-1)
			for i := 1; i < len(tl.cps.list); i++ {
				gap := tl.cps.list[i].event - tl.cps.list[i-1].event
				if best < 0 || gap < best {
					best, drop = gap, i
				}
			}
		}
		tl.live.Release(tl.cps.list[drop].cp)
		tl.cps.list = append(tl.cps.list[:drop], tl.cps.list[drop+1:]...)
	}
}
