package timeline

import (
	"errors"
	"fmt"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// ErrNoWrite says a dataflow search found no write (or access) to the
// location in the direction asked; the timeline is back where it was.
var ErrNoWrite = errors.New("no such write")

// PreviousWrite goes back to the last write to w before now (the moment
// just after the writing instruction, or after the system call that wrote
// it), as reverse-continue with only that watchpoint: the user's
// breakpoints and watchpoints do not stop it. Every write counts, also one
// that stores the value already there.
func (tl *Timeline) PreviousWrite(w replay.Watchpoint) (*Stop, error) {
	return tl.onlyWatch(w, true, func() (*Stop, error) { return tl.ReverseContinue() })
}

// NextWrite goes forwards to the next write to w (w.ReadWrite false) or the
// next access of it (w.ReadWrite true: x86 debug registers trap reads and
// writes together; there is no read-only mode).
func (tl *Timeline) NextWrite(w replay.Watchpoint) (*Stop, error) {
	return tl.onlyWatch(w, false, func() (*Stop, error) { return tl.Continue() })
}

// onlyWatch runs op with w as the only watchpoint and no breakpoints, then
// gives the user's back. A stop that is not at w (the start or end of the
// recording, a signal) is ErrNoWrite and the timeline returns to where it
// was.
func (tl *Timeline) onlyWatch(w replay.Watchpoint, backwards bool, op func() (*Stop, error)) (*Stop, error) {
	back := tl.pos
	hidden, temp, accept, quiet, watches := tl.hidden, tl.temp, tl.accept, tl.quiet, tl.watches
	restore := func() {
		tl.hidden, tl.temp, tl.accept, tl.quiet, tl.watches = hidden, temp, accept, quiet, watches
		tl.wcounts = make([]int, len(tl.watches))
	}
	tl.hidden, tl.temp, tl.accept, tl.quiet, tl.watches = true, nil, nil, false, []replay.Watchpoint{w}
	tl.refreshValues()
	if tl.atSegmentStart() {
		tl.resetCounts()
	} else if !backwards {
		// Moments count w's traps from the start of the segment.
		if err := tl.gotoTrapping(tl.pos); err != nil {
			restore()
			tl.pos = Moment{Event: -1}
			return nil, errors.Join(err, tl.Goto(back))
		}
	}
	st, err := op()
	restore()
	if err == nil && st.Reason != ReasonWatchpoint {
		err = ErrNoWrite
	}
	if err != nil {
		tl.pos = Moment{Event: -1}
		if gerr := tl.Goto(back); gerr != nil {
			return nil, errors.Join(err, gerr)
		}
		return nil, err
	}
	// Counts of the user's breakpoints and watchpoints from the segment
	// start, for the moments of the next commands.
	if len(tl.bps) > 0 || len(tl.watches) > 0 {
		if err := tl.Goto(tl.pos); err != nil {
			return nil, err
		}
	}
	tl.refreshValues()
	return st, nil
}

// RegisterWrite is the instruction that last set a register.
type RegisterWrite struct {
	Moment   Moment // just after the instruction
	PC       uint64 // the instruction
	Old, New uint64
}

// PreviousRegisterWrite finds the last instruction before now that changed
// general register reg (a trace.Regs index) of the current thread, by
// single-stepping forwards from the anchor of the current moment and, when
// the change is not there, from earlier anchors, within the current event
// segment and at most maxSteps instructions. It moves there; when not found
// it stays where it was and says why.
func (tl *Timeline) PreviousRegisterWrite(reg, maxSteps int) (*RegisterWrite, error) {
	back := tl.pos
	cur := tl.pos
	fail := func(err error) (*RegisterWrite, error) {
		tl.pos = Moment{Event: -1}
		if gerr := tl.Goto(back); gerr != nil {
			return nil, errors.Join(err, gerr)
		}
		return nil, err
	}
	stepped := 0
	for {
		anchor := cur
		anchor.Steps = 0
		if err := tl.Goto(anchor); err != nil {
			return fail(err)
		}
		regs, err := tl.live.Regs(cur.Tid)
		if err != nil {
			return fail(err)
		}
		vals, pcs := []uint64{regs[reg]}, []uint64{regs[trace.RIP]}
		for i := 0; i < cur.Steps; i++ {
			if _, err := tl.stepOnce(); err != nil {
				return fail(err)
			}
			if r, err := tl.live.Regs(cur.Tid); err == nil {
				vals, pcs = append(vals, r[reg]), append(pcs, r[trace.RIP])
			}
			stepped++
			if stepped%1024 == 0 && tl.Progress != nil && !tl.Progress(int64(stepped), int64(maxSteps)) {
				return fail(ErrCancelled)
			}
		}
		for i := len(vals) - 1; i > 0; i-- {
			if vals[i] != vals[i-1] {
				m := anchor
				m.Steps = i
				if err := tl.Goto(m); err != nil {
					return fail(err)
				}
				return &RegisterWrite{Moment: tl.pos, PC: pcs[i-1], Old: vals[i-1], New: vals[i]}, nil
			}
		}
		if anchor.Hits == 0 {
			return fail(fmt.Errorf("%s was not changed by an instruction since event #%d began (the value comes from that event or before it): %w",
				trace.RegNames[reg], anchor.Event, ErrNoWrite))
		}
		if stepped >= maxSteps {
			return fail(fmt.Errorf("%s was not changed within the last %d instructions: %w", trace.RegNames[reg], stepped, ErrNoWrite))
		}
		prev, err := tl.previous(anchor)
		if err != nil {
			return fail(err)
		}
		if prev.Event != anchor.Event {
			return fail(fmt.Errorf("%s was not changed by an instruction since event #%d began: %w", trace.RegNames[reg], anchor.Event, ErrNoWrite))
		}
		// prev is the instruction before the anchor: include the step
		// from it onto the anchor.
		prev.Steps++
		cur = prev
	}
}

// NextRegisterWrite single-steps the current thread forwards, at most
// maxSteps instructions (across events, whose system calls may set it),
// to the first instruction that changes general register reg, and stays
// there; when not found it goes back to where it was and says why.
func (tl *Timeline) NextRegisterWrite(reg, maxSteps int) (*RegisterWrite, error) {
	back := tl.pos
	tid := tl.pos.Tid
	regs, err := tl.live.Regs(tid)
	if err != nil {
		return nil, err
	}
	old, pc := regs[reg], regs[trace.RIP]
	for n := 1; n <= maxSteps; n++ {
		st, err := tl.StepThreadInstruction(tid)
		if err != nil {
			tl.pos = Moment{Event: -1}
			return nil, errors.Join(err, tl.Goto(back))
		}
		r, err := tl.live.Regs(tid)
		if err != nil {
			tl.pos = Moment{Event: -1}
			return nil, errors.Join(err, tl.Goto(back))
		}
		if r[reg] != old {
			return &RegisterWrite{Moment: st.Moment, PC: pc, Old: old, New: r[reg]}, nil
		}
		pc = r[trace.RIP]
		if n%1024 == 0 && tl.Progress != nil && !tl.Progress(int64(n), int64(maxSteps)) {
			tl.pos = Moment{Event: -1}
			return nil, errors.Join(ErrCancelled, tl.Goto(back))
		}
	}
	tl.pos = Moment{Event: -1}
	if err := tl.Goto(back); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s was not changed within the next %d instructions: %w", trace.RegNames[reg], maxSteps, ErrNoWrite)
}
