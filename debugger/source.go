package debugger

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rewind-debugger/rewind/debugger/expr"
	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// FrameInfo is one frame of a backtrace in JSON results.
type FrameInfo struct {
	Level    int    `json:"level"`
	PC       string `json:"pc"`
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"` // the base name, as in stops
	// FullName is the source file's path (gdb/MI's fullname).
	FullName string    `json:"fullname,omitempty"`
	Line     int       `json:"line,omitempty"`
	Inlined  bool      `json:"inlined,omitempty"`
	Args     []VarInfo `json:"args,omitempty"`
}

// VarInfo is a variable in JSON results.
type VarInfo struct {
	Name  string `json:"name"`
	Type  string `json:"type,omitempty"`
	Value string `json:"value"`
	// Entry is a parameter's value when its function was entered, when
	// known (gdb's NAME@entry).
	Entry string `json:"entry,omitempty"`
}

// argText is a frame line's NAME=VALUE for an argument, with its entry
// value as gdb's `print entry-values default` shows it: NAME=NAME@entry=V
// when both are known and equal, both when they differ (the value
// optimized out: `x=<optimized out>, x@entry=3`), the value alone when
// the entry value is unknown.
func argText(a VarInfo) string {
	switch {
	case a.Entry == "":
		return a.Name + "=" + a.Value
	case a.Value == a.Entry:
		return a.Name + "=" + a.Name + "@entry=" + a.Entry
	}
	return a.Name + "=" + a.Value + ", " + a.Name + "@entry=" + a.Entry
}

// formatOpts are the defaults of print.
var formatOpts = dwarf.FormatOptions{}

// format renders a value as print shows it.
func (s *Session) format(v dwarf.Value, f byte) string {
	o := formatOpts
	o.Format = f
	return s.symbols().Format(v, s.mem(), o)
}

// scalar says whether gdb prints an argument in a frame line (its
// default `print frame-arguments scalars`).
func scalar(t *dwarf.Type) bool {
	for t != nil && (t.Kind == dwarf.KindTypedef || t.Kind == dwarf.KindQualified) {
		t = t.Elem
	}
	if t == nil {
		return true
	}
	switch t.Kind {
	case dwarf.KindStruct, dwarf.KindUnion, dwarf.KindArray:
		return t.Lang == dwarf.LangGo && t.GoKind == dwarf.GoKindString // Go strings read well
	}
	return true
}

// frameArgs returns the arguments of a frame for a frame line.
func (s *Session) frameArgs(frames []dwarf.Frame, level int) []VarInfo {
	args, _, err := s.symbols().FrameVariables(frames, level, s.mem())
	if err != nil {
		return nil
	}
	var out []VarInfo
	for _, a := range args {
		val := "..."
		if scalar(a.Type) || a.Optimized {
			val = s.format(a.Value, 0)
		}
		tn := ""
		if a.Type != nil {
			tn = a.Type.Name
		}
		vi := VarInfo{Name: a.Name, Type: tn, Value: val}
		if a.Entry != nil && (scalar(a.Type) || a.Optimized) {
			vi.Entry = s.format(*a.Entry, 0)
		}
		out = append(out, vi)
	}
	return out
}

// frameInfo describes a frame.
func (s *Session) frameInfo(frames []dwarf.Frame, level int) FrameInfo {
	f := frames[level]
	fi := FrameInfo{Level: level, PC: fmt.Sprintf("%#x", f.PC), FullName: f.File, Line: f.Line, Inlined: f.Inlined}
	if f.File != "" {
		fi.File = dwarf.ShortFile(f.File)
	}
	if f.Function != nil {
		fi.Function = f.Function.Name
		fi.Args = s.frameArgs(frames, level)
	} else {
		fi.Function = f.Symbol
	}
	return fi
}

// frameLine renders a frame as gdb's backtrace does.
func (s *Session) frameLine(frames []dwarf.Frame, level int, fi FrameInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%-2d ", level)
	f := frames[level]
	if s.showAddress(frames, level) {
		fmt.Fprintf(&b, "%#016x in ", f.PC)
	}
	name := fi.Function
	if name == "" {
		name = "??"
	}
	b.WriteString(name)
	if f.Function != nil {
		var parts []string
		for _, a := range fi.Args {
			parts = append(parts, argText(a))
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	} else {
		b.WriteString(" ()")
	}
	if fi.File != "" {
		fmt.Fprintf(&b, " at %s:%d", dwarf.ShortFile(fi.File), fi.Line)
	} else if t := s.symbols(); len(t.Images) > 0 {
		// gdb names the library of code without lines, not the
		// executable (solib_name_from_address).
		if img := t.ImageAt(f.PC); img != nil && img != t.Images[0] {
			fmt.Fprintf(&b, " from %s", img.Path)
		}
	}
	return b.String()
}

// showAddress follows gdb: frame 0 shows its pc unless it is at the start
// of a line; a frame that contains an inlined call never shows it (its
// line is the call site's); other callers always show it.
func (s *Session) showAddress(frames []dwarf.Frame, level int) bool {
	if level > 0 && frames[level-1].Inlined && frames[level-1].PC == frames[level].PC {
		// It contains an inlined call: its line is the call's, which has
		// no address of its own (gdb's frame_show_address).
		return false
	}
	if level > 0 {
		return true
	}
	if s.hiddenAt(s.currentThread(), frames[0].PC) > 0 {
		// At the line of an inlined call not entered yet: no address
		// either.
		return false
	}
	// In the middle of a line, or where its row is no statement (gdb's
	// frame_show_address: pc != sal.pc || !sal.is_stmt).
	l, ok := s.symbols().LineAt(frames[0].PC)
	return !ok || l.Addr != frames[0].PC || !l.Stmt
}

func (s *Session) cmdBacktrace(args string, res *Result) error {
	n := 0
	if args != "" {
		var err error
		n, err = strconv.Atoi(strings.Fields(args)[0])
		if err != nil || n < 1 {
			return fmt.Errorf("bad frame count %q", args)
		}
	}
	frames, err := s.backtraceStack(s.currentThread(), n)
	if err != nil {
		return err
	}
	limit := len(frames)
	if n > 0 {
		limit = min(n, limit)
	}
	var infos []FrameInfo
	var lines []string
	for i := 0; i < limit; i++ {
		fi := s.frameInfo(frames, i)
		infos = append(infos, fi)
		lines = append(lines, s.frameLine(frames, i, fi))
	}
	if limit < len(frames) {
		lines = append(lines, "(More stack frames follow...)")
	}
	res.Value, res.Text = infos, strings.Join(lines, "\n")
	return nil
}

// cmdFrame implements frame [N], up [N] and down [N].
func (s *Session) cmdFrame(name, args string, res *Result) error {
	frames, err := s.stack(s.currentThread())
	if err != nil {
		return err
	}
	n := 1
	if args != "" {
		if n, err = strconv.Atoi(args); err != nil {
			return fmt.Errorf("bad frame number %q", args)
		}
	}
	level := s.frame
	switch name {
	case "frame", "f":
		if args != "" {
			level = n
		}
	case "up":
		level += n
	case "down":
		level -= n
	}
	if level < 0 {
		return errors.New("Bottom (innermost) frame selected; you cannot go down.")
	}
	if level >= len(frames) {
		if name == "up" {
			return errors.New("Initial frame selected; you cannot go up.")
		}
		return fmt.Errorf("No frame at level %d.", level)
	}
	s.frame = level
	fi := s.frameInfo(frames, level)
	res.Value = fi
	res.Text = s.frameLine(frames, level, fi)
	if src := s.sourceLine(fi.FullName, fi.Line); src != "" {
		res.Text += "\n" + src
	}
	return nil
}

// sourceCache holds source files by path, for every session of the
// process (several may run at once: tests, the MCP server's calls).
var sourceCache struct {
	sync.Mutex
	m map[string][]string
}

func readSource(path string) ([]string, error) {
	sourceCache.Lock()
	defer sourceCache.Unlock()
	if l, ok := sourceCache.m[path]; ok {
		return l, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if sourceCache.m == nil {
		sourceCache.m = map[string][]string{}
	}
	sourceCache.m[path] = lines
	return lines, sc.Err()
}

// sourceLine is "N\ttext" as gdb prints the current line, or "".
func (s *Session) sourceLine(file string, line int) string {
	if file == "" || line <= 0 {
		return ""
	}
	src, err := s.Source(file)
	if err != nil || line > len(src.Lines) {
		return ""
	}
	return fmt.Sprintf("%d\t%s", line, src.Lines[line-1])
}

// cmdInfoVars implements info locals and info args.
func (s *Session) cmdInfoVars(which string, res *Result) error {
	f, frames, err := s.selectedFrame()
	if err != nil {
		return err
	}
	if f.Function == nil {
		return errors.New("No symbol table info available.")
	}
	args, locals, err := s.symbols().FrameVariables(frames, s.frame, s.mem())
	if err != nil {
		return err
	}
	vars := locals
	if which == "args" {
		vars = args
	}
	var out []VarInfo
	var lines []string
	for _, v := range vars {
		tn := ""
		if v.Type != nil {
			tn = v.Type.Name
		}
		val := s.format(v.Value, 0)
		out = append(out, VarInfo{Name: v.Name, Type: tn, Value: val})
		lines = append(lines, v.Name+" = "+val)
	}
	if len(out) == 0 {
		if which == "args" {
			lines = []string{"No arguments."}
		} else {
			lines = []string{"No locals."}
		}
		out = []VarInfo{}
	}
	res.Value, res.Text = out, strings.Join(lines, "\n")
	return nil
}

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

// cmdPrint implements print[/FMT] EXPR.
func (s *Session) cmdPrint(name, args string, res *Result) error {
	f := byte(0)
	if _, spec, ok := strings.Cut(name, "/"); ok {
		if len(spec) != 1 || !strings.Contains("xducotaz", spec) {
			return fmt.Errorf("Undefined output format %q.", spec)
		}
		f = spec[0]
	}
	if strings.TrimSpace(args) == "" {
		return errors.New("print needs an expression")
	}
	sc := s.newScope()
	v, err := expr.Eval(args, sc)
	if err != nil {
		return err
	}
	if raw, ok := sc.reference(args); ok {
		// A reference variable prints as itself at the top level, as gdb:
		// (Shape &) @0x7ffe...: {...}; the evaluator looks through it.
		v = raw
	}
	// JSON carries the type in its own field; the text is gdb's, with
	// the pointer type prefix: $1 = (struct node *) 0x4052a0.
	text := s.format(v, f)
	o := formatOpts
	o.Format, o.TypePrefix = f, true
	shown := s.symbols().Format(v, s.mem(), o)
	if s.habits.pretty {
		shown = prettyText(shown)
	}
	res.Value = text
	if v.Type != nil {
		res.Type = v.Type.Name
	}
	if name == "output" || strings.HasPrefix(name, "output/") {
		// gdb's output: the value alone, kept out of the value history,
		// with no line end.
		res.Text, res.unterminated = shown, true
		return nil
	}
	s.printCount++
	s.values = append(s.values, snapshotValue(v, s.mem()))
	res.Text = fmt.Sprintf("$%d = %s", s.printCount, shown)
	return nil
}

// cmdPtype implements ptype and whatis over an expression or a type name.
func (s *Session) cmdPtype(name, args string, res *Result) error {
	if strings.TrimSpace(args) == "" {
		return fmt.Errorf("%s needs an expression or a type", name)
	}
	sc := s.newScope()
	t, isType, err := expr.TypeOf(args, sc)
	if err != nil {
		return err
	}
	if raw, ok := sc.reference(args); ok && !isType {
		t = raw.Type // Shape &, as in print
	}
	text := dwarf.Whatis(t, isType)
	if name == "ptype" {
		text = dwarf.Ptype(t)
	}
	res.Value, res.Text = text, "type = "+text
	return nil
}

// snapshotValue keeps a printed value as it is now: history values do not
// change when the program runs on (or back).
func snapshotValue(v dwarf.Value, mem dwarf.Memory) dwarf.Value {
	if !v.InMem || v.Type == nil || v.Type.Kind == dwarf.KindFunc || v.Type.Size <= 0 || v.Type.Size > 1<<20 {
		return v
	}
	b, err := v.Contents(mem)
	if err != nil {
		return v
	}
	out := v
	out.InMem, out.Bytes = false, append([]byte(nil), b...)
	return out
}

// cmdList implements list [LINE | FILE:LINE | FUNC | FIRST,LAST].
func (s *Session) cmdList(args string, res *Result) error {
	file, center := s.listFile, 0
	first, last := 0, 0
	args = strings.TrimSpace(args)
	switch {
	case args == "-" && s.listLine > 0:
		// The ten lines before the last listed.
		if s.listFirst <= 1 {
			return fmt.Errorf("Already at the start of %s.", dwarf.ShortFile(file))
		}
		last = s.listFirst - 1
		first = max(1, last-9)
	case args == "" && s.listLine > 0:
		first = s.listLine
	case args == "" || args == "-":
		// gdb's first `list -` after a stop lists as `list` does.
		file, center = s.defaultSource()
		if file == "" {
			return errors.New("No line number information available.")
		}
	default:
		if i := strings.LastIndexByte(args, ':'); i > 0 && strings.Contains(args[i:], ",") {
			// FILE:FIRST,LAST
			locs, err := s.symbols().FindLine(args[:i], 1)
			if err != nil {
				return err
			}
			file, args = locs[0].File, args[i+1:]
		}
		if a, b, ok := strings.Cut(args, ","); ok {
			x, err1 := strconv.Atoi(strings.TrimSpace(a))
			y, err2 := strconv.Atoi(strings.TrimSpace(b))
			if err1 != nil || err2 != nil || y < x || x < 1 {
				return fmt.Errorf("bad line range %q", args)
			}
			if file == "" || !strings.Contains(args, ":") && s.listFile == "" {
				if f, _, err := s.selectedFrame(); err == nil && file == "" {
					file = f.File
				}
			}
			first, last = x, y
			break
		}
		if n, err := strconv.Atoi(args); err == nil {
			if n < 1 {
				return fmt.Errorf("bad line number %d", n)
			}
			if file == "" {
				if f, _, err := s.selectedFrame(); err == nil {
					file = f.File
				}
			}
			center = n
			break
		}
		locs, err := s.resolveSource(args)
		if err != nil {
			return err
		}
		file, center = locs[0].File, locs[0].Line
	}
	if file == "" {
		return errors.New("No source file to list.")
	}
	src, err := s.Source(file)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", file, err)
	}
	lines := src.Lines
	if first == 0 {
		first = max(1, center-5)
	}
	if last == 0 {
		last = first + 9
	}
	last = min(last, len(lines))
	if first > len(lines) {
		return fmt.Errorf("Line number %d out of range; %q has %d lines.", first, dwarf.ShortFile(file), len(lines))
	}
	var out []string
	var vals []SourceLine
	for n := first; n <= last; n++ {
		out = append(out, fmt.Sprintf("%d\t%s", n, lines[n-1]))
		vals = append(vals, SourceLine{Line: n, Text: lines[n-1]})
	}
	s.listFile, s.listLine, s.listFirst = file, last+1, first
	res.Value = SourceListing{File: file, Lines: vals, Origin: src.Origin()}
	res.Text = strings.Join(out, "\n")
	return nil
}

// defaultSource is the file a bare line number means and the line `list`
// centres on, as gdb's default source file: the selected frame's, else the
// last listed, else main's (at the start of a recording, before main runs).
// The line is where `list` centres.
func (s *Session) defaultSource() (file string, line int) {
	if f, _, err := s.selectedFrame(); err == nil && f.File != "" {
		return f.File, f.Line
	}
	if s.listFile != "" {
		return s.listFile, s.listLine
	}
	t := s.symbols()
	for _, name := range []string{"main", "main.main"} {
		for _, fn := range t.FindFunction(name) {
			if l, ok := t.LineAt(fn.Entry); ok && l.File != "" {
				// gdb (select_source_symtab) lists around a line a screen
				// above main's body, so that main is near the bottom.
				return l.File, max(l.Line-9, 1)
			}
		}
	}
	return "", 0
}

// resolveSource turns FILE:LINE or FUNC into source positions.
func (s *Session) resolveSource(spec string) ([]dwarf.Line, error) {
	t := s.symbols()
	if i := strings.LastIndexByte(spec, ':'); i > 0 && !strings.Contains(spec[:i], "::") || (i > 0 && isDigits(spec[i+1:])) {
		if n, err := strconv.Atoi(spec[i+1:]); err == nil {
			return t.FindLine(spec[:i], n)
		}
	}
	if isDigits(spec) {
		n, _ := strconv.Atoi(spec)
		file, _ := s.defaultSource()
		if file == "" {
			return nil, errors.New("no default source file: use FILE:LINE")
		}
		return t.FindLine(file, n)
	}
	fns := t.FindFunction(spec)
	if len(fns) == 0 {
		return nil, fmt.Errorf("Function %q not defined.", spec)
	}
	var out []dwarf.Line
	for _, fn := range fns {
		l, _ := t.LineAt(fn.Entry)
		l.Addr = fn.Entry
		out = append(out, l)
	}
	return out, nil
}

// isIdent says whether an expression is a plain variable name.
func isIdent(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// cmdInfoSource describes the current source file.
func (s *Session) cmdInfoSource(res *Result) error {
	f, _, err := s.selectedFrame()
	if err != nil {
		return err
	}
	if f.File == "" {
		return errors.New("No current source file.")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Current source file is %s\n", dwarf.ShortFile(f.File))
	var lines []string
	origin := ""
	if src, err := s.Source(f.File); err == nil {
		lines, origin = src.Lines, src.Origin()
		if src.Packed {
			fmt.Fprintf(&b, "Located in %s (from the recording: not on this machine)\n", f.File)
		} else {
			fmt.Fprintf(&b, "Located in %s\n", f.File)
		}
		fmt.Fprintf(&b, "Contains %d lines.\n", len(lines))
	} else {
		fmt.Fprintf(&b, "Located in %s\nThe file cannot be read, and the recording has no copy (rewind pack adds one).\n", f.File)
	}
	lang := ""
	if f.Function != nil {
		lang = map[dwarf.Lang]string{dwarf.LangC: "c", dwarf.LangCPlusPlus: "c++", dwarf.LangRust: "rust", dwarf.LangGo: "go"}[f.Function.Lang()]
		if lang != "" {
			fmt.Fprintf(&b, "Source language is %s.\n", lang)
		}
	}
	res.Value = SourceSummary{File: f.File, Lines: len(lines), Language: lang, Origin: origin}
	res.Text = strings.TrimRight(b.String(), "\n")
	return nil
}

// cmdInfoLine says where the code of a line starts and ends.
func (s *Session) cmdInfoLine(args string, res *Result) error {
	t := s.symbols()
	var addr uint64
	if strings.TrimSpace(args) == "" {
		f, _, err := s.selectedFrame()
		if err != nil {
			return err
		}
		addr = f.PC
	} else {
		arg := strings.TrimSpace(args)
		locs, err := s.resolve(arg)
		if err != nil {
			return err
		}
		addr = locs[0]
		// A function means its first line, from the entry (not after the
		// prologue, where a breakpoint goes), as in gdb.
		if fn := t.FunctionAt(addr); fn != nil && !strings.ContainsAny(arg, ":*") && !isDigits(arg) {
			addr = fn.Low
		}
	}
	l, ok := t.LineAt(addr)
	if !ok || l.Line == 0 {
		return fmt.Errorf("No line number information available for address %#x", addr)
	}
	lo, hi, _ := t.RowRange(addr)
	name := func(a uint64) string {
		if sym, off, ok := t.SymbolAt(a); ok {
			return symRef(sym, off)
		}
		return ""
	}
	res.Value = LineRange{File: l.File, Line: l.Line, Start: fmt.Sprintf("%#x", lo), End: fmt.Sprintf("%#x", hi)}
	res.Text = fmt.Sprintf("Line %d of \"%s\" starts at address %#x%s and ends at %#x%s.", l.Line, dwarf.ShortFile(l.File), lo, name(lo), hi, name(hi))
	return nil
}

// intValue is an int of the program's kind, for a convenience variable.
func intValue(name string, n int) dwarf.Value {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, uint32(int32(n)))
	return dwarf.Value{Name: name, Type: &dwarf.Type{Kind: dwarf.KindBase, Name: "int", Size: 4, Encoding: dwarf.ATESigned}, Bytes: b}
}
