package debugger

import (
	"fmt"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

// finish and reverse-finish out of an inlined call, as gdb does them. An
// inlined call has no return to run to: gdb steps in the frame the call
// is inlined into, over everything inlined in it, and stops at the first
// place that frame's own code is at: where one of its other inlined calls
// starts (shown at the line of that call, not in it, even where it starts
// right where the finished one ends), else where a line of its own code
// starts. Backwards, it stops at the start of the call it left.

// finishInline is finish (reverse false) or reverse-finish out of the
// inlined frame at level.
func (s *Session) finishInline(frames []dwarf.Frame, level int, reverse bool) (*timeline.Stop, error) {
	var callers []*dwarf.Function
	for j := level + 1; j < len(frames) && frames[j].Function != nil; j++ {
		callers = append(callers, frames[j].Function)
		if !frames[j].Inlined {
			break
		}
	}
	if len(callers) == 0 {
		return nil, fmt.Errorf("finish: no frame that the call of %s is inlined into", frames[level].Function.Name)
	}
	if reverse {
		return s.backOutOfInline(callers)
	}
	return s.outOfInline(callers)
}

// inCallers says where the code at pc is for a step in the frames
// callers (innermost first): in one of them, with k inlined calls starting
// at pc (ok), or deeper, inside an inlined call they make (not ok).
func inCallers(chain []*dwarf.Function, pc uint64, callers []*dwarf.Function) (k int, ok bool) {
	k = inlineStarts(chain, pc)
	if k >= len(chain) {
		return k, false
	}
	for _, c := range callers {
		if sameInline(chain[k], c) {
			return k, true
		}
	}
	return k, false
}

// outOfInline steps forwards until the code is the callers' own.
func (s *Session) outOfInline(callers []*dwarf.Function) (*timeline.Stop, error) {
	t := s.symbols()
	tid := s.stepThread()
	cfa, err := s.cfaOf(tid)
	if err != nil {
		return nil, err
	}
	same := s.sameRunner(tid)
	var lo, hi uint64 // the line being stepped through, once in the callers' code
	var line dwarf.Line
	for n := 0; n < maxLineSteps; n++ {
		r, ok, err := s.stepInFrame(tid, cfa, same)
		if !ok {
			return r.st, err
		}
		st, pc, now := r.st, r.pc, r.key
		tid = r.tid
		if !r.overCall && s.steppedOntoBreakpoint(st, tid, pc) {
			return st, nil
		}
		if pc >= lo && pc < hi {
			continue
		}
		chain := t.FunctionsAt(pc)
		if now > cfa {
			// Returned out of the function: on in its caller, as a step.
			cfa, callers = now, chain
		}
		k, ok := inCallers(chain, pc, callers)
		switch {
		case !ok:
			continue // still inside an inlined call
		case k > 0:
			return st, nil // another inlined call of the callers starts here
		}
		l, ok := t.LineAt(pc)
		if !ok || l.Line == 0 {
			return st, nil
		}
		if rowStart(t, pc) && (l.Line != line.Line || l.File != line.File) {
			return st, nil
		}
		// The middle of a line: gdb steps on with its range.
		if nlo, nhi, ok := t.LineRange(pc); ok {
			lo, hi = nlo, nhi
			line = l
		}
	}
	return nil, fmt.Errorf("finish: gave up after %d instructions", maxLineSteps)
}

// backOutOfInline goes back to where the callers' own code was last: the
// start of the inlined call the current one is in (or of an earlier one
// in between), else the start of one of their lines.
func (s *Session) backOutOfInline(callers []*dwarf.Function) (*timeline.Stop, error) {
	t := s.symbols()
	tid := s.stepThread()
	fn := callers[len(callers)-1]
	pc, err := s.pcOf(tid)
	if err != nil {
		return nil, err
	}
	if pc == fn.Low {
		// Nothing of this call comes before (see reverseLine).
		return s.backToCaller(tid, false)
	}
	cfa, err := s.cfaOf(tid)
	if err != nil {
		return nil, err
	}
	targets := append(blockStarts(t, fn), t.InlinedStarts(fn)...)
	sameFrame := s.inFrame(tid, cfa)
	same := s.sameRunner(tid)
	for {
		st, err := s.tl.ReverseContinueWith(targets, sameFrame)
		if err != nil || st.Reason != timeline.ReasonStep {
			return st, err
		}
		tid = follow(tid, st, same)
		if pc, err = s.pcOf(tid); err != nil {
			return st, nil
		}
		k, ok := inCallers(t.FunctionsAt(pc), pc, callers)
		if ok && (k > 0 || rowStart(t, pc) || pc == fn.Low) {
			return st, nil
		}
	}
}
