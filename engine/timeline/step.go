package timeline

// Single steps, of the next thread to run or of a chosen one; a step of a
// thread waiting in a system call takes it out of the call (its restart
// and return) in one step.

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

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
	return slices.Contains(tl.userBPs(), pc) || slices.Contains(tl.temps(), pc) || slices.Contains(tl.liveExtra, pc)
}
