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
	"time"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

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
	// tempGen is the exec generation temp are addresses of: they are
	// armed in it alone (temps).
	tempGen int
	accept  Filter
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
	tl.tempGen = tl.index.ExecsBefore(tl.pos.Event)
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

// When returns the current event number.
func (tl *Timeline) When() int64 { return tl.pos.Event }
