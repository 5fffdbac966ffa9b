package views

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Threads lists the threads alive at the current moment: tid, function
// and pc, the current one marked; Enter switches to the thread under the
// cursor.
type Threads struct {
	ctx     *Context
	w, h    int
	threads []debugger.ThreadInfo
	cur     paneCursor
}

// NewThreads returns an empty Threads pane.
func NewThreads(ctx *Context) *Threads { return &Threads{ctx: ctx} }

// Title names the pane.
func (p *Threads) Title() string { return "Threads" }

// SetSize sets the inner size.
func (p *Threads) SetSize(w, h int) {
	p.w, p.h = w, h
	p.cur.fix(len(p.threads), p.h)
}

// SetSnapshot shows the threads with the cursor on the current one.
func (p *Threads) SetSnapshot(sn *debugger.Snapshot) {
	p.threads = nil
	if sn != nil {
		p.threads = sn.Threads
	}
	p.cur.pos = 0
	for i, th := range p.threads {
		if th.Current {
			p.cur.pos = i
		}
	}
	p.cur.follow(len(p.threads), p.h, false)
}

// Update moves the cursor; Enter switches thread.
func (p *Threads) Update(msg tea.Msg) tea.Cmd {
	return p.cur.enterRuns(msg, p.ctx.Keys, len(p.threads), p.h, func(row int) string {
		return fmt.Sprintf("thread %d", p.threads[row].Tid)
	})
}

// View renders the visible threads in aligned columns.
func (p *Threads) View() string {
	t := p.ctx.Theme
	if len(p.threads) == 0 {
		return paneHint(t.Muted, p.w, p.h, "no threads: the program has not started or has exited",
			fmt.Sprintf("%s or %s go back into the program", keyFor(p.ctx, keymaps.ReverseStep), keyFor(p.ctx, keymaps.ReverseCont)))
	}
	tidW, fnW := 0, 0
	for _, th := range p.threads {
		tidW = max(tidW, len(fmt.Sprint(th.Tid)))
		fnW = max(fnW, lipgloss.Width(paneText(th.Function)))
	}
	// A long C++ name must not push the pc out of a narrow pane.
	fnW = min(fnW, max(p.w-tidW-4-20, 8))
	var out []string
	for i := p.cur.top; i < len(p.threads) && len(out) < p.h; i++ {
		th := p.threads[i]
		row, text, muted := lipgloss.NewStyle(), t.Base, t.Muted
		arrow := "  "
		if th.Current {
			row, text, muted = t.Current, t.Current, t.Current
			arrow = "=>"
		}
		if i == p.cur.pos {
			row, text, muted = t.Selected, t.Selected, t.Selected
		}
		fn := paneText(th.Function)
		if fn == "" {
			fn = "??"
		}
		if lipgloss.Width(fn) > fnW {
			fn = paneRow(fnW, lipgloss.NewStyle(), paneSeg{fn, lipgloss.NewStyle()})
		}
		out = append(out, paneRow(p.w, row,
			paneSeg{fmt.Sprintf("%s %*d  ", arrow, tidW, th.Tid), text},
			paneSeg{panePad(fn, fnW) + "  ", text},
			paneSeg{th.PC, muted}))
	}
	return paneBlock(out, p.w, p.h)
}

// Help lists the pane's keys.
func (p *Threads) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown, keymaps.Enter}
}
