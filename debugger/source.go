package debugger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/debugger/expr"
	"github.com/rewind-debugger/rewind/dwarf"
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

// intValue is an int of the program's kind, for a convenience variable.
func intValue(name string, n int) dwarf.Value {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, uint32(int32(n)))
	return dwarf.Value{Name: name, Type: &dwarf.Type{Kind: dwarf.KindBase, Name: "int", Size: 4, Encoding: dwarf.ATESigned}, Bytes: b}
}
