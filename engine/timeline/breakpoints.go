package timeline

// Breakpoints and watchpoints as the timeline keeps them: the user's,
// re-resolved at each exec (a generation of the program's addresses),
// and the temporary ones of a step or a run to a place.

import (
	"errors"

	"github.com/rewind-debugger/rewind/engine/replay"
)

// SetResolver installs the function that gives the breakpoint addresses in
// the program the process runs in generation gen (Generation): it is
// called when a library gets mapped during a replay (pending breakpoints
// on its symbols), at an exec (a new program: other addresses), and when
// a checkpoint before or after an exec is restored. Mappings happen at
// events, so arrival counts stay valid.
func (tl *Timeline) SetResolver(f func(gen int) []uint64) { tl.resolver = f }

// Generation is the number of execs the process made before now: the
// program it runs (its symbols, its breakpoint addresses).
func (tl *Timeline) Generation() int { return tl.index.ExecsBefore(tl.live.Next()) }

// onMapping is called by the replay while it applies the event that maps
// something (the next one).
func (tl *Timeline) onMapping() { tl.resolve(tl.index.ExecsBefore(tl.live.Next() + 1)) }

// resolve arms the user's breakpoints of generation gen. The temporary
// ones of a motion belong to the program that was running where it
// started (tempGen): they are armed while the live replay runs that
// program, not in another one an exec put in its place, nor in the one
// it replaced, which a motion replays through when it counts arrivals
// from a segment's start before the exec (finish in a child of a shell
// then never stopped).
func (tl *Timeline) resolve(gen int) {
	tl.gen = gen
	if tl.resolver == nil {
		return
	}
	tl.bps = tl.resolver(gen)
	if tl.liveUser {
		tl.live.SetBreakpoints(tl.armedBPs(tl.liveExtra...))
	}
}

// userBPs are the user's breakpoints that stop operations now.
func (tl *Timeline) userBPs() []uint64 {
	if tl.hidden {
		return nil
	}
	return tl.bps
}

// ownBPs gives the live replay breakpoints of an operation's own (addrs,
// or none), not the user's: a mapping on the way does not arm theirs.
func (tl *Timeline) ownBPs(addrs ...uint64) {
	tl.liveUser = false
	tl.live.SetBreakpoints(addrs)
}

// reresolve arms the breakpoints of the program run where the live replay
// now stands, after it jumped there (a checkpoint restored, a restart).
func (tl *Timeline) reresolve() {
	if g := tl.index.ExecsBefore(tl.live.Next()); g != tl.gen {
		tl.resolve(g)
	}
}

// SetBreakpoints replaces the breakpoints. The current segment is replayed
// again so that arrival counts at the new addresses are known.
func (tl *Timeline) SetBreakpoints(addrs []uint64) error {
	tl.bps, tl.gen = append([]uint64(nil), addrs...), tl.Generation()
	return tl.recount()
}

// SetBreakpointFilter sets the test a hit of a user breakpoint must pass
// to stop an operation (the user's conditions): every motion, forwards or
// backwards, goes on through the hits it rejects. It is called at hits
// with the live replay there, as a temporary breakpoint's filter.
func (tl *Timeline) SetBreakpointFilter(f Filter) { tl.bpFilter = f }

// userStop says whether a hit of thread tid at pc is a user breakpoint
// that stops.
func (tl *Timeline) userStop(tid int32, pc uint64) bool {
	return tl.isUserBP(pc) && (tl.bpFilter == nil || tl.bpFilter(tid, pc))
}

// SetWatchpoints replaces the watchpoints (at most 4).
func (tl *Timeline) SetWatchpoints(ws []replay.Watchpoint) error {
	if err := tl.live.SetWatchpoints(ws); err != nil {
		return err
	}
	tl.watches = append([]replay.Watchpoint(nil), ws...)
	tl.refreshValues()
	return tl.recount()
}

// recount re-establishes the counters for the current segment after the
// breakpoints or watchpoints changed.
//
// A moment named by arrivals at an instruction keeps its name whatever
// else is armed. Its counts are trapped again from the segment's start
// when that is quick; else it is reached with a counter and its counts
// are marked unknown (guessed), to be found only if a motion forwards
// needs them. Trapping them all would stop at every write and arrival
// since the segment's start: a million writes of a loop before the
// breakpoint the user stands at, minutes, for a watchpoint set there to
// go back with.
func (tl *Timeline) recount() error {
	if tl.atSegmentStart() || tl.live.Done() {
		tl.resetCounts()
		return nil
	}
	m := tl.pos
	if m.Watch != nil || m.Hits == 0 || m.Event != tl.live.Next() {
		return tl.Goto(m)
	}
	err := tl.gotoTrappingWithin(m, quickTraps)
	if !errors.Is(err, errBusy) {
		return err
	}
	anchor := m
	anchor.Steps = 0
	if err := tl.reachAnchor(anchor); err != nil {
		if errors.Is(err, replay.ErrNoCounter) {
			return tl.gotoTrapping(m)
		}
		return err
	}
	return tl.stepTo(m)
}

// Filter decides, at a hit of a temporary breakpoint, whether it ends the
// operation. The live replay is at the hit: registers and memory of thread
// tid can be read to tell frames apart.
type Filter func(tid int32, pc uint64) bool

// setTemp installs temporary breakpoints. Arrival counts at them must be
// known from the start of the segment for moments to stay canonical, so a
// segment already under way is replayed again with them armed.
func (tl *Timeline) setTemp(addrs []uint64, accept Filter) error {
	tl.temp, tl.accept = addrs, accept
	tl.tempGen = tl.index.ExecsBefore(tl.pos.Event)
	if len(addrs) == 0 {
		return nil
	}
	return tl.recount()
}

// clearTemp removes the temporary breakpoints; counts at other addresses
// stay valid.
func (tl *Timeline) clearTemp() {
	tl.temp, tl.accept, tl.quiet = nil, nil, false
}

// temps are the temporary breakpoints armed now: those of the motion,
// where the live replay runs the program they belong to.
func (tl *Timeline) temps() []uint64 {
	if tl.gen != tl.tempGen {
		return nil
	}
	return tl.temp
}

func (tl *Timeline) isTemp(pc uint64) bool {
	for _, a := range tl.temps() {
		if a == pc {
			return true
		}
	}
	return false
}
