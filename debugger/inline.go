package debugger

import (
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

// Inlined calls at their first instruction, as gdb shows them. Where the
// code of an inlined call starts, the program has not entered it yet in
// the user's eyes: gdb shows the calling function at the line of the call
// (skip_inline_frames), and `step` then enters the inlined function
// without running anything. So a stop (a breakpoint on the caller, the end
// of a finish, a watchpoint) at such an address hides those inlined
// frames; `step` unhides one, `next` runs over the inlined call, and a
// step that arrives at the start of an inlined call stops there showing
// it. A breakpoint set on the inlined function by name shows it.

// inlineHide is what a stop hides: the n innermost inlined frames of
// thread tid at pc.
type inlineHide struct {
	tid int32
	pc  uint64
	n   int
}

// hiddenAt returns how many inlined frames the stop hides for thread tid
// at pc.
func (s *Session) hiddenAt(tid int32, pc uint64) int {
	if h := s.inline; h.tid == tid && h.pc == pc {
		return h.n
	}
	return 0
}

// inlineStarts counts the inlined functions at the head of chain
// (innermost first) whose code starts at pc.
func inlineStarts(chain []*dwarf.Function, pc uint64) int {
	n := 0
	for _, fn := range chain {
		if !startsAt(fn, pc) {
			break
		}
		n++
	}
	return n
}

// startsAt says whether an inlined call's code starts at pc, as gdb's
// skip_inline_frames tells it: its entry, or the start of one of its
// address ranges that the code before does not belong to (-O2 splits an
// inlined call into pieces; execution entering a later piece from other
// code enters the call again).
func startsAt(fn *dwarf.Function, pc uint64) bool {
	return fn.Inlined && (fn.Low == pc || (fn.Contains(pc) && !fn.Contains(pc-1)))
}

// sameInline says whether a and b are the same inlined call.
func sameInline(a, b *dwarf.Function) bool {
	return a.Name == b.Name && a.Low == b.Low && a.CallLine == b.CallLine && a.CallFile == b.CallFile
}

// noteInline sets what the stop st hides, after a motion: what the motion
// asked for (a step into an inlined call, or out of a hidden one), else
// gdb's rule at the thread's pc.
func (s *Session) noteInline(st *timeline.Stop) {
	if next := s.inlineNext; next != nil {
		s.inline, s.inlineNext = *next, nil
		return
	}
	tid := st.Moment.Tid
	if tid == 0 {
		tid = s.currentThread()
	}
	pc, err := s.pcOf(tid)
	if err != nil {
		s.inline = inlineHide{}
		return
	}
	chain := s.symbols().FunctionsAt(pc)
	n := inlineStarts(chain, pc)
	if st.Reason == timeline.ReasonBreakpoint {
		// A breakpoint on a line or an address stops where it says (a
		// line of the inlined function, as gdb's location symbol); one
		// on an inlined function by name stops in it.
		if b := s.enabledBreakpointAt(pc); b != nil {
			if !isFunctionSpec(b.spec) {
				// The function the line is in: the innermost, or a
				// caller whose line makes the call.
				l, _ := s.symbols().LineAt(pc)
				n = max(specLevel(chain, n, l.Line, b.spec), 0)
			}
			for i := 0; i < n; i++ {
				if chain[i].NamedBy(b.spec) {
					n = i
					break
				}
			}
		}
	}
	s.inline = inlineHide{tid: tid, pc: pc, n: n}
}

// stepHidden does step or next where the stop hides inlined frames: step
// enters the innermost hidden one without running; next runs over the
// outermost hidden call. done is false when nothing is hidden here.
func (s *Session) stepHidden(tid int32, pc uint64, into bool) (st *timeline.Stop, done bool, err error) {
	n := s.hiddenAt(tid, pc)
	if n == 0 {
		return nil, false, nil
	}
	if into {
		s.inlineNext = &inlineHide{tid: tid, pc: pc, n: n - 1}
		return &timeline.Stop{Reason: timeline.ReasonStep, Moment: s.tl.Now()}, true, nil
	}
	chain := s.symbols().FunctionsAt(pc)
	if n > len(chain) {
		return nil, false, nil
	}
	st, err = s.stepOutOf(chain[n-1])
	return st, true, err
}

// isFunctionSpec says whether a breakpoint location names a function (not
// LINE, FILE:LINE or *ADDR).
func isFunctionSpec(spec string) bool {
	if spec == "" || strings.HasPrefix(spec, "*") {
		return false
	}
	last := spec[strings.LastIndexByte(spec, ':')+1:]
	_, err := strconv.Atoi(last)
	return err != nil
}
