package timeline

import (
	"errors"
	"fmt"
	"io"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// maxStepBack bounds the single-steps spent to find one previous instruction.
const maxStepBack = 5_000_000

// ErrAtStart is returned when there is nothing before the current moment.
var ErrAtStart = errors.New("at the beginning of the recording")

// ErrAtEnd is returned when there is no instruction left to step.
var ErrAtEnd = errors.New("the recording ends here: no instruction to step")

// ReverseContinueWith goes back like ReverseContinue, with temporary
// breakpoints at temp that count as stops (reason "step") when accept says
// so at the hit. Reverse source-level steps are built on it.
func (tl *Timeline) ReverseContinueWith(temp []uint64, accept Filter) (*Stop, error) {
	return tl.ReverseContinueRun(Run{Temp: temp, Accept: accept})
}

// ReverseContinue goes back to the last breakpoint or watchpoint hit before
// now, or to the start of the recording (reason "start") when there is none.
//
// It scans windows of the recording newest first: the segment of now, then
// windows of segments twice as long each time further back, each replayed
// with the breakpoints and watchpoints armed from its first event (reached
// from the nearest checkpoint without them, at full speed), remembering the
// last hit. A hit in a window ends the search, so going back one write of a
// busy location costs the replay from the nearest checkpoint plus the traps
// of one window, not a trap per write since the start of the recording.
func (tl *Timeline) ReverseContinue() (*Stop, error) {
	target := tl.pos
	first := tl.index.First
	upper := target
	width := int64(1)
	for {
		var from int64
		if upper.Hits > 0 || upper.Steps > 0 {
			// Part of upper's segment ran: the window starts with it.
			from = max(first, upper.Event-width+1)
		} else {
			from = max(first, upper.Event-width)
			if from >= upper.Event {
				break // nothing before the start
			}
		}
		last, usedMid, err := tl.scan(from, upper, target.Event-first, true)
		if err == nil && last == nil && usedMid {
			// Nothing after the checkpoint inside the segment: the part
			// before it too.
			last, _, err = tl.scan(from, upper, target.Event-first, false)
		}
		if err != nil {
			return nil, err
		}
		if last != nil {
			if last.proxy != nil {
				if m, ok := tl.viaProxy(*last.proxy, last.Moment.PC); ok {
					last.Moment, last.proxy = m, nil
					return last, nil
				}
			}
			if tl.pos != last.Moment || tl.live.Next() != last.Moment.Event {
				if err := tl.Goto(last.Moment); err != nil {
					return nil, err
				}
			}
			return last, nil
		}
		if from <= first {
			break
		}
		upper = Moment{Event: from, Tid: tl.index.TidAt(from)}
		width *= 2
	}
	if err := tl.Goto(tl.Start()); err != nil {
		return nil, err
	}
	return &Stop{Reason: ReasonStart, Moment: tl.pos}, nil
}

// scan replays from the start of segment from to target with the
// breakpoints and watchpoints armed and returns the last stop strictly
// before target (nil: none). span is the distance in events of the whole
// search, for the progress callback.
func (tl *Timeline) scan(from int64, target Moment, span int64, useMid bool) (*Stop, bool, error) {
	// (useMid: from the newest checkpoint inside the window's segments
	// that knows the counts, when there is one; the bool result says one
	// was used, and the caller scans the whole window when that found
	// nothing.)
	var last *Stop
	hit := func(st Stop) { last = &st }
	// The anchor of a target inside its segment, armed to find it: its
	// breakpoint address, or its watchpoint when it is not the user's.
	extra := []uint64{}
	ws := tl.watches
	if target.Hits > 0 {
		if target.Watch == nil {
			extra = append(extra, target.PC)
		} else if !hasWatch(ws, *target.Watch) {
			ws = append(append([]replay.Watchpoint(nil), ws...), *target.Watch)
		}
	}
	bps := tl.armedBPs(extra...)
	var mid *midCheckpoint
	if useMid {
		if mid = tl.windowMid(from, target, ws, bps); mid != nil {
			mws := tl.watches
			if mid.event == target.Event {
				mws = ws
			}
			if tl.restoreMid(mid, mws) != nil {
				mid = nil
			}
		}
	}
	if mid == nil {
		if err := tl.seek(from); err != nil {
			return nil, false, err
		}
	}
	if err := tl.arm(); err != nil {
		return nil, false, err
	}
	tl.refreshValues()
	record := func(st *replay.Stop) {
		tl.count(st, tl.watches)
		tl.maybeMid(tl.watches, tl.armedBPs())
		tl.pos = tl.momentOf(st)
		if tl.wanted(st) {
			hit(*tl.stopFor(st))
		}
	}
	// Progress is the part of the search done: the windows go back, each
	// replayed forwards.
	progress := func() bool {
		done := span - (target.Event - from) + (tl.live.Next() - from)
		return tl.Progress == nil || tl.Progress(min(max(done, 0), span), max(span, 1))
	}
	if !progress() {
		return nil, mid != nil, ErrCancelled
	}
	traps := 0
	// Traps in the segment being replayed: a busy one is counted instead
	// (counted.go), unless no counter can go there (trapped).
	segTraps, trapped := 0, int64(-1)
	for tl.live.Next() < target.Event {
		// In chunks, so that a long scan can be cancelled.
		st, err := tl.live.Continue(min(target.Event, tl.live.Next()+2000))
		if err != nil {
			return nil, false, err
		}
		if st == nil {
			segTraps = 0
			if !progress() {
				tl.resetCounts()
				tl.pos = Moment{Event: tl.live.Next(), Tid: tl.index.TidAt(tl.live.Next())}
				return nil, false, ErrCancelled
			}
			continue
		}
		if tl.live.Next() != tl.countsAt {
			segTraps = 0
		}
		record(st)
		if segTraps++; segTraps >= busyTraps && !st.Event && tl.live.Next() != trapped && tl.busyCountable() {
			seg := tl.live.Next()
			h, err := tl.lastInBusySegment(seg, st.PC, tl.returnAddresses(st.Tid)...)
			switch {
			case err == nil:
				if h != nil {
					last = h
				}
				err = tl.seek(seg + 1) // on with the segments after it
			case errors.Is(err, replay.ErrNoCounter):
				trapped = seg // trap through it after all, from its start
				err = tl.seek(seg)
			}
			if err == nil {
				err = tl.arm()
			}
			if err != nil {
				return nil, false, err
			}
			tl.refreshValues()
			segTraps = 0
			continue
		}
		if traps++; traps%1024 == 0 && !progress() {
			// Within a busy segment too: thousands of traps take seconds.
			// Mid-segment is no moment: settle at the segment's start
			// (from a checkpoint, without the traps).
			tl.pos = Moment{Event: -1}
			p := tl.Progress
			tl.Progress = nil
			err := tl.seek(tl.live.Next())
			tl.Progress = p
			return nil, false, errors.Join(ErrCancelled, err)
		}
	}
	if mid == nil || mid.event != target.Event {
		tl.resetCounts()
		tl.pos = Moment{Event: target.Event, Tid: tl.index.TidAt(target.Event)}
	}
	if target.Hits == 0 && target.Steps == 0 {
		// A checkpoint inside the window stands at a hit it already
		// counted: resuming there skips it, so the caller must know one
		// was used to look again from the window's start.
		return last, mid != nil, nil
	}
	if target.Hits >= countedFrom && target.Watch == nil && tl.onlyWatches() {
		// An arrival anchor, as a counted search names writes: counted too.
		h, err := tl.lastCounted(target.Event, target.PC, target.Hits, target.Steps > 0)
		if err == nil {
			if h != nil {
				last = h
			}
			return last, false, tl.stepsBefore(target, hit)
		}
		if !errors.Is(err, replay.ErrNoCounter) {
			return nil, false, err
		}
	}
	if target.Hits > 0 && target.Watch == nil && len(tl.watches) > 0 && !tl.quiet {
		// From a breakpoint's stop, say, with watchpoints armed, a
		// step's temporary breakpoints too (countedwatchbp.go).
		h, ok, err := tl.lastWriteBeforeAnchor(target)
		if err != nil {
			return nil, false, err
		}
		if ok {
			if h != nil && target.Steps == 0 {
				// The live replay stands at the write, where the caller
				// goes: no steps after the anchor to look at.
				return h, false, nil
			}
			if h != nil {
				last = h
			}
			return last, false, tl.stepsBefore(target, hit)
		}
	}
	if target.Hits > 0 && target.Watch == nil && tl.countingBPs() && len(tl.armedBPs()) > 0 {
		h, ok, err := tl.lastCountedBP(target)
		if err != nil {
			return nil, false, err
		}
		if ok {
			if h != nil {
				last = h
			}
			err := tl.stepsAfter(target, hit) // (may set last)
			return last, false, err
		}
	}
	if target.Hits > 0 {
		if err := tl.arm(extra...); err != nil {
			return nil, false, err
		}
		if len(ws) != len(tl.watches) {
			// An anchor on a write origin found: its watchpoint is armed
			// for the anchor only.
			if err := tl.live.SetWatchpoints(ws); err != nil {
				return nil, false, err
			}
		}
		if mid == nil || mid.event != target.Event {
			tl.wcounts = make([]int, len(ws))
		}
		for {
			st, err := tl.live.Continue(target.Event + 1)
			if err != nil {
				return nil, false, err
			}
			if st == nil || tl.live.Next() != target.Event {
				return nil, false, fmt.Errorf("scan to %v: the moment was not reached", target)
			}
			tl.count(st, ws)
			tl.maybeMid(ws, bps)
			anchor := false
			if target.Watch == nil {
				anchor = st.Kind == replay.StopBreakpoint && st.PC == target.PC && tl.counts[target.PC] == target.Hits
			} else {
				anchor = st.Kind == replay.StopWatchpoint && watchAnchor(st, ws, tl.wcounts, *target.Watch, target.Hits)
			}
			user := st.Kind != replay.StopWatchpoint || st.Watch < len(tl.watches)
			if !user {
				if anchor {
					break
				}
				continue
			}
			tl.pos = tl.momentOf(st)
			// The anchor itself is before the target when steps follow it.
			keep := (st.Kind == replay.StopWatchpoint && tl.wanted(st)) || tl.userStop(st.Tid, st.PC) || (tl.isTemp(st.PC) && tl.wanted(st))
			if anchor {
				if keep && target.Steps > 0 {
					hit(*tl.stopFor(st))
				}
				break
			}
			if keep {
				hit(*tl.stopFor(st))
			}
		}
		tl.wcounts = tl.wcounts[:len(tl.watches)]
		tl.pos = Moment{Event: target.Event, Tid: target.Tid, PC: target.PC, Hits: target.Hits, Watch: target.Watch}
		if err := tl.arm(); err != nil {
			return nil, false, err
		}
	}
	err := tl.stepsAfter(target, hit) // (may set last)
	return last, mid != nil, err
}

// stepsAfter steps from target's anchor, where the live replay stands, to
// target, passing the breakpoint stops and the watched writes on the way to
// hit (a write by the last step is the target itself, not before it).
func (tl *Timeline) stepsAfter(target Moment, hit func(Stop)) error {
	if target.Steps > 0 && len(tl.watches) > 0 {
		tl.refreshValues() // the old values of the writes the steps make
	}
	for i := 0; i < target.Steps; i++ {
		_, st, err := tl.stepOnceLive()
		if err != nil {
			return err
		}
		if i < target.Steps-1 && st.Kind == replay.StopWatchpoint && !st.Event && st.Watch < len(tl.watches) && tl.wanted(st) {
			hit(*tl.stopFor(st))
			continue
		}
		if i < target.Steps-1 {
			regs, err := tl.live.Regs(tl.pos.Tid)
			if err != nil {
				continue
			}
			if reason, ok := tl.wantedAt(tl.pos.Tid, regs[trace.RIP]); ok {
				hit(Stop{Reason: reason, Moment: tl.pos})
			}
		}
	}
	return nil
}

func (tl *Timeline) isUserBP(pc uint64) bool {
	for _, a := range tl.userBPs() {
		if a == pc {
			return true
		}
	}
	return false
}

// ReverseStepInstruction goes back to the instruction the current thread
// executed last.
func (tl *Timeline) ReverseStepInstruction() (*Stop, error) {
	prev, err := tl.previous(tl.pos)
	if err != nil {
		return nil, err
	}
	if err := tl.Goto(prev); err != nil {
		return nil, err
	}
	return &Stop{Reason: ReasonStep, Moment: tl.pos}, nil
}

// ReverseStepThreadInstruction goes back to the instruction thread tid
// executed last (gdb's reverse-stepi in a thread it selected): for
// another thread than the one running now, that is before the current
// segment began.
func (tl *Timeline) ReverseStepThreadInstruction(tid int32) (*Stop, error) {
	if tid <= 0 || tid == tl.pos.Tid {
		return tl.ReverseStepInstruction()
	}
	prev, err := tl.previous(Moment{Event: tl.pos.Event, Tid: tid})
	if err != nil {
		return nil, err
	}
	if err := tl.Goto(prev); err != nil {
		return nil, err
	}
	return &Stop{Reason: ReasonStep, Moment: tl.pos}, nil
}

// previous returns the moment one instruction of m's thread before m.
func (tl *Timeline) previous(m Moment) (Moment, error) {
	if m.Steps > 0 {
		m.Steps--
		return m, nil
	}
	if m.Hits == 1 && m.Watch == nil {
		if prev, ok := tl.beforeFirstArrival(m); ok {
			return prev, nil
		}
	}
	if m.Hits > 0 {
		anchor := m
		anchor.Hits--
		anchor.Steps = 0
		if anchor.Hits == 0 {
			anchor = Moment{Event: m.Event, Tid: m.Tid}
		}
		if err := tl.Goto(anchor); err != nil {
			return m, err
		}
		if m.Watch != nil && !hasWatch(tl.watches, *m.Watch) {
			// A write found by origin: its watchpoint is not the user's,
			// and the steps must see it trap.
			if err := tl.live.SetWatchpoints(append(append([]replay.Watchpoint(nil), tl.watches...), *m.Watch)); err != nil {
				return m, err
			}
			defer tl.live.SetWatchpoints(tl.watches)
		}
		for n := 1; n <= maxStepBack; n++ {
			st, err := tl.live.StepInstruction()
			if err != nil {
				return m, err
			}
			// Keep the position true to the live replay for the next Goto.
			tl.pos = anchor
			tl.pos.Steps = n
			if n%4096 == 0 && tl.Progress != nil && !tl.Progress(tl.live.Next(), tl.index.Total()) {
				return m, ErrCancelled
			}
			arrived := (m.Watch == nil && st.PC == m.PC) || (m.Watch != nil && st.Kind == replay.StopWatchpoint)
			if tl.live.Next() != m.Event {
				tl.pos = Moment{Event: -1}
				if !arrived {
					break
				}
			}
			if arrived {
				if n == 1 {
					if anchor.Hits == 0 && anchor.Steps == 0 {
						return tl.previous(anchor)
					}
					return anchor, nil
				}
				anchor.Steps = n - 1
				return anchor, nil
			}
		}
		return m, fmt.Errorf("could not find the instruction before %v", m)
	}
	// At the start of a segment: the thread's previous instruction is the
	// one that led to its previous event.
	p := tl.index.prevCodeEvent(m.Event, m.Tid)
	if p < 0 {
		return m, ErrAtStart
	}
	e := tl.index.events[p]
	pc := e.pc
	if e.kind == trace.KindSyscall || e.kind == trace.KindSyscallEntry {
		pc -= 2 // the syscall instruction
	}
	at, err := tl.lastArrival(p, pc)
	if err != nil {
		return m, err
	}
	if e.kind == trace.KindPreempt || e.kind == trace.KindSignal {
		// Preempting, or faulting, runs no instruction: the one before is
		// before that point.
		return tl.previous(at)
	}
	return at, nil
}

// lastArrival returns the moment of the last arrival at pc in segment n.
func (tl *Timeline) lastArrival(n int64, pc uint64) (Moment, error) {
	if err := tl.seek(n); err != nil {
		return Moment{}, err
	}
	tl.ownBPs(pc)
	if err := tl.live.SetWatchpoints(nil); err != nil {
		return Moment{}, err
	}
	hits := 0
	tid := tl.index.TidAt(n)
	for {
		st, err := tl.live.Continue(n + 1)
		if err != nil && !errors.Is(err, io.EOF) {
			return Moment{}, err
		}
		if st == nil {
			break
		}
		if st.Kind == replay.StopBreakpoint && st.PC == pc && tl.live.Next() == n {
			hits++
		}
	}
	tl.resetCounts()
	tl.pos = Moment{Event: tl.live.Next(), Tid: tl.index.TidAt(tl.live.Next())}
	tl.ownBPs()
	if hits == 0 {
		return Moment{Event: n, Tid: tid}, nil
	}
	return Moment{Event: n, Tid: tid, PC: pc, Hits: hits}, nil
}

// Write is one write to a watched location.
type Write struct {
	Moment   Moment
	Tid      int32
	PC       uint64 // rip after the write (the writing instruction is just before)
	Old, New uint64
	Syscall  bool // written by the kernel for a system call
}

// WatchHistory replays the whole recording with a watchpoint on w and
// returns every write to it, in order; then it returns to where it was.
func (tl *Timeline) WatchHistory(w replay.Watchpoint) ([]Write, error) {
	back := tl.pos
	if err := tl.seek(tl.index.First); err != nil {
		return nil, err
	}
	tl.ownBPs()
	if err := tl.live.SetWatchpoints([]replay.Watchpoint{w}); err != nil {
		return nil, err
	}
	old := tl.readValue(w)
	var out []Write
	counts, at := 0, tl.live.Next()
	for {
		st, err := tl.live.Continue(0)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if st == nil {
			if tl.live.Done() {
				break
			}
			continue
		}
		if at != tl.live.Next() {
			counts, at = 0, tl.live.Next()
		}
		nv := tl.readValue(w)
		wr := Write{Tid: st.Tid, PC: st.PC, Old: old, New: nv, Syscall: st.Event}
		if st.Event {
			wr.Moment = Moment{Event: tl.live.Next(), Tid: st.Tid}
		} else {
			counts++
			ww := w
			wr.Moment = Moment{Event: tl.live.Next(), Tid: st.Tid, Hits: counts, Watch: &ww}
		}
		out = append(out, wr)
		old = nv
		if tl.Progress != nil && !tl.Progress(tl.live.Next(), tl.index.Total()) {
			return out, ErrCancelled
		}
	}
	tl.pos = Moment{Event: -1}
	if err := tl.Goto(back); err != nil {
		return out, err
	}
	return out, nil
}
