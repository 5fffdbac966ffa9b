package dwarf

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
)

// lineRow is one row of a line table, at its link-time address.
type lineRow struct {
	addr        uint64
	file        int32
	line        int32
	stmt        bool
	end         bool // end_sequence: addr is one past the sequence
	prologueEnd bool
}

// lineTable is every line table of an image merged and sorted by address.
type lineTable struct {
	rows  []lineRow
	files []string
	err   error
}

// lineTable reads the line tables of every compilation unit once. Go's
// debug/dwarf reads DWARF 2 to 5 line programs, including Go's own.
func (img *Image) lineTable() *lineTable {
	img.linesOnce.Do(func() {
		lt := &lineTable{}
		img.lines = lt
		dw, err := img.DWARF()
		if err != nil {
			lt.err = err
			return
		}
		fileIdx := map[string]int32{}
		r := dw.Reader()
		for {
			cu, err := r.Next()
			if err != nil {
				lt.err = fmt.Errorf("line tables of %s: %w", img.DebugPath, err)
				break
			}
			if cu == nil {
				break
			}
			if cu.Tag != dwarf.TagCompileUnit && cu.Tag != dwarf.TagPartialUnit {
				r.SkipChildren()
				continue
			}
			r.SkipChildren()
			lr, err := dw.LineReader(cu)
			if err != nil || lr == nil {
				continue
			}
			var e dwarf.LineEntry
			lastLine, lastFile, lineDisc := -1, (*dwarf.LineFile)(nil), false
			for {
				if err := lr.Next(&e); err != nil {
					if !errors.Is(err, io.EOF) {
						lt.err = fmt.Errorf("line table of %s: %w", img.DebugPath, err)
					}
					break
				}
				if e.Line == 0 && !e.EndSequence {
					// gdb keeps no row for line 0 (code the compiler
					// gave no line, common in Rust and clang output):
					// its addresses belong to the row before, so a step
					// that lands there has reached that row's line.
					continue
				}
				name := ""
				if e.File != nil {
					name = absFile(cu, e.File.Name)
				}
				fi, ok := fileIdx[name]
				if !ok {
					fi = int32(len(lt.files))
					fileIdx[name] = fi
					lt.files = append(lt.files, name)
				}
				folded := false
				if e.Line != lastLine || e.File != lastFile {
					lineDisc = e.Discriminator != 0
				} else {
					lineDisc = lineDisc || e.Discriminator != 0
					folded = lineDisc && !e.EndSequence
				}
				lastLine, lastFile = e.Line, e.File
				if e.EndSequence {
					lastLine, lastFile = -1, nil
				}
				if folded {
					// gdb keeps no row for one more row of the same line
					// after a non-zero discriminator (a loop's blocks):
					// its code is the row before's, in `info line`
					// ranges and for stepping (no statement starts here).
					continue
				}
				lt.rows = append(lt.rows, lineRow{addr: e.Address, file: fi, line: int32(e.Line),
					stmt: e.IsStmt, end: e.EndSequence, prologueEnd: e.PrologueEnd})
			}
		}
		// At equal addresses an end of sequence comes first: the row after
		// it starts the next sequence there.
		sort.SliceStable(lt.rows, func(i, j int) bool {
			a, b := lt.rows[i], lt.rows[j]
			if a.addr != b.addr {
				return a.addr < b.addr
			}
			return a.end && !b.end
		})
	})
	return img.lines
}

// absFile makes a line-table file name absolute: debug/dwarf joins a
// file with its directory entry, but a DWARF 5 directory may itself be
// relative to the unit's DW_AT_comp_dir ("demo/x.c" compiled in /src).
func absFile(cu *dwarf.Entry, name string) string {
	if name == "" || filepath.IsAbs(name) {
		return name
	}
	if dir, ok := cu.Val(dwarf.AttrCompDir).(string); ok && dir != "" {
		return filepath.Join(dir, name)
	}
	return name
}

// rowAt returns the index of the row covering link-time pc, or -1.
func (lt *lineTable) rowAt(pc uint64) int {
	i := sort.Search(len(lt.rows), func(i int) bool { return lt.rows[i].addr > pc }) - 1
	if i < 0 || lt.rows[i].end {
		return -1
	}
	// Of several rows at one address, the last statement row names the
	// line, as in gdb (optimized code stacks rows with view numbers).
	for j := i; j >= 0 && lt.rows[j].addr == lt.rows[i].addr && !lt.rows[j].end; j-- {
		if lt.rows[j].stmt {
			return j
		}
	}
	return i
}

// Line is a source position.
type Line struct {
	File string
	Line int
	// Addr is the run-time address where the line-table row starts.
	Addr uint64
	// Stmt marks a row that begins a statement (a place to stop).
	Stmt bool
}

// LineAt returns the source position of a run-time pc. Code the compiler
// attributed to no line (line 0) is part of the row before it, as in gdb.
func (t *Table) LineAt(pc uint64) (Line, bool) {
	img := t.ImageAt(pc)
	if img == nil {
		return Line{}, false
	}
	lt := img.lineTable()
	i := lt.rowAt(pc - img.Bias)
	if i < 0 {
		return Line{}, false
	}
	r := lt.rows[i]
	return Line{File: lt.files[r.file], Line: int(r.line), Addr: r.addr + img.Bias, Stmt: r.stmt}, true
}

// LineRange returns the run-time address range [start, end) of the
// line-table rows around pc that belong to the same source line, as gdb's
// step range: stepping stays inside it.
func (t *Table) LineRange(pc uint64) (start, end uint64, ok bool) {
	img, lt, i := t.row(pc)
	if i < 0 {
		return 0, 0, false
	}
	r := lt.rows[i]
	lo, hi := i, i+1
	for lo > 0 && !lt.rows[lo-1].end && lt.rows[lo-1].line == r.line && lt.rows[lo-1].file == r.file {
		lo--
	}
	for hi < len(lt.rows) && !lt.rows[hi].end && lt.rows[hi].line == r.line && lt.rows[hi].file == r.file {
		hi++
	}
	if hi >= len(lt.rows) {
		return lt.rows[lo].addr + img.Bias, pc + 1, true
	}
	return lt.rows[lo].addr + img.Bias, lt.rows[hi].addr + img.Bias, true
}

// row finds the line-table row covering a run-time pc: its image, the
// image's table and the row's index, -1 when there is none.
func (t *Table) row(pc uint64) (*Image, *lineTable, int) {
	img := t.ImageAt(pc)
	if img == nil {
		return nil, nil, -1
	}
	lt := img.lineTable()
	return img, lt, lt.rowAt(pc - img.Bias)
}

// RowRange returns the run-time address range [start, end) of the
// line-table row around pc, up to the next row, as gdb's `info line`.
func (t *Table) RowRange(pc uint64) (start, end uint64, ok bool) {
	img, lt, i := t.row(pc)
	if i < 0 {
		return 0, 0, false
	}
	hi := i + 1
	for hi < len(lt.rows) && lt.rows[hi].addr == lt.rows[i].addr {
		hi++
	}
	if hi >= len(lt.rows) {
		return lt.rows[i].addr + img.Bias, pc + 1, true
	}
	return lt.rows[i].addr + img.Bias, lt.rows[hi].addr + img.Bias, true
}

// StmtStarts returns the run-time addresses in [lo, hi) where a statement
// row of a line begins (a new line, or a new statement of the same line),
// with their lines. Reverse stepping stops at these.
func (t *Table) StmtStarts(lo, hi uint64) []Line {
	img := t.ImageAt(lo)
	if img == nil {
		return nil
	}
	lt := img.lineTable()
	var out []Line
	i := sort.Search(len(lt.rows), func(i int) bool { return lt.rows[i].addr >= lo-img.Bias })
	for ; i < len(lt.rows) && lt.rows[i].addr < hi-img.Bias; i++ {
		r := lt.rows[i]
		if r.end || !r.stmt || r.line == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Addr == r.addr+img.Bias {
			out[n-1] = Line{File: lt.files[r.file], Line: int(r.line), Addr: r.addr + img.Bias, Stmt: true}
			continue
		}
		out = append(out, Line{File: lt.files[r.file], Line: int(r.line), Addr: r.addr + img.Bias, Stmt: true})
	}
	return out
}

// ErrAmbiguousFile is wrapped by FindLine when a file name matches several
// source files; the message lists them.
var ErrAmbiguousFile = errors.New("ambiguous file name")

// Files returns the source files of every image's line tables.
func (t *Table) Files() []string {
	var out []string
	for _, img := range t.Images {
		for _, f := range img.lineTable().files {
			if f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

// matchFile says whether a full path matches a file name given by the user:
// equal, or a suffix at a path separator.
func matchFile(full, spec string) bool {
	return full == spec || strings.HasSuffix(full, "/"+strings.TrimPrefix(spec, "./"))
}

// FindLine returns the run-time addresses where a breakpoint on FILE:LINE
// goes: in each function (or inlined instance) with code for that line, the
// first statement of the line; when the line has no code, the next line
// that has, as gdb does. Ambiguous file names are an error listing the
// candidates.
func (t *Table) FindLine(file string, line int) ([]Line, error) {
	type cand struct {
		img  *Image
		file int32
	}
	var cands []cand
	names := map[string]bool{}
	for _, img := range t.Images {
		lt := img.lineTable()
		for i, f := range lt.files {
			if f != "" && matchFile(f, file) {
				cands = append(cands, cand{img, int32(i)})
				names[f] = true
			}
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("no source file named %s", file)
	}
	if len(names) > 1 {
		var list []string
		for n := range names {
			list = append(list, n)
		}
		sort.Strings(list)
		return nil, fmt.Errorf("%w %q: %s", ErrAmbiguousFile, file, strings.Join(list, ", "))
	}
	// The smallest line >= the requested one that has code.
	best := -1
	for _, c := range cands {
		for _, r := range c.img.lineTable().rows {
			if r.file == c.file && !r.end && r.stmt && int(r.line) >= line && (best < 0 || int(r.line) < best) {
				best = int(r.line)
			}
		}
	}
	if best < 0 {
		return nil, fmt.Errorf("line %d is past the code of %s", line, file)
	}
	var out []Line
	seen := map[*Function]bool{}
	var fileName string
	for n := range names {
		fileName = n
	}
	for _, c := range cands {
		lt := c.img.lineTable()
		for i, r := range lt.rows {
			if r.file != c.file || r.end || !r.stmt || int(r.line) != best {
				continue
			}
			// Only the start of a block of rows of this line.
			if i > 0 && !lt.rows[i-1].end && lt.rows[i-1].file == r.file && lt.rows[i-1].line == r.line && lt.rows[i-1].addr < r.addr {
				continue
			}
			addr := r.addr + c.img.Bias
			fns := t.inlineChain(c.img, addr)
			var key *Function
			if len(fns) > 0 {
				key = fns[0]
			}
			if key != nil && seen[key] {
				continue
			}
			if key != nil {
				seen[key] = true
				// A breakpoint on the line of the opening brace goes after
				// the prologue, where the arguments are in place.
				if !key.Inlined && addr == key.Low && key.Entry != 0 {
					addr = key.Entry
				}
			}
			out = append(out, Line{File: fileName, Line: best, Addr: addr, Stmt: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out, nil
}

// ShortFile is the name to show for a source file: its base name.
func ShortFile(path string) string { return filepath.Base(path) }
