package views

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
	"github.com/rewind-debugger/rewind/themes"
)

// Source shows the file of the selected frame: the current line, the lines
// with a breakpoint, the line of the last watchpoint hit, and a cursor to
// set or delete breakpoints with.
type Source struct {
	ctx  *Context
	w, h int
	snap *debugger.Snapshot
	src  *debugger.SourceView
	cur  paneCursor
	// xoff is the horizontal scroll of the text, in cells: long lines are
	// cut at the right edge rather than wrapped so that line numbers stay
	// one per row.
	xoff int
}

// NewSource returns an empty Source pane.
func NewSource(ctx *Context) *Source { return &Source{ctx: ctx} }

// Title names the pane and, when there is one, the file shown.
func (s *Source) Title() string {
	if s.src == nil {
		return "Source"
	}
	if s.src.Packed {
		// Say it: the lines are the recording's, not this machine's file.
		return "Source: " + filepath.Base(s.src.Path) + " (from the recording)"
	}
	return "Source: " + filepath.Base(s.src.Path)
}

// SetSize sets the inner size.
func (s *Source) SetSize(w, h int) {
	s.w, s.h = w, h
	s.cur.fix(s.rows(), s.h)
}

// SetSnapshot shows a new moment and puts the cursor back on its current
// line: after a step the interesting line is where the program is, not
// where the user last browsed.
func (s *Source) SetSnapshot(sn *debugger.Snapshot) {
	s.snap = sn
	var prev *debugger.SourceView
	prev, s.src = s.src, nil
	if sn != nil {
		s.src = sn.Source
	}
	if s.src == nil {
		s.cur = paneCursor{}
		return
	}
	s.cur.pos = max(s.src.Current-1, 0)
	sameFile := prev != nil && prev.Path == s.src.Path
	s.cur.follow(s.rows(), s.h, !sameFile)
}

func (s *Source) rows() int {
	if s.src == nil {
		return 0
	}
	return len(s.src.Lines)
}

// Update moves the cursor and turns Break into a command.
func (s *Source) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || s.src == nil {
		return nil
	}
	ks, keys := k.String(), s.ctx.Keys
	switch {
	case s.cur.navigate(keys, ks, s.rows(), s.h):
	case keys.Matches(ks, keymaps.Left):
		s.xoff = max(0, s.xoff-8)
	case keys.Matches(ks, keymaps.Right):
		// Not past the longest line: scrolling into blank space would
		// look like the file vanished.
		longest := 0
		for _, l := range s.src.Lines {
			longest = max(longest, len(l))
		}
		if s.xoff+8 < longest {
			s.xoff += 8
		}
	case keys.Matches(ks, keymaps.Break):
		return s.breakCmd()
	}
	return nil
}

// breakCmd toggles a breakpoint on the cursor line: the Breakpoints pane
// would otherwise be the only way to remove one, and gdb's TUI and every
// IDE toggle on the same key.
func (s *Source) breakCmd() tea.Cmd {
	if s.rows() == 0 {
		return nil
	}
	file, line := filepath.Base(s.src.Path), s.cur.pos+1
	if s.snap != nil {
		for _, b := range s.snap.Breakpoints {
			if filepath.Base(b.File) == file && b.Line == line && b.File != "" {
				return paneRun(fmt.Sprintf("delete %d", b.ID))
			}
		}
	}
	return paneRun(fmt.Sprintf("break %s:%d", file, line))
}

// hint says why there is no source and how to get to some: the loader
// and libraries have no line information, a moved file cannot be read.
func (s *Source) hint() string {
	t, c := s.ctx.Theme, s.ctx
	if s.snap == nil || len(s.snap.Frames) == 0 {
		return paneHint(t.Muted, s.w, s.h, "no frame at this moment",
			fmt.Sprintf("%s or %s go back into the program; %sgoto #N to an event", keyFor(c, keymaps.ReverseStep), keyFor(c, keymaps.ReverseCont), keyFor(c, keymaps.Prompt)))
	}
	if s.src != nil {
		return paneHint(t.Muted, s.w, s.h, "cannot read "+s.src.Path, "the source file has moved since the build")
	}
	what := "no source for this frame"
	if fn := frameName(s.snap); fn != "" {
		what = "no source for " + fn
	}
	return paneHint(t.Muted, s.w, s.h, what,
		fmt.Sprintf("it has no line information: %sbreak main then %s goes to the program's code, %s returns to the caller, %s shows the instructions",
			keyFor(c, keymaps.Prompt), keyFor(c, keymaps.Continue), keyFor(c, keymaps.Finish), keyFor(c, keymaps.PaneDisasm)))
}

// View renders the visible lines.
func (s *Source) View() string {
	t := s.ctx.Theme
	if s.src == nil || len(s.src.Lines) == 0 {
		return s.hint()
	}
	numW := len(fmt.Sprint(len(s.src.Lines)))
	var out []string
	for i := s.cur.top; i < len(s.src.Lines) && len(out) < s.h; i++ {
		n := i + 1
		current, cursor := n == s.src.Current, i == s.cur.pos
		row := lipgloss.NewStyle()
		gutter, num, text := row, t.LineNumber, t.Base
		if current {
			row = t.Current
			gutter, num, text = row, row, row
		}
		if cursor {
			gutter, num = t.Selected, t.Selected
		}
		bp, wm, arrow := " ", " ", "  "
		if slices.Contains(s.src.Breakpoints, n) {
			bp = paneBreakMark(t)
		}
		if s.src.WatchLine == n {
			wm = "w"
		}
		if current {
			arrow = "=>"
		}
		line := ansi.TruncateLeft(paneText(s.src.Lines[i]), s.xoff, "")
		out = append(out, paneRow(s.w, row,
			paneSeg{bp, t.Breakpoint.Inherit(gutter)},
			paneSeg{wm, t.Watch.Inherit(gutter)},
			paneSeg{fmt.Sprintf("%s %*d ", arrow, numW, n), num},
			paneSeg{line, text}))
	}
	return paneBlock(out, s.w, s.h)
}

// Help lists the pane's keys.
func (s *Source) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown, keymaps.Top, keymaps.Bottom,
		keymaps.Left, keymaps.Right, keymaps.Break}
}

// ---- Helpers shared by the Source, Disassembly, Registers, Memory, Stack,
// Locals, Threads and Breakpoints panes.

// paneRun is the Cmd of a pane asking the root to run a command line.
func paneRun(line string) tea.Cmd {
	return func() tea.Msg { return RunCommand{Line: line} }
}

// paneBreakMark is the breakpoint marker: the dot reads well in colour, but
// without colour a letter is clearer than a glyph some fonts lack.
func paneBreakMark(t *themes.Theme) string {
	if t.NoColor {
		return "b"
	}
	return "●"
}

// paneCursor is a cursor over n rows seen through a window of h rows, as
// bubbles' list keeps it: moving the cursor scrolls just enough to keep it
// in the window.
type paneCursor struct{ pos, top int }

// fix clamps the cursor into [0, n) and scrolls so it is in the window;
// it also pulls the window up so it does not end in blank rows when there
// is more to show above.
func (c *paneCursor) fix(n, h int) {
	if n <= 0 {
		c.pos, c.top = 0, 0
		return
	}
	h = max(h, 1)
	c.pos = max(0, min(c.pos, n-1))
	if c.pos < c.top {
		c.top = c.pos
	}
	if c.pos >= c.top+h {
		c.top = c.pos - h + 1
	}
	c.top = max(0, min(c.top, n-h))
}

// follow brings the cursor into view after the program moved: when it is
// already comfortably inside the window the window stays (stepping through
// a loop does not make the text jump), otherwise the cursor is centred so
// that there is context on both sides.
func (c *paneCursor) follow(n, h int, recentre bool) {
	margin := 0
	if h > 6 {
		margin = 2
	}
	if recentre || c.pos < c.top+margin || c.pos >= c.top+h-margin {
		c.top = c.pos - h/2
	}
	c.fix(n, h)
}

// navigate moves the cursor for the navigation actions and reports whether
// the key was one of them.
func (c *paneCursor) navigate(keys *keymaps.Keys, k string, n, h int) bool {
	page := max(h-1, 1)
	switch {
	case keys.Matches(k, keymaps.Up):
		c.pos--
	case keys.Matches(k, keymaps.Down):
		c.pos++
	case keys.Matches(k, keymaps.PageUp):
		c.pos -= page
		c.top -= page
	case keys.Matches(k, keymaps.PageDown):
		c.pos += page
		c.top += page
	case keys.Matches(k, keymaps.Top):
		c.pos = 0
	case keys.Matches(k, keymaps.Bottom):
		c.pos = n - 1
	default:
		return false
	}
	c.top = max(c.top, 0)
	c.fix(n, h)
	return true
}

// listKey handles a message to a pane that lists n rows, h at a time: a
// navigation key moves the cursor and any other key goes to act. Other
// messages, and keys to an empty list, do nothing.
func (c *paneCursor) listKey(msg tea.Msg, keys *keymaps.Keys, n, h int, act func(key string) tea.Cmd) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || n == 0 {
		return nil
	}
	ks := k.String()
	if c.navigate(keys, ks, n, h) {
		return nil
	}
	return act(ks)
}

// enterRuns is listKey for a pane whose Enter runs the command line gives
// for the row under the cursor; an empty line runs nothing.
func (c *paneCursor) enterRuns(msg tea.Msg, keys *keymaps.Keys, n, h int, line func(row int) string) tea.Cmd {
	return c.listKey(msg, keys, n, h, func(ks string) tea.Cmd {
		if !keys.Matches(ks, keymaps.Enter) {
			return nil
		}
		if l := line(c.pos); l != "" {
			return paneRun(l)
		}
		return nil
	})
}

// paneSeg is a piece of a row with its style.
type paneSeg struct {
	text  string
	style lipgloss.Style
}

// paneRow lays plain-text segments on one row of exactly w cells: text
// that does not fit is cut with "…", and the rest of the row is filled in
// the row's style so that a highlighted line spans the whole pane.
// Segments are paneStyled one by one (never nested) because an inner style's
// reset would end the outer background in the middle of the row.
func paneRow(w int, row lipgloss.Style, segs ...paneSeg) string {
	if w <= 0 {
		return ""
	}
	var b strings.Builder
	left := w
	for _, sg := range segs {
		if left <= 0 {
			break
		}
		txt := sg.text
		if tw := ansi.StringWidth(txt); tw > left {
			txt = ansi.Truncate(txt, left, "…")
		}
		if txt == "" {
			continue
		}
		left -= ansi.StringWidth(txt)
		b.WriteString(paneStyled(sg.style, txt))
	}
	if left > 0 {
		b.WriteString(paneStyled(row, strings.Repeat(" ", left)))
	}
	return b.String()
}

// paneStyled renders text, leaving blanks bare when the style would not show
// on them: marker columns are mostly blank, and a few hundred escape
// sequences a frame is output the terminal has to parse for nothing.
func paneStyled(st lipgloss.Style, txt string) string {
	if strings.Trim(txt, " ") == "" && !st.GetReverse() && !st.GetUnderline() && !st.GetStrikethrough() {
		if _, none := st.GetBackground().(lipgloss.NoColor); none || st.GetBackground() == nil {
			return txt
		}
	}
	return st.Render(txt)
}

// paneBlock makes exactly h lines of exactly w cells, the contract of
// View: the root lays panes side by side and a short or long line would
// shift every pane to its right.
func paneBlock(lines []string, w, h int) string {
	if h <= 0 {
		return ""
	}
	out := make([]string, h)
	for i := range out {
		s := ""
		if i < len(lines) {
			s = lines[i]
		}
		out[i] = paneFit(s, w)
	}
	return strings.Join(out, "\n")
}

// paneFit cuts or pads one rendered line to w cells.
func paneFit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// paneText makes text from the program (source lines, values, names) safe
// to lay out in cells: a tab has no fixed width, so it is expanded (to 4
// columns, as editors show code), and control characters become "?" since
// an escape sequence read from the debuggee would otherwise restyle the
// terminal or move its cursor.
func paneText(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	col := 0
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		switch {
		case r == '\t':
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case r == '\r' && s == "":
			// A CRLF file's line end: not part of the text.
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError && size == 1:
			b.WriteByte('?')
			col++
		default:
			b.WriteRune(r)
			col += ansi.StringWidth(string(r))
		}
	}
	return b.String()
}
