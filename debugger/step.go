package debugger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Source-level stepping, with gdb's semantics. Forwards, a step
// single-steps only inside the current line and runs over calls with a
// temporary breakpoint at the return address; backwards, it replays with
// temporary breakpoints at the statement starts of the function and keeps
// the last hit in the same frame (same CFA), so no direction single-steps
// through callees.

// maxLineSteps bounds the instructions one source step may single-step
// inside one line (a line that loops on itself).
const maxLineSteps = 1_000_000

// pcOf returns the current pc of a thread.
func (s *Session) pcOf(tid int32) (uint64, error) {
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return 0, err
	}
	return regs[trace.RIP], nil
}

// cfaOf returns the frame key of a thread's innermost physical frame: the
// identity of the frame, together with the function, as gdb's frame id.
// Deeper frames have smaller keys.
func (s *Session) cfaOf(tid int32) (int64, error) {
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return 0, err
	}
	fs := s.symbols().Unwind(dwarfRegs(regs), s.mem(), 1)
	if len(fs) == 0 {
		return 0, errors.New("cannot unwind")
	}
	return s.frameKey(tid, fs[0].CFA), nil
}

// runOverCall runs a thread that has just entered a call back to the
// return address in the frame of key cfa: how steps go over calls
// without single-stepping through them.
// A breakpoint in the call with hits left to ignore is passed, its count
// spent, as gdb's next does.
func (s *Session) runOverCall(tid int32, cfa int64) (*timeline.Stop, error) {
	ret, err := s.returnAddress(tid)
	if err != nil {
		return nil, err
	}
	for {
		st, err := s.tl.ContinueWith([]uint64{ret}, s.inFrame(tid, cfa))
		if err != nil || st.Reason != timeline.ReasonBreakpoint {
			return st, err
		}
		id := s.breakpointAt(st)
		if id == 0 || s.habits.ignore[id] <= 0 {
			return st, nil
		}
		s.habits.ignore[id]--
		s.countHit(id)
	}
}

// inFrame is the filter of a temporary breakpoint that counts only when
// the code thread tid runs is in the frame of the given key (not a
// recursive call, not another thread or goroutine).
func (s *Session) inFrame(tid int32, key int64) timeline.Filter {
	same := s.sameRunner(tid)
	return func(tt int32, _ uint64) bool {
		if !same(tt) {
			return false
		}
		c, err := s.cfaOf(tt)
		return err == nil && c == key
	}
}

// sameRunner returns a test of whether thread tt runs what thread tid runs
// now: the same thread, or in Go code the same goroutine. Go's scheduler
// moves a goroutine to another thread when it comes back from a system
// call that lost its P (sysmon hands the P over while the call blocks), so
// a step over fmt.Println may end on another thread than it began.
func (s *Session) sameRunner(tid int32) func(tt int32) bool {
	g, _, ok := s.goroutine(tid)
	if !ok {
		return func(tt int32) bool { return tt == tid }
	}
	return func(tt int32) bool {
		if g2, _, ok := s.goroutine(tt); ok {
			return g2 == g
		}
		return tt == tid // r14 does not hold a g here (assembly, C)
	}
}

// follow returns the thread a step goes on with after a stop: the thread
// of the stop when it runs the same goroutine (sameRunner), else tid.
func follow(tid int32, st *timeline.Stop, same func(int32) bool) int32 {
	if st != nil && st.Moment.Tid != 0 && st.Moment.Tid != tid && same(st.Moment.Tid) {
		return st.Moment.Tid
	}
	return tid
}

// goroutine returns the g a thread runs in Go code (r14 on amd64) and the
// top of its stack (g.stack.hi); ok is false outside a goroutine stack
// (g0, a signal stack, C code) and in programs that are not Go.
func (s *Session) goroutine(tid int32) (g, hi uint64, ok bool) {
	if !s.isGo() {
		return 0, 0, false
	}
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return 0, 0, false
	}
	var b [16]byte
	if _, err := s.mem().ReadAt(b[:], regs[trace.R14]); err != nil {
		return 0, 0, false
	}
	lo, hi := binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
	if sp := regs[trace.RSP]; lo == 0 || sp < lo || sp >= hi {
		return 0, 0, false
	}
	return regs[trace.R14], hi, true
}

// frameKey turns a CFA into a frame identity that survives Go's stack
// copying: a goroutine's stack moves when it grows, so in Go code the key
// is the CFA's offset from the top of the goroutine's stack. Elsewhere it
// is the CFA.
func (s *Session) frameKey(tid int32, cfa uint64) int64 {
	if _, hi, ok := s.goroutine(tid); ok && cfa <= hi {
		return int64(cfa) - int64(hi)
	}
	return int64(cfa)
}

// isGo says whether the program is a Go program.
func (s *Session) isGo() bool {
	if s.goProgram == 0 {
		s.goProgram = -1
		if _, ok := s.symbols().Lookup("runtime.main"); ok {
			s.goProgram = 1
		}
	}
	return s.goProgram == 1
}

// stepThread is the thread a source step moves: the one of the current
// moment.
func (s *Session) stepThread() int32 { return s.currentThread() }

// stepLine implements step (into) and next.
func (s *Session) stepLine(into bool) (*timeline.Stop, error) {
	tid := s.stepThread()
	pc, err := s.pcOf(tid)
	if err != nil {
		return nil, err
	}
	t := s.symbols()
	lo, hi, ok := t.LineRange(pc)
	if !ok || t.FunctionAt(pc) == nil {
		// No line information here: run to the caller, as gdb's "step"
		// does for a function without line numbers.
		st, err := s.finishFrame(0)
		if err != nil {
			return nil, fmt.Errorf("no line number information here and no caller to return to (use stepi or continue): %w", err)
		}
		return st, nil
	}
	if st, done, err := s.stepHidden(tid, pc, into); done {
		if err != nil || into || st.Reason != timeline.ReasonStep {
			return st, err
		}
		// Over the inlined call: on from where it ended, unless that is
		// the start of a line.
		if pc, err = s.pcOf(tid); err != nil {
			return st, nil
		}
		if rowStart(t, pc) {
			return st, nil
		}
		if lo, hi, ok = t.LineRange(pc); !ok {
			return st, nil
		}
	}
	line, _ := t.LineAt(pc)
	cfa, err := s.cfaOf(tid)
	if err != nil {
		return nil, err
	}
	// The frame being stepped, as gdb's step_frame_id: the physical
	// frame (cfa) and the function shown in it (an inlined call, unless
	// hidden at its start).
	chain := t.FunctionsAt(pc)
	shown := shownFrame(chain[min(s.hiddenAt(tid, pc), len(chain)):])
	same := s.sameRunner(tid)
	for n := 0; n < maxLineSteps; n++ {
		st, err := s.tl.StepInstruction()
		if err != nil {
			return nil, err
		}
		if st.Reason != timeline.ReasonStep {
			return st, nil
		}
		pc, err = s.pcOf(tid)
		if err != nil {
			// The thread is gone (it exited): stop where we are.
			return st, nil
		}
		if pc >= lo && pc < hi {
			continue
		}
		now, err := s.cfaOf(tid)
		if err != nil {
			return st, nil
		}
		switch {
		case now < cfa:
			// A call: into a function with line information for step,
			// else over it to the return address in this frame.
			if s.steppedOntoBreakpoint(st, tid, pc) {
				// A breakpoint on the callee's first instruction (no
				// prologue, as at -O2): stepped onto, it is hit, as
				// in gdb and as reverse-next finds it.
				return st, nil
			}
			fn := t.FunctionAt(pc)
			if into && fn != nil && pc == fn.Low {
				if fn.Entry == pc {
					return st, nil
				}
				return s.tl.ContinueWith([]uint64{fn.Entry}, s.inFrame(tid, now))
			}
			st, err = s.runOverCall(tid, cfa)
			if err != nil || st.Reason != timeline.ReasonStep {
				return st, err
			}
			tid = follow(tid, st, same)
			if pc, err = s.pcOf(tid); err != nil {
				return st, nil
			}
			if pc >= lo && pc < hi {
				continue
			}
			now = cfa // back at the return address, in the frame stepped
		case now > cfa:
			// Returned into the caller. gdb stops there only at the
			// start of a line (below: the call ended its line's row);
			// in the middle of the line of the call it steps on with
			// that line's range, in the caller's frame, into a later
			// call of the line for step.
			cfa = now
		}
		// gdb's checks of inlined calls (infrun.c, "calls to inlined
		// functions"), in the physical frame being stepped.
		chain := t.FunctionsAt(pc)
		skip := inlineStarts(chain, pc)
		cur := shownFrame(chain[skip:])
		sameFrame := now == cfa && cur.same(shown)
		if sameFrame && skip > 0 {
			// Into inlined calls that start here, from the frame being
			// stepped: made on the line being stepped, step goes into
			// the outermost and next runs over it; made on another
			// line, both stop at the call site, the calls hidden.
			call := chain[skip-1]
			if call.CallLine != line.Line || call.CallFile != line.File {
				return st, nil
			}
			if into {
				s.inlineNext = &inlineHide{tid: tid, pc: pc, n: skip - 1}
				return st, nil
			}
			continue
		}
		if now == cfa && !sameFrame && cur.fn != nil && cur.fn.Inlined && steppedInFrom(chain[skip:], shown) {
			// Inside an inlined call made from the frame being stepped:
			// step stops in it, next runs through it.
			if into {
				return st, nil
			}
			continue
		}
		l, ok := t.LineAt(pc)
		if !ok {
			return st, nil
		}
		if l.Addr == pc && (l.Line != line.Line || l.File != line.File) {
			if l.Stmt && l.Line != 0 {
				return st, nil
			}
			if sameFrame {
				// Not a statement, in the same frame: gdb ignores the
				// row and steps on with the range it had.
				continue
			}
		}
		// The same line again, or the middle of another line: gdb keeps
		// stepping with the range of the line we are in.
		if nlo, nhi, ok := t.LineRange(pc); ok {
			lo, hi = nlo, nhi
			if l.Line != 0 {
				line = l
			}
		}
		if !cur.same(shown) && cur.fn != nil {
			s.stepFrame = fmt.Sprintf("%s@%#x", cur.fn.Name, cfa)
		}
		shown = cur
	}
	return nil, fmt.Errorf("step: gave up after %d instructions in one line", maxLineSteps)
}

// steppedOntoBreakpoint says whether a single step st arrived at pc on an
// enabled breakpoint that stops there (its condition holds, it has no
// hits left to ignore: an ignored hit is counted and spent, as gdb does),
// which is then hit, as gdb reports a step onto a breakpoint; st becomes
// the breakpoint's stop.
func (s *Session) steppedOntoBreakpoint(st *timeline.Stop, tid int32, pc uint64) bool {
	b := s.enabledBreakpointAt(pc)
	if b == nil || !s.breakpointStops(tid, pc) {
		return false
	}
	if s.habits.ignore[b.id] > 0 {
		s.habits.ignore[b.id]--
		s.countHit(b.id)
		return false
	}
	st.Reason = timeline.ReasonBreakpoint
	return true
}

// stepOutOf single-steps until the pc leaves an inlined function's code,
// running over calls.
func (s *Session) stepOutOf(fn *dwarf.Function) (*timeline.Stop, error) {
	tid := s.stepThread()
	cfa, err := s.cfaOf(tid)
	if err != nil {
		return nil, err
	}
	same := s.sameRunner(tid)
	for n := 0; n < maxLineSteps; n++ {
		r, ok, err := s.stepInFrame(tid, cfa, same)
		if !ok {
			return r.st, err
		}
		tid = r.tid
		if !fn.Contains(r.pc) || r.key > cfa {
			return r.st, nil
		}
	}
	return nil, fmt.Errorf("finish: gave up after %d instructions", maxLineSteps)
}

// stepped is where one step in a frame arrived.
type stepped struct {
	st  *timeline.Stop
	tid int32  // the thread to go on with (follow)
	pc  uint64 // its pc
	key int64  // its frame key (cfaOf)
	// overCall says the step entered a call, run to its return.
	overCall bool
}

// stepInFrame single-steps thread tid in the frame of key cfa, running
// over a call the step enters. ok is false when the motion ends at r.st:
// a stop that is no step, or the thread gone.
func (s *Session) stepInFrame(tid int32, cfa int64, same func(int32) bool) (r stepped, ok bool, err error) {
	r.tid = tid
	if r.st, err = s.tl.StepInstruction(); err != nil || r.st.Reason != timeline.ReasonStep {
		return r, false, err
	}
	if r.pc, err = s.pcOf(tid); err != nil {
		return r, false, nil
	}
	if r.key, err = s.cfaOf(tid); err != nil {
		return r, false, nil
	}
	if r.key >= cfa {
		return r, true, nil
	}
	if r.st, err = s.runOverCall(tid, cfa); err != nil || r.st.Reason != timeline.ReasonStep {
		return r, false, err
	}
	r.tid, r.key, r.overCall = follow(tid, r.st, same), cfa, true
	if r.pc, err = s.pcOf(r.tid); err != nil {
		return r, false, nil
	}
	return r, true, nil
}

// stepInSelected is step/next in the selected frame, as gdb: with an outer
// frame selected (after up), the inner frames run to their return first.
func (s *Session) stepInSelected(into bool) (*timeline.Stop, error) {
	if s.frame > 0 {
		level := s.frame
		s.frame = 0
		frames, err := s.stack(s.stepThread())
		if err == nil && level < len(frames) && physicalFrame(frames, 0) < level {
			st, err := s.finishFrame(level - 1)
			if err != nil || st.Reason != timeline.ReasonStep {
				return st, err
			}
		}
	}
	return s.stepLine(into)
}

// returnAddress reads the return address of a thread's innermost frame.
func (s *Session) returnAddress(tid int32) (uint64, error) {
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return 0, err
	}
	fs := s.symbols().Unwind(dwarfRegs(regs), s.mem(), 2)
	if len(fs) < 2 {
		return 0, errors.New("cannot find the caller of this frame")
	}
	return fs[1].PC, nil
}

// frameEntry is the first instruction of a physical frame's function,
// from its debug information or else its ELF symbol; 0 when unknown.
func (s *Session) frameEntry(f dwarf.Frame) uint64 {
	if f.Function != nil {
		return f.Function.Low
	}
	if _, off, ok := s.symbols().At(f.PC); ok {
		return f.PC - off
	}
	return 0
}

// physicalFrame returns the index of the first non-inlined frame at or
// above level, which owns the registers.
func physicalFrame(frames []dwarf.Frame, level int) int {
	for level < len(frames)-1 && frames[level].Inlined {
		level++
	}
	return level
}

// frameToLeave is the thread, its stack and the physical level of the
// frame at level, which finish and reverse-finish leave: the outermost
// frame has no caller to go to, as gdb says.
func (s *Session) frameToLeave(cmd string, level int) (int32, []dwarf.Frame, int, error) {
	tid := s.stepThread()
	frames, err := s.stack(tid)
	if err != nil {
		return 0, nil, 0, err
	}
	level = physicalFrame(frames, level)
	if level+1 >= len(frames) {
		return 0, nil, 0, fmt.Errorf("%q not meaningful in the outermost frame.", cmd)
	}
	return tid, frames, level, nil
}

// finishFrame runs until the frame at level returns to its caller.
func (s *Session) finishFrame(level int) (*timeline.Stop, error) {
	tid, frames, level, err := s.frameToLeave("finish", level)
	if err != nil {
		return nil, err
	}
	caller := frames[level+1]
	// Back in the caller: its frame is the innermost again.
	return s.tl.ContinueRun(timeline.Run{Temp: []uint64{caller.PC}, IgnoreWatchpoints: true,
		Accept: s.inFrame(tid, s.frameKey(tid, caller.CFA))})
}

// until runs like next but does not go back in loops: a stop at a line
// before the starting point in the same frame continues.
func (s *Session) until() (*timeline.Stop, error) {
	tid := s.stepThread()
	start, err := s.pcOf(tid)
	if err != nil {
		return nil, err
	}
	cfa, err := s.cfaOf(tid)
	if err != nil {
		return nil, err
	}
	same := s.sameRunner(tid)
	for i := 0; i < 10000; i++ {
		st, err := s.stepLine(false)
		if err != nil || st.Reason != timeline.ReasonStep {
			return st, err
		}
		tid = follow(tid, st, same)
		pc, err := s.pcOf(tid)
		if err != nil {
			return st, nil
		}
		if c, err := s.cfaOf(tid); err != nil || c != cfa || pc > start {
			return st, nil
		}
	}
	return nil, errors.New("until: the loop did not end")
}

// advance runs to a location, or until the current frame returns.
func (s *Session) advance(addrs []uint64) (*timeline.Stop, error) {
	tid := s.stepThread()
	frames, err := s.stack(tid)
	if err != nil {
		return nil, err
	}
	temp := append([]uint64(nil), addrs...)
	var caller *dwarf.Frame
	var want int64
	if p := physicalFrame(frames, 0); p+1 < len(frames) {
		caller = &frames[p+1]
		temp = append(temp, caller.PC)
		want = s.frameKey(tid, caller.CFA)
	}
	same := s.sameRunner(tid)
	return s.tl.ContinueWith(temp, func(tt int32, pc uint64) bool {
		if !same(tt) {
			return false
		}
		if caller != nil && pc == caller.PC {
			c, err := s.cfaOf(tt)
			return err == nil && c == want
		}
		return true
	})
}

// blockStarts returns the addresses where a line block starts in a
// function: the temporary breakpoints of reverse steps. A statement row
// starts one unless the row just before it is of the same line (where a
// forward step goes on); rows that are no statement count as that row,
// as at -O2 a loop's condition after its body's rows.
func blockStarts(t *dwarf.Table, fn *dwarf.Function) []uint64 {
	out := []uint64{fn.Low}
	for _, r := range fn.Ranges {
		for _, l := range t.StmtStarts(r[0], r[1]) {
			if prev, ok := t.LineAt(l.Addr - 1); !ok || l.Addr == r[0] || prev.Line != l.Line || prev.File != l.File {
				out = append(out, l.Addr)
			}
		}
	}
	return out
}

// functionCode disassembles a function's ranges once for the reverse
// motions' tables of its calls and jumps.
func (s *Session) functionCode(t *dwarf.Table, fn *dwarf.Function) []dwarf.Instruction {
	var out []dwarf.Instruction
	for _, r := range fn.Ranges {
		insts, err := t.Disassemble(s.mem(), r[0], int(r[1]-r[0]))
		if err != nil {
			continue
		}
		for _, in := range insts {
			if in.Addr >= r[1] {
				break
			}
			out = append(out, in)
		}
	}
	return out
}

// callReturns returns the return addresses of the calls in a function's
// code into code that may have line information, for reverse-step to
// enter.
func callReturns(t *dwarf.Table, code []dwarf.Instruction) []uint64 {
	var out []uint64
	for _, in := range code {
		if !strings.HasPrefix(in.Text, "call") {
			continue
		}
		if in.Target != 0 {
			if callee := t.FunctionAt(in.Target); callee == nil {
				continue // a PLT stub or a library without line numbers
			}
		}
		out = append(out, in.Addr+uint64(in.Len))
	}
	return out
}
