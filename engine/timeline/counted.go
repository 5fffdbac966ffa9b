package timeline

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rewind-debugger/rewind/engine/insn"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Going back one write in a busy segment. Moments inside a segment count
// traps from its start, and without performance counters each trap is a
// ptrace stop (~100µs here): a loop that writes a watched variable a
// million times without a system call makes a segment where finding the
// last write, by trapping them all, takes minutes.
//
// So when a reverse search meets a segment that traps too often, it counts
// instead: arrival counters (replay/counter.go) count, in the program, the
// arrivals at an instruction near the write — the busiest of a few, a loop
// head — over the whole segment, at full speed. Then windows that end
// where the search ends and start that many arrivals back (64, then eight
// times more each time) are replayed with the watchpoints trapping. The
// last trap of the first window that has one is the write.
//
// Such a write is named by arrivals, not by traps from the segment start
// (unknown, and the reason for all this): "the n-th arrival at pc" when it
// trapped there, else the arrival at the counted instruction before it and
// the instructions stepped from there. Goto reaches such a moment with a
// counter; the counts of the user's breakpoints and watchpoints there are
// then unknown, and going forwards from it counts them again from the
// segment start (ensureCounts).

// busyTraps is how many traps one segment may take in a reverse search
// before the search counts arrivals instead.
const busyTraps = 256

// countedFrom is the arrival anchor from which Goto uses a counter.
const countedFrom = 64

// firstWindow is the arrivals of the first window a counted search traps.
const firstWindow = 64

// maxNameSteps bounds the single-steps that name a write found by a counted
// search (from the arrival at the counted instruction before it).
const maxNameSteps = 20000

// returnAddresses are the likely return addresses of thread tid's frame
// now ([rsp] without a frame pointer, [rbp+8] with one): a write in a
// function called from a loop is counted at the loop, since a short
// function has no room for a counter after its write.
func (tl *Timeline) returnAddresses(tid int32) []uint64 {
	var out []uint64
	for _, r := range tl.frameReturns(tid) {
		out = append(out, r.addr)
	}
	return out
}

// frameReturn is a likely return address of a thread's frame, with the
// length of the call before it (0: not known for sure).
type frameReturn struct {
	addr    uint64
	callLen int
}

// frameReturns reads the likely return addresses of thread tid's frame
// now ([rsp], [rbp+8]).
func (tl *Timeline) frameReturns(tid int32) []frameReturn {
	regs, err := tl.live.Regs(tid)
	if err != nil {
		return nil
	}
	var out []frameReturn
	for _, a := range []uint64{regs[trace.RSP], regs[trace.RBP] + 8} {
		b, err := tl.live.ReadMem(a, 8)
		if err != nil || len(b) != 8 {
			continue
		}
		// A return address follows a call; any other word is not one.
		ret := binary.LittleEndian.Uint64(b)
		if code, err := tl.live.ReadMem(ret-insn.MaxLen, insn.MaxLen); err == nil && insn.CallBefore(code) {
			out = append(out, frameReturn{addr: ret, callLen: insn.CallLenBefore(code)})
		}
	}
	return out
}

// onlyWatches says whether a search stops at watchpoints only: arrival
// counting does not know the arrivals at breakpoints.
func (tl *Timeline) onlyWatches() bool {
	return len(tl.userBPs()) == 0 && len(tl.temp) == 0 && len(tl.watches) > 0 && !tl.quiet
}

// lastCounted returns the last trap of the watchpoints in segment seg
// before the stop-th arrival at p, or before the segment's end when stop
// is 0 (p is then where a trap was seen: the busiest counter site near it,
// or near the return addresses near gives, is counted). withAnchor counts a trap that leaves the thread at the
// stop-th arrival (a moment some steps after that arrival is searched
// from). It fails with replay.ErrNoCounter when no counter can go
// there; the caller traps instead.
func (tl *Timeline) lastCounted(seg int64, p uint64, stop int, withAnchor bool, near ...uint64) (*Stop, error) {
	site, total := p, stop-1
	if stop == 0 {
		var err error
		if site, total, err = tl.busiestSite(seg, append([]uint64{p}, near...)); err != nil {
			return nil, err
		}
	}
	tl.counted++
	for k := firstWindow; ; k *= 8 {
		start := total + 1 - k // the window starts at this arrival
		last, err := tl.trapWindow(seg, site, start, stop, withAnchor)
		if err != nil {
			return nil, err
		}
		if last != nil {
			return tl.nameHit(seg, site, start < 1, *last)
		}
		if start < 1 {
			return nil, nil // the whole segment: no write
		}
		if tl.Progress != nil && !tl.Progress(seg, tl.index.Total()) {
			return nil, ErrCancelled
		}
	}
}

// busiestSite counts, over segment seg, the arrivals at the counter sites a
// thread at pcs reaches first, and returns the busiest with its count.
func (tl *Timeline) busiestSite(seg int64, pcs []uint64) (uint64, int, error) {
	pc := pcs[0]
	if err := tl.seek(seg); err != nil {
		return 0, 0, err
	}
	sites := tl.live.CounterSites(pcs, 6)
	if len(sites) == 0 {
		return 0, 0, fmt.Errorf("%w: no instruction near %#x can be moved", replay.ErrNoCounter, pc)
	}
	if err := tl.countTo(seg, sites, 0); err != nil {
		return 0, 0, err
	}
	best, most := uint64(0), 0
	for _, a := range sites {
		n, err := tl.live.CounterValue(a)
		if err != nil {
			return 0, 0, err
		}
		if n > most {
			best, most = a, n
		}
	}
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	if most == 0 {
		return 0, 0, fmt.Errorf("%w: no arrival near %#x", replay.ErrNoCounter, pc)
	}
	return best, most, nil
}

// countTo runs segment seg (the live replay at its start) with counters at
// sites and nothing else armed, to the stop-th arrival at sites[0] (0: to
// the segment's end, the counters then closed).
func (tl *Timeline) countTo(seg int64, sites []uint64, stop int) error {
	tl.ownBPs()
	if err := tl.live.SetWatchpoints(nil); err != nil {
		return err
	}
	if err := tl.live.OpenCounters(sites); err != nil {
		return err
	}
	if stop > 0 {
		if err := tl.live.SetCounterStop(sites[0], stop); err != nil {
			return err
		}
	}
	st, err := tl.live.Continue(seg + 1)
	if err != nil {
		return err
	}
	switch {
	case stop > 0 && (st == nil || st.Kind != replay.StopCounter):
		return fmt.Errorf("arrival %d at %#x in segment %d was not reached", stop, sites[0], seg)
	case stop == 0 && st != nil:
		return fmt.Errorf("counting segment %d: unexpected stop %+v", seg, st)
	}
	return nil
}

// windowHit is a trap found by trapWindow.
type windowHit struct {
	stop  Stop
	pc    uint64 // where the thread trapped
	c     int    // the counted arrivals when it trapped
	after int    // the traps since that arrival, this one included
	hits  int    // the traps of its watchpoint since the window's start
	event bool   // a system call's write, at the segment's end
}

// trapWindow replays segment seg from the start-th arrival at site (from
// the segment's start if start < 1) to the stop-th (0: to the segment's
// end) with the watchpoints trapping, and returns the last trap (the one
// that leaves the thread at the stop-th arrival counts if withAnchor), or
// nil.
func (tl *Timeline) trapWindow(seg int64, site uint64, start, stop int, withAnchor bool) (*windowHit, error) {
	if err := tl.seek(seg); err != nil {
		return nil, err
	}
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	if start >= 1 {
		if err := tl.countTo(seg, []uint64{site}, start); err != nil {
			return nil, err
		}
	} else {
		tl.ownBPs()
		if err := tl.live.OpenCounters([]uint64{site}); err != nil {
			return nil, err
		}
	}
	if stop > 0 {
		if err := tl.live.SetCounterStop(site, stop); err != nil {
			return nil, err
		}
	}
	tl.refreshValues()
	if err := tl.live.SetWatchpoints(tl.watches); err != nil {
		return nil, err
	}
	var last *windowHit
	traps := 0
	wcounts := make([]int, len(tl.watches))
	lastC, after := -1, 0
	for {
		st, err := tl.live.Continue(seg + 1)
		if err != nil {
			return nil, err
		}
		if st == nil || st.Kind == replay.StopCounter {
			break // the segment's end, or the search's
		}
		if st.Kind != replay.StopWatchpoint {
			continue
		}
		if st.Event {
			last = &windowHit{stop: *tl.stopFor(st), event: true}
			continue
		}
		c, err := tl.live.CounterValue(site)
		if err != nil {
			return nil, err
		}
		anchor := stop > 0 && st.PC == site && c+1 == stop
		if anchor && !withAnchor {
			break // the search's end itself
		}
		if c != lastC {
			lastC, after = c, 0
		}
		after++
		countTrap(wcounts, st)
		last = &windowHit{stop: *tl.stopFor(st), pc: st.PC, c: c, after: after, hits: wcounts[st.Watch]}
		if anchor {
			break
		}
		if traps++; traps%1024 == 0 && tl.Progress != nil && !tl.Progress(seg, tl.index.Total()) {
			return nil, ErrCancelled
		}
	}
	if err := tl.live.CloseCounters(); err != nil {
		return nil, err
	}
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	return last, nil
}

// nameHit gives the moment of a trap found by trapWindow.
func (tl *Timeline) nameHit(seg int64, site uint64, fromStart bool, h windowHit) (*Stop, error) {
	tid := tl.index.TidAt(seg)
	st := h.stop
	switch {
	case h.event:
		st.Moment = Moment{Event: seg + 1, Tid: tid}
	case fromStart:
		// The window started with the segment: its trap counts are the
		// canonical ones.
		w := tl.watches[st.Watch]
		st.Moment = Moment{Event: seg, Tid: tid, PC: h.pc, Hits: h.hits, Watch: &w}
	case h.pc == site && tl.arrivalNamesWrite(site):
		st.Moment = Moment{Event: seg, Tid: tid, PC: site, Hits: h.c + 1}
	default:
		// After the c-th arrival at site: step from there to the trap.
		anchor := Moment{Event: seg, Tid: tid, PC: site, Hits: h.c}
		n, err := tl.stepsToTrap(anchor, h.after)
		if err != nil {
			return nil, err
		}
		anchor.Steps = n
		st.Moment = anchor
	}
	return &st, nil
}

// stepsToTrap returns how many instructions after moment m the k-th trap
// of the watchpoints happens.
func (tl *Timeline) stepsToTrap(m Moment, k int) (int, error) {
	// With a counter even where breakpoints are armed (Goto would trap
	// them, and every write, from the segment's start to name the counts
	// the next motion forwards needs): this only looks.
	err := replay.ErrNoCounter
	if m.Watch == nil && m.Steps == 0 && m.Hits >= countedFrom {
		err = tl.gotoCounted(m)
	}
	if errors.Is(err, replay.ErrNoCounter) {
		err = tl.Goto(m)
	}
	if err != nil {
		return 0, err
	}
	if err := tl.live.SetWatchpoints(tl.watches); err != nil {
		return 0, err
	}
	for n := 1; n <= maxNameSteps; n++ {
		st, err := tl.live.StepInstruction()
		if err != nil {
			return 0, err
		}
		tl.pos.Steps = n
		if tl.live.Next() != m.Event {
			break
		}
		if st.Kind == replay.StopWatchpoint {
			if k--; k == 0 {
				return n, nil
			}
		}
	}
	tl.pos = Moment{Event: -1}
	return 0, fmt.Errorf("%w: the write after %v is more than %d instructions away", replay.ErrNoCounter, m, maxNameSteps)
}

// gotoCounted reaches an arrival anchor (m.Hits at m.PC, no steps) with a
// counter. The counts of the user's breakpoints and watchpoints there are
// unknown (guessed marks the segment).
func (tl *Timeline) gotoCounted(m Moment) error {
	if err := tl.seek(m.Event); err != nil {
		return err
	}
	if err := tl.countTo(m.Event, []uint64{m.PC}, m.Hits); err != nil {
		tl.pos = Moment{Event: -1}
		tl.live.CloseCounters()
		return err
	}
	if err := tl.live.CloseCounters(); err != nil {
		return err
	}
	return tl.settleGuessed(m)
}

// settleGuessed names the live replay, at m's anchor, m, its counts unknown.
func (tl *Timeline) settleGuessed(m Moment) error {
	if err := tl.arm(); err != nil {
		return err
	}
	tl.pos = Moment{Event: m.Event, Tid: m.Tid, PC: m.PC, Hits: m.Hits}
	tl.counts, tl.wcounts = map[uint64]int{}, make([]int, len(tl.watches))
	tl.countsAt, tl.guessed = m.Event, m.Event
	return nil
}

// reachAnchor reaches an arrival anchor as gotoCounted does or, where no
// counter can go at it and it has few arrivals, by trapping it alone: a
// breakpoint at a function too short for a counter, which the user hit.
func (tl *Timeline) reachAnchor(m Moment) error {
	err := tl.gotoCounted(m)
	if !errors.Is(err, replay.ErrNoCounter) || m.Hits > busyTraps {
		return err
	}
	if err := tl.seek(m.Event); err != nil {
		return err
	}
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	tl.ownBPs(m.PC)
	if err := tl.live.SetWatchpoints(nil); err != nil {
		return err
	}
	for n := 0; n < m.Hits; {
		st, err := tl.live.Continue(m.Event + 1)
		if err != nil {
			return err
		}
		if st == nil || tl.live.Next() != m.Event {
			return fmt.Errorf("arrival %d at %#x in segment %d was not reached (stopped by %+v)", m.Hits, m.PC, m.Event, st)
		}
		if st.Kind == replay.StopBreakpoint && st.PC == m.PC {
			n++
		}
	}
	return tl.settleGuessed(m)
}

// ensureCounts makes the per-segment counts true before going forwards
// from a moment reached with a counter: the stops ahead are named by them.
func (tl *Timeline) ensureCounts() error {
	if tl.guessed < 0 || tl.guessed != tl.live.Next() || tl.pos.Event != tl.guessed {
		return nil
	}
	return tl.gotoTrapping(tl.pos)
}

// stepsBefore goes to target's arrival anchor with a counter and steps to
// target, passing each trap of the watchpoints and each wanted breakpoint
// arrival on the way to hit.
func (tl *Timeline) stepsBefore(target Moment, hit func(Stop)) error {
	anchor := target
	anchor.Steps = 0
	if err := tl.reachAnchor(anchor); err != nil {
		return err
	}
	tl.refreshValues()
	for i := 1; i <= target.Steps; i++ {
		st, err := tl.live.StepInstruction()
		if err != nil {
			return err
		}
		tl.pos.Steps = i
		if i == target.Steps {
			break
		}
		if st.Kind == replay.StopWatchpoint && !st.Event {
			hit(*tl.stopFor(st))
		}
		// A breakpoint reached by a step (a reverse step's line start
		// between the anchor and the target): its stop comes after the
		// write the same instruction made.
		if regs, err := tl.live.Regs(tl.pos.Tid); err == nil {
			if reason, ok := tl.wantedAt(tl.pos.Tid, regs[trace.RIP]); ok {
				hit(Stop{Reason: reason, Moment: tl.pos})
			}
		}
	}
	return nil
}

// continueCounted goes forwards from a moment reached with a counter (the
// trap counts of its segment unknown) to the next trap of the watchpoints
// in that segment, and names it by arrivals at the moment's instruction,
// as a counted search does: counting the segment's traps from its start
// instead would trap every write before it again. done is false when it
// does not apply (breakpoints armed, another kind of moment) or when the
// segment ended without a write: the caller goes on from where the live
// replay stands.
func (tl *Timeline) continueCounted() (*Stop, bool, error) {
	m := tl.pos
	if !tl.onlyWatches() || m.Watch != nil || m.Hits == 0 || tl.guessed != m.Event || tl.live.Next() != m.Event {
		return nil, false, nil // with breakpoints: continueCountingAll
	}
	seg, site := m.Event, m.PC
	if err := tl.seek(seg); err != nil {
		return nil, false, err
	}
	tl.pos = Moment{Event: -1}
	if err := tl.countTo(seg, []uint64{site}, m.Hits); err != nil {
		tl.live.CloseCounters()
		if errors.Is(err, replay.ErrNoCounter) {
			return nil, false, tl.gotoTrapping(m)
		}
		return nil, false, err
	}
	if err := tl.live.SetWatchpoints(tl.watches); err != nil {
		return nil, false, err
	}
	// The steps after the anchor run the original code: the arrivals at
	// site they make are counted here, and the traps since the last one.
	arrivals, since := m.Hits-1, 0
	for i := 0; i < m.Steps; i++ {
		regs, err := tl.live.Regs(m.Tid)
		if err != nil {
			return nil, false, err
		}
		if regs[trace.RIP] == site {
			arrivals, since = arrivals+1, 0
		}
		st, err := tl.live.StepInstruction()
		if err != nil {
			return nil, false, err
		}
		if st.Kind == replay.StopWatchpoint && !st.Event {
			since++
		}
	}
	tl.refreshValues()
	base, err := tl.live.CounterValue(site)
	if err != nil {
		return nil, false, err
	}
	st, err := tl.live.Continue(seg + 1)
	if err != nil {
		return nil, false, err
	}
	if st == nil || st.Kind != replay.StopWatchpoint || tl.live.Next() != seg {
		if err := tl.live.CloseCounters(); err != nil {
			return nil, false, err
		}
		tl.resetCounts()
		tl.pos = Moment{Event: tl.live.Next(), Tid: tl.index.TidAt(tl.live.Next())}
		if st != nil && st.Kind == replay.StopWatchpoint {
			return tl.stopFor(st), true, nil // a system call's write, at the event
		}
		return nil, false, nil // no write left in the segment
	}
	now, err := tl.live.CounterValue(site)
	if err != nil {
		return nil, false, err
	}
	if err := tl.live.CloseCounters(); err != nil {
		return nil, false, err
	}
	arrivals += now - base
	// After the last arrival at site: this trap is the first after it, or
	// comes after the traps the steps made since it.
	k := 1
	if now == base {
		k += since
	}
	return tl.nameWrite(st, m, site, arrivals, k)
}

// nameWrite names st, a write found going forwards from m (its counts
// unknown) with arrivals arrivals at site counted before it, k the traps
// since the last one (this one included), and stops there: as the
// arrival at site it leaves the thread at, or from the last arrival and
// the steps to it. done is false where no arrival names it: the live
// replay is then back at m, its counts trapped.
func (tl *Timeline) nameWrite(st *replay.Stop, m Moment, site uint64, arrivals, k int) (*Stop, bool, error) {
	seg := m.Event
	out := tl.stopFor(st)
	tl.counted++
	if st.PC == site && tl.arrivalNamesWrite(site) {
		out.Moment = Moment{Event: seg, Tid: m.Tid, PC: site, Hits: arrivals + 1}
		tl.pos, tl.guessed = out.Moment, seg
		return out, true, tl.arm()
	}
	if arrivals == 0 {
		return nil, false, tl.gotoTrapping(m) // no arrival to name it from
	}
	anchor := Moment{Event: seg, Tid: m.Tid, PC: site, Hits: arrivals}
	n, err := tl.stepsToTrap(anchor, k)
	if err != nil {
		return nil, false, err
	}
	anchor.Steps = n
	out.Moment = anchor
	return out, true, tl.arm()
}
