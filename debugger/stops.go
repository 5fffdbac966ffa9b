package debugger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/debugger/expr"
	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// describeStop fills the JSON stop object: where (function, file, line of
// the innermost frame, inlined calls included) and why.
func (s *Session) describeStop(st *timeline.Stop) *StopInfo {
	m := st.Moment
	tid := m.Tid
	if tid == 0 {
		tid = s.currentThread()
	}
	info := &StopInfo{Reason: string(st.Reason), Event: m.Event, Thread: tid, Moment: m.String()}
	s.moments[info.Moment] = m
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		info.PC = fmt.Sprintf("%#x", m.PC)
		return info
	}
	pc := regs[trace.RIP]
	info.PC = fmt.Sprintf("%#x", pc)
	// A watchpoint stops just after the writing instruction: the line is
	// the one to run next, as gdb says and bt says (the writer's address
	// is in the watch's description).
	s.placeInfo(info, pc)
	if frames, err := s.stack(tid); err == nil && len(frames) > 0 {
		if f := frames[0]; s.hiddenAt(tid, pc) > 0 && f.Function != nil {
			// Before an inlined call (inline.go): in the caller, at the
			// line of the call.
			info.Function, info.File, info.Line, info.FullName = f.Function.Name, dwarf.ShortFile(f.File), f.Line, f.File
		}
		fi := s.frameInfo(frames, 0)
		line := s.frameLine(frames, 0, fi)
		line = line[strings.Index(line, " ")+1:]
		info.where = strings.TrimLeft(line, " ")
	}
	if st.Reason == timeline.ReasonBreakpoint {
		if b := s.enabledBreakpointAt(pc); b != nil {
			info.Breakpoint, info.Temporary = b.id, b.temp
			if len(b.addrs) > 1 {
				info.Location = slices.Index(b.addrs, pc) + 1
			}
		}
	}
	if st.Reason == timeline.ReasonSignal {
		info.Signal = syscalls.SignalName(st.Signal)
	}
	if w := s.armedWatch(st); st.Reason == timeline.ReasonWatchpoint && w != nil {
		info.Watch = &WatchInfo{ID: w.id, Expr: w.expr, Old: s.watchValue(w, st.Old), New: s.watchValue(w, st.New),
			Writer: fmt.Sprintf("%#x", s.writerPC(pc))}
	}
	return info
}

// placeInfo fills function, file and line for an address.
func (s *Session) placeInfo(info *StopInfo, pc uint64) {
	t := s.symbols()
	if fns := t.FunctionsAt(pc); len(fns) > 0 {
		info.Function = fns[0].Name
	} else {
		info.Function, _ = s.symbolize(pc)
	}
	if l, ok := t.LineAt(pc); ok && l.Line > 0 {
		info.File, info.Line = dwarf.ShortFile(l.File), l.Line
		info.FullName = l.File
	}
}

// placeText is gdb's "in FUNC at FILE:LINE" for an address.
func (s *Session) placeText(addr uint64) string {
	return s.breakpointPlace(addr, "")
}

// breakpointPlace is placeText for the location of a breakpoint set as
// spec (breakpointInfo).
func (s *Session) breakpointPlace(addr uint64, spec string) string {
	info := s.breakpointInfo(addr, spec)
	out := ""
	if info.Function != "" {
		out = "in " + info.Function
	}
	if info.File != "" {
		out += fmt.Sprintf(" at %s:%d", info.File, info.Line)
	}
	return strings.TrimSpace(out)
}

// breakpointInfo is the function, file and line of the location of a
// breakpoint set as spec: at the start of inlined calls it names the
// function the breakpoint was set on, else the caller they are hidden in
// (inline.go), as gdb's info breakpoints does. A breakpoint on that
// caller past its prologue is at the line of the outermost call, where
// gdb's skip_prologue_sal moves it (at the entry of a function without
// prologue, as gcc's at -O2, gdb leaves the line the code's).
func (s *Session) breakpointInfo(addr uint64, spec string) *StopInfo {
	info := &StopInfo{}
	s.placeInfo(info, addr)
	chain := s.symbols().FunctionsAt(addr)
	if n := inlineStarts(chain, addr); n > 0 {
		info.Function = chain[n].Name
		for _, fn := range chain[:n] {
			if fn.NamedBy(spec) {
				info.Function = fn.Name
				return info
			}
		}
		outer, fn := chain[n-1], chain[n]
		if isFunctionSpec(spec) && fn.NamedBy(spec) && addr > fn.Low && outer.CallLine > 0 {
			info.File, info.Line, info.FullName = dwarf.ShortFile(outer.CallFile), outer.CallLine, outer.CallFile
		}
		if i := specLevel(chain, n, info.Line, spec); i > 0 {
			// A line of a caller where inlined calls start: gdb names the
			// function the line is in, at that line.
			info.Function = chain[i].Name
			info.File, info.Line, info.FullName = dwarf.ShortFile(chain[i-1].CallFile), chain[i-1].CallLine, chain[i-1].CallFile
		}
	}
	return info
}

// specLevel is, for a breakpoint set on a line (FILE:LINE or LINE) at an
// address where n inlined calls start, the level of chain (innermost
// first) whose code the line is: 0 for the innermost (whose line the line
// table gives, pcLine), i for the function that makes the inlined call
// chain[i-1] on that line; -1 for other breakpoints or no match.
func specLevel(chain []*dwarf.Function, n, pcLine int, spec string) int {
	if spec == "" || strings.HasPrefix(spec, "*") || isFunctionSpec(spec) {
		return -1
	}
	line, err := strconv.Atoi(spec[strings.LastIndexByte(spec, ':')+1:])
	if err != nil {
		return -1
	}
	for i := 0; i <= n && i < len(chain); i++ {
		l := pcLine
		if i > 0 {
			l = chain[i-1].CallLine
		}
		if l == line {
			return i
		}
	}
	return -1
}

// watchValue renders a watched value with the expression's type.
func (s *Session) watchValue(w *watch, v uint64) string {
	if w.typ == nil {
		return fmt.Sprintf("%#x", v)
	}
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	return s.format(dwarf.Value{Type: w.typ, Bytes: b[:w.wp.Len]}, 0)
}

// writerPC returns the address of the instruction that ends at pc: the one
// that made a write when a watchpoint trapped after it. It decodes from the
// start of the line (an instruction boundary) up to pc; when pc was
// reached by a jump it returns pc itself.
func (s *Session) writerPC(pc uint64) uint64 {
	t := s.symbols()
	start := uint64(0)
	if lo, _, ok := t.LineRange(pc - 1); ok {
		start = lo
	} else if fn := t.FunctionAt(pc - 1); fn != nil {
		start = fn.Low
	} else if sym, off, ok := t.At(pc - 1); ok {
		start = sym.Addr
		_ = off
	}
	if start == 0 || start >= pc || pc-start > 4096 {
		return pc
	}
	insts, err := t.Disassemble(s.mem(), start, int(pc-start))
	if err != nil {
		return pc
	}
	for _, in := range insts {
		if in.Addr+uint64(in.Len) == pc {
			return in.Addr
		}
		if in.Addr >= pc {
			break
		}
	}
	return pc
}

// stopText renders a stop as gdb does: the reason, the frame, the line.
func (s *Session) stopText(info *StopInfo) string {
	var b strings.Builder
	where := info.where
	if where == "" {
		where = info.PC
		if info.Function != "" {
			where += " in " + info.Function
		}
		if info.File != "" {
			where += fmt.Sprintf(" at %s:%d", info.File, info.Line)
		}
	}
	reason := info.Reason
	if (reason == "watchpoint" || reason == "origin") && info.Watch == nil {
		reason = "" // a write to a location no watchpoint names
	}
	switch reason {
	case "breakpoint":
		kind := "Breakpoint"
		if info.Temporary {
			kind = "Temporary breakpoint"
		}
		num := strconv.Itoa(info.Breakpoint)
		if info.Location > 0 {
			num += "." + strconv.Itoa(info.Location) // which of its locations, as gdb 13
		}
		fmt.Fprintf(&b, "%s %s, %s", kind, num, where)
	case "watchpoint":
		fmt.Fprintf(&b, "Hardware watchpoint %d: %s\n\nOld value = %s\nNew value = %s\n%s", info.Watch.ID, info.Watch.Expr, info.Watch.Old, info.Watch.New, where)
	case "origin":
		by := "written"
		if info.Watch.Access == "read" {
			by = "read"
		}
		if info.Watch.Syscall {
			by += " by a system call"
		} else if info.Watch.Writer != "" {
			by += " by the instruction at " + info.Watch.Writer
		}
		fmt.Fprintf(&b, "Origin of %s: %s\n\nOld value = %s\nNew value = %s\n%s", info.Watch.Expr, by, info.Watch.Old, info.Watch.New, where)
	case string(reasonScope):
		fmt.Fprintf(&b, "Watchpoint %d deleted because the program has left the block in\nwhich its expression is valid.\n%s", info.Watch.ID, where)
	case "signal":
		sig := info.Signal
		if d := syscalls.SignalDescription(sig); d != "" {
			sig += ", " + d
		}
		fmt.Fprintf(&b, "Program received signal %s.\n%s", sig, where)
	case "start":
		fmt.Fprintf(&b, "No more reverse-execution history.\n%s", where)
	case "exit":
		fmt.Fprintf(&b, "End of the recording (exit).\n%s", where)
	case "end":
		// The program still ran: say why the recording has no more.
		why := "the trace is partial: the recording did not finish"
		if f := s.tl.Session().Footer(); f != nil && f.Interrupted != "" {
			why = "the recording was " + f.Interrupted
		}
		fmt.Fprintf(&b, "End of the recording: %s.\n%s", why, where)
	default:
		b.WriteString(where)
	}
	fmt.Fprintf(&b, " [#%d, thread %d]", info.Event, info.Thread)
	if src := s.sourceLine(info.FullName, info.Line); src != "" {
		b.WriteString("\n" + src)
	}
	return b.String()
}

// breakpointStops is the timeline's test of a hit of the user's
// breakpoints at pc (SetBreakpointFilter): it stops when an enabled
// breakpoint there has no condition or one that holds for thread tid, or
// one that cannot be evaluated (gdb stops then, and says why).
func (s *Session) breakpointStops(tid int32, pc uint64) bool {
	var conds []*breakpoint
	for _, b := range s.bps {
		if b.disabled || !slices.Contains(b.addrs, pc) {
			continue
		}
		if b.cond == "" {
			return true
		}
		conds = append(conds, b)
	}
	if len(conds) == 0 {
		return true
	}
	saved, savedFrame := s.thread, s.frame
	s.thread, s.frame = tid, 0
	defer func() { s.thread, s.frame = saved, savedFrame }()
	for _, b := range conds {
		v, err := s.eval(b.cond)
		if err == nil {
			var ok bool
			if ok, err = expr.Truth(v, s.mem()); err == nil && !ok {
				continue
			}
		}
		if err != nil {
			s.condErr = fmt.Sprintf("Error in testing condition for breakpoint %d: %v", b.id, err)
		}
		return true
	}
	return false
}

// continueForward is continue, with conditional breakpoints and the ends
// of watchpoints' frames.
func (s *Session) continueForward() (*timeline.Stop, error) {
	return s.continueDir(false)
}

// continueBackward is reverse-continue, with conditional breakpoints and
// the ends of watchpoints' frames.
func (s *Session) continueBackward() (*timeline.Stop, error) {
	return s.continueDir(true)
}

func (s *Session) continueDir(reverse bool) (*timeline.Stop, error) {
	return s.scoped(reverse, func() (*timeline.Stop, error) {
		return s.skipSameValue(func() (*timeline.Stop, error) {
			ends, atEnd := s.scopeStops(reverse)
			switch {
			case len(ends) > 0 && reverse:
				return s.tl.ReverseContinueWith(ends, atEnd)
			case len(ends) > 0:
				return s.tl.ContinueWith(ends, atEnd)
			case reverse:
				return s.tl.ReverseContinue()
			}
			return s.tl.Continue()
		})
	})()
}

// skipSameValue repeats a continue while it stops at writes that leave a
// (write) watchpoint's value unchanged: gdb's watch reports changes only.
// history still lists every write.
func (s *Session) skipSameValue(op func() (*timeline.Stop, error)) (*timeline.Stop, error) {
	for {
		st, err := op()
		if err != nil || st.Reason != timeline.ReasonWatchpoint || st.Old != st.New ||
			s.armedWatch(st) == nil || s.armedWatch(st).wp.ReadWrite {
			return st, err
		}
	}
}

// lineStep is a source-line step that, like continue, goes on through
// writes that leave a watchpoint's value unchanged: gdb reports changes
// only. The step goes on from the write, which is in the line it was
// leaving or in a call it was stepping over.
//
// A step that ends on a breakpoint whose condition holds is that
// breakpoint's hit, as gdb reports it ("Breakpoint 1, main () at …") and
// counts it, in both directions; one with hits left to ignore spends one.
func (s *Session) lineStep(op func() (*timeline.Stop, error)) func() (*timeline.Stop, error) {
	return func() (*timeline.Stop, error) {
		before := s.tl.Now()
		st, err := s.skipSameValue(op)
		if err != nil || st.Reason != timeline.ReasonStep {
			return st, err
		}
		if now := s.tl.Now(); now.Tid == before.Tid && now.String() == before.String() {
			return st, nil // a step into an inlined call that starts here: nothing ran
		}
		tid := st.Moment.Tid
		if tid == 0 {
			tid = s.currentThread()
		}
		if pc, err := s.pcOf(tid); err == nil {
			if b := s.enabledBreakpointAt(pc); b != nil && s.breakpointStops(tid, pc) {
				if s.habits.ignore[b.id] > 0 {
					s.habits.ignore[b.id]--
					s.countHit(b.id)
				} else {
					st.Reason = timeline.ReasonBreakpoint
				}
			}
		}
		return st, nil
	}
}

// nextInstruction is nexti: stepi, over calls.
func (s *Session) nextInstruction() (*timeline.Stop, error) {
	tid := s.stepThread()
	pc, err := s.pcOf(tid)
	if err != nil {
		return nil, err
	}
	insts, err := s.symbols().Disassemble(s.mem(), pc, 16)
	if err != nil || len(insts) == 0 || !strings.HasPrefix(insts[0].Text, "call") {
		return s.tl.StepInstruction()
	}
	ret := pc + uint64(insts[0].Len)
	cfa, err := s.cfaOf(tid)
	if err != nil {
		return nil, err
	}
	return s.tl.ContinueWith([]uint64{ret}, s.inFrame(tid, cfa))
}

// placeOf is the spec a breakpoint resolves again at library loads
// (breakpoint.place), given where it first resolved.
func (s *Session) placeOf(spec string, addrs []uint64) string {
	switch {
	case strings.HasPrefix(spec, "*"):
		return ""
	case isDigits(spec):
		if file, _ := s.defaultSource(); file != "" && len(addrs) > 0 {
			return file + ":" + spec
		}
		return ""
	}
	return spec
}

func (s *Session) cmdBreak(args string, temp bool, res *Result) error {
	if args == "" {
		return errors.New("break needs a location: FILE:LINE, LINE, FUNCTION or *ADDR")
	}
	spec, cond := args, ""
	if args == "if" || strings.HasPrefix(args, "if ") {
		return errors.New("break needs a location before `if`")
	}
	if i := strings.Index(args, " if "); i >= 0 {
		spec, cond = strings.TrimSpace(args[:i]), strings.TrimSpace(args[i+4:])
		if cond == "" {
			return errors.New("Argument required (boolean expression).")
		}
		if _, err := expr.Parse(cond); err != nil {
			return err
		}
	} else if strings.HasSuffix(args, " if") {
		return errors.New("Argument required (boolean expression).")
	}
	b := &breakpoint{id: s.nextID, spec: spec, cond: cond, temp: temp, gen: s.tl.Generation()}
	addrs, err := s.resolve(spec)
	if err != nil && (strings.HasPrefix(spec, "*") || strings.Contains(spec, ":") || isDigits(spec) || errors.Is(err, dwarf.ErrAmbiguousFile)) {
		return err
	}
	b.addrs = addrs
	b.place = s.placeOf(spec, addrs)
	s.nextID++
	s.bps = append(s.bps, b)
	if err := s.syncBreakpoints(); err != nil {
		s.bps = s.bps[:len(s.bps)-1]
		return err
	}
	kind := "Breakpoint"
	if temp {
		kind = "Temporary breakpoint"
	}
	if len(b.addrs) == 0 {
		res.Value = BreakpointSet{ID: b.id, Pending: true, Temporary: temp}
		res.Text = fmt.Sprintf("%s %d (%s) pending: not in the program or its libraries loaded so far", kind, b.id, spec)
		return nil
	}
	var locs []BreakpointLocation
	for _, a := range b.addrs {
		info := s.breakpointInfo(a, spec)
		loc := BreakpointLocation{Address: fmt.Sprintf("%#x", a), Function: info.Function}
		if info.File != "" {
			loc.File, loc.Line = info.File, info.Line
		}
		locs = append(locs, loc)
	}
	first := locs[0]
	res.Value = BreakpointSet{ID: b.id, Address: first.Address, Locations: locs, Function: first.Function,
		File: first.File, Line: first.Line, Condition: cond, Temporary: temp}
	res.Text = fmt.Sprintf("%s %d at %#x", kind, b.id, b.addrs[0])
	switch ok := first.File != ""; {
	case ok && len(b.addrs) > 1:
		// Each location may be in another file: gdb says what was asked.
		res.Text += fmt.Sprintf(": %s. (%d locations)", spec, len(b.addrs))
	case ok:
		res.Text += fmt.Sprintf(": file %s, line %d.", first.File, first.Line)
	default:
		if fn, off := s.symbolize(b.addrs[0]); fn != "" {
			res.Text += symRef(fn, off)
		}
		if len(b.addrs) > 1 {
			res.Text += fmt.Sprintf(" (%d locations)", len(b.addrs))
		}
	}
	return nil
}

// watchTarget turns a watch or history argument into a watchpoint: a raw
// `*(TYPE *)ADDR`, or any lvalue expression of 1, 2, 4 or 8 bytes.
func (s *Session) watchTarget(args string, rw bool) (replay.Watchpoint, *dwarf.Type, error) {
	wp, typ, _, err := s.watchTargetScoped(args, rw)
	return wp, typ, err
}

// watchTargetScoped is watchTarget that also tells whether the expression
// names a local or argument of the selected frame.
func (s *Session) watchTargetScoped(args string, rw bool) (replay.Watchpoint, *dwarf.Type, bool, error) {
	if addr, size, typ, err := s.parseLocation(args); err == nil {
		return replay.Watchpoint{Addr: addr, Len: size, ReadWrite: rw}, typ, false, nil
	}
	sc := s.newScope()
	v, err := expr.Eval(args, sc)
	if err != nil {
		return replay.Watchpoint{}, nil, false, err
	}
	if !v.InMem {
		return replay.Watchpoint{}, nil, false, errors.New("Cannot watch constant value `" + args + "'.")
	}
	size := int64(8)
	if v.Type != nil {
		size = v.Type.Size
	}
	switch size {
	case 1, 2, 4, 8:
	default:
		return replay.Watchpoint{}, nil, false, fmt.Errorf("cannot watch %s: %d bytes (hardware watchpoints cover 1, 2, 4 or 8; watch a field or element)", args, size)
	}
	if v.Addr%uint64(size) != 0 {
		return replay.Watchpoint{}, nil, false, fmt.Errorf("cannot watch %s: address %#x is not aligned to its size %d", args, v.Addr, size)
	}
	return replay.Watchpoint{Addr: v.Addr, Len: int(size), ReadWrite: rw}, v.Type, sc.local, nil
}

func (s *Session) cmdWatch(name, args string, res *Result) error {
	args = strings.TrimSpace(args)
	location := false
	for _, p := range []string{"-location", "-l"} {
		if rest, ok := strings.CutPrefix(args, p+" "); ok {
			args, location = strings.TrimSpace(rest), true
		}
	}
	wp, typ, local, err := s.watchTargetScoped(args, name != "watch")
	if err != nil {
		return err
	}
	w := &watch{id: s.nextID, expr: args, wp: wp, typ: typ}
	if location {
		w.location = s.locationOf(typ, wp.Addr, wp.Len)
	} else if local {
		w.scope = s.frameScope()
	}
	s.watches = append(s.watches, w)
	if err := s.syncWatches(); err != nil {
		s.watches = s.watches[:len(s.watches)-1]
		s.syncWatches()
		return err
	}
	s.nextID++
	kind := "Hardware watchpoint"
	if w.wp.ReadWrite {
		kind = "Hardware access (read/write) watchpoint"
	}
	res.Value = WatchpointSet{ID: w.id, Expr: args, Address: fmt.Sprintf("%#x", wp.Addr), Size: wp.Len, Location: w.location}
	res.Text = fmt.Sprintf("%s %d: %s", kind, w.id, args)
	return nil
}

// cmdHistory lists every write to the location of an expression over the
// whole recording, with the source line of each writing instruction.
func (s *Session) cmdHistory(args string, res *Result) error {
	var w *watch
	if rest, ok := strings.CutPrefix(args, "watchpoint "); ok {
		// The location a watchpoint watches, whatever its expression
		// would mean in the current frame.
		id, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil {
			return fmt.Errorf("bad watchpoint number %q", rest)
		}
		for _, x := range s.watches {
			if x.id == id {
				w = &watch{expr: x.expr, wp: replay.Watchpoint{Addr: x.wp.Addr, Len: x.wp.Len}, typ: x.typ}
			}
		}
		if w == nil {
			return fmt.Errorf("no watchpoint number %d", id)
		}
	} else {
		wp, typ, err := s.watchTarget(args, false)
		if err != nil {
			return err
		}
		w = &watch{expr: args, wp: wp, typ: typ}
	}
	wp := w.wp
	ws, err := s.tl.WatchHistory(wp)
	if err != nil {
		return err
	}
	list := []HistoryWrite{}
	var b strings.Builder
	for i, wr := range ws {
		s.moments[wr.Moment.String()] = wr.Moment
		item := HistoryWrite{Index: i + 1, Event: wr.Moment.Event, Moment: wr.Moment.String(), Thread: wr.Tid,
			PC: fmt.Sprintf("%#x", wr.PC), Old: s.watchValue(w, wr.Old), New: s.watchValue(w, wr.New)}
		info := &StopInfo{}
		where := fmt.Sprintf("%#x", wr.PC)
		if wr.Syscall {
			item.Syscall = true
			where = "system call"
		} else {
			// Its place among the writes of its event, which orders it
			// against the current moment (WatchpointInfo.EventWrites).
			item.Hits = wr.Moment.Hits
			// The writer's place needs the replay at the write; the
			// instruction just before pc is the writer unless a jump got
			// there, which a store does not do.
			s.placeInfo(info, s.writerPC(wr.PC))
			if info.Function != "" {
				item.Function = info.Function
				where = info.Function
			}
			if info.File != "" {
				item.File, item.Line = info.File, info.Line
				where += fmt.Sprintf(" at %s:%d", info.File, info.Line)
			}
		}
		list = append(list, item)
		fmt.Fprintf(&b, "%3d  #%-7d thread %-7d %s -> %s  %s\n", i+1, wr.Moment.Event, wr.Tid, item.Old, item.New, where)
	}
	res.Value = list
	res.Text = fmt.Sprintf("%d writes to %s", len(ws), w.expr)
	if len(ws) > 0 {
		res.Text += ":\n" + strings.TrimRight(b.String(), "\n")
	}
	return nil
}

// cmdFinish implements finish and reverse-finish on the selected frame.
func (s *Session) cmdFinish(res *Result, reverse bool) error {
	frames, err := s.stack(s.currentThread())
	if err != nil {
		return err
	}
	level := min(s.frame, len(frames)-1)
	header := ""
	if len(frames) > 0 {
		fi := s.frameInfo(frames, level)
		verb := "Run till exit from "
		if reverse {
			verb = "Run back to call of "
		}
		header = verb + s.frameLine(frames, level, fi)
	}
	var fn *dwarf.Function
	if level < len(frames) {
		fn = frames[physicalFrame(frames, level)].Function
	}
	op := func() (*timeline.Stop, error) { return s.finishFrame(level) }
	if reverse {
		op = func() (*timeline.Stop, error) { return s.reverseFinish(level) }
	}
	if level < len(frames) && frames[level].Inlined {
		// Out of an inlined call: no return, and no value (inlinefinish.go).
		fn = nil
		op = func() (*timeline.Stop, error) { return s.finishInline(frames, level, reverse) }
	}
	if err := s.run(res, s.scoped(reverse, op)); err != nil {
		return err
	}
	res.Text = header + "\n" + res.Text
	if !reverse && fn != nil && res.Stop != nil && (res.Stop.Reason == "step" || res.Stop.Reason == string(reasonScope)) {
		if v, ok := s.returnValue(fn); ok {
			s.printCount++
			res.Value = FinishValue{Returned: v}
			res.Text += fmt.Sprintf("\nValue returned is $%d = %s", s.printCount, v)
		}
	}
	return nil
}

// cmdUntil implements until/advance [LOCATION].
func (s *Session) cmdUntil(name, args string, res *Result) error {
	if strings.TrimSpace(args) == "" {
		if name == "advance" {
			return errors.New("advance needs a location")
		}
		return s.run(res, s.scoped(false, s.until))
	}
	addrs, err := s.resolve(strings.TrimSpace(args))
	if err != nil {
		return err
	}
	return s.run(res, s.scoped(false, func() (*timeline.Stop, error) { return s.advance(addrs) }))
}

// cmdDisassemble lists the instructions of the function around pc (or of
// an address or function), marking the current one.
func (s *Session) cmdDisassemble(args string, res *Result) error {
	t := s.symbols()
	if _, err := s.pcOf(s.currentThread()); err != nil {
		return err
	}
	start, end := uint64(0), uint64(0)
	if a := strings.TrimSpace(args); a != "" {
		addrs, err := s.resolve(a)
		if err != nil {
			return err
		}
		start = addrs[0]
	} else if f, _, err := s.selectedFrame(); err == nil {
		start = f.PC
	}
	if fn := t.FunctionAt(start); fn != nil {
		start, end = fn.Low, fn.High
	} else if sym, _, ok := t.At(start); ok && sym.Size > 0 {
		start, end = sym.Addr, sym.Addr+sym.Size
	} else {
		end = start + 64
	}
	if end-start > 1<<16 {
		end = start + 1<<16
	}
	insts, err := t.Disassemble(s.mem(), start, int(end-start))
	if err != nil {
		return err
	}
	for i, in := range insts {
		if in.Addr >= end {
			insts = insts[:i]
			break
		}
	}
	s.instructionListing(insts, "%#016x", res)
	return nil
}

// instructionListing renders instructions as gdb's disassemble and x/i do:
// the current one marked "=>", each with its symbol and offset. addrFmt
// is the address format (disassemble pads, x/i does not).
func (s *Session) instructionListing(insts []dwarf.Instruction, addrFmt string, res *Result) {
	t := s.symbols()
	pc, _ := s.pcOf(s.currentThread())
	var lines []string
	var vals []InstructionLine
	for _, in := range insts {
		mark := "   "
		if in.Addr == pc {
			mark = "=> "
		}
		name := ""
		if sym, off, ok := t.SymbolAt(in.Addr); ok {
			name = symRef(sym, off)
		}
		lines = append(lines, fmt.Sprintf("%s"+addrFmt+"%s:\t%s", mark, in.Addr, name, in.Text))
		vals = append(vals, InstructionLine{Address: fmt.Sprintf("%#x", in.Addr), Text: in.Text, Current: in.Addr == pc})
	}
	res.Value, res.Text = vals, strings.Join(lines, "\n")
}

// symRef is gdb's " <sym+off>" after an address, " <sym>" at its start.
func symRef(name string, off uint64) string {
	if off == 0 {
		return " <" + name + ">"
	}
	return fmt.Sprintf(" <%s+%d>", name, off)
}
