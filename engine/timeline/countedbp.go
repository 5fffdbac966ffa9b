package timeline

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/rewind-debugger/rewind/engine/insn"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Breakpoints in a busy segment. A moment inside a segment is named by the
// arrivals at its breakpoint address since the segment's start, and the
// counts of every armed breakpoint there must be known to name the next
// stop. Trapping every arrival from the segment's start costs a ptrace
// stop each (~100µs): a function called 20,000 times between two system
// calls makes every source-level step in its last call, forwards or back,
// take seconds to minutes.
//
// So, where arrival counters can go (replay/counter.go), breakpoints are
// counted in the program instead:
//
//   - reaching a moment (Goto) opens a counter at every armed breakpoint
//     and at the moment's own address, runs the segment at full speed to
//     the moment's arrival, and reads every count there;
//   - a reverse search in the moment's segment first counts the arrivals
//     at every armed breakpoint up to the moment, takes the busiest as a
//     clock, and replays windows that end at the moment and start 8, 64,
//     512… clock arrivals before it, each counter trapping at every
//     arrival inside the window only. The last stop of the first window
//     that has one is the answer, named by its counter.
//
// Where a counter cannot go (an instruction that cannot be moved, runs that
// overlap, a segment that does not end in a system call, watchpoints to
// count), the breakpoints trap as before.

// firstBPWindow is the clock arrivals of the first window a counted reverse
// search replays; each next window is bpWindowGrowth times longer.
const (
	firstBPWindow  = 8
	bpWindowGrowth = 8
)

// mappedSites returns the addresses of pcs (deduplicated, first first)
// whose code is mapped now: code that is not mapped cannot run before the
// segment's end (mapping it is a system call, an event), so its count
// stays 0.
func (tl *Timeline) mappedSites(pcs []uint64) []uint64 {
	var out []uint64
	seen := map[uint64]bool{}
	for _, a := range pcs {
		if a == 0 || seen[a] {
			continue
		}
		seen[a] = true
		if _, err := tl.live.ReadMem(a, 1); err != nil {
			continue
		}
		out = append(out, a)
	}
	return out
}

// canCount says whether a counter can go at pc, as far as its code tells.
func (tl *Timeline) canCount(pc uint64) bool {
	code, err := tl.live.ReadMem(pc, 2*insn.MaxLen)
	if err != nil {
		return false
	}
	_, ok := insn.PlanPatchBranches(code, pc)
	return ok
}

// countsTo runs segment seg from its start to the hits-th arrival at pc,
// counting the arrivals at pc and at every address of pcs, and returns the
// counts there (this arrival at pc included) and the addresses counted in
// the program. The live replay is left at the arrival, the counters closed.
func (tl *Timeline) countsTo(seg int64, pc uint64, hits int, pcs []uint64) (map[uint64]int, []uint64, error) {
	if err := tl.seek(seg); err != nil {
		return nil, nil, err
	}
	all := tl.mappedSites(append([]uint64{pc}, pcs...))
	if len(all) == 0 || all[0] != pc {
		return nil, nil, fmt.Errorf("%w: the code at %#x is not mapped", replay.ErrNoCounter, pc)
	}
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	sites, trapped, err := tl.openCountersWhere(all, pc)
	if err != nil {
		return nil, nil, err
	}
	if slices.Contains(sites, pc) {
		if err := tl.live.SetCounterStop(pc, hits); err != nil {
			return nil, nil, err
		}
	}
	for n := 1; ; n++ {
		st, err := tl.live.Continue(seg + 1)
		if err != nil {
			return nil, nil, err
		}
		if st == nil || tl.live.Next() != seg || (st.Kind != replay.StopCounter && st.Kind != replay.StopBreakpoint) {
			tl.live.CloseCounters()
			return nil, nil, fmt.Errorf("arrival %d at %#x in segment %d was not reached (stopped by %+v)", hits, pc, seg, st)
		}
		if st.Kind == replay.StopBreakpoint {
			trapped[st.PC]++
		}
		if st.PC == pc && (st.Kind == replay.StopCounter || trapped[pc] == hits) {
			break
		}
		if n%1024 == 0 && tl.Progress != nil && !tl.Progress(seg, tl.index.Total()) {
			tl.live.CloseCounters()
			return nil, nil, ErrCancelled
		}
	}
	counts, err := tl.closeCounts(all, trapped)
	if err != nil {
		return nil, nil, err
	}
	counts[pc] = hits
	return counts, sites, nil
}

// openCountersWhere opens counters at the addresses of all where they can
// go, and arms breakpoints at those neither counted nor covered by a
// counted run (traps: their counts, zero so far). No run covers keep. It
// fails with replay.ErrNoCounter when no counter opens: trapping them all
// is the old way, not to be done twice.
func (tl *Timeline) openCountersWhere(all []uint64, keep uint64) (sites []uint64, trapped map[uint64]int, err error) {
	tl.ownBPs()
	if err := tl.live.SetWatchpoints(nil); err != nil {
		return nil, nil, err
	}
	sites, err = tl.live.OpenCountersWhere(all, []uint64{keep})
	if err != nil {
		return nil, nil, err
	}
	if len(sites) == 0 {
		tl.live.CloseCounters()
		return nil, nil, fmt.Errorf("%w: none of %#x can take a counter", replay.ErrNoCounter, all)
	}
	trapped = map[uint64]int{}
	var traps []uint64
	for _, a := range all {
		if !slices.Contains(sites, a) && !tl.live.CounterCovers(a) {
			traps = append(traps, a)
			trapped[a] = 0
		}
	}
	tl.ownBPs(traps...)
	return sites, trapped, nil
}

// closeCounts closes the counters and returns the arrivals at each address
// of all so far: counted, covered by a counted run, or trapped.
func (tl *Timeline) closeCounts(all []uint64, trapped map[uint64]int) (map[uint64]int, error) {
	if err := tl.live.CloseCounters(); err != nil {
		return nil, err
	}
	tl.ownBPs()
	counts := map[uint64]int{}
	for _, a := range all {
		n, ok := trapped[a]
		if !ok {
			var err error
			if n, err = tl.live.CounterValue(a); err != nil {
				return nil, err
			}
		}
		if n > 0 {
			counts[a] = n
		}
	}
	return counts, nil
}

// gotoCountingAll reaches moment m (an arrival anchor and its steps) with
// counters, its segment's counts at every armed breakpoint known there. It
// fails with replay.ErrNoCounter where counters cannot go.
func (tl *Timeline) gotoCountingAll(m Moment) error {
	counts, _, err := tl.countsTo(m.Event, m.PC, m.Hits, tl.armedBPs())
	dbg("gotoCountingAll %v: %v %v", m, counts, err)
	if err != nil {
		return err
	}
	if err := tl.arm(); err != nil {
		return err
	}
	tl.pos = Moment{Event: m.Event, Tid: m.Tid, PC: m.PC, Hits: m.Hits}
	tl.counts, tl.wcounts = counts, make([]int, len(tl.watches))
	tl.countsAt, tl.guessed = m.Event, -1
	return tl.stepTo(m)
}

// countingBPs says whether reverse searches and Goto may count breakpoint
// arrivals: watchpoint traps, which counters do not see, are not wanted.
func (tl *Timeline) countingBPs() bool {
	return len(tl.watches) == 0 || tl.quiet
}

// lastCountedBP returns the last wanted breakpoint stop before target's
// arrival anchor in its segment (nil: none), found with counters, the live
// replay left at the anchor with the counters closed and the counts of the
// armed breakpoints there known. ok is false where counters cannot go: the
// caller traps instead, from the start of target's segment, where the live
// replay is left then.
func (tl *Timeline) lastCountedBP(target Moment) (last *Stop, ok bool, err error) {
	armed := tl.armedBPs()
	// The clock: the busiest counted address, whose arrivals are densest
	// before the target (a loop's line rather than the function's entry),
	// found by counting them all once; the moment's own address when it is
	// the only one armed.
	clock, ticks := target.PC, target.Hits
	if len(armed) != 1 || armed[0] != clock || !tl.canCount(clock) {
		clock, ticks = 0, 0
		counts, sites, err := tl.countsTo(target.Event, target.PC, target.Hits, armed)
		dbg("lastCountedBP %v armed %x: counts %v sites %x err %v", target, armed, counts, sites, err)
		if errors.Is(err, replay.ErrNoCounter) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		for _, a := range sites {
			if counts[a] > ticks {
				clock, ticks = a, counts[a]
			}
		}
		if none := tl.noArrivals(target, armed, counts); none {
			// No armed breakpoint was reached before the anchor: no
			// window to search (each would trap the clock's arrivals,
			// the whole segment's in the end).
			return nil, true, tl.settleAt(target, counts)
		}
		if clock == 0 {
			// Nothing counted arrives before the anchor (one no counter
			// can go at, as an exit_group's syscall instruction): the
			// caller traps, from the segment's start, where countsTo has
			// run past.
			return nil, false, tl.seek(target.Event)
		}
	}
	tl.counted++
	for k := firstBPWindow; ; k *= bpWindowGrowth {
		start := ticks + 1 - k
		last, counts, err := tl.bpWindow(target, armed, clock, start)
		dbg("window clock %#x start %d: %+v %v", clock, start, last, err)
		if errors.Is(err, replay.ErrNoCounter) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if last != nil || start < 1 {
			return last, true, tl.settleAt(target, counts)
		}
		if tl.Progress != nil && !tl.Progress(target.Event, tl.index.Total()) {
			return nil, false, ErrCancelled
		}
	}
}

// noArrivals says whether the counts up to target's anchor (countsTo's:
// counted, covered or trapped; an address not mapped is not reached)
// show that no armed breakpoint was reached before it, the anchor's own
// arrival aside unless steps follow it.
func (tl *Timeline) noArrivals(target Moment, armed []uint64, counts map[uint64]int) bool {
	for _, a := range armed {
		n := counts[a]
		if a == target.PC && target.Steps == 0 {
			n--
		}
		if n > 0 {
			return false
		}
	}
	return true
}

// settleAt names the live replay, left at target's anchor by a counted
// search, with the counts of the armed breakpoints there.
func (tl *Timeline) settleAt(target Moment, counts map[uint64]int) error {
	if err := tl.arm(); err != nil {
		return err
	}
	tl.pos = Moment{Event: target.Event, Tid: target.Tid, PC: target.PC, Hits: target.Hits}
	tl.counts, tl.wcounts = counts, make([]int, len(tl.watches))
	tl.countsAt, tl.guessed = target.Event, -1
	if len(tl.watches) > 0 {
		// Their traps were not counted (a search that passes writes).
		tl.guessed = target.Event
	}
	return nil
}

// bpWindow replays target's segment to target's anchor, counting the
// arrivals at the armed breakpoints up to the start-th arrival at clock
// (none if start < 1), and trapping them from there, and returns the last
// wanted stop (the anchor itself when steps follow it) and the counts at
// the anchor.
func (tl *Timeline) bpWindow(target Moment, armed []uint64, clock uint64, start int) (*Stop, map[uint64]int, error) {
	seg := target.Event
	isArmed := map[uint64]bool{}
	for _, a := range armed {
		isArmed[a] = true
	}
	all := tl.mappedSites(append([]uint64{target.PC}, armed...))
	counts := map[uint64]int{}
	var last *Stop
	// A stop where no counter goes is given the last arrival at a counted
	// address before it as a proxy, which Goto reaches at full speed.
	var proxy Moment
	isSite := map[uint64]bool{}
	if start < 1 {
		if err := tl.seek(seg); err != nil {
			return nil, nil, err
		}
	} else {
		var sites []uint64
		var err error
		if counts, sites, err = tl.countsTo(seg, clock, start, all); err != nil {
			return nil, nil, err
		}
		for _, a := range sites {
			isSite[a] = true
		}
		proxy = Moment{Event: seg, Tid: tl.index.TidAt(seg), PC: clock, Hits: start}
		// The window's first arrival, at clock, is passed over when the
		// replay resumes: it is weighed here.
		if regs, err := tl.live.Regs(tl.index.TidAt(seg)); err == nil && regs[trace.RIP] == clock && isArmed[clock] {
			if reason, ok := tl.wantedAt(tl.index.TidAt(seg), clock); ok {
				last = &Stop{Reason: reason, Moment: Moment{Event: seg, Tid: tl.index.TidAt(seg), PC: clock, Hits: start}}
			}
		}
	}
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	tl.ownBPs(all...)
	if err := tl.live.SetWatchpoints(nil); err != nil {
		return nil, nil, err
	}
	for traps := 1; ; traps++ {
		st, err := tl.live.Continue(seg + 1)
		if err != nil {
			return nil, nil, err
		}
		if st == nil || tl.live.Next() != seg || st.Kind != replay.StopBreakpoint {
			return nil, nil, fmt.Errorf("counting to %v: the moment was not reached (stopped by %+v)", target, st)
		}
		counts[st.PC]++
		n := counts[st.PC]
		anchor := st.PC == target.PC && n == target.Hits
		m := Moment{Event: seg, Tid: st.Tid, PC: st.PC, Hits: n}
		if isArmed[st.PC] && (!anchor || target.Steps > 0) {
			if reason, ok := tl.wantedAt(st.Tid, st.PC); ok {
				last = &Stop{Reason: reason, Moment: m}
				if !isSite[st.PC] && proxy.Hits > 0 {
					p := proxy
					last.proxy = &p
				}
			}
		}
		if isSite[st.PC] {
			proxy = m
		}
		if anchor {
			break
		}
		if traps%1024 == 0 && tl.Progress != nil && !tl.Progress(seg, tl.index.Total()) {
			return nil, nil, ErrCancelled
		}
	}
	tl.ownBPs()
	return last, counts, nil
}

// viaProxy goes to proxy, then single-steps to the first arrival at pc:
// the moment of a stop there, named so that Goto reaches it with a counter
// and a few steps. ok is false if pc is not reached within maxNameSteps
// instructions (the caller then goes to the stop as it is named).
func (tl *Timeline) viaProxy(proxy Moment, pc uint64) (Moment, bool) {
	if err := tl.Goto(proxy); err != nil {
		return Moment{}, false
	}
	for n := 0; n < maxNameSteps; n++ {
		regs, err := tl.live.Regs(proxy.Tid)
		if err != nil {
			return Moment{}, false
		}
		if regs[trace.RIP] == pc {
			return tl.pos, n > 0 || tl.pos.Steps > 0
		}
		if _, err := tl.stepOnce(); err != nil || tl.pos.Event != proxy.Event {
			return Moment{}, false
		}
	}
	return Moment{}, false
}

// wantedAt says whether an arrival of thread tid at breakpoint address pc
// stops the current operation, and as what: the user's breakpoints always
// do when their filter agrees, temporary ones when theirs does.
func (tl *Timeline) wantedAt(tid int32, pc uint64) (Reason, bool) {
	if tl.userStop(tid, pc) {
		return ReasonBreakpoint, true
	}
	if tl.isTemp(pc) && (tl.accept == nil || tl.accept(tid, pc)) {
		return ReasonStep, true
	}
	return "", false
}

// debugTL prints the counted searches' steps (REWIND_DEBUG=1).
var debugTL = os.Getenv("REWIND_DEBUG") != ""

// dbg prints one step of a counted search when debugTL is set.
func dbg(f string, a ...any) {
	if debugTL {
		fmt.Fprintf(os.Stderr, "%s tl: "+f+"\n", append([]any{time.Now().Format("15:04:05.000")}, a...)...)
	}
}
