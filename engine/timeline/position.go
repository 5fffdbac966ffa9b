package timeline

import "github.com/rewind-debugger/rewind/engine/replay"

// WritesSoFar is where the current moment stands among the writes to w's
// location in its event: how many of them the replay has made since the
// event began, the K of the last "#E write K" WatchHistory names that is
// not after it (a system call's write, at the event's start, comes before
// them all). Moments of one event are not ordered by their text ("#E hit
// 2 of 0x…" against "#E write 3 to 0x…"): this is what compares them.
//
// It is known at the start of an event, at a write of w, and wherever w
// is armed with its traps counted from the event's start (the counts that
// name the next moment); ok is false elsewhere (w disabled, a read/write
// watchpoint whose traps count reads, a moment reached with a counter).
func (tl *Timeline) WritesSoFar(w replay.Watchpoint) (n int, ok bool) {
	if tl.atSegmentStart() {
		return 0, true
	}
	loc := replay.Watchpoint{Addr: w.Addr, Len: w.Len}
	if m := tl.pos; m.Watch != nil && *m.Watch == loc && m.Steps == 0 {
		return m.Hits, true
	}
	if w.ReadWrite || tl.pos.Event != tl.live.Next() || tl.countsAt != tl.live.Next() || tl.guessed == tl.countsAt {
		return 0, false
	}
	for i, x := range tl.watches {
		if x == loc && i < len(tl.wcounts) {
			return tl.wcounts[i], true
		}
	}
	return 0, false
}
