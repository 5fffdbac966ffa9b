package debugger

// Source text: the files a recording's lines come from (read once,
// cached), list, info source and info line.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rewind-debugger/rewind/dwarf"
)

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
