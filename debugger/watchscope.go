package debugger

import (
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// A watchpoint on an expression that reads a frame's locals ends with the
// frame, as gdb's does: a motion that takes the frame away stops where it
// went, the watchpoint is deleted and the stop says so. Forwards the frame
// goes at its return (the caller's return address, with the stack pointer
// back at the frame's CFA); backwards at the call that made it (the call
// instruction, the stack pointer at that CFA). Past either point the
// watched bytes belong to other frames, and a watch there would report
// their writes as the variable's.

// reasonScope is the stop reason of a motion ended by a watchpoint's frame
// (gdb/MI's "watchpoint-scope").
const reasonScope timeline.Reason = "watchpoint-scope"

// watchScope is the frame a watchpoint's expression lives in.
type watchScope struct {
	tid int32
	// key is the frame key (frameKey) of the frame's CFA: the stack pointer
	// before the call that made the frame, and after its return.
	key int64
	ret uint64 // the return address, in the caller
	// call is the call instruction in the caller (0 when it cannot be
	// told: no going back to it then, only the return).
	call uint64
}

// frameScope is the scope of the selected frame's locals: its physical
// frame (an inlined call's locals live in the function it is inlined
// into); nil at the outermost frame, which does not return.
func (s *Session) frameScope() *watchScope {
	tid := s.currentThread()
	frames, err := s.stack(tid)
	if err != nil || len(frames) == 0 {
		return nil
	}
	p := physicalFrame(frames, min(s.frame, len(frames)-1))
	if p+1 >= len(frames) {
		return nil
	}
	sc := &watchScope{tid: tid, key: s.frameKey(tid, frames[p].CFA), ret: frames[p+1].PC}
	if fn := frames[p].Function; fn != nil {
		sc.call = s.callBefore(sc.ret, fn.Low)
	}
	return sc
}

// gone says whether the scope's frame does not exist now: its thread's
// stack pointer is at or above the frame's CFA (before the call or after
// the return), or the thread does not exist.
func (s *Session) gone(sc *watchScope) bool {
	regs, err := s.tl.Session().Regs(sc.tid)
	if err != nil {
		return true
	}
	return s.frameKey(sc.tid, regs[trace.RSP]) >= sc.key
}

// atBoundary says whether thread tt at pc stands at the scope's end in
// the direction of a motion: the return address (forwards) or the call
// (backwards), with the stack pointer at the frame's CFA.
func (s *Session) atBoundary(sc *watchScope, reverse bool, tt int32, pc uint64) bool {
	want := sc.ret
	if reverse {
		want = sc.call
	}
	if tt != sc.tid || pc != want || want == 0 {
		return false
	}
	regs, err := s.tl.Session().Regs(tt)
	return err == nil && s.frameKey(tt, regs[trace.RSP]) == sc.key
}

// scopeStops returns the boundaries of the watchpoints' frames in a
// motion's direction, with their filter, for continue to stop at the
// first one it reaches.
func (s *Session) scopeStops(reverse bool) ([]uint64, timeline.Filter) {
	var addrs []uint64
	var scopes []*watchScope
	for _, w := range s.watches {
		if w.scope == nil {
			continue
		}
		a := w.scope.ret
		if reverse {
			a = w.scope.call
		}
		if a != 0 {
			addrs, scopes = append(addrs, a), append(scopes, w.scope)
		}
	}
	return addrs, func(tt int32, pc uint64) bool {
		for _, sc := range scopes {
			if s.atBoundary(sc, reverse, tt, pc) {
				return true
			}
		}
		return false
	}
}

// scoped wraps a motion: when it took a watchpoint's frame away, the stop
// moves to where the frame ended (the motion went past it), with reason
// watchpoint-scope; the watchpoint is deleted when the stop is described.
func (s *Session) scoped(reverse bool, op func() (*timeline.Stop, error)) func() (*timeline.Stop, error) {
	return func() (*timeline.Stop, error) {
		st, err := op()
		if err != nil || st == nil {
			return st, err
		}
		for _, w := range s.watches {
			if w.scope != nil && s.gone(w.scope) {
				return s.scopeEnd(w, st, reverse)
			}
		}
		return st, nil
	}
}

// scopeEnd finds the moment a motion that stopped at st left w's frame:
// where it stands when that is the boundary, else the nearest boundary
// back towards where the motion began. A frame left otherwise (longjmp,
// an exception, the thread's exit) ends at st itself.
func (s *Session) scopeEnd(w *watch, st *timeline.Stop, reverse bool) (*timeline.Stop, error) {
	sc := w.scope
	s.scopeEnded = w
	regs, err := s.tl.Session().Regs(sc.tid)
	if err == nil && s.atBoundary(sc, reverse, sc.tid, regs[trace.RIP]) {
		st.Reason = reasonScope
		return st, nil
	}
	target := sc.ret
	if reverse {
		target = sc.call
	}
	if target == 0 {
		st.Reason = reasonScope
		return st, nil
	}
	run := timeline.Run{Temp: []uint64{target}, IgnoreWatchpoints: true, Accept: func(tt int32, pc uint64) bool {
		return s.atBoundary(sc, reverse, tt, pc)
	}}
	// User breakpoints between the boundary and st stop the search too:
	// go on through them (a bounded number: each is a distinct hit).
	for range 1000 {
		var b *timeline.Stop
		if reverse {
			b, err = s.tl.ContinueRun(run)
		} else {
			b, err = s.tl.ReverseContinueRun(run)
		}
		if err != nil {
			break
		}
		switch b.Reason {
		case timeline.ReasonStep:
			b.Reason = reasonScope
			return b, nil
		case timeline.ReasonBreakpoint, timeline.ReasonSignal:
			continue
		}
		break
	}
	if err := s.tl.Goto(st.Moment); err != nil {
		return nil, err
	}
	st.Reason = reasonScope
	return st, nil
}

// endScope deletes the watchpoint whose frame ended a motion and names it
// in the stop.
func (s *Session) endScope(info *StopInfo) error {
	w := s.scopeEnded
	s.scopeEnded = nil
	if w == nil {
		return nil
	}
	info.Watch = &WatchInfo{ID: w.id, Expr: w.expr}
	for i, x := range s.watches {
		if x == w {
			s.watches = append(s.watches[:i], s.watches[i+1:]...)
			return s.syncWatches()
		}
	}
	return nil
}
