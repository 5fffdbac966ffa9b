package views

import (
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Beside shows another recording's side of a comparison next to the panes
// (rewind replay --diff A B opens B with A's event here): fixed lines,
// wrapped to the width, that the mouse wheel scrolls. It does not follow
// the moment: it is what the other recording did where this one left it.
type Beside struct {
	ctx   *Context
	title string
	lines []string
	w, h  int
	top   int
}

// NewBeside returns a Beside panel with a title and its lines.
func NewBeside(ctx *Context, title string, lines []string) *Beside {
	return &Beside{ctx: ctx, title: title, lines: lines}
}

// Title names the panel.
func (p *Beside) Title() string { return p.title }

// SetSize sets the inner size.
func (p *Beside) SetSize(w, h int) { p.w, p.h = w, h }

// SetSnapshot does nothing: the panel shows the other recording.
func (p *Beside) SetSnapshot(*debugger.Snapshot) {}

// Update scrolls with the wheel (the root sends it wheel moves over the
// panel as up and down keys).
func (p *Beside) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	n := len(p.wrapped())
	switch k.Code {
	case tea.KeyUp:
		p.top = max(0, p.top-1)
	case tea.KeyDown:
		p.top = max(0, min(p.top+1, n-p.h))
	}
	return nil
}

// wrapped are the lines cut to the width, a long one continued on the
// next lines, indented.
func (p *Beside) wrapped() []string {
	var out []string
	w := max(p.w, 3)
	for _, l := range p.lines {
		out = append(out, ansi.Cut(l, 0, w))
		for rest := ansi.Cut(l, w, ansi.StringWidth(l)); rest != ""; rest = ansi.Cut(rest, w-2, ansi.StringWidth(rest)) {
			out = append(out, "  "+ansi.Cut(rest, 0, w-2))
		}
	}
	return out
}

// View renders the visible lines.
func (p *Beside) View() string {
	lines := p.wrapped()
	if p.top < len(lines) {
		lines = lines[p.top:]
	}
	for i, l := range lines {
		lines[i] = p.ctx.Theme.Base.Render(l)
	}
	return paneBlock(lines, p.w, p.h)
}

// Help lists no keys: the panel takes no focus.
func (p *Beside) Help() []keymaps.Action { return nil }
