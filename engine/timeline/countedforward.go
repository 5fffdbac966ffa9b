package timeline

import (
	"errors"
	"slices"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Going forwards from a moment reached with a counter. Its counts are
// unknown there (a watchpoint set at a breakpoint after a busy loop, a
// write found by a counted search), and the next stop is named by counts
// from the segment's start: trapping them all again would stop at every
// write before the moment. continueCounted (counted.go) serves
// watchpoints alone; continueCountingAll serves breakpoints with them,
// temporary ones included, so that `continue`, `next` and `step` there
// take the time of the run, not of a million traps.

// continueCountingAll goes forwards from a moment reached with a counter
// (its counts unknown: a watchpoint set at a breakpoint after a busy
// loop), breakpoints and watchpoints armed, without trapping every write
// since the segment's start to name the stop: the segment is replayed to
// the moment with counters at the moment's address and at every armed
// breakpoint (user and temporary: a `next` from there), each breakpoint
// then stops at its next arrival, named by its count; a write is named by
// the arrivals at the moment's address, as a counted search names one.
// done is false when it does not apply (no breakpoint armed, an address
// no counter or trap can follow) or when the segment ends first: the
// caller goes on from where the live replay stands.
func (tl *Timeline) continueCountingAll() (*Stop, bool, error) {
	m := tl.pos
	bps := tl.armedBPs()
	if len(bps) == 0 || len(tl.watches) == 0 || tl.quiet || m.Watch != nil || m.Hits == 0 ||
		tl.guessed != m.Event || tl.live.Next() != m.Event {
		return nil, false, nil
	}
	seg, site := m.Event, m.PC
	if err := tl.seek(seg); err != nil {
		return nil, false, err
	}
	all := tl.mappedSites(append([]uint64{site}, bps...))
	if len(all) == 0 || all[0] != site {
		return nil, false, tl.gotoTrapping(m)
	}
	tl.pos, tl.countsAt = Moment{Event: -1}, -1
	sites, trapped, err := tl.openCountersWhere(all, site)
	if errors.Is(err, replay.ErrNoCounter) {
		return nil, false, tl.gotoTrapping(m)
	}
	if err != nil {
		return nil, false, err
	}
	fallback := func() (*Stop, bool, error) {
		if err := tl.live.CloseCounters(); err != nil {
			return nil, false, err
		}
		return nil, false, tl.gotoTrapping(m)
	}
	// The moment's address is counted, or trapped (a function too short
	// for a counter, where the user stopped): a write is then named from
	// the start instead.
	siteCounted := slices.Contains(sites, site)
	for _, a := range all {
		if _, isTrap := trapped[a]; !isTrap && !slices.Contains(sites, a) {
			return fallback() // inside a counted run: it could not stop
		}
	}
	// To the moment: its site counted, the breakpoints no counter takes
	// trapped (their counts are arrivals reached).
	if siteCounted {
		if err := tl.live.SetCounterStop(site, m.Hits); err != nil {
			return nil, false, err
		}
	}
	for {
		st, err := tl.live.Continue(seg + 1)
		if err != nil {
			return nil, false, err
		}
		if st == nil || tl.live.Next() != seg {
			return fallback()
		}
		if _, isTrap := trapped[st.PC]; isTrap && st.Kind == replay.StopBreakpoint {
			trapped[st.PC]++
			if st.PC == site && trapped[site] == m.Hits {
				break
			}
			continue
		}
		if st.Kind == replay.StopCounter && st.PC == site {
			break
		}
		return fallback()
	}
	// started counts the arrivals at each counted address whose
	// instruction ran; the steps after the anchor run the original code,
	// and are counted here.
	started := map[uint64]int{}
	for _, a := range sites {
		n, err := tl.live.CounterValue(a)
		if err != nil {
			return nil, false, err
		}
		started[a] = n
	}
	for i := 0; i < m.Steps; i++ {
		regs, err := tl.live.Regs(m.Tid)
		if err != nil {
			return nil, false, err
		}
		if _, ok := started[regs[trace.RIP]]; ok {
			started[regs[trace.RIP]]++
		}
		if _, err := tl.live.StepInstruction(); err != nil {
			return nil, false, err
		}
		if tl.live.Next() != seg {
			return fallback()
		}
		if regs, err := tl.live.Regs(m.Tid); err == nil {
			if _, isTrap := trapped[regs[trace.RIP]]; isTrap {
				trapped[regs[trace.RIP]]++ // reached by a step
			}
		}
	}
	regs, err := tl.live.Regs(m.Tid)
	if err != nil {
		return nil, false, err
	}
	// base is each counter's own count from here; the instruction the
	// thread stands at, if counted, is counted when it resumes.
	base := map[uint64]int{}
	for _, a := range sites {
		n, err := tl.live.CounterValue(a)
		if err != nil {
			return nil, false, err
		}
		if a == regs[trace.RIP] {
			n++
			started[a]++
		}
		base[a] = n
		if err := tl.live.SetCounterStop(a, n+1); err != nil {
			return nil, false, err
		}
	}
	tl.refreshValues()
	if err := tl.live.SetWatchpoints(tl.watches); err != nil {
		return nil, false, err
	}
	for {
		st, err := tl.live.Continue(seg + 1)
		if err != nil {
			return nil, false, err
		}
		if st == nil || tl.live.Next() != seg {
			// The segment ended first: on from the next one.
			if err := tl.live.CloseCounters(); err != nil {
				return nil, false, err
			}
			tl.resetCounts()
			tl.pos = Moment{Event: tl.live.Next(), Tid: tl.index.TidAt(tl.live.Next())}
			if err := tl.arm(); err != nil {
				return nil, false, err
			}
			if st != nil && st.Kind == replay.StopWatchpoint {
				return tl.stopFor(st), true, nil // a system call's write, at the event
			}
			return nil, false, nil
		}
		switch st.Kind {
		case replay.StopCounter, replay.StopBreakpoint:
			var hits int
			if _, isTrap := trapped[st.PC]; isTrap && st.Kind == replay.StopBreakpoint {
				trapped[st.PC]++
				hits = trapped[st.PC]
			} else if _, ok := base[st.PC]; ok && st.Kind == replay.StopCounter {
				hits = started[st.PC] + 1
				started[st.PC]++ // it runs when resumed
				base[st.PC]++
			} else {
				return fallback()
			}
			reason, wanted := tl.wantedAt(st.Tid, st.PC)
			if !wanted {
				if st.Kind == replay.StopCounter {
					if err := tl.live.SetCounterStop(st.PC, base[st.PC]+1); err != nil {
						return nil, false, err
					}
				}
				continue
			}
			if err := tl.live.CloseCounters(); err != nil {
				return nil, false, err
			}
			tl.counted++
			tl.pos = Moment{Event: seg, Tid: st.Tid, PC: st.PC, Hits: hits}
			if err := tl.arm(); err != nil {
				return nil, false, err
			}
			tl.refreshValues()
			return &Stop{Reason: reason, Moment: tl.pos}, true, nil
		case replay.StopWatchpoint:
			if st.Event {
				continue
			}
			if !siteCounted {
				return fallback()
			}
			c, err := tl.live.CounterValue(site)
			if err != nil {
				return nil, false, err
			}
			c += started[site] - base[site] // arrivals at site whose instruction ran
			if err := tl.live.CloseCounters(); err != nil {
				return nil, false, err
			}
			return tl.nameWrite(st, m, site, c, 1)
		default:
			return fallback()
		}
	}
}
