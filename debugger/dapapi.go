package debugger

import (
	"errors"
	"fmt"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

// This file is what the Debug Adapter Protocol server (package dap) needs
// beyond the command language: an editor asks for variables one level at
// a time, by reference, in a frame and thread of its choosing, without
// moving the user's selection through text commands.

// VarScope names the variables a DAP scope lists.
type VarScope int

// The scopes of a frame, and an expression's value (evaluate's results).
const (
	ScopeLocals VarScope = iota
	ScopeArgs
	ScopeExpr
)

// VarPath names a value an editor can expand: a thread's frame, a scope
// (or an expression evaluated in that frame), and the indexes of the
// children followed from there. Paths are valid until the next motion.
type VarPath struct {
	Thread int32 // 0: the current thread
	Frame  int
	Scope  VarScope
	Expr   string // for ScopeExpr
	Path   []int
}

// selectFrame selects thread and frame level for a request and returns
// what restores the previous selection: a DAP request for a frame must
// not change which frame the session's own commands see.
func (s *Session) selectFrame(thread int32, level int) func() {
	oldThread, oldFrame := s.thread, s.frame
	if thread != 0 {
		s.thread = thread
	}
	s.frame = level
	return func() { s.thread, s.frame = oldThread, oldFrame }
}

// ExecuteIn runs a command line with a thread and frame selected, as an
// editor's REPL and watch expressions ask for their frame. The selection
// stays when the command moved (a motion selects frame 0 of its stop).
func (s *Session) ExecuteIn(thread int32, level int, line string) Result {
	restore := s.selectFrame(thread, level)
	res := s.Execute(line)
	if res.Stop == nil {
		restore()
	}
	return res
}

// Expand returns the values at p, each with its own children computed one
// level deep so that the caller knows which ones expand: the top-level
// variables of a scope for an empty path, else the children of the value
// the path leads to.
func (s *Session) Expand(p VarPath) ([]VarNode, error) {
	vals, err := s.valuesAt(p)
	if err != nil {
		return nil, err
	}
	out := make([]VarNode, 0, len(vals))
	for _, v := range vals {
		out = append(out, s.varNode(v, 1))
	}
	return out, nil
}

// Evaluate evaluates expr in a thread's frame, with its children one level
// deep (evaluate's answer, whose children Expand gives later).
func (s *Session) Evaluate(thread int32, level int, expr string) (VarNode, error) {
	defer s.selectFrame(thread, level)()
	v, err := s.eval(expr)
	if err != nil {
		return VarNode{}, err
	}
	n := s.varNode(v, 1)
	n.Name = expr
	return n, nil
}

// valuesAt lists the values at the end of a path.
func (s *Session) valuesAt(p VarPath) ([]dwarf.Value, error) {
	defer s.selectFrame(p.Thread, p.Frame)()
	var vals []dwarf.Value
	switch p.Scope {
	case ScopeExpr:
		v, err := s.eval(p.Expr)
		if err != nil {
			return nil, err
		}
		vals = []dwarf.Value{v}
		// An expression's answer is the value itself: its reference
		// expands to its children.
		p.Path = append([]int{0}, p.Path...)
	default:
		frames, err := s.stack(s.currentThread())
		if err != nil {
			return nil, fmt.Errorf("variables: %w", err)
		}
		if p.Frame < 0 || p.Frame >= len(frames) {
			return nil, fmt.Errorf("no frame at level %d", p.Frame)
		}
		if frames[p.Frame].Function == nil {
			return nil, nil // no debug information: nothing to list
		}
		args, locals, err := s.symbols().FrameVariables(frames, p.Frame, s.mem())
		if err != nil {
			return nil, fmt.Errorf("variables of frame %d: %w", p.Frame, err)
		}
		vars := locals
		if p.Scope == ScopeArgs {
			vars = args
		}
		for _, v := range vars {
			vals = append(vals, v.Value)
		}
	}
	for _, i := range p.Path {
		if i < 0 || i >= len(vals) {
			return nil, errors.New("the variable is gone (the program moved since it was listed)")
		}
		vals = s.symbols().Children(vals[i], s.mem(), dwarf.FormatOptions{MaxElements: 64})
	}
	return vals, nil
}

// Location returns a raw `*(TYPE *)ADDR` watch expression for the memory
// of the value at p's end (the last index of its path selects it): a data
// breakpoint names memory, not a name that means another variable in
// another frame.
func (s *Session) Location(p VarPath) (expr string, size int64, err error) {
	var v dwarf.Value
	if len(p.Path) == 0 && p.Scope != ScopeExpr {
		return "", 0, errors.New("a scope is not a value")
	}
	if len(p.Path) == 0 {
		defer s.selectFrame(p.Thread, p.Frame)()
		if v, err = s.eval(p.Expr); err != nil {
			return "", 0, err
		}
	} else {
		last := p.Path[len(p.Path)-1]
		p.Path = p.Path[:len(p.Path)-1]
		vals, err := s.valuesAt(p)
		if err != nil {
			return "", 0, err
		}
		if last < 0 || last >= len(vals) {
			return "", 0, errors.New("the variable is gone (the program moved since it was listed)")
		}
		v = vals[last]
	}
	if !v.InMem || v.Type == nil {
		return "", 0, fmt.Errorf("%s is not in memory (a register or a constant): it cannot be watched", v.Name)
	}
	return fmt.Sprintf("*(%s *)%#x", v.Type.Name, v.Addr), v.Type.Size, nil
}

// FrameRegisters lists the registers of a thread's frame in gdb's order:
// all of them for frame 0, those the unwinder recovered for callers.
func (s *Session) FrameRegisters(thread int32, level int) ([]Register, error) {
	defer s.selectFrame(thread, level)()
	tid := s.currentThread()
	frames, err := s.stack(tid)
	if err != nil {
		return nil, fmt.Errorf("registers: %w", err)
	}
	if level < 0 || level >= len(frames) {
		return nil, fmt.Errorf("no frame at level %d", level)
	}
	return s.frameRegisters(tid, frames[level], level), nil
}

// Arrival is a moment at which the program reaches a source location.
type Arrival struct {
	Moment string // `goto MOMENT` returns to it
	Event  int64
	Thread int32
}

// Arrivals finds the last arrival at loc (FILE:LINE, FUNCTION) before the
// current moment and the first after it (nil when there is none), and
// stays where it is. User breakpoints and watchpoints are not armed on
// the way: the question is about loc alone.
func (s *Session) Arrivals(loc string) (earlier, later *Arrival, err error) {
	addrs, err := s.resolve(loc)
	if err != nil {
		return nil, nil, err
	}
	back := s.tl.Now()
	// The resolver too: it re-arms the user's breakpoints at a mapping or
	// exec on the way (or a checkpoint restored), and one set before the
	// program mapped its code hid the arrivals behind it.
	s.tl.SetResolver(func(int) []uint64 { return nil })
	defer s.tl.SetResolver(s.breakpointsOf)
	if err := s.tl.SetBreakpoints(nil); err != nil {
		return nil, nil, fmt.Errorf("arrivals at %s: %w", loc, err)
	}
	defer func() {
		s.tl.SetResolver(s.breakpointsOf)
		if gerr := s.tl.Goto(back); gerr != nil && err == nil {
			err = fmt.Errorf("arrivals at %s: back to %v: %w", loc, back, gerr)
		}
		if serr := s.syncBreakpoints(); serr != nil && err == nil {
			err = serr
		}
	}()
	run := timeline.Run{Temp: addrs, IgnoreWatchpoints: true}
	find := func(op func(timeline.Run) (*timeline.Stop, error)) (*Arrival, error) {
		st, err := op(run)
		if errors.Is(err, timeline.ErrAtStart) {
			return nil, nil
		}
		if err != nil || st.Reason != timeline.ReasonStep {
			return nil, err
		}
		m := st.Moment
		s.moments[m.String()] = m
		return &Arrival{Moment: m.String(), Event: m.Event, Thread: m.Tid}, nil
	}
	if later, err = find(s.tl.ContinueRun); err != nil {
		return nil, nil, fmt.Errorf("arrivals at %s: %w", loc, err)
	}
	if err := s.tl.Goto(back); err != nil {
		return nil, nil, fmt.Errorf("arrivals at %s: %w", loc, err)
	}
	if earlier, err = find(s.tl.ReverseContinueRun); err != nil {
		return nil, nil, fmt.Errorf("arrivals at %s: %w", loc, err)
	}
	return earlier, later, nil
}
