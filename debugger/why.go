package debugger

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rewind-debugger/rewind/engine/timeline"
)

// Why is the explanation of a recording's failure (rewind why, the why
// command, the MCP tool): the failure, then the chain of moments the bad
// value came through, newest first, each a place the session can go to.
type Why struct {
	Failure WhyFailure `json:"failure"`
	Chain   []WhyLink  `json:"chain"`
	// Suspect is the index in Chain of the first suspicious write, -1
	// when the chain found none.
	Suspect int `json:"suspect"`
	// Verdict says in one sentence what the chain found, or where it
	// stopped and why.
	Verdict string `json:"verdict"`
}

// WhyFailure is where and how the program failed.
type WhyFailure struct {
	// Kind is "signal" (a fault), "assert" (a failed assert), "abort"
	// or "exit" (a non-zero exit status after writing to stderr).
	Kind        string   `json:"kind"`
	Description string   `json:"description"`
	Place       WhyPlace `json:"place"`
	// Stack is the failing thread's backtrace, one frame a line.
	Stack []string `json:"stack"`
	// Reported is the line of the program's code the failure message
	// names (a test's file:line), when it names one: it has no moment.
	Reported *WhyPlace `json:"reported,omitempty"`
}

// WhyPlace is a moment of the recording and the code there.
type WhyPlace struct {
	// Moment goes there with goto; Event is its event number.
	Moment   string `json:"moment"`
	Event    int64  `json:"event"`
	Thread   int32  `json:"thread"`
	PC       string `json:"pc"`
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	// Source is the text of the line; Instruction the instruction at PC.
	Source      string `json:"source,omitempty"`
	Instruction string `json:"instruction,omitempty"`
}

// WhyLink is one step back along the bad value: the instruction (or
// system call) that gave a location the value the next link used.
type WhyLink struct {
	// Kind is "register" (an instruction set a register), "write" (an
	// instruction wrote memory) or "syscall" (the kernel wrote memory).
	Kind string `json:"kind"`
	// What names the location: $rax, a variable, a field, or an address.
	What string `json:"what"`
	// Value is what the location got; Old what it held before.
	Value string `json:"value"`
	Old   string `json:"old,omitempty"`
	WhyPlace
	// Note says where the value came from: "loaded from n", "stored from
	// $rax", "a constant", "returned by calloc".
	Note string `json:"note,omitempty"`
	// Suspicion says why this write is suspicious ("" when it is not).
	Suspicion string `json:"suspicion,omitempty"`
}

// defaultWhyLinks bounds the chain: each link is a reverse search.
const defaultWhyLinks = 12

// whyLinkBudget bounds the time why spends finding the failure, and each
// link: past it the search is cancelled and the chain says where it
// stopped.
const whyLinkBudget = 20 * time.Second

// cmdWhy implements `why [N]`: explain the failure, following at most N
// links (12 by default). The session ends at the failure.
func (s *Session) cmdWhy(args string, res *Result) error {
	n := defaultWhyLinks
	if a := strings.TrimSpace(args); a != "" {
		v, err := strconv.Atoi(a)
		if err != nil || v < 1 {
			return fmt.Errorf("why takes the most links to follow, a positive number: %q", a)
		}
		n = v
	}
	w, err := s.Why(n)
	if err != nil {
		return err
	}
	res.Value, res.Text = w, w.Text()
	return nil
}

// Why explains the recording's failure: it finds the failure, then follows
// the bad value back through at most maxLinks registers and memory writes,
// stopping at the first suspicious write. The user's breakpoints and
// watchpoints stay set but do not stop it; the session is left at the
// failure.
func (s *Session) Why(maxLinks int) (*Why, error) {
	if maxLinks <= 0 {
		maxLinks = defaultWhyLinks
	}
	// The searches below are the engine's, with no user stop in the way.
	if err := s.tl.SetBreakpoints(nil); err != nil {
		return nil, err
	}
	if err := s.tl.SetWatchpoints(nil); err != nil {
		return nil, err
	}
	// Each search is bounded: a run that writes a location a million times
	// without a system call, where no arrival counter goes (one that ends
	// in a preemption), is searched one trap per write.
	progress := s.tl.Progress
	s.tl.Progress = func(done, total int64) bool {
		return time.Now().Before(s.whyDeadline) && (progress == nil || progress(done, total))
	}
	s.whyDeadline = time.Now().Add(whyLinkBudget)
	defer func() {
		s.tl.Progress = progress
		s.syncBreakpoints()
		s.syncWatches()
	}()
	f, start, err := s.findFailure()
	if errors.Is(err, timeline.ErrCancelled) {
		return nil, fmt.Errorf("finding the failure took over %v: %w", whyLinkBudget, err)
	}
	if err != nil {
		return nil, err
	}
	w := &Why{Failure: f.WhyFailure, Suspect: -1}
	at := s.tl.Now()
	if start != nil {
		w.Chain, w.Suspect, w.Verdict = s.followChain(f, *start, maxLinks)
	} else {
		w.Verdict = f.verdict
	}
	s.tl.Goto(at)
	s.frame, s.lastStop = 0, nil
	return w, nil
}

// Text renders the explanation for the terminal.
func (w *Why) Text() string {
	var b strings.Builder
	f := w.Failure
	fmt.Fprintf(&b, "Failure: %s\n", f.Description)
	fmt.Fprintf(&b, "  at %s [%s]\n", placeWhere(f.Place), f.Place.Moment)
	if f.Place.Source != "" {
		fmt.Fprintf(&b, "  %s\n", f.Place.Source)
	}
	if r := f.Reported; r != nil {
		fmt.Fprintf(&b, "  reported at %s\n", placeWhere(*r))
		if r.Source != "" {
			fmt.Fprintf(&b, "  %s\n", r.Source)
		}
	}
	for _, fr := range f.Stack {
		fmt.Fprintf(&b, "    %s\n", fr)
	}
	if len(w.Chain) > 0 {
		b.WriteString("\nWhere the bad value came from (newest first):\n")
	}
	for i, l := range w.Chain {
		fmt.Fprintf(&b, "%2d. %s = %s", i+1, l.What, l.Value)
		if l.Old != "" {
			fmt.Fprintf(&b, " (was %s)", l.Old)
		}
		fmt.Fprintf(&b, "\n    %s at %s [%s]\n", linkVerb(l), placeWhere(l.WhyPlace), l.Moment)
		if l.Source != "" {
			fmt.Fprintf(&b, "    %s\n", l.Source)
		}
		if l.Instruction != "" {
			fmt.Fprintf(&b, "    %s: %s\n", l.PC, l.Instruction)
		}
		if l.Note != "" {
			fmt.Fprintf(&b, "    %s\n", l.Note)
		}
		if l.Suspicion != "" {
			fmt.Fprintf(&b, "    SUSPICIOUS: %s\n", l.Suspicion)
		}
	}
	fmt.Fprintf(&b, "\n%s\n", w.Verdict)
	if len(w.Chain) > 0 {
		fmt.Fprintf(&b, "(goto MOMENT goes to a link: the moments are in brackets.)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func linkVerb(l WhyLink) string {
	switch l.Kind {
	case "register":
		return "set"
	case "syscall":
		return "written by the kernel"
	}
	return "written"
}

// placeWhere is "function at file:line", or the pc without a line.
func placeWhere(p WhyPlace) string {
	fn := p.Function
	if fn == "" && p.File != "" {
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if fn == "" {
		fn = "??"
	}
	if p.File != "" {
		return fmt.Sprintf("%s at %s:%d", fn, p.File, p.Line)
	}
	return fmt.Sprintf("%s (%s)", fn, p.PC)
}

// place describes the current moment in thread tid at pc.
func (s *Session) place(tid int32, pc uint64) WhyPlace {
	m := s.tl.Now()
	s.moments[m.Portable()] = m
	var info StopInfo
	s.placeInfo(&info, pc)
	p := WhyPlace{Moment: m.Portable(), Event: m.Event, Thread: tid, PC: fmt.Sprintf("%#x", pc),
		Function: info.Function, File: info.File, Line: info.Line}
	if src := s.sourceLine(info.FullName, info.Line); src != "" {
		_, text, _ := strings.Cut(src, "\t")
		p.Source = strings.TrimSpace(text)
	}
	if ins, err := s.symbols().Disassemble(s.mem(), pc, 1); err == nil && len(ins) == 1 {
		p.Instruction = ins[0].Text
	}
	return p
}

// errNoFailure says the recording ended well: nothing to explain.
var errNoFailure = errors.New("the program did not fail: it exited with status 0, no fatal signal, no failed assertion")
