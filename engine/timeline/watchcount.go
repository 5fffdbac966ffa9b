package timeline

// Counting hits: a moment between two events is named by how many times
// a breakpoint or a watchpoint trapped since the segment's start (per pc,
// per armed watchpoint), counted the same way however the replay got
// there; the watched values are kept to tell writes from traps.

import "github.com/rewind-debugger/rewind/engine/replay"

// watchAnchor tells whether a watchpoint stop is the hits-th trap of w
// (armed at some index of ws; another watchpoint on the same location may
// have been reported for the same instruction).
func watchAnchor(st *replay.Stop, ws []replay.Watchpoint, counts []int, w replay.Watchpoint, hits int) bool {
	for i := range ws {
		if (i == st.Watch || st.Also&(1<<i) != 0) && ws[i] == w && counts[i] == hits {
			return true
		}
	}
	return false
}

func hasWatch(ws []replay.Watchpoint, w replay.Watchpoint) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// count updates the per-segment counters for a stop of the live replay.
func (tl *Timeline) count(st *replay.Stop, ws []replay.Watchpoint) {
	if tl.countsAt != tl.live.Next() {
		tl.counts = map[uint64]int{}
		tl.wcounts = make([]int, len(ws))
		tl.countsAt = tl.live.Next()
		tl.guessed = -1
	}
	switch st.Kind {
	case replay.StopBreakpoint:
		tl.counts[st.PC]++
	case replay.StopWatchpoint:
		if !st.Event {
			countTrap(tl.wcounts, st)
		}
	}
}

// countTrap counts a watchpoint trap in wcounts (indexed like the armed
// watchpoints): every watchpoint the instruction triggered (Also).
func countTrap(wcounts []int, st *replay.Stop) {
	for i := range wcounts {
		if i == st.Watch || st.Also&(1<<i) != 0 {
			wcounts[i]++
		}
	}
}

// refreshValues reads the current value of every watchpoint.
func (tl *Timeline) refreshValues() {
	tl.values = make([]uint64, len(tl.watches))
	for i, w := range tl.watches {
		tl.values[i] = tl.readValue(w)
	}
}

func (tl *Timeline) readValue(w replay.Watchpoint) uint64 {
	b, _ := tl.live.ReadMem(w.Addr, w.Len)
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
