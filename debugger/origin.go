package debugger

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// maxRegisterSteps bounds the instructions origin single-steps to find the
// one that set a register: single-steps cost a ptrace stop each.
const maxRegisterSteps = 20000

// originTarget is what the last origin command followed, so that origin
// without an argument goes one write further along the same location.
type originTarget struct {
	expr string
	wp   replay.Watchpoint
	typ  *dwarf.Type
	reg  int // a trace.Regs index for a register origin, else -1
}

// cmdOrigin implements `origin [--forward|--read] [EXPR]`: back to the
// instruction that last wrote the value of EXPR (forward: the next write;
// --read: the next access), with the old and new value and the writing
// line. Without EXPR it follows the location of the last origin.
func (s *Session) cmdOrigin(args string, res *Result) error {
	mode := "back"
	for {
		a := strings.TrimSpace(args)
		switch {
		case a == "--forward" || a == "-f" || strings.HasPrefix(a, "--forward ") || strings.HasPrefix(a, "-f "):
			mode, args = "forward", strings.TrimPrefix(strings.TrimPrefix(a, "--forward"), "-f")
			continue
		case a == "--read" || a == "-r" || strings.HasPrefix(a, "--read ") || strings.HasPrefix(a, "-r "):
			mode, args = "read", strings.TrimPrefix(strings.TrimPrefix(a, "--read"), "-r")
			continue
		}
		args = a
		break
	}
	var tgt *originTarget
	if args == "" {
		if s.origin == nil {
			return errors.New("origin needs an expression the first time: origin EXPR (a variable, *p, a[i], s->f or $REG)")
		}
		tgt = s.origin
	} else if reg, ok := registerIndex(args); ok {
		tgt = &originTarget{expr: args, reg: reg}
	} else {
		wp, typ, err := s.watchTarget(args, false)
		if err != nil {
			return fmt.Errorf("origin %s: %w", args, err)
		}
		tgt = &originTarget{expr: args, wp: wp, typ: typ, reg: -1}
	}
	if tgt.reg >= 0 {
		switch mode {
		case "back":
			return s.registerOrigin(tgt, args == "", res)
		case "forward":
			return s.registerForward(tgt, res)
		}
		return fmt.Errorf("origin --%s works on memory, not on a register: not implemented yet", mode)
	}
	wp := tgt.wp
	wp.ReadWrite = mode == "read"
	w := &watch{expr: tgt.expr, wp: wp, typ: tgt.typ}
	var st *timeline.Stop
	op := func() (*timeline.Stop, error) {
		var err error
		switch mode {
		case "back":
			st, err = s.tl.PreviousWrite(wp)
		case "forward":
			st, err = s.tl.NextWrite(wp)
		default:
			// The debug registers trap reads and writes together: an
			// access that changed the value is a write, go on.
			for {
				st, err = s.tl.NextWrite(wp)
				if err != nil || st.Old == st.New {
					break
				}
			}
		}
		if errors.Is(err, timeline.ErrNoWrite) {
			dir := map[string]string{"back": "before", "forward": "after", "read": "after"}[mode]
			what := map[string]string{"back": "write to", "forward": "write to", "read": "read of"}[mode]
			return nil, fmt.Errorf("no %s %s %s this moment in the recording", what, tgt.expr, dir)
		}
		return st, err
	}
	err := s.runAs(res, op, func(st *timeline.Stop, info *StopInfo) {
		info.Reason = "origin"
		info.Watch = &WatchInfo{Expr: tgt.expr, Old: s.watchValue(w, st.Old), New: s.watchValue(w, st.New)}
		if kernelWrote(st.Moment) {
			info.Watch.Syscall = true // the kernel wrote it for a system call
		} else if pc, err := s.pcOf(st.Moment.Tid); err == nil {
			// Where the value came from is the line that wrote it (a
			// watchpoint stop names the line to run next, as gdb).
			writer := s.writerPC(pc)
			info.Watch.Writer = fmt.Sprintf("%#x", writer)
			s.placeInfo(info, writer)
			if info.File != "" {
				info.where = strings.TrimPrefix(info.where, fmt.Sprintf("%#016x in ", pc))
				if i := strings.LastIndex(info.where, " at "); i >= 0 {
					info.where = info.where[:i] + fmt.Sprintf(" at %s:%d", info.File, info.Line)
				}
			}
		}
		if mode == "read" {
			info.Watch.Access = "read"
		}
	})
	if err != nil {
		return err
	}
	s.origin = tgt
	return nil
}

// registerOrigin goes back to the instruction that set a register of the
// current thread (frame 0), within the current event segment. further
// (origin repeated) starts before the current instruction, which set it.
func (s *Session) registerOrigin(tgt *originTarget, further bool, res *Result) error {
	return s.followRegister("origin "+tgt.expr, tgt, res, func() (rw *timeline.RegisterWrite, err error) {
		if further {
			back := s.tl.Now()
			if _, err := s.tl.ReverseStepInstruction(); err != nil {
				return nil, err
			}
			defer func() {
				if err != nil {
					s.tl.Goto(back)
				}
			}()
		}
		return s.tl.PreviousRegisterWrite(tgt.reg, maxRegisterSteps)
	})
}

// registerForward goes forwards to the next instruction that changes a
// register of the current thread (origin --forward $REG), single-stepping
// at most maxRegisterSteps instructions.
func (s *Session) registerForward(tgt *originTarget, res *Result) error {
	return s.followRegister("origin --forward "+tgt.expr, tgt, res, func() (*timeline.RegisterWrite, error) {
		return s.tl.NextRegisterWrite(tgt.reg, maxRegisterSteps)
	})
}

// followRegister runs find, which moves to an instruction that set the
// register of tgt, and describes the stop as an origin (what is the
// command, for errors).
func (s *Session) followRegister(what string, tgt *originTarget, res *Result, find func() (*timeline.RegisterWrite, error)) error {
	if s.frame != 0 {
		return fmt.Errorf("%s: registers are followed in frame 0 (the selected frame is %d)", what, s.frame)
	}
	var rw *timeline.RegisterWrite
	op := func() (*timeline.Stop, error) {
		var err error
		rw, err = find()
		if errors.Is(err, timeline.ErrNoWrite) {
			return nil, fmt.Errorf("%s: %w", what, errors.Unwrap(err))
		}
		if err != nil {
			return nil, err
		}
		return &timeline.Stop{Reason: timeline.ReasonStep, Moment: rw.Moment}, nil
	}
	err := s.runAs(res, op, func(_ *timeline.Stop, info *StopInfo) {
		info.Reason = "origin"
		s.placeInfo(info, rw.PC) // the setting line, not the next one
		info.Watch = &WatchInfo{Expr: tgt.expr, Old: fmt.Sprintf("%#x", rw.Old), New: fmt.Sprintf("%#x", rw.New), Writer: fmt.Sprintf("%#x", rw.PC)}
		info.where = ""
	})
	if err != nil {
		return err
	}
	s.origin = tgt
	return nil
}

// registerIndex maps `$rax` (gdb's names of the 64-bit general registers,
// $pc/$sp/$fp included) to its trace.Regs index.
func registerIndex(expr string) (int, bool) {
	name, ok := strings.CutPrefix(strings.TrimSpace(expr), "$")
	if !ok {
		return 0, false
	}
	name = registerAlias(name)
	for i, n := range trace.RegNames {
		if n == name && i != trace.RIP {
			return i, true
		}
	}
	return 0, false
}

// kernelWrote says whether a write found by a reverse search was the
// kernel's, for a system call: its moment is the start of a segment, not
// an instruction inside one (an anchor, or steps from the segment start).
func kernelWrote(m timeline.Moment) bool {
	return m.Hits == 0 && m.Watch == nil && m.Steps == 0
}
