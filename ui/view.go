package ui

// Drawing the UI: the panes placed by the layout, the status line, the
// key hints and the help overlay.

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rewind-debugger/rewind/keymaps"
)

// resize gives every visible pane its inner size.
func (m *Model) resize() {
	if m.w < MinWidth || m.h < MinHeight {
		return
	}
	m.lastRects = m.arrange()
	for id, r := range m.lastRects {
		m.panes[id].SetSize(r.w-2, r.h-2)
	}
}

// arrange places the tab row and the panes on the screen, above the status
// bar: the tab row's height depends on what fits on a line, and its
// highlights on the panes placed.
func (m *Model) arrange() placement {
	w := m.w - m.besideWidth()
	pl := layout(m.lay, w, m.h-2, m.focus, m.zoom)
	m.tabLines, m.tabHits = tabRow(m.ctx.Theme, m.ctx.Keys, w, pl, m.focus, m.tabs())
	if n := len(m.tabLines); n != 1 {
		pl = layout(m.lay, w, m.h-1-n, m.focus, m.zoom)
		m.tabLines, m.tabHits = tabRow(m.ctx.Theme, m.ctx.Keys, w, pl, m.focus, m.tabs())
	}
	out := placement{}
	for id, r := range pl {
		r.y += len(m.tabLines)
		out[id] = r
	}
	return out
}

// View draws the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "rewind"
	return v
}

// render is the screen as text (View without the terminal settings).
func (m *Model) render() string {
	if m.w == 0 || m.h == 0 {
		return ""
	}
	th := m.ctx.Theme
	if m.w < MinWidth || m.h < MinHeight {
		msg := fmt.Sprintf("terminal too small (%dx%d): rewind needs %dx%d", m.w, m.h, MinWidth, MinHeight)
		lines := strings.Split(ansi.Wordwrap(msg, m.w, " "), "\n")
		for i := range lines {
			lines[i] = ansi.Truncate(lines[i], m.w, "")
		}
		if len(lines) > m.h {
			lines = lines[:m.h]
		}
		return lipgloss.Place(m.w, m.h, lipgloss.Center, lipgloss.Center, strings.Join(lines, "\n"))
	}
	rects := m.arrange()
	if fmt.Sprint(rects) != fmt.Sprint(m.lastRects) {
		m.lastRects = rects
		for id, r := range rects {
			m.panes[id].SetSize(r.w-2, r.h-2)
		}
	}
	c := newCanvas(m.w, m.h-1)
	c.place(0, 0, m.tabLines)
	for id, r := range rects {
		p := m.panes[id]
		c.place(r.x, r.y, frame(th, p.Title(), p.View(), r.w, r.h, id == m.focus))
	}
	if bw := m.besideWidth(); bw > 0 {
		m.beside.SetSize(bw-2, m.h-3)
		c.place(m.w-bw, 0, frame(th, m.beside.Title(), m.beside.View(), bw, m.h-1, false))
	}
	lines := c.render()
	if m.showHelp {
		lines = m.overlayHelp(lines)
	}
	return strings.Join(append(lines, m.statusLine()), "\n")
}

// statusLine is the moment, the stop, the position and key hints — or the
// prompt, or the progress of a running operation.
func (m *Model) statusLine() string {
	th := m.ctx.Theme
	if m.prompting {
		return ansi.Truncate(m.prompt.View(), m.w, "")
	}
	var left string
	switch {
	case m.busy && m.confirmQuit:
		left = " an operation is running: q again quits, Esc cancels it "
	case m.busy:
		d, t := m.eng.done.Load(), m.eng.total.Load()
		left = fmt.Sprintf(" %s%s… ", m.busyCmd, m.queuedNote())
		if t > 0 {
			left = fmt.Sprintf(" %s%s: replaying %d/%d (%d%%) — Esc cancels ", m.busyCmd, m.queuedNote(), d, t, d*100/t)
		}
	case m.snap != nil:
		pct := int64(0)
		if m.snap.Total > 0 {
			pct = m.snap.Event * 100 / m.snap.Total
		}
		left = fmt.Sprintf(" #%d/%d %d%% · thread %d", m.snap.Event, m.snap.Total, pct, m.snap.Thread)
		if m.traceNote != "" {
			left += " · " + m.traceNote
		}
		if m.status != "" {
			left += " · " + m.status
		}
		left += " "
	}
	hints := m.hints()
	room := m.w - lipgloss.Width(left)
	if room < 10 {
		return th.StatusBar.Render(ansi.Truncate(left, m.w, "…") + strings.Repeat(" ", max(0, m.w-lipgloss.Width(ansi.Truncate(left, m.w, "…")))))
	}
	hints = ansi.Truncate(hints, room, "")
	pad := m.w - lipgloss.Width(left) - lipgloss.Width(hints)
	return th.StatusBar.Render(left + strings.Repeat(" ", max(pad, 0)) + hints)
}

// hints are the key reminders of the status bar.
func (m *Model) hints() string {
	ks := m.ctx.Keys
	first := func(a keymaps.Action) string {
		k := ks.Get(a).Keys()
		if len(k) == 0 {
			return "?"
		}
		return k[0]
	}
	return fmt.Sprintf("%s/%s/%s/%s step/next/finish/cont · %s %s reverse · %s cmd · %s help · %s quit ",
		first(keymaps.Step), first(keymaps.Next), first(keymaps.Finish), first(keymaps.Continue),
		first(keymaps.ReverseStep), first(keymaps.ReverseCont), first(keymaps.Prompt), first(keymaps.Help), first(keymaps.Quit))
}

// overlayHelp draws the help box over the middle of the screen: the
// global bindings and the focused pane's.
func (m *Model) overlayHelp(lines []string) []string {
	ks := m.ctx.Keys
	global := ks.Bindings(keymaps.Step, keymaps.Next, keymaps.Finish, keymaps.Continue, keymaps.ReverseStep,
		keymaps.ReverseNext, keymaps.ReverseFinish, keymaps.ReverseCont, keymaps.StepI, keymaps.ReverseStepI)
	ui := ks.Bindings(keymaps.Prompt, keymaps.FocusNext, keymaps.FocusPrev, keymaps.Zoom, keymaps.JumpBack, keymaps.JumpForward,
		keymaps.Help, keymaps.Cancel, keymaps.Quit)
	pane := ks.Bindings(m.panes[m.focus].Help()...)
	if m.originPane() {
		pane = append(pane, ks.Bindings(keymaps.Origin, keymaps.OriginForward, keymaps.OriginRead)...)
	}
	m.help.Styles.FullKey = m.ctx.Theme.Key
	m.help.Styles.FullDesc = m.ctx.Theme.Base
	m.help.Styles.FullSeparator = m.ctx.Theme.Muted
	m.help.SetWidth(m.w - 4)
	body := m.help.FullHelpView([][]key.Binding{global, ui, pane})
	title := m.panes[m.focus].Title() + " — keys"
	bw := min(m.w-2, lipgloss.Width(body)+4)
	bh := min(len(lines), strings.Count(body, "\n")+3)
	box := frame(m.ctx.Theme, title, body, bw, bh, true)
	x, y := (m.w-bw)/2, (len(lines)-bh)/2
	for i, l := range box {
		if y+i >= len(lines) {
			break
		}
		row := lines[y+i]
		left := ansi.Truncate(row, x, "")
		right := ansi.TruncateLeft(row, x+bw, "")
		lines[y+i] = left + strings.Repeat(" ", max(0, x-lipgloss.Width(left))) + l + right
	}
	return lines
}
