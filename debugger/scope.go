package debugger

// The scope expressions are evaluated in: the selected frame's variables
// (then the globals, then functions by name), registers by gdb's names,
// memory, convenience variables ($_siginfo, $bpnum, $_hit_bpnum, the
// value history: $, $$, $N) and the frame's language.

import (
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/debugger/expr"
	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// scope resolves names for the expression evaluator at the selected frame.
type scope struct {
	s      *Session
	frames []dwarf.Frame
	level  int
	loaded bool
	vars   []dwarf.Variable // locals (innermost first), then args
	regs   dwarf.Regs
	// local is set once a name resolved to a frame's local or argument:
	// a watch on such an expression lives as long as the frame.
	local bool
}

func (s *Session) newScope() *scope {
	sc := &scope{s: s}
	if frames, err := s.stack(s.currentThread()); err == nil && len(frames) > 0 {
		sc.frames = frames
		sc.level = min(s.frame, len(frames)-1)
		sc.regs = frames[sc.level].Regs
	}
	return sc
}

// Variable implements expr.Scope.
func (sc *scope) Variable(name string) (dwarf.Value, bool, error) {
	if !sc.loaded && len(sc.frames) > 0 && sc.frames[sc.level].Function != nil {
		sc.loaded = true
		args, locals, err := sc.s.symbols().FrameVariables(sc.frames, sc.level, sc.s.mem())
		if err == nil {
			sc.vars = append(locals, args...)
		}
	}
	for _, v := range sc.vars {
		if v.Name == name {
			sc.local = true
			return v.Value, true, v.Err
		}
	}
	t := sc.s.symbols()
	if v, ok := t.Global(name, &sc.regs, sc.s.mem()); ok {
		return v.Value, true, v.Err
	}
	if sc.Lang() == dwarf.LangGo && !strings.Contains(name, ".") {
		if v, ok := t.Global("main."+name, &sc.regs, sc.s.mem()); ok {
			return v.Value, true, v.Err
		}
	}
	return functionValue(t, name)
}

// noDebugFunc is the type gdb gives a function known only by its symbol.
var noDebugFunc = &dwarf.Type{Kind: dwarf.KindFunc, Name: "<text variable, no debug info>", Size: 1}

// functionValue is a function's name as a value, as in C: the function at
// its entry address, with its type ({int (int)} 0x401136 <f>), so that
// `print f`, `print &f`, `x/4i f` and ptype work; a function without debug
// information has gdb's "<text variable, no debug info>" type.
func functionValue(t *dwarf.Table, name string) (dwarf.Value, bool, error) {
	for _, fn := range t.FindFunction(name) {
		if fn.Inlined || fn.Low == 0 {
			continue
		}
		ft, err := t.FunctionType(fn)
		if err != nil {
			return dwarf.Value{}, true, err
		}
		return dwarf.Value{Name: name, Type: ft, Addr: fn.Low, InMem: true}, true, nil
	}
	if sym, ok := t.Lookup(name); ok && sym.Func {
		// An alias of a function with debug information (printf is
		// libc's __printf) has its type.
		if fn := t.FunctionAt(sym.Addr); fn != nil && fn.Low == sym.Addr {
			if ft, err := t.FunctionType(fn); err == nil {
				return dwarf.Value{Name: name, Type: ft, Addr: sym.Addr, InMem: true}, true, nil
			}
		}
		return dwarf.Value{Name: name, Type: noDebugFunc, Addr: sym.Addr, InMem: true}, true, nil
	}
	return dwarf.Value{}, false, nil
}

// reference returns the variable an expression names when it is a C++
// reference, which the evaluator looks through but print and ptype show.
func (sc *scope) reference(src string) (dwarf.Value, bool) {
	if !isIdent(src) {
		return dwarf.Value{}, false
	}
	v, ok, err := sc.Variable(strings.TrimSpace(src))
	return v, ok && err == nil && v.Type != nil && v.Type.Kind == dwarf.KindReference
}

// Type implements expr.Scope.
func (sc *scope) Type(name string) (*dwarf.Type, bool) {
	t, err := sc.s.symbols().TypeByName(name)
	return t, err == nil && t != nil
}

// registerAlias turns gdb's $pc, $sp and $fp into the registers they name.
func registerAlias(name string) string {
	switch name {
	case "pc":
		return "rip"
	case "sp":
		return "rsp"
	case "fp":
		return "rbp"
	}
	return name
}

// Register implements expr.Scope.
func (sc *scope) Register(name string) (uint64, bool) {
	name = registerAlias(name)
	if len(sc.frames) > 0 && sc.level > 0 {
		for n := range uint64(dwarf.NumRegs) {
			if dwarf.RegName(n) == name && sc.regs.Valid[n] {
				return sc.regs.R[n], true
			}
		}
	}
	regs, err := sc.s.tl.Session().Regs(sc.s.currentThread())
	if err != nil {
		return 0, false
	}
	for i, n := range trace.RegNames {
		if n == name {
			return regs[i], true
		}
	}
	return 0, false
}

// Memory implements expr.Scope.
func (sc *scope) Memory() dwarf.Memory { return sc.s.mem() }

// Convenience implements expr.Convenience: gdb's value history ("" is
// $ (the last value), "$" is $$, "$N" is $$N, "N" is $N) and the
// convenience variables gdb sets itself: $bpnum (the last breakpoint or
// watchpoint made), $_hit_bpnum and $_hit_locno (the one the last stop was
// at), $_siginfo (the signal it was, siginfo.go).
func (sc *scope) Convenience(name string) (dwarf.Value, bool, error) {
	switch name {
	case "_siginfo":
		return sc.s.siginfo()
	case "bpnum":
		if n := sc.s.nextID - 1; n > 0 {
			return intValue("$bpnum", n), true, nil
		}
		return dwarf.Value{}, false, nil
	case "_hit_bpnum", "_hit_locno":
		st := sc.s.lastStop
		if st == nil || st.Breakpoint == 0 {
			return dwarf.Value{}, false, nil
		}
		if name == "_hit_locno" {
			return intValue("$"+name, max(st.Location, 1)), true, nil
		}
		return intValue("$"+name, st.Breakpoint), true, nil
	}
	h := sc.s.values
	idx := -1
	switch {
	case name == "":
		idx = len(h) - 1
	case name == "$":
		idx = len(h) - 2
	case strings.HasPrefix(name, "$"):
		if n, err := strconv.Atoi(name[1:]); err == nil {
			idx = len(h) - 1 - n
		}
	default:
		if n, err := strconv.Atoi(name); err == nil {
			idx = n - 1
		}
	}
	if idx < 0 || idx >= len(h) {
		return dwarf.Value{}, false, nil
	}
	return h[idx], true, nil
}

// Lang implements expr.Scope.
func (sc *scope) Lang() dwarf.Lang {
	if len(sc.frames) > 0 && sc.frames[sc.level].Function != nil {
		return sc.frames[sc.level].Function.Lang()
	}
	return dwarf.LangC
}

// eval evaluates an expression at the selected frame.
func (s *Session) eval(src string) (dwarf.Value, error) {
	return expr.Eval(src, s.newScope())
}
