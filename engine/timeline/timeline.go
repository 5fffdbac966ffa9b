// Package timeline adds time travel to a replay: moments (canonical,
// replayable points of execution), going to any moment, and continuing or
// stepping in both directions. Going backwards follows rr's ReplayTimeline
// idea: restore the nearest earlier checkpoint (or start over), replay
// forwards with the relevant breakpoints armed, and stop at the last hit
// before where we were. See docs/design.md, §3 "Time and moments".
package timeline

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Moment is a point of execution: the events before Event have been applied;
// PC is the anchor address (meaningful when Hits > 0 without Watch);
// then (when Hits > 0) the thread that runs towards event Event has arrived
// Hits times at PC — or, for a watch anchor, a write to watchpoint Watch has
// trapped Hits times — and then executed Steps more instructions. Moments
// are canonical: the same point has the same moment whichever route
// reached it, and going to a moment always gives the same registers and
// memory.
type Moment struct {
	Event int64  `json:"event"`
	Tid   int32  `json:"thread"`
	PC    uint64 `json:"pc"`
	Hits  int    `json:"hits"`
	// Watch, when set, makes Hits count traps of that watchpoint instead of
	// arrivals at PC.
	Watch *replay.Watchpoint `json:"watch,omitempty"`
	Steps int                `json:"steps"`
}

func (m Moment) String() string {
	s := fmt.Sprintf("#%d", m.Event)
	if m.Hits > 0 {
		if m.Watch != nil {
			s += fmt.Sprintf(" write %d to %#x", m.Hits, m.Watch.Addr)
		} else {
			s += fmt.Sprintf(" hit %d of %#x", m.Hits, m.PC)
		}
	}
	if m.Steps > 0 {
		s += fmt.Sprintf(" +%d", m.Steps)
	}
	return s
}

// Reason says why an operation stopped (docs/design.md, §4 "Stop reasons").
type Reason string

// Stop reasons.
const (
	ReasonBreakpoint Reason = "breakpoint"
	ReasonWatchpoint Reason = "watchpoint"
	ReasonStep       Reason = "step"
	ReasonSignal     Reason = "signal"
	ReasonExit       Reason = "exit"
	ReasonStart      Reason = "start"
	ReasonEnd        Reason = "end"
	ReasonGoto       Reason = "goto"
)

// Stop is where an operation left the session.
type Stop struct {
	Reason Reason
	Moment Moment
	Signal int // for ReasonSignal
	// Watch is the index of the watchpoint that triggered, with the value
	// before and after the write (ReasonWatchpoint).
	Watch    int
	Old, New uint64
	// proxy is a moment shortly before Moment that a counter reaches, for
	// a stop at an instruction no counter can go (countedbp.go).
	proxy *Moment
}

// Breakpoint is a software breakpoint at an address.
type Breakpoint struct {
	ID   int
	Addr uint64
}

// Timeline is a replay with time travel. It is not safe for concurrent use.
type Timeline struct {
	path  string
	index *Index
	live  *replay.Session
	pos   Moment

	bps []uint64
	// bpFilter decides whether a hit of a user breakpoint stops (its
	// condition); nil: every hit does.
	bpFilter Filter
	temp     []uint64 // temporary breakpoints of a source-level step
	accept   Filter
	// quiet makes watchpoint hits not stop the current operation (finish
	// and reverse-finish run through the writes of the frame they leave).
	quiet   bool
	watches []replay.Watchpoint
	// Per-segment arrival counts at breakpoint addresses and trap counts of
	// watchpoints, valid from the start of segment countsAt.
	counts   map[uint64]int
	wcounts  []int
	countsAt int64
	// guessed is a segment whose counts are not known: the position was
	// reached with an arrival counter (counted.go); -1 for none.
	guessed  int64
	values   []uint64 // last known value of each watchpoint
	counted  int      // busy segments reverse searches counted (counted.go)
	cps      *checkpoints
	mids     []*midCheckpoint // checkpoints inside segments (midcheckpoint.go)
	resolver func(gen int) []uint64
	gen      int // the exec generation tl.bps are for
	// hidden makes the user's breakpoints stop nothing (a dataflow search)
	// while a mapping or an exec still keeps tl.bps up to date.
	hidden bool
	// liveUser says the live replay has the user's breakpoints armed (with
	// liveExtra), which a mapping on the way re-arms (resolve).
	liveUser  bool
	liveExtra []uint64
	// Progress, when set, is called with (events replayed, total) during
	// long operations; returning false cancels them.
	Progress func(done, total int64) bool
}

// ErrCancelled is returned when Progress asked to stop.
var ErrCancelled = errors.New("cancelled")

// Open prepares a timeline over process pid of the trace at path (its
// recorded pid; 0: the first process), positioned at the start of its life.
func Open(path string, budget int64, pid int32) (*Timeline, error) {
	idx, err := BuildIndex(path, pid)
	if err != nil {
		return nil, err
	}
	tl := &Timeline{path: path, index: idx, counts: map[uint64]int{}, guessed: -1}
	tl.cps = newCheckpoints(budget)
	if err := tl.restart(); err != nil {
		return nil, err
	}
	if err := tl.Goto(tl.Start()); err != nil {
		tl.Close()
		return nil, err
	}
	return tl, nil
}

// Close ends the replay and frees the checkpoints.
func (tl *Timeline) Close() {
	tl.releaseAll()
	if tl.live != nil {
		tl.live.Close()
		tl.live = nil
	}
}

// Index returns the event index of the trace.
func (tl *Timeline) Index() *Index { return tl.index }

// Session returns the live replay, for inspecting registers and memory.
func (tl *Timeline) Session() *replay.Session { return tl.live }

// Now returns the current moment.
func (tl *Timeline) Now() Moment { return tl.pos }

// Start is the first moment: the program's first instruction is next.
func (tl *Timeline) Start() Moment {
	return Moment{Event: tl.index.First, Tid: tl.index.TidAt(tl.index.First)}
}

// End is the last moment before the program ends: at its crash, or with
// the thread that exits standing on its exit_group instruction (as rr's
// end), where a backtrace shows the exit's path from main's caller. (The
// start of that call's segment can be before main: a program that makes
// no system call until it exits runs all of main in it.)
func (tl *Timeline) End() Moment {
	m := Moment{Event: tl.index.Last, Tid: tl.index.TidAt(tl.index.Last)}
	if pc, ok := tl.index.exitCall(tl.index.Last); ok {
		m.PC, m.Hits = pc, 1
	}
	return m
}

// pastEnd reports whether no instruction is left to run before the end.
// The end's segment may hold most of the program (all of main, in one
// that makes no system call before it exits): when the end is an
// exit_group, instructions are left until the thread stands on it.
func (tl *Timeline) pastEnd() bool {
	if tl.pos.Event != tl.index.Last {
		return tl.pos.Event > tl.index.Last
	}
	pc, ok := tl.index.exitCall(tl.index.Last)
	if !ok {
		return true
	}
	// The exit_group instruction is reached once in its segment (reaching
	// it is making the call): there is the end, whatever route led to it.
	regs, err := tl.live.Regs(tl.index.TidAt(tl.index.Last))
	return err != nil || regs[trace.RIP] == pc
}

// endBefore says whether a replay at the start of segment next has no
// code left to run before the end: an exit_group's own segment runs to it
// first, with its breakpoints.
func (tl *Timeline) endBefore(next int64) bool {
	if _, ok := tl.index.exitCall(tl.index.Last); ok {
		return next > tl.index.Last
	}
	return next >= tl.index.Last
}

// restart starts a fresh replay from the beginning of the recording.
func (tl *Timeline) restart() error {
	if tl.live != nil {
		// Checkpoints belong to the session's ptrace thread: they go with it.
		tl.releaseAll()
		tl.live.Close()
		tl.live = nil
	}
	s, err := replay.Open(tl.path, replay.Options{Process: tl.index.Process, Tree: tl.index.Procs})
	if err != nil {
		return err
	}
	tl.live = s
	tl.live.SetOnMapping(tl.onMapping)
	tl.pos = Moment{Event: s.Start()}
	tl.resetCounts()
	tl.reresolve()
	return nil
}

func (tl *Timeline) resetCounts() {
	tl.counts = map[uint64]int{}
	tl.wcounts = make([]int, len(tl.watches))
	tl.countsAt = tl.live.Next()
	tl.guessed = -1
}

// arm loads the user's breakpoints, the temporary ones (plus extra
// addresses) and the watchpoints.
func (tl *Timeline) arm(extra ...uint64) error {
	tl.liveUser, tl.liveExtra = true, extra
	tl.live.SetBreakpoints(tl.armedBPs(extra...))
	return tl.live.SetWatchpoints(tl.watches)
}

// runTo replays forwards without breakpoints until event n is next.
func (tl *Timeline) runTo(n int64) error {
	tl.ownBPs()
	if err := tl.live.SetWatchpoints(nil); err != nil {
		return err
	}
	// A checkpoint is the start of its event's segment: none while the
	// live replay is inside one (a moment with hits or steps, or after a
	// search), until the first chunk has finished it.
	inside := !tl.atSegmentStart()
	for tl.live.Next() < n {
		// In chunks, so that checkpoints are taken along the way and
		// progress can be shown and cancelled.
		limit := min(n, tl.live.Next()+500)
		if !inside {
			tl.maybeCheckpoint()
		}
		inside = false
		if _, err := tl.live.Continue(limit); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("the recording ends before event %d", n)
			}
			return err
		}
		if tl.Progress != nil && !tl.Progress(tl.live.Next(), tl.index.Total()) {
			return ErrCancelled
		}
	}
	return nil
}

// seek puts the live replay at the start of segment n (events < n applied),
// from a checkpoint when one is at or before n.
func (tl *Timeline) seek(n int64) error {
	start := time.Now()
	if tl.live == nil || tl.live.Next() > n || (tl.live.Next() == n && !tl.atSegmentStart()) {
		if err := tl.restore(n); err != nil {
			return err
		}
	} else if cp := tl.cps.best(n); cp != nil && cp.event > tl.live.Next() {
		if err := tl.restore(n); err != nil {
			return err
		}
	}
	if err := tl.runTo(n); err != nil {
		return err
	}
	tl.resetCounts()
	tl.pos = Moment{Event: n, Tid: tl.index.TidAt(n)}
	if time.Since(start) > slowSeek {
		tl.saveCheckpoint()
	}
	return nil
}

// atSegmentStart tells whether the live replay has not run any code of the
// current segment yet.
func (tl *Timeline) atSegmentStart() bool {
	return tl.pos.Event == tl.live.Next() && tl.pos.Hits == 0 && tl.pos.Steps == 0
}

// Goto moves to moment m.
func (tl *Timeline) Goto(m Moment) error {
	if m.Watch == nil && m.Hits > 0 && len(tl.watches) == 0 {
		// Counted in the program, the counts of every armed breakpoint
		// with it (countedbp.go).
		err := tl.gotoCountingAll(m)
		if !errors.Is(err, replay.ErrNoCounter) {
			return err
		}
	}
	if m.Watch == nil && m.Hits > 0 && (m.Hits >= countedFrom || len(tl.watches) > 0) && (len(tl.temp) == 0 || len(tl.watches) > 0) {
		if m.Hits < countedFrom || len(tl.armedBPs()) > 0 {
			// Trapping, if the segment is quiet, keeps the counts known.
			err := tl.gotoTrappingWithin(m, quickTraps)
			if !errors.Is(err, errBusy) {
				return err
			}
		}
		// Many arrivals, or watchpoints whose writes trapping would
		// stop at: counted in the program, not trapped (an anchor no
		// counter can go at is trapped alone). The counts of the
		// breakpoints and watchpoints there are then unknown; a motion
		// forwards from there finds them (continueCounted, or trapping
		// once: ensureCounts), a motion backwards does not need them.
		anchor := m
		anchor.Steps = 0
		err := tl.reachAnchor(anchor)
		if err == nil {
			return tl.stepTo(m)
		}
		if !errors.Is(err, replay.ErrNoCounter) {
			return err
		}
	}
	return tl.gotoTrapping(m)
}

// gotoTrapping moves to moment m counting the traps of its anchor and of
// the user's breakpoints and watchpoints from the start of its segment.
func (tl *Timeline) gotoTrapping(m Moment) error {
	return tl.gotoTrappingWithin(m, 0)
}

// errBusy says a segment traps more than a motion may spend trapping it.
var errBusy = errors.New("too many traps")

// quickTraps is what a motion spends trapping the writes and arrivals
// before a moment to keep its counts known (a few tens of ms), before it reaches
// the moment with a counter instead, the counts unknown.
const quickTraps = busyTraps

// gotoTrappingWithin is gotoTrapping with at most budget traps (0: no
// limit): past that it fails with errBusy, the position unknown.
func (tl *Timeline) gotoTrappingWithin(m Moment, budget int) error {
	if m.Hits == 0 {
		if err := tl.seek(m.Event); err != nil {
			return err
		}
	}
	if m.Hits > 0 {
		extra := []uint64{}
		if m.Watch == nil {
			extra = append(extra, m.PC)
		}
		ws := tl.watches
		if m.Watch != nil && !hasWatch(ws, *m.Watch) {
			ws = append(append([]replay.Watchpoint(nil), ws...), *m.Watch)
		}
		bps := tl.armedBPs(extra...)
		if mid := tl.bestMid(m, ws, bps); mid != nil && tl.restoreMid(mid, ws) == nil {
			// From a checkpoint inside the segment, with its counts.
		} else {
			if err := tl.seek(m.Event); err != nil {
				return err
			}
			tl.wcounts = make([]int, len(ws))
		}
		if err := tl.arm(extra...); err != nil {
			return err
		}
		if len(ws) != len(tl.watches) {
			if err := tl.live.SetWatchpoints(ws); err != nil {
				return err
			}
		}
		traps := 0
		for {
			st, err := tl.live.Continue(m.Event + 1)
			if err != nil {
				return fmt.Errorf("go to %v: %w", m, err)
			}
			if st == nil || tl.live.Next() != m.Event {
				return fmt.Errorf("go to %v: the moment was not reached (no such arrival, or a divergence)", m)
			}
			tl.count(st, ws)
			tl.maybeMid(ws, bps)
			if budget > 0 && traps >= budget {
				tl.wcounts = tl.wcounts[:len(tl.watches)]
				tl.pos = Moment{Event: -1}
				return errBusy
			}
			if traps++; traps%1024 == 0 && tl.Progress != nil && !tl.Progress(tl.live.Next(), tl.index.Total()) {
				// Thousands of arrivals take seconds: let them be cancelled,
				// at the start of the segment (a moment).
				tl.wcounts = tl.wcounts[:len(tl.watches)]
				p := tl.Progress
				tl.Progress = nil
				tl.pos = Moment{Event: -1}
				err := tl.seek(m.Event)
				tl.Progress = p
				return errors.Join(ErrCancelled, err)
			}
			if m.Watch == nil && st.Kind == replay.StopBreakpoint && st.PC == m.PC && tl.counts[m.PC] == m.Hits {
				break
			}
			if m.Watch != nil && st.Kind == replay.StopWatchpoint && watchAnchor(st, ws, tl.wcounts, *m.Watch, m.Hits) {
				break
			}
		}
		// Back to the user's breakpoints and watchpoints only.
		tl.wcounts = tl.wcounts[:len(tl.watches)]
		if err := tl.arm(); err != nil {
			return err
		}
	}
	tl.pos = Moment{Event: m.Event, Tid: m.Tid, PC: m.PC, Hits: m.Hits, Watch: m.Watch}
	return tl.stepTo(m)
}

// stepTo steps from m's anchor, where the timeline stands, to m.
func (tl *Timeline) stepTo(m Moment) error {
	for i := 0; i < m.Steps; i++ {
		if _, err := tl.stepOnce(); err != nil {
			return fmt.Errorf("go to %v: step %d: %w", m, i+1, err)
		}
	}
	tl.refreshValues()
	return nil
}

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

// momentOf names the position of a stop just counted.
func (tl *Timeline) momentOf(st *replay.Stop) Moment {
	n := tl.live.Next()
	switch {
	case st.Kind == replay.StopBreakpoint:
		return Moment{Event: n, Tid: st.Tid, PC: st.PC, Hits: tl.counts[st.PC]}
	case st.Kind == replay.StopWatchpoint && !st.Event:
		w := tl.watches[st.Watch]
		return Moment{Event: n, Tid: st.Tid, PC: st.PC, Hits: tl.wcounts[st.Watch], Watch: &w}
	}
	return Moment{Event: n, Tid: st.Tid}
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
// ones of a motion belong to the program that was running: an exec drops
// them.
func (tl *Timeline) resolve(gen int) {
	if gen != tl.gen {
		tl.temp, tl.gen = nil, gen
	}
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

// Run describes a source-level motion: temporary breakpoints, the filter
// that decides which of their hits stop, and whether watchpoint hits stop.
type Run struct {
	Temp   []uint64
	Accept Filter
	// IgnoreWatchpoints lets the run go through watchpoint hits.
	IgnoreWatchpoints bool
}

// ContinueRun runs forwards as described by r.
func (tl *Timeline) ContinueRun(r Run) (*Stop, error) {
	defer tl.clearTemp()
	if err := tl.setTemp(r.Temp, r.Accept); err != nil {
		return nil, err
	}
	tl.quiet = r.IgnoreWatchpoints
	return tl.Continue()
}

// ReverseContinueRun runs backwards as described by r.
func (tl *Timeline) ReverseContinueRun(r Run) (*Stop, error) {
	defer tl.clearTemp()
	tl.temp, tl.accept, tl.quiet = r.Temp, r.Accept, r.IgnoreWatchpoints
	return tl.ReverseContinue()
}

// wanted says whether a replay stop ends an operation: user breakpoints and
// watchpoints always do; temporary breakpoints when the filter agrees.
func (tl *Timeline) wanted(st *replay.Stop) bool {
	if st.Kind == replay.StopWatchpoint && tl.quiet {
		tl.refreshValues()
		return false
	}
	if st.Kind != replay.StopBreakpoint {
		return true
	}
	user := tl.isUserBP(st.PC)
	if user && (tl.bpFilter == nil || tl.bpFilter(st.Tid, st.PC)) {
		return true
	}
	if !tl.isTemp(st.PC) {
		return !user
	}
	return tl.accept == nil || tl.accept(st.Tid, st.PC)
}

func (tl *Timeline) isTemp(pc uint64) bool {
	for _, a := range tl.temp {
		if a == pc {
			return true
		}
	}
	return false
}

// ContinueWith runs forwards like Continue with temporary breakpoints at
// temp: a hit there stops (with reason "step") when accept says so. This is
// how source-level steps run without single-stepping over calls.
func (tl *Timeline) ContinueWith(temp []uint64, accept Filter) (*Stop, error) {
	return tl.ContinueRun(Run{Temp: temp, Accept: accept})
}

// Continue runs forwards to the next breakpoint or watchpoint hit, signal
// stop, or the end.
func (tl *Timeline) Continue() (*Stop, error) {
	if tl.pos == tl.End() && tl.pastEnd() {
		// Where continuing would go: no replay of the end's segment again.
		return tl.endStop(), nil
	}
	if st, done, err := tl.continueCountingAll(); done || err != nil {
		return st, err
	}
	if st, done, err := tl.continueCounted(); done || err != nil {
		return st, err
	}
	if err := tl.ensureCounts(); err != nil {
		return nil, err
	}
	if err := tl.arm(); err != nil {
		return nil, err
	}
	for {
		limit := tl.index.NextStopSignal(tl.live.Next())
		if limit >= 0 {
			limit++ // apply the signal event, then stop
		}
		if lim := tl.live.Next() + 2000; tl.Progress != nil && (limit < 0 || limit > lim) {
			limit = lim
		}
		st, err := tl.live.Continue(limit)
		if errors.Is(err, io.EOF) || (err == nil && st == nil && tl.live.Done()) {
			return tl.atEnd()
		}
		if err != nil {
			return nil, err
		}
		if st == nil {
			if tl.Progress != nil && !tl.Progress(tl.live.Next(), tl.index.Total()) {
				tl.pos = Moment{Event: tl.live.Next(), Tid: tl.index.TidAt(tl.live.Next())}
				return nil, ErrCancelled
			}
			if sig, ok := tl.index.SignalBefore(tl.live.Next()); ok {
				tl.resetCounts()
				tl.pos = Moment{Event: tl.live.Next(), Tid: tl.index.TidAt(tl.live.Next() - 1)}
				return &Stop{Reason: ReasonSignal, Moment: tl.pos, Signal: sig}, nil
			}
			if tl.index.Last > 0 && tl.index.Ended() && tl.endBefore(tl.live.Next()) {
				return tl.atEnd()
			}
			continue
		}
		tl.count(st, tl.watches)
		// Running forwards through a busy segment leaves checkpoints in it
		// for going back later.
		tl.maybeMid(tl.watches, tl.armedBPs())
		tl.pos = tl.momentOf(st)
		if !tl.wanted(st) {
			continue
		}
		return tl.stopFor(st), nil
	}
}

// stopFor describes a replay stop at the current position.
func (tl *Timeline) stopFor(st *replay.Stop) *Stop {
	out := &Stop{Moment: tl.pos}
	switch st.Kind {
	case replay.StopBreakpoint:
		out.Reason = ReasonBreakpoint
		if !tl.userStop(st.Tid, st.PC) {
			out.Reason = ReasonStep
		}
	case replay.StopWatchpoint:
		out.Reason = ReasonWatchpoint
		out.Watch = st.Watch
		out.Old = tl.values[st.Watch]
		if len(st.Values) == len(tl.watches) && len(tl.values) == len(tl.watches) {
			// Read by the replay at the trap: no hop per trap.
			out.New = st.Values[st.Watch]
			copy(tl.values, st.Values)
			return out
		}
		out.New = tl.readValue(tl.watches[st.Watch])
	default:
		out.Reason = ReasonStep
	}
	tl.refreshValues()
	return out
}

// atEnd moves to the end of the recording and reports it.
func (tl *Timeline) atEnd() (*Stop, error) {
	if err := tl.Goto(tl.End()); err != nil {
		return nil, err
	}
	return tl.endStop(), nil
}

// endStop reports the end of the recording, where the timeline stands.
func (tl *Timeline) endStop() *Stop {
	reason := ReasonEnd
	if tl.index.Ended() {
		reason = ReasonExit
	}
	return &Stop{Reason: reason, Moment: tl.pos}
}

// StepInstruction executes one instruction of the thread that runs next.
func (tl *Timeline) StepInstruction() (*Stop, error) {
	if tl.pastEnd() {
		return nil, ErrAtEnd
	}
	st, err := tl.stepOnce()
	if err != nil {
		return nil, err
	}
	tl.refreshValues()
	return st, nil
}

// StepThreadInstruction executes one instruction of thread tid (gdb's
// stepi in a thread it selected): when another thread runs next, the
// replay first goes, without stopping, to where tid runs again.
//
// A thread waiting in a system call steps as gdb's would: the call
// returns, through any restart of it (the recorder may have interrupted
// the wait and the kernel re-entered it), and one instruction after it
// runs, so that its pc moves and reverse-stepi comes back to the call's
// return.
func (tl *Timeline) StepThreadInstruction(tid int32) (*Stop, error) {
	if tid <= 0 {
		tid = tl.live.NextThread()
	}
	inCall := tl.inCall(tid)
	st, err := tl.stepThreadOnce(tid)
	for i := 0; inCall && err == nil && i < maxCallSteps && st.Reason == ReasonStep && tl.pos.Steps == 0 && tl.pos.Tid == tid; i++ {
		st, err = tl.stepThreadOnce(tid)
	}
	return st, err
}

// maxCallSteps bounds the steps StepThreadInstruction takes to leave a
// system call: a restart and its return, with room for a signal between.
const maxCallSteps = 4

// inCall says whether thread tid waits in a system call where the
// timeline stands: its last event reached by running code is the entry of
// a split call.
func (tl *Timeline) inCall(tid int32) bool {
	n := tl.index.prevCodeEvent(tl.live.Next(), tid)
	return n >= 0 && tl.index.events[n].kind == trace.KindSyscallEntry
}

// stepThreadOnce executes one instruction of thread tid (a system call's
// entry or return counts as one).
func (tl *Timeline) stepThreadOnce(tid int32) (*Stop, error) {
	if tid == tl.live.NextThread() {
		return tl.StepInstruction()
	}
	n := tl.index.nextCodeEvent(tl.live.Next(), tid)
	if n < 0 || n > tl.index.Last {
		return nil, fmt.Errorf("thread %d runs no more instructions: %w", tid, ErrAtEnd)
	}
	if err := tl.Goto(Moment{Event: n, Tid: tid}); err != nil {
		return nil, err
	}
	return tl.StepInstruction()
}

// stepOnce steps and updates the moment.
func (tl *Timeline) stepOnce() (*Stop, error) {
	out, _, err := tl.stepOnceLive()
	return out, err
}

// stepOnceLive is stepOnce that also returns the live replay's stop, which
// says whether the instruction wrote a watched location.
func (tl *Timeline) stepOnceLive() (*Stop, *replay.Stop, error) {
	before := tl.live.Next()
	st, err := tl.live.StepInstruction()
	if errors.Is(err, io.EOF) {
		return nil, nil, ErrAtEnd
	}
	if err != nil {
		return nil, nil, err
	}
	after := tl.live.Next()
	switch {
	case after == before:
		tl.pos.Steps++
	case st.Event:
		// The instruction was the event (a system call): a new segment starts.
		tl.resetCounts()
		tl.pos = Moment{Event: after, Tid: st.Tid}
	default:
		tl.resetCounts()
		tl.pos = Moment{Event: after, Tid: st.Tid, Steps: 1}
	}
	tl.stepped(st)
	if sig, ok := tl.index.SignalBefore(after); ok && after != before {
		return &Stop{Reason: ReasonSignal, Moment: tl.pos, Signal: sig}, st, nil
	}
	return &Stop{Reason: ReasonStep, Moment: tl.pos}, st, nil
}

// stepped counts what a single-step met as traps would have: an arrival
// at an armed breakpoint address, a watchpoint's trap. Moments count them
// from the start of the segment, whichever way the thread got there: a
// moment reached by steps that passed a breakpoint, then a continue,
// named the next hit as the first.
func (tl *Timeline) stepped(st *replay.Stop) {
	if tl.countsAt != tl.live.Next() || tl.guessed == tl.countsAt {
		return
	}
	switch {
	case st.Kind == replay.StopWatchpoint && !st.Event && st.Watch < len(tl.wcounts):
		tl.count(st, tl.watches)
	case st.Kind == replay.StopStep && !st.Event && tl.armedAt(st.PC):
		tl.counts[st.PC]++
	}
}

// armedAt says whether pc is a breakpoint address armed for the user or
// the current operation.
func (tl *Timeline) armedAt(pc uint64) bool {
	return slices.Contains(tl.userBPs(), pc) || slices.Contains(tl.temp, pc) || slices.Contains(tl.liveExtra, pc)
}

// When returns the current event number.
func (tl *Timeline) When() int64 { return tl.pos.Event }

// momentRE matches the text of Moment.String for event and breakpoint
// anchors: "#N", "#N hit K of 0xPC", each with an optional " +S", and of
// Moment.Portable for watch anchors: "#N write K to 0xADDR/LEN".
var momentRE = regexp.MustCompile(`^#(\d+)(?: hit (\d+) of (0x[0-9a-f]+)| write (\d+) to (0x[0-9a-f]+)/([1248]))?(?: \+(\d+))?$`)

// Portable is the moment's text that ParseMoment reads in another
// session: String, with a watch anchor's length (a count of traps of a
// watchpoint depends on how many bytes it watches).
func (m Moment) Portable() string {
	if m.Watch == nil || m.Hits == 0 {
		return m.String()
	}
	s := fmt.Sprintf("#%d write %d to %#x/%d", m.Event, m.Hits, m.Watch.Addr, m.Watch.Len)
	if m.Steps > 0 {
		s += fmt.Sprintf(" +%d", m.Steps)
	}
	return s
}

// ParseMoment reads a moment written by Moment.String or Moment.Portable,
// so that a moment shown by one session can be reached in another. Watch
// anchors as String writes them ("write K to 0xADDR") do not say the
// watched length and cannot be parsed.
func (tl *Timeline) ParseMoment(s string) (Moment, bool) {
	m := momentRE.FindStringSubmatch(s)
	if m == nil {
		return Moment{}, false
	}
	var out Moment
	out.Event, _ = strconv.ParseInt(m[1], 10, 64)
	if m[2] != "" {
		out.Hits, _ = strconv.Atoi(m[2])
		out.PC, _ = strconv.ParseUint(m[3][2:], 16, 64)
	}
	if m[4] != "" {
		out.Hits, _ = strconv.Atoi(m[4])
		w := replay.Watchpoint{}
		w.Addr, _ = strconv.ParseUint(m[5][2:], 16, 64)
		w.Len, _ = strconv.Atoi(m[6])
		out.Watch = &w
	}
	if m[7] != "" {
		out.Steps, _ = strconv.Atoi(m[7])
	}
	if out.Event > tl.index.Total() {
		return Moment{}, false
	}
	out.Tid = tl.index.TidAt(out.Event)
	return out, true
}
