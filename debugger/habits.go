package debugger

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/engine/timeline"
)

// habitState is what gdb's habits keep between commands: the settings
// of set/show, displays, ignore counts, rr-style checkpoints, and whether
// kill ended the session's program.
type habitState struct {
	// Zero values are gdb's defaults in batch mode: pagination and
	// confirm on, pretty printing off, width and height unlimited (0).
	noPagination, noConfirm, pretty bool
	width, height                   int
	displays                        []*display
	nextDisplay                     int
	// ignore counts the breakpoint hits still to skip, by breakpoint.
	ignore      map[int]int
	checkpoints []*checkpoint
	nextCheckpt int
	// killed is set by kill: commands that need the program refuse
	// until run or start bring it back, as after gdb's kill.
	killed bool
	// sourceDepth bounds nested source commands (a file sourcing itself).
	sourceDepth int
	// lastThread is the thread of the last stop or thread command, for
	// gdb's "[Switching to Thread ...]" when a stop is in another one.
	lastThread int32
}

// maxSourceDepth is how deep source FILE may nest, and maxSourceSize how
// big a command file may be.
const (
	maxSourceDepth = 16
	maxSourceSize  = 16 << 20
)

// errNotRunning is gdb's answer to a command that needs the program.
var errNotRunning = errors.New("The program is not being run.")

// cmdKill is gdb's kill: the session has no program until run, start or
// restart bring it back, and commands that need one say so.
func (s *Session) cmdKill(res *Result) error {
	if s.habits.killed {
		return errNotRunning
	}
	s.habits.killed, s.habits.lastThread = true, 0
	res.Text = fmt.Sprintf("[Inferior 1 (process %d) killed]", s.Process())
	return nil
}

// cutWord cuts a leading word (delete checkpoint N, delete display N).
func cutWord(args, word string) (string, bool) {
	w, rest := splitCommand(args)
	return rest, w == word
}

// cutFull recognises bt full [N], bt -full [N] and bt N full.
func cutFull(args string) (string, bool) {
	var rest []string
	full := false
	for _, f := range strings.Fields(args) {
		if f == "full" || f == "-full" {
			full = true
			continue
		}
		rest = append(rest, f)
	}
	return strings.Join(rest, " "), full
}

// cmdRun is gdb's run: back to the start of the recording, then continue
// (the program runs again from its beginning, exactly as recorded).
func (s *Session) cmdRun(res *Result) error {
	if err := s.syncBreakpoints(); err != nil {
		return err
	}
	if err := s.tl.Goto(s.tl.Start()); err != nil {
		return err
	}
	s.habits.killed = false
	return s.run(res, s.ignoring(s.continueForward))
}

// isPrintCommand says whether a command evaluates its argument as print
// does (print, call, output, with a format).
func isPrintCommand(name string) bool {
	base, _, _ := strings.Cut(name, "/")
	switch base {
	case "print", "p", "call", "output", "inspect":
		return true
	}
	return false
}

// hasAssignment says whether an expression assigns (x = 3, x += 1, x++):
// outside strings and characters, an = that is not part of ==, <=, >=, !=,
// or an increment.
func hasAssignment(src string) bool {
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"' || c == '\'':
			i = skipQuoted(src, i)
		case c == '+' && i+1 < len(src) && src[i+1] == '+', c == '-' && i+1 < len(src) && src[i+1] == '-':
			return true
		case c == '=':
			if i+1 < len(src) && src[i+1] == '=' {
				i++
				continue
			}
			if i > 0 && strings.IndexByte("=<>!", src[i-1]) >= 0 {
				continue
			}
			return true
		}
	}
	return false
}

// errCannotChange refuses a command that would write to the program.
func errCannotChange(what string) error {
	return fmt.Errorf("cannot change the recording: %q would write to the program, and a replay can only show what it did (its memory and registers are the recorded ones)", strings.TrimSpace(what))
}

// settings are the names set and show know, with gdb's show wording.
var settings = []struct {
	name, words string
}{
	{"pagination", "State of pagination is %s."},
	{"confirm", "Whether to confirm potentially dangerous operations is %s."},
	{"print pretty", "Pretty formatting of structures is %s."},
	{"width", "Number of characters gdb thinks are in a line is %s."},
	{"height", "Number of lines gdb thinks are in a page is %s."},
}

// setting finds the setting an argument names ("print pretty", "p pretty"
// and "pretty" alone are gdb's forms), and what follows it.
func setting(args string) (string, string, bool) {
	f := strings.Fields(args)
	if len(f) == 0 {
		return "", "", false
	}
	if (f[0] == "print" || f[0] == "p" || f[0] == "pr") && len(f) > 1 && f[1] == "pretty" {
		return "print pretty", strings.Join(f[2:], " "), true
	}
	for _, st := range settings {
		if f[0] == st.name {
			return st.name, strings.Join(f[1:], " "), true
		}
	}
	return "", "", false
}

// cmdSet implements set var|variable (refused: a recording cannot change),
// set EXPR with an assignment (the same), and the settings of gdb that
// scripts set: pagination, confirm, print pretty, width, height.
func (s *Session) cmdSet(args string, res *Result) error {
	if rest, ok := cutWord(args, "var"); ok {
		return errCannotChange(rest)
	}
	if rest, ok := cutWord(args, "variable"); ok {
		return errCannotChange(rest)
	}
	name, val, ok := setting(args)
	if !ok {
		if hasAssignment(args) {
			return errCannotChange(args)
		}
		return fmt.Errorf("Undefined set command: %q.  Try \"help set\".", args)
	}
	h := &s.habits
	switch name {
	case "width", "height":
		n := 0
		switch val {
		case "unlimited", "0":
		case "":
			return errors.New("Argument required (integer to set it to, or \"unlimited\").")
		default:
			v, err := strconv.Atoi(val)
			if err != nil || v < 0 {
				return fmt.Errorf("integer %s out of range", val)
			}
			n = v
		}
		if name == "width" {
			h.width = n
		} else {
			h.height = n
		}
		return nil
	}
	on, err := onOff(val)
	if err != nil {
		return err
	}
	switch name {
	case "pagination":
		h.noPagination = !on
	case "confirm":
		h.noConfirm = !on
	case "print pretty":
		h.pretty = on
	}
	return nil
}

// onOff reads gdb's boolean values (nothing means on).
func onOff(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "on", "1", "yes", "enable":
		return true, nil
	case "off", "0", "no", "disable":
		return false, nil
	}
	return false, errors.New(`"on" or "off" expected.`)
}

// cmdShow shows a setting in gdb's words.
func (s *Session) cmdShow(args string, res *Result) error {
	if strings.TrimSpace(args) == "" {
		return errors.New("show needs a setting: pagination, confirm, print pretty, width or height")
	}
	name, _, ok := setting(args)
	if !ok {
		return fmt.Errorf("Undefined show command: %q.  Try \"help show\".", strings.TrimSpace(args))
	}
	h := &s.habits
	word := func(on bool) string {
		if on {
			return "on"
		}
		return "off"
	}
	limit := func(n int) string {
		if n == 0 {
			return "unlimited"
		}
		return strconv.Itoa(n)
	}
	var v string
	switch name {
	case "pagination":
		v = word(!h.noPagination)
	case "confirm":
		v = word(!h.noConfirm)
	case "print pretty":
		v = word(h.pretty)
	case "width":
		v = limit(h.width)
	case "height":
		v = limit(h.height)
	}
	for _, st := range settings {
		if st.name == name {
			res.Text = fmt.Sprintf(st.words, v)
		}
	}
	res.Value = v
	return nil
}

// cmdSource runs the commands of a file, as gdb's source: one result
// whose text is theirs, stopping at the first that fails (gdb's "Error in
// sourced command file"). The last stop is the result's.
func (s *Session) cmdSource(args string, res *Result) error {
	path := strings.TrimSpace(args)
	if path == "" {
		return errors.New("source command requires file name of file to source.")
	}
	if s.habits.sourceDepth >= maxSourceDepth {
		return fmt.Errorf("source %s: nested more than %d deep", path, maxSourceDepth)
	}
	// Only a regular file of a sane size: /dev/zero or a FIFO would never end.
	if st, err := os.Stat(path); err != nil {
		return fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	} else if !st.Mode().IsRegular() || st.Size() > maxSourceSize {
		return fmt.Errorf("%s: not a command file (a regular file of at most %d MiB)", path, maxSourceSize>>20)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	s.habits.sourceDepth++
	defer func() { s.habits.sourceDepth-- }()
	var texts []string
	var results []Result
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		r := s.Execute(l)
		results = append(results, r)
		if r.Text != "" {
			texts = append(texts, strings.TrimSuffix(r.Text, "\n"))
		}
		if r.Stop != nil {
			// Shown with its displays by the line that stopped.
			res.Stop, res.Displays, res.decorated = r.Stop, r.Displays, true
		}
		if !r.OK {
			return fmt.Errorf("%s\nError in sourced command file %s: %s", strings.Join(texts, "\n"), path, r.Error)
		}
		if r.Quit {
			res.Quit = true
			break
		}
	}
	res.Value = results
	res.Text = strings.Join(texts, "\n")
	return nil
}

// cmdContinue runs continue or reverse-continue (op), skipping the hits
// of breakpoints with an ignore count; gdb's `continue N` ignores the
// breakpoint stopped at N-1 more times.
func (s *Session) cmdContinue(args string, res *Result, op func() (*timeline.Stop, error)) error {
	if args != "" {
		n, err := strconv.Atoi(args)
		if err != nil || n < 1 {
			return fmt.Errorf("bad count %q", args)
		}
		if s.lastStop == nil || s.lastStop.Breakpoint == 0 {
			// As gdb: said, and the continue goes on without it.
			note := "Not stopped at any breakpoint; argument ignored."
			err := s.cmdContinue("", res, op)
			res.Text = strings.TrimPrefix(note+"\n"+res.Text, "\n")
			return err
		} else if n > 1 {
			s.setIgnore(s.lastStop.Breakpoint, n-1)
		}
	}
	for _, n := range s.habits.ignore {
		if n > 0 {
			return s.run(res, s.ignoring(op))
		}
	}
	return s.run(res, op)
}

// ignoring wraps a continue so that a breakpoint stop whose breakpoint
// has an ignore count goes on, decreasing the count: the skipped hits are
// the next ones in the direction of travel (reverse-continue skips the
// nearest earlier ones).
func (s *Session) ignoring(op func() (*timeline.Stop, error)) func() (*timeline.Stop, error) {
	return func() (*timeline.Stop, error) {
		for {
			st, err := op()
			if err != nil || st.Reason != timeline.ReasonBreakpoint {
				return st, err
			}
			id := s.breakpointAt(st)
			if s.habits.ignore[id] <= 0 {
				return st, nil
			}
			s.habits.ignore[id]--
			s.countHit(id) // gdb counts the crossings it ignores
		}
	}
}

// breakpointAt is the number of the enabled breakpoint a stop is at (0
// for none).
func (s *Session) breakpointAt(st *timeline.Stop) int {
	tid := st.Moment.Tid
	if tid == 0 {
		tid = s.currentThread()
	}
	pc, err := s.pcOf(tid)
	if err != nil {
		return 0
	}
	if b := s.enabledBreakpointAt(pc); b != nil {
		return b.id
	}
	return 0
}

// enabledBreakpointAt is the first enabled breakpoint with an address at
// pc, nil when none.
func (s *Session) enabledBreakpointAt(pc uint64) *breakpoint {
	for _, b := range s.bps {
		if !b.disabled && slices.Contains(b.addrs, pc) {
			return b
		}
	}
	return nil
}

// setIgnore sets a breakpoint's ignore count.
func (s *Session) setIgnore(id, n int) {
	if s.habits.ignore == nil {
		s.habits.ignore = map[int]int{}
	}
	s.habits.ignore[id] = n
}

// findBreakpoint is breakpoint number id, or gdb's error.
func (s *Session) findBreakpoint(arg string) (*breakpoint, error) {
	id, err := strconv.Atoi(arg)
	if err != nil {
		return nil, fmt.Errorf("Bad breakpoint argument: '%s'", arg)
	}
	for _, b := range s.bps {
		if b.id == id {
			return b, nil
		}
	}
	for _, w := range s.watches {
		if w.id == id {
			return nil, fmt.Errorf("breakpoint %d is a watchpoint: conditions and ignore counts apply to breakpoints", id)
		}
	}
	return nil, fmt.Errorf("No breakpoint number %d.", id)
}

// cmdCondition implements condition N [EXPR]: set, or remove, the
// condition of breakpoint N.
func (s *Session) cmdCondition(args string, res *Result) error {
	num, cond := splitCommand(args)
	if num == "" {
		return errors.New("Argument required (breakpoint number).")
	}
	b, err := s.findBreakpoint(num)
	if err != nil {
		return err
	}
	if cond == "" {
		b.cond = ""
		res.Text = fmt.Sprintf("Breakpoint %d now unconditional.", b.id)
		return s.syncBreakpoints()
	}
	if hasAssignment(cond) {
		return errCannotChange(cond)
	}
	b.cond = cond
	return s.syncBreakpoints()
}

// cmdIgnore implements ignore N COUNT, with gdb's wording.
func (s *Session) cmdIgnore(args string, res *Result) error {
	f := strings.Fields(args)
	if len(f) == 0 {
		return errors.New("Argument required (a breakpoint number).")
	}
	b, err := s.findBreakpoint(f[0])
	if err != nil {
		return err
	}
	if len(f) < 2 {
		return errors.New("Second argument (specified ignore-count) is missing.")
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return fmt.Errorf("bad ignore count %q", f[1])
	}
	n = max(n, 0)
	s.setIgnore(b.id, n)
	switch n {
	case 0:
		res.Text = fmt.Sprintf("Will stop next time breakpoint %d is reached.", b.id)
	case 1:
		res.Text = fmt.Sprintf("Will ignore next crossing of breakpoint %d.", b.id)
	default:
		res.Text = fmt.Sprintf("Will ignore next %d crossings of breakpoint %d.", n, b.id)
	}
	return nil
}

// switchedThread says, as gdb, that a stop is in another thread than the
// last one ("[Switching to Thread 0x7ffff7d89640 (LWP 1235)]" before it),
// and, once the program has more than one thread, which thread hit the
// breakpoint or watchpoint or received the signal.
func (s *Session) switchedThread(res *Result) {
	tid := res.Stop.Thread
	prev := s.habits.lastThread
	s.habits.lastThread = tid
	if tid == 0 {
		return
	}
	most := s.threadNumber(tid)
	for _, t := range s.tl.Session().Threads() {
		most = max(most, s.threadNumber(t.Tid))
	}
	if most > 1 {
		for _, p := range []struct{ from, to string }{
			{"Breakpoint ", " hit Breakpoint "}, {"Temporary breakpoint ", " hit Temporary breakpoint "},
			{"Hardware watchpoint ", " hit Hardware watchpoint "}, {"Program received signal ", " received signal "},
		} {
			if rest, ok := strings.CutPrefix(res.Text, p.from); ok {
				who := fmt.Sprintf("Thread %d", s.threadNumber(tid))
				if name := s.ThreadName(tid); name != "" {
					who += fmt.Sprintf(" %q", name)
				}
				res.Text = who + p.to + rest
				break
			}
		}
	}
	if prev != 0 && prev != tid {
		res.Text = fmt.Sprintf("[Switching to %s]\n\n%s", s.targetID(tid), res.Text)
	}
}
