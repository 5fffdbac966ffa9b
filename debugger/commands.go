package debugger

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/debugger/expr"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Result is the answer to one command (docs/design.md, §4 "The command
// result (JSON)").
type Result struct {
	Command string    `json:"command"`
	OK      bool      `json:"ok"`
	Error   string    `json:"error,omitempty"`
	Stop    *StopInfo `json:"stop,omitempty"`
	Value   any       `json:"value,omitempty"`
	Type    string    `json:"type,omitempty"`
	Event   *int64    `json:"event,omitempty"`
	// Text is the human rendering (batch mode without --json, the console).
	Text string `json:"text,omitempty"`
	// Displays are the display expressions shown after a stop (display).
	Displays []DisplayValue `json:"displays,omitempty"`
	// Quit asks the interface to end the session (quit, q).
	Quit bool `json:"quit,omitempty"`
	// decorated says the stop's displays and thread header are in Text
	// already: a stop taken from a command run inside this one (source).
	decorated bool
	// unterminated: Text ends where the command put it, without a line
	// end (output, echo, printf), as gdb prints them.
	unterminated bool
}

// Unterminated says Text is printed as it is, with no line end added:
// gdb's output, echo and printf end lines only where they say so.
func (r Result) Unterminated() bool { return r.unterminated }

// StopInfo describes where an execution command stopped.
type StopInfo struct {
	Reason     string `json:"reason"`
	Event      int64  `json:"event"`
	Thread     int32  `json:"thread"`
	PC         string `json:"pc"`
	Function   string `json:"function,omitempty"`
	File       string `json:"file,omitempty"`
	Line       int    `json:"line,omitempty"`
	Signal     string `json:"signal,omitempty"`
	Breakpoint int    `json:"breakpoint,omitempty"`
	// Location is which of the breakpoint's locations (from 1) the stop
	// is at, when it has several.
	Location  int        `json:"location,omitempty"`
	Temporary bool       `json:"temporary,omitempty"` // a tbreak's stop, which deletes it
	Watch     *WatchInfo `json:"watch,omitempty"`
	Moment    string     `json:"moment"`
	// FullName is the source file's path (gdb/MI's fullname).
	FullName string `json:"fullname,omitempty"`
	where    string // gdb's frame line for the text ("sum (head=0x…) at c.c:24")
}

// WatchInfo is the watchpoint part of a stop.
type WatchInfo struct {
	ID   int    `json:"id"`
	Expr string `json:"expr"`
	Old  string `json:"old"`
	New  string `json:"new"`
	// Writer is the address of the writing instruction (watchpoint and origin stops: the
	// stop is just after it); Syscall says the kernel wrote the value for
	// a system call; Access is "read" for origin --read.
	Writer  string `json:"writer,omitempty"`
	Syscall bool   `json:"syscall,omitempty"`
	Access  string `json:"access,omitempty"`
}

// Execute runs one command line and returns its result. Errors are results
// with OK false; the session goes on.
func (s *Session) Execute(line string) Result {
	line = strings.TrimSpace(line)
	res := Result{Command: line}
	if line == "" {
		res.OK = true
		return res
	}
	name, args := splitCommand(line)
	err := s.dispatch(commands, name, args, &res)
	return s.finish(res, err)
}

// cmdWhen is rr's when: the current event, as goto takes it back.
func (s *Session) cmdWhen(res *Result) error {
	n := s.tl.When()
	res.Value, res.Event = fmt.Sprintf("#%d", n), &n
	res.Text = fmt.Sprintf("#%d (%v)", n, s.tl.Now())
	return nil
}

// finish completes a command's result: the error, or the displays a
// stop shows (display).
func (s *Session) finish(res Result, err error) Result {
	if err != nil {
		res.OK, res.Error, res.Text = false, err.Error(), err.Error()
		res.Stop, res.Value = nil, nil
		return res
	}
	if res.Stop != nil && !res.decorated {
		s.switchedThread(&res)
		s.showDisplays(&res)
	}
	res.OK = true
	return res
}

func splitCommand(line string) (string, string) {
	name, args, _ := strings.Cut(line, " ")
	return name, strings.TrimSpace(args)
}

// run executes a motion command and describes where it stopped.
func (s *Session) run(res *Result, op func() (*timeline.Stop, error)) error {
	return s.runAs(res, op, nil)
}

// runAs is run with the stop's description completed by adjust (origin's
// reason and write) before it is put in words.
func (s *Session) runAs(res *Result, op func() (*timeline.Stop, error), adjust func(st *timeline.Stop, info *StopInfo)) error {
	if err := s.syncBreakpoints(); err != nil {
		return err
	}
	before, beforeFn := s.frameID(), s.physicalFunction()
	s.condErr, s.stepFrame = "", ""
	st, err := op()
	if err != nil {
		if errors.Is(err, timeline.ErrAtStart) {
			return errors.New("already at the beginning of the recording")
		}
		return err
	}
	s.frame, s.listLine = 0, 0
	s.noteInline(st)
	res.Stop = s.describeStop(st)
	if st.Reason == reasonScope {
		if err := s.endScope(res.Stop); err != nil {
			return err
		}
	}
	s.countHit(res.Stop.Breakpoint)
	if res.Stop.Watch != nil && res.Stop.Reason == string(timeline.ReasonWatchpoint) {
		s.countWatchHit(res.Stop.Watch.ID)
	}
	if res.Stop.Temporary {
		s.deleteBreakpoint(res.Stop.Breakpoint) // a tbreak is spent by its stop
	}
	s.lastStop = res.Stop
	if adjust != nil {
		adjust(st, res.Stop)
	}
	res.Text = s.stopText(res.Stop)
	if s.condErr != "" {
		res.Text = s.condErr + "\n" + res.Text
	}
	if s.stepFrame != "" {
		before = s.stepFrame // the frame the step ended up stepping
	}
	if st.Reason == timeline.ReasonStep && before != "" && before == s.frameID() && beforeFn == s.physicalFunction() && res.Stop.FullName != "" {
		// gdb shows only the new line when a step stays in its frame
		// (the one it was stepping when it stopped: it moves to a
		// caller or an inlined call's caller on the way) and function,
		// after the address when that is in the middle of the line.
		if src := s.sourceLine(res.Stop.FullName, res.Stop.Line); src != "" {
			res.Text = src
			if frames, err := s.stack(s.currentThread()); err == nil && len(frames) > 0 && s.showAddress(frames, 0) {
				res.Text = fmt.Sprintf("0x%016x\t%s", frames[0].PC, src)
			}
		}
	}
	return nil
}

// frameID identifies the innermost frame of the current thread: function
// and CFA, as gdb's frame id ("" when unknown).
func (s *Session) frameID() string {
	tid := s.currentThread()
	pc, err := s.pcOf(tid)
	if err != nil {
		return ""
	}
	fns := s.symbols().FunctionsAt(pc)
	cfa, err := s.cfaOf(tid)
	if len(fns) == 0 || err != nil {
		return ""
	}
	// The frame shown: inlined calls not entered yet are not (inline.go).
	if n := s.hiddenAt(tid, pc); n < len(fns) {
		fns = fns[n:]
	}
	return fmt.Sprintf("%s@%#x", fns[0].Name, cfa)
}

// physicalFunction names the function, not an inlined call, the current
// thread is in: gdb's step_start_function.
func (s *Session) physicalFunction() string {
	pc, err := s.pcOf(s.currentThread())
	if err != nil {
		return ""
	}
	if fns := s.symbols().FunctionsAt(pc); len(fns) > 0 {
		return fns[len(fns)-1].Name
	}
	return ""
}

// repeat runs a step command N times (default 1).
func (s *Session) repeat(args string, res *Result, op func() (*timeline.Stop, error)) error {
	n := 1
	if args != "" {
		v, err := strconv.Atoi(args)
		if err != nil || v < 1 {
			return fmt.Errorf("bad count %q", args)
		}
		n = v
	}
	// Only the last stop is described: describing one (the stack with its
	// arguments) costs more than a step.
	last := op
	var early *timeline.Stop
	if err := s.syncBreakpoints(); err != nil {
		return err
	}
	for i := 0; i < n-1; i++ {
		st, err := op()
		if err != nil {
			return err
		}
		if st.Reason != timeline.ReasonStep {
			early = st
			break
		}
	}
	if early != nil {
		last = func() (*timeline.Stop, error) { return early, nil }
	}
	return s.run(res, last)
}

func (s *Session) cmdDelete(args string, res *Result) error {
	if args == "" {
		s.bps, s.watches = nil, nil
		if err := s.syncWatches(); err != nil {
			return err
		}
		res.Text = "Deleted all breakpoints and watchpoints"
		return s.syncBreakpoints()
	}
	for _, f := range strings.Fields(args) {
		id, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("bad breakpoint number %q", f)
		}
		found := s.deleteBreakpoint(id)
		for i, w := range s.watches {
			if w.id == id {
				s.watches = append(s.watches[:i], s.watches[i+1:]...)
				found = true
				if err := s.syncWatches(); err != nil {
					return err
				}
				break
			}
		}
		if !found {
			return fmt.Errorf("no breakpoint number %d", id)
		}
	}
	res.Text = "Deleted " + args
	return s.syncBreakpoints()
}

// deleteBreakpoint removes breakpoint id, reporting whether it existed.
// The engine's set is updated by the next motion command.
func (s *Session) deleteBreakpoint(id int) bool {
	for i, b := range s.bps {
		if b.id == id {
			s.bps = append(s.bps[:i], s.bps[i+1:]...)
			return true
		}
	}
	return false
}

// cmdEnable implements enable and disable [N...] (all without numbers) for
// breakpoints and watchpoints: a disabled one stays listed, unarmed.
func (s *Session) cmdEnable(on bool, args string, res *Result) error {
	ids := map[int]bool{}
	for _, f := range strings.Fields(args) {
		id, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("bad breakpoint number %q", f)
		}
		ids[id] = true
	}
	for id := range ids {
		found := false
		for _, b := range s.bps {
			found = found || b.id == id
		}
		for _, w := range s.watches {
			found = found || w.id == id
		}
		if !found {
			return fmt.Errorf("No breakpoint number %d.", id)
		}
	}
	for _, b := range s.bps {
		if len(ids) == 0 || ids[b.id] {
			b.disabled = !on
		}
	}
	for _, w := range s.watches {
		if len(ids) == 0 || ids[w.id] {
			w.disabled = !on
		}
	}
	if err := s.syncWatches(); err != nil {
		return err
	}
	return s.syncBreakpoints()
}

func (s *Session) cmdGoto(args string, res *Result) error {
	var m timeline.Moment
	switched := ""
	switch a := strings.TrimSpace(args); a {
	case "start":
		m = s.tl.Start()
	case "end":
		m = s.tl.End()
	case "":
		return errors.New("goto needs #N, start or end")
	default:
		if known, ok := s.moments[a]; ok {
			// A moment the session showed (a stop, a write of history).
			m = known
			break
		}
		if parsed, ok := s.tl.ParseMoment(a); ok && (parsed.Hits > 0 || parsed.Steps > 0) {
			// A moment shown by another session (an MCP client that
			// restarted the server, a note): moments are canonical.
			m = parsed
			break
		}
		n, err := strconv.ParseInt(strings.TrimPrefix(a, "#"), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("bad event %q (goto #N, start, end, or a moment shown by a stop or history)", a)
		}
		if n > s.tl.Index().Total() {
			return fmt.Errorf("event #%d is past the end of the recording (%d events)", n, s.tl.Index().Total())
		}
		if pid := s.processAt(n); pid != 0 && pid != s.Process() {
			// Another process's event: debug that process there, as
			// clicking an event of it in the timeline would.
			if err := s.SwitchProcess(pid); err != nil {
				return err
			}
			switched = fmt.Sprintf("[Switching to process %d (%s)]\n", pid, s.processName(pid))
		}
		if n < s.tl.Index().First {
			n = s.tl.Index().First
		}
		m = timeline.Moment{Event: n}
		if end := s.tl.End(); n > end.Event {
			m = end // the process's exit and after: its last instruction
		}
	}
	if err := s.syncBreakpoints(); err != nil {
		return err
	}
	if err := s.tl.Goto(m); err != nil {
		return err
	}
	st := &timeline.Stop{Reason: timeline.ReasonGoto, Moment: s.tl.Now()}
	s.frame, s.listLine = 0, 0
	s.noteInline(st)
	res.Stop = s.describeStop(st)
	s.countHit(res.Stop.Breakpoint)
	s.lastStop = res.Stop
	res.Text = switched + s.stopText(res.Stop)
	return nil
}

// evalAddress evaluates an address: NUMBER, $REG, SYMBOL and sums of
// them, or any expression of the language (a pointer, an array, &x).
func (s *Session) evalAddress(src string) (uint64, error) {
	// A pointer is the address it holds, as in C and gdb (x p, watch -l
	// *p, break *fp), where the raw form took a symbol for its own
	// address: watch -l *progress watched the pointer, not its target.
	if v, err := expr.Eval(src, s.newScope()); err == nil && expr.IsPointer(v.Type) {
		return expr.Address(v, s.mem())
	}
	a, err := s.evalRawAddress(src)
	if err == nil {
		return a, nil
	}
	v, err2 := expr.Eval(src, s.newScope())
	if err2 != nil {
		return 0, err2
	}
	return expr.Address(v, s.mem())
}

// evalRawAddress evaluates NUMBER, $REG, SYMBOL and sums/differences of
// them, without debug information.
func (s *Session) evalRawAddress(expr string) (uint64, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return 0, errors.New("missing address")
	}
	var total uint64
	sign := uint64(1)
	term := ""
	flush := func() error {
		t := strings.TrimSpace(term)
		term = ""
		if t == "" {
			return errors.New("bad address expression " + strconv.Quote(expr))
		}
		var v uint64
		switch {
		case strings.HasPrefix(t, "$"):
			regs, err := s.tl.Session().Regs(s.currentThread())
			if err != nil {
				return err
			}
			found := false
			for i, n := range trace.RegNames {
				if n == t[1:] || (t == "$pc" && n == "rip") || (t == "$sp" && n == "rsp") {
					v, found = regs[i], true
				}
			}
			if !found {
				return fmt.Errorf("no register %q", t)
			}
		default:
			n, err := parseNumber(t)
			if err != nil {
				sym, ok := s.symbols().Lookup(strings.TrimPrefix(t, "&"))
				if !ok {
					return fmt.Errorf("no symbol %q", t)
				}
				n = sym.Addr
			}
			v = n
		}
		total += sign * v
		return nil
	}
	for i, r := range expr {
		if (r == '+' || r == '-') && i > 0 {
			if err := flush(); err != nil {
				return 0, err
			}
			sign = 1
			if r == '-' {
				sign = ^uint64(0)
			}
			continue
		}
		term += string(r)
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return total, nil
}

func parseNumber(s string) (uint64, error) {
	return strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64)
}

// examineInstructions is x/Ni ADDR: n instructions from an address, the
// current one marked, as gdb.
func (s *Session) examineInstructions(n int, args string, res *Result) error {
	if strings.TrimSpace(args) == "" {
		args = "$pc"
	}
	addr, err := s.evalAddress(args)
	if err != nil {
		return err
	}
	t := s.symbols()
	insts, err := t.Disassemble(s.mem(), addr, n*15)
	if err != nil {
		return err
	}
	if len(insts) > n {
		insts = insts[:n]
	}
	s.instructionListing(insts, "%#x", res)
	return nil
}

// maxExamine bounds the count of x/N, as gdb's does.
const maxExamine = 65536

// cmdExamine implements x/NFU ADDR.
func (s *Session) cmdExamine(name, args string, res *Result) error {
	count, format, unit := 1, byte('x'), 0
	if spec, ok := strings.CutPrefix(name, "x/"); ok {
		i := 0
		for i < len(spec) && spec[i] >= '0' && spec[i] <= '9' {
			i++
		}
		if i > 0 {
			n, err := strconv.Atoi(spec[:i])
			if err != nil || n < 1 || n > maxExamine {
				return fmt.Errorf("bad count %q in %s (1 to %d)", spec[:i], name, maxExamine)
			}
			count = n
		}
		for _, c := range []byte(spec[i:]) {
			switch c {
			case 'b':
				unit = 1
			case 'h':
				unit = 2
			case 'w':
				unit = 4
			case 'g':
				unit = 8
			case 'x', 'd', 'u', 'o', 't', 'c', 's', 'a':
				format = c
			case 'i':
				return s.examineInstructions(count, args, res)
			default:
				return fmt.Errorf("bad format letter %q in %s", c, name)
			}
		}
	}
	if unit == 0 {
		unit = 4
		if format == 'c' || format == 's' {
			unit = 1
		}
		if format == 'a' {
			unit = 8
		}
	}
	addr, err := s.evalAddress(args)
	if err != nil {
		return err
	}
	if format == 's' {
		var out []string
		var b strings.Builder
		for i := 0; i < count; i++ {
			data, _ := s.tl.Session().ReadMem(addr, 4096)
			if len(data) == 0 {
				return fmt.Errorf("Cannot access memory at address %#x", addr)
			}
			end := strings.IndexByte(string(data), 0)
			if end < 0 {
				end = len(data)
			}
			str := string(data[:end])
			out = append(out, str)
			fmt.Fprintf(&b, "%#x:\t%q\n", addr, str)
			addr += uint64(end + 1)
		}
		res.Value, res.Text = out, strings.TrimRight(b.String(), "\n")
		return nil
	}
	data, err := s.tl.Session().ReadMem(addr, count*unit)
	if err != nil && len(data) < count*unit {
		return fmt.Errorf("cannot access memory at %#x", addr+uint64(len(data)))
	}
	var out []string
	var b strings.Builder
	for i := 0; i < count; i++ {
		if i%perLine(unit) == 0 {
			if i > 0 {
				b.WriteByte('\n')
			}
			at := addr + uint64(i*unit)
			fmt.Fprintf(&b, "%#x", at)
			if fn, off := s.symbolize(at); fn != "" {
				b.WriteString(symRef(fn, off))
			}
			b.WriteByte(':')
		}
		chunk := data[i*unit : (i+1)*unit]
		var v uint64
		for j := unit - 1; j >= 0; j-- {
			v = v<<8 | uint64(chunk[j])
		}
		str := formatValue(v, unit, format)
		out = append(out, str)
		b.WriteString("\t" + str)
	}
	res.Value, res.Text = out, b.String()
	return nil
}

func perLine(unit int) int {
	switch unit {
	case 1:
		return 8
	case 8:
		return 2
	}
	return 4
}

func formatValue(v uint64, unit int, f byte) string {
	switch f {
	case 'd':
		shift := 64 - 8*unit
		return strconv.FormatInt(int64(v<<shift)>>shift, 10)
	case 'u':
		return strconv.FormatUint(v, 10)
	case 'o':
		return "0" + strconv.FormatUint(v, 8)
	case 't':
		return strconv.FormatUint(v, 2)
	case 'c':
		return fmt.Sprintf("%d %q", v, rune(v))
	case 'a':
		return fmt.Sprintf("%#x", v)
	}
	return fmt.Sprintf("0x%0*x", 2*unit, v)
}

// cmdEvents lists events N..M (default: a window around now).
func (s *Session) cmdEvents(args string, res *Result) error {
	now := s.tl.When()
	from, to := now-5, now+5
	f := strings.Fields(args)
	if len(f) >= 1 {
		v, err := strconv.ParseInt(strings.TrimPrefix(f[0], "#"), 10, 64)
		if err != nil {
			return fmt.Errorf("bad event %q", f[0])
		}
		from, to = v, v+10
	}
	if len(f) >= 2 {
		v, err := strconv.ParseInt(strings.TrimPrefix(f[1], "#"), 10, 64)
		if err != nil {
			return fmt.Errorf("bad event %q", f[1])
		}
		to = v
	}
	from = max(from, 0)
	var list []EventLine
	var b strings.Builder
	_, err := ReadEvents(s.path, from, to, func(i int64, e *trace.Event, text string) {
		list = append(list, EventLine{Event: i, Thread: e.Tid, Text: text})
		mark := " "
		if i == now {
			mark = ">"
		}
		fmt.Fprintf(&b, "%s#%-7d %7d %s\n", mark, i, e.Tid, text)
	})
	if err != nil {
		return err
	}
	res.Value, res.Text = list, strings.TrimRight(b.String(), "\n")
	return nil
}
