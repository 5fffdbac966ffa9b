package debugger

// Source-level motions backwards: reverse-step and reverse-next to the
// start of the line before (through calls made on it, back to the caller
// from a function's first line), and reverse-finish to the call of the
// selected frame. Forwards, and what both share: step.go.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// reverseLine implements reverse-next and reverse-step: back to the start
// of the line before (or of this line, from its middle), in this frame.
func (s *Session) reverseLine(into bool) (*timeline.Stop, error) {
	tid := s.stepThread()
	pc, err := s.pcOf(tid)
	if err != nil {
		return nil, err
	}
	t := s.symbols()
	fn := t.FunctionAt(pc)
	if fn == nil {
		st, err := s.reverseFinish(0)
		if err != nil {
			return nil, fmt.Errorf("no line number information here and no caller to go back to (use reverse-stepi or reverse-continue): %w", err)
		}
		return st, nil
	}
	if into {
		// Where inlined calls start, step stopped arriving with some of
		// them hidden, then entered them one by one without running;
		// reverse-step leaves them one by one, back to that arrival.
		chain := t.FunctionsAt(pc)
		if n := s.hiddenAt(tid, pc); n < inlineStarts(chain, pc) {
			arrived, err := s.arrivalHidden(tid, pc, fn, chain)
			if err != nil {
				return nil, err
			}
			if n < arrived {
				s.inlineNext = &inlineHide{tid: tid, pc: pc, n: n + 1}
				return &timeline.Stop{Reason: timeline.ReasonStep, Moment: s.tl.Now()}, nil
			}
		}
	}
	if pc == fn.Low || (pc == fn.Entry && s.straightTo(fn.Low, pc)) {
		// At the function's first instruction no line of this call comes
		// before: a search back in this frame (by its CFA, which the
		// previous call from the same caller had too) would land in that
		// previous call. gdb goes back to the caller. From the end of a
		// straight prologue (break FUNC at -O0) the line before is the
		// prologue's, from which gdb goes back to the caller too; the
		// search, trapping every line start of every earlier call, is
		// not needed.
		return s.backToCaller(tid, into)
	}
	cfa, err := s.cfaOf(tid)
	if err != nil {
		return nil, err
	}
	starts := blockStarts(t, fn)
	code := s.functionCode(t, fn)
	var rets []uint64
	if into {
		rets = callReturns(t, code)
	}
	isRet := map[uint64]bool{}
	for _, r := range rets {
		isRet[r] = true
	}
	if isRet[pc] {
		// Right after a call returned (after finish, say): the previous
		// instruction is the callee's return.
		return s.enterCallee(tid)
	}
	sameFrame := s.inFrame(tid, cfa)
	same := s.sameRunner(tid)
	joined := sameLineJumps(t, fn, code)
	targets := append(starts, rets...)
	if fn.Entry > fn.Low && pc > fn.Entry {
		// The first line starts after the prologue, where step stopped
		// entering the function (its row may start in the prologue, as
		// in a function written on one line).
		targets = append(targets, fn.Entry)
	}
	isTarget := map[uint64]bool{}
	for _, a := range targets {
		isTarget[a] = true
	}
	var st *timeline.Stop
	var at uint64
	search := true
	for n := 0; ; n++ {
		if n == maxLineSteps {
			return nil, fmt.Errorf("reverse step: gave up after %d line starts of one line", n)
		}
		if search {
			if st, err = s.tl.ReverseContinueWith(targets, sameFrame); err != nil || st.Reason != timeline.ReasonStep {
				return st, err
			}
			tid = follow(tid, st, same)
			if at, err = s.pcOf(tid); err != nil {
				return st, nil
			}
		}
		if at == fn.Low || at == fn.Entry || (isRet[at] && !rowStart(t, at)) {
			break // where step stops entering, whatever ran before
		}
		if !joined[at] {
			break // no jump of its own line comes here: a line start
		}
		goesOn, err := s.stepWentThrough(tid, at, cfa, into)
		if err != nil {
			return nil, err
		}
		if !goesOn {
			break
		}
		// A forward step came to this line start from the same line
		// and went on: so does the reverse one, from the instruction
		// before it (where stepWentThrough left it), which may be a
		// line start itself (a jump at the start of its line).
		st = &timeline.Stop{Reason: timeline.ReasonStep, Moment: s.tl.Now()}
		if at, err = s.pcOf(tid); err != nil {
			return st, nil
		}
		now, err := s.cfaOf(tid)
		search = err != nil || now != cfa || !isTarget[at]
	}
	switch {
	case isRet[at] && !rowStart(t, at):
		// A call returned after the last line start: step back into the
		// callee's last line. (Where the return starts a row of the
		// line table, step stopped coming out of the call: so does
		// reverse-step, going back to it.)
		return s.enterCallee(tid)
	case at == fn.Low && at != pc && fn.Entry != fn.Low:
		// Back at the entry, in the prologue (without one, as at -O2,
		// the entry is the first line's start, where gdb stops).
		return s.backToCaller(tid, into)
	case into && inlineStarts(t.FunctionsAt(at), at) > 0:
		// Where inlined calls start, step coming from the line before
		// stopped in the innermost (and from a call, entered it last).
		s.inlineNext = &inlineHide{tid: tid, pc: at}
	}
	return st, nil
}

// sameLineJumps returns the statement starts of a function that a jump
// from their own line reaches (a loop's condition at its end): reached
// that way, step goes on through them, so whether one stops a reverse step
// depends on the way it was reached (stepWentThrough).
func sameLineJumps(t *dwarf.Table, fn *dwarf.Function, code []dwarf.Instruction) map[uint64]bool {
	out := map[uint64]bool{}
	for _, in := range code {
		if !strings.HasPrefix(in.Text, "j") || !fn.Contains(in.Target) {
			continue
		}
		from, ok1 := t.LineAt(in.Addr)
		to, ok2 := t.LineAt(in.Target)
		if ok1 && ok2 && to.Addr == in.Target && from.Line == to.Line && from.File == to.File {
			out[in.Target] = true
		}
	}
	return out
}

// stepWentThrough reports whether a forward step (into) or next that
// came to the statement start at, in the frame of cfa, would have gone on
// through it: the instruction run before it in the frame is of the same
// line (gdb's step range grows with each row of the line it lands in, so
// whether a row start stops depends on the way it was reached). It goes
// back that one instruction to see; when the answer is no, it comes back
// to at.
func (s *Session) stepWentThrough(tid int32, at uint64, cfa int64, into bool) (bool, error) {
	t := s.symbols()
	l, ok := t.LineAt(at)
	if !ok || l.Addr != at {
		return false, nil
	}
	st, err := s.tl.ReverseStepInstruction()
	if err != nil {
		return false, err
	}
	back := func() (bool, error) {
		_, err := s.tl.StepInstruction()
		return false, err
	}
	if st.Reason != timeline.ReasonStep {
		return back() // the recording's start: nothing ran before
	}
	now, err := s.cfaOf(tid)
	if err != nil {
		return back()
	}
	var prev dwarf.Line
	switch {
	case now > cfa:
		// Came from the caller (a jump into the function): a new frame.
		return back()
	case now < cfa:
		// Returned from a call: step came out of the callee and stops
		// at a row start; next ran over the call, of the call's line.
		if into {
			return back()
		}
		if prev, ok = t.LineAt(at - 1); !ok {
			return back()
		}
	default:
		pc, err := s.pcOf(tid)
		if err != nil {
			return back()
		}
		if prev, ok = t.LineAt(pc); !ok {
			return back()
		}
	}
	if prev.Line != l.Line || prev.File != l.File {
		return back()
	}
	return true, nil
}

// rowStart reports whether pc starts a row of the line table that is a
// statement: where step stops coming out of a call.
func rowStart(t *dwarf.Table, pc uint64) bool {
	l, ok := t.LineAt(pc)
	return ok && l.Addr == pc && l.Stmt && l.Line != 0
}

// backToCaller goes back from a function's first instruction to the
// caller, at the start of the line of the call, as gdb's reverse-step and
// reverse-next do there (reverse-step goes into an earlier call of that
// line instead, where step came from); in a caller without line numbers it
// stays at the call.
func (s *Session) backToCaller(tid int32, into bool) (*timeline.Stop, error) {
	st, ok, err := s.backToCall(tid, 0)
	if !ok {
		st, err = s.tl.ReverseStepInstruction()
	}
	if err != nil {
		return nil, err
	}
	if st.Reason != timeline.ReasonStep {
		return st, nil
	}
	if s.symbols().FunctionAt(mustPC(s, tid)) == nil {
		return st, nil
	}
	return s.reverseToLineStart(tid, into)
}

// enterCallee goes back from a return address into the callee, to the
// start of its last line; a callee without line numbers is stepped over
// backwards instead.
func (s *Session) enterCallee(tid int32) (*timeline.Stop, error) {
	st, err := s.tl.ReverseStepInstruction()
	if err != nil {
		return nil, err
	}
	in, err := s.pcOf(tid)
	if err != nil {
		return st, nil
	}
	if s.symbols().FunctionAt(in) == nil {
		if st, err = s.reverseFinish(0); err != nil {
			return nil, err
		}
		return s.reverseLine(true)
	}
	return s.reverseToLineStart(tid, true)
}

func mustPC(s *Session, tid int32) uint64 {
	pc, _ := s.pcOf(tid)
	return pc
}

// reverseToLineStart goes back to the start of the line block pc is in,
// unless it is there already.
func (s *Session) reverseToLineStart(tid int32, into bool) (*timeline.Stop, error) {
	pc, err := s.pcOf(tid)
	if err != nil {
		return nil, err
	}
	if rowStart(s.symbols(), pc) {
		return &timeline.Stop{Reason: timeline.ReasonStep, Moment: s.tl.Now()}, nil
	}
	// (A row that is no statement, as at -O2 a call's own, is no start.)
	return s.reverseLine(into)
}

// reverseFinish goes back to the call of the frame at level: the stop is
// at the call instruction in the caller, as gdb's reverse-finish.
func (s *Session) reverseFinish(level int) (*timeline.Stop, error) {
	tid, frames, level, err := s.frameToLeave("reverse-finish", level)
	if err != nil {
		return nil, err
	}
	f := frames[level]
	entry := s.frameEntry(f)
	if entry == 0 {
		return nil, errors.New("cannot find the entry of this function")
	}
	if st, ok, err := s.backToCall(tid, level); ok {
		return st, err
	}
	want := s.frameKey(tid, f.CFA)
	same := s.sameRunner(tid)
	st, err := s.tl.ReverseContinueRun(timeline.Run{Temp: []uint64{entry}, IgnoreWatchpoints: true,
		Accept: func(tt int32, _ uint64) bool {
			// At the entry, before any push, the CFA is rsp+8.
			regs, err := s.tl.Session().Regs(tt)
			return same(tt) && err == nil && s.frameKey(tt, regs[trace.RSP]+8) == want
		}})
	if err != nil || st.Reason != timeline.ReasonStep {
		return st, err
	}
	return s.tl.ReverseStepInstruction()
}

// arrivalHidden is how many of the inlined calls starting at pc a forward
// step arriving there hid (stepLine): all of them, unless it came from
// the code of their caller, stepping the line they are called on, where it
// entered the outermost. fn is the function pc is in. The instruction
// the thread ran before pc is looked at, and the timeline comes back.
func (s *Session) arrivalHidden(tid int32, pc uint64, fn *dwarf.Function, chain []*dwarf.Function) (int, error) {
	skip := inlineStarts(chain, pc)
	if pc == fn.Low || pc == fn.Entry || skip == 0 {
		return skip, nil // entered by a call
	}
	t := s.symbols()
	cfa, err := s.cfaOf(tid)
	if err != nil {
		return skip, nil
	}
	here := s.tl.Now()
	st, err := s.tl.ReverseStepThreadInstruction(tid)
	if err != nil || st.Reason != timeline.ReasonStep {
		return skip, s.tl.Goto(here)
	}
	q, qerr := s.pcOf(tid)
	qcfa, cerr := s.cfaOf(tid)
	if err := s.tl.Goto(here); err != nil {
		return 0, err
	}
	if qerr != nil || cerr != nil || qcfa != cfa {
		return skip, nil
	}
	qchain := t.FunctionsAt(q)
	l, ok := t.LineAt(q)
	call := chain[skip-1]
	if ok && shownFrame(qchain[inlineStarts(qchain, q):]).same(shownFrame(chain[skip:])) && call.CallLine == l.Line && call.CallFile == l.File {
		return skip - 1, nil
	}
	return skip, nil
}

// frameShown identifies a frame as gdb's frame ids do inside one physical
// frame: the innermost function shown (an inlined call, or the function
// itself) and its depth.
type frameShown struct {
	fn    *dwarf.Function
	depth int
}

// shownFrame is the frame shown for a chain of functions (innermost
// first), hidden inlined calls taken out.
func shownFrame(chain []*dwarf.Function) frameShown {
	if len(chain) == 0 {
		return frameShown{}
	}
	return frameShown{chain[0], len(chain)}
}

// same says whether two frames of one physical frame are the same.
func (a frameShown) same(b frameShown) bool {
	if a.depth != b.depth || (a.fn == nil) != (b.fn == nil) {
		return false
	}
	return a.fn == b.fn || sameInline(a.fn, b.fn)
}

// steppedInFrom says whether the frame shown for chain is an inlined call
// made, directly or through other inlined calls, from the frame from: gdb's
// stepped_in_from.
func steppedInFrom(chain []*dwarf.Function, from frameShown) bool {
	for i := 1; i < len(chain); i++ {
		if shownFrame(chain[i:]).same(from) {
			return true
		}
		if !chain[i].Inlined {
			break
		}
	}
	return false
}
