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

// finishFrame runs until the frame at level returns to its caller.
func (s *Session) finishFrame(level int) (*timeline.Stop, error) {
	tid := s.stepThread()
	frames, err := s.stack(tid)
	if err != nil {
		return nil, err
	}
	level = physicalFrame(frames, level)
	if level+1 >= len(frames) {
		return nil, errors.New(`"finish" not meaningful in the outermost frame.`)
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
	tid := s.stepThread()
	frames, err := s.stack(tid)
	if err != nil {
		return nil, err
	}
	level = physicalFrame(frames, level)
	if level+1 >= len(frames) {
		return nil, errors.New(`"reverse-finish" not meaningful in the outermost frame.`)
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
