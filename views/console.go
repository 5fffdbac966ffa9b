package views

import (
	"strconv"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// conMaxEntries is how many commands the Console keeps.
const conMaxEntries = 1000

// Console is the log of the commands run and their results, newest at the
// bottom: each command as ":command" and its output under it, errors in
// the error style (marked "! " without colour). Long lines wrap to the
// width. It keeps the last 1000 entries; Up/Down/PageUp/PageDown/Top/
// Bottom scroll, and new output does not move a scrolled-back view.
type Console struct {
	ctx     *Context
	w, h    int
	entries []conEntry
	off     int // lines scrolled back from the bottom
}

// conEntry is an entry and its lines wrapped at width w.
type conEntry struct {
	e     ConsoleEntry
	w     int
	lines []conLine
}

// conLine is one wrapped line of an entry.
type conLine struct {
	s    string
	kind int // conCmd, conOut, conErr
}

const (
	conCmd = iota
	conOut
	conErr
)

// NewConsole returns an empty Console.
func NewConsole(ctx *Context) *Console { return &Console{ctx: ctx} }

// Title is the pane's name.
func (c *Console) Title() string { return "Console" }

// Help lists the pane's own actions.
func (c *Console) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown, keymaps.Top, keymaps.Bottom}
}

// SetSize sets the inner size.
func (c *Console) SetSize(w, h int) {
	c.w, c.h = max(w, 0), max(h, 0)
	c.clampOff()
}

// SetSnapshot does nothing: the Console shows commands, not the moment.
func (c *Console) SetSnapshot(*debugger.Snapshot) {}

// Append adds a command and its result at the bottom, dropping the oldest
// entry beyond 1000. A view scrolled back stays where it is.
func (c *Console) Append(e ConsoleEntry) {
	c.entries = append(c.entries, conEntry{e: e})
	if c.off > 0 {
		c.off += len(c.wrapped(len(c.entries) - 1))
	}
	if len(c.entries) > conMaxEntries {
		drop := len(c.entries) - conMaxEntries
		c.entries = append([]conEntry{}, c.entries[drop:]...)
	}
	c.clampOff()
}

// Update appends ConsoleEntry messages and scrolls on keys.
func (c *Console) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case ConsoleEntry:
		c.Append(m)
	case tea.KeyPressMsg:
		k, s := c.ctx.Keys, m.String()
		page := max(c.h-1, 1)
		switch {
		case k.Matches(s, keymaps.Up):
			c.off++
		case k.Matches(s, keymaps.Down):
			c.off--
		case k.Matches(s, keymaps.PageUp):
			c.off += page
		case k.Matches(s, keymaps.PageDown):
			c.off -= page
		case k.Matches(s, keymaps.Top):
			c.off = 1 << 30
		case k.Matches(s, keymaps.Bottom):
			c.off = 0
		}
		c.clampOff()
	}
	return nil
}

// wrapped returns the lines of entry i at the current width.
func (c *Console) wrapped(i int) []conLine {
	en := &c.entries[i]
	w := max(c.w, 1)
	if en.lines != nil && en.w == w {
		return en.lines
	}
	en.w, en.lines = w, []conLine{}
	add := func(text string, kind int) {
		for _, raw := range strings.Split(text, "\n") {
			raw = conExpandTabs(strings.TrimRight(raw, "\r"))
			for _, l := range conWrap(raw, w) {
				en.lines = append(en.lines, conLine{s: l, kind: kind})
			}
		}
	}
	if en.e.Command != "" {
		add(":"+en.e.Command, conCmd)
	}
	kind := conOut
	if en.e.Error {
		kind = conErr
	}
	if out := strings.TrimRight(en.e.Output, "\n"); out != "" {
		if kind == conErr && c.ctx.Theme.NoColor {
			out = "! " + strings.ReplaceAll(out, "\n", "\n! ")
		}
		add(out, kind)
	}
	return en.lines
}

// lineCount is the number of wrapped lines of every entry.
func (c *Console) lineCount() int {
	n := 0
	for i := range c.entries {
		n += len(c.wrapped(i))
	}
	return n
}

func (c *Console) clampOff() {
	if c.w <= 0 || c.h <= 0 {
		c.off = 0
		return
	}
	c.off = max(0, min(c.off, c.lineCount()-c.h))
}

// View draws the last lines, or the ones scrolled back to.
func (c *Console) View() string {
	if c.h <= 0 {
		return ""
	}
	th := c.ctx.Theme
	if len(c.entries) == 0 {
		return paneHint(th.Muted, c.w, c.h, "no commands yet: "+keyFor(c.ctx, keymaps.Prompt)+" opens the prompt, "+keyFor(c.ctx, keymaps.Help)+" lists the keys")
	}
	// Collect the lines up to off lines before the bottom, walking the
	// entries backwards so that only the visible ones are wrapped. Scrolled
	// back, the last row says how much is below.
	var tail []conLine
	for i := len(c.entries) - 1; i >= 0 && len(tail) < c.h+c.off+1; i-- {
		tail = append(append([]conLine{}, c.wrapped(i)...), tail...)
	}
	rows, end := c.h, len(tail)-c.off
	marker := c.off > 0 && c.h >= 3
	if marker {
		rows, end = c.h-1, end-1
	}
	end = max(0, min(end, len(tail)))
	var lines []string
	for _, l := range tail[max(0, end-rows):end] {
		st := th.Base
		switch l.kind {
		case conCmd:
			st = th.Prompt
		case conErr:
			st = th.Error
		}
		lines = append(lines, tlLine(c.w, nil, tlSeg{l.s, st}))
	}
	if marker {
		n := len(tail) - end
		more := "↓ " + strconv.Itoa(n) + " more line"
		if th.NoColor {
			more = "v " + strconv.Itoa(n) + " more line"
		}
		if n != 1 {
			more += "s"
		}
		for len(lines) < c.h-1 {
			lines = append(lines, "")
		}
		lines = append(lines, tlLine(c.w, nil, tlSeg{more + " below", th.Muted}))
	}
	return tlFrame(lines, c.w, c.h)
}

// conWrap cuts a line into pieces of at most w cells, at the last space
// that fits when there is one.
func conWrap(s string, w int) []string {
	var out []string
	for ansi.StringWidth(s) > w {
		head := ansi.Truncate(s, w, "")
		if head == "" { // a character wider than w
			_, n := utf8.DecodeRuneInString(s)
			head = s[:n]
		}
		if i := strings.LastIndexByte(head, ' '); i > 0 && strings.TrimLeft(head[:i], " ") != "" {
			out = append(out, strings.TrimRight(head[:i], " "))
			s = s[i+1:]
			continue
		}
		out = append(out, head)
		s = s[len(head):]
	}
	return append(out, s)
}

// conExpandTabs replaces tabs by spaces to the next multiple of 8 and
// other control characters by "?".
func conExpandTabs(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		switch {
		case r == '\t':
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case r < 0x20 || r == 0x7f:
			b.WriteByte('?')
			col++
		default:
			b.WriteRune(r)
			col += ansi.StringWidth(string(r))
		}
	}
	return b.String()
}
