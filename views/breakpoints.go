package views

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Breakpoints lists the breakpoints and then the watchpoints: number,
// spec or expression, where it resolved, condition, pending state. "x" or
// Delete deletes the one under the cursor.
type Breakpoints struct {
	ctx  *Context
	w, h int
	bps  []debugger.BreakpointInfo
	wps  []debugger.WatchpointInfo
	cur  paneCursor
}

// NewBreakpoints returns an empty Breakpoints pane.
func NewBreakpoints(ctx *Context) *Breakpoints { return &Breakpoints{ctx: ctx} }

// Title names the pane.
func (p *Breakpoints) Title() string { return "Breakpoints" }

// SetSize sets the inner size.
func (p *Breakpoints) SetSize(w, h int) {
	p.w, p.h = w, h
	p.cur.fix(p.count(), p.h)
}

// SetSnapshot shows the breakpoints of a new snapshot. The cursor keeps
// its row (not its breakpoint) so that deleting several in a row is
// repeated presses of one key.
func (p *Breakpoints) SetSnapshot(sn *debugger.Snapshot) {
	p.bps, p.wps = nil, nil
	if sn != nil {
		p.bps, p.wps = sn.Breakpoints, sn.Watches
	}
	p.cur.fix(p.count(), p.h)
}

func (p *Breakpoints) count() int { return len(p.bps) + len(p.wps) }

// id is the number of the row's breakpoint or watchpoint; they share one
// numbering, as in gdb, so "delete N" takes either.
func (p *Breakpoints) id(i int) int {
	if i < len(p.bps) {
		return p.bps[i].ID
	}
	return p.wps[i-len(p.bps)].ID
}

// Update moves the cursor; "x" and Delete delete, space enables or
// disables. They are literal keys rather than keymaps actions because no
// preset binds them: "x" is what vim and mutt users press to remove an
// entry, space what toggles a checkbox.
func (p *Breakpoints) Update(msg tea.Msg) tea.Cmd {
	return p.cur.listKey(msg, p.ctx.Keys, p.count(), p.h, func(ks string) tea.Cmd {
		switch ks {
		case "x", "delete":
			return paneRun(fmt.Sprintf("delete %d", p.id(p.cur.pos)))
		case "space":
			verb := "disable"
			if p.disabled(p.cur.pos) {
				verb = "enable"
			}
			return paneRun(fmt.Sprintf("%s %d", verb, p.id(p.cur.pos)))
		}
		return nil
	})
}

// disabled says whether row i is disabled.
func (p *Breakpoints) disabled(i int) bool {
	if i < len(p.bps) {
		return p.bps[i].Disabled
	}
	return p.wps[i-len(p.bps)].Disabled
}

// View renders the visible rows.
func (p *Breakpoints) View() string {
	t := p.ctx.Theme
	if p.count() == 0 {
		return paneHint(t.Muted, p.w, p.h, fmt.Sprintf("no breakpoints: %s on a source line, or %sbreak LOCATION", keyFor(p.ctx, keymaps.Break), keyFor(p.ctx, keymaps.Prompt)),
			fmt.Sprintf("no watchpoints: %s on a local, or %swatch EXPR", keyFor(p.ctx, keymaps.Watch), keyFor(p.ctx, keymaps.Prompt)))
	}
	idW := 1
	for i := 0; i < p.count(); i++ {
		idW = max(idW, len(fmt.Sprint(p.id(i))))
	}
	var out []string
	for i := p.cur.top; i < p.count() && len(out) < p.h; i++ {
		row, text, muted := lipgloss.NewStyle(), t.Base, t.Muted
		mark, markSt := paneBreakMark(t), t.Breakpoint
		if i >= len(p.bps) {
			mark, markSt = "w", t.Watch
		}
		if i == p.cur.pos {
			row, text, muted = t.Selected, t.Selected, t.Selected
			markSt = markSt.Inherit(t.Selected)
		}
		segs := []paneSeg{{mark, markSt}, {fmt.Sprintf(" %-*d ", idW, p.id(i)), text}}
		if i < len(p.bps) {
			b := p.bps[i]
			segs = append(segs, paneSeg{paneText(b.Spec), text})
			if where := fmt.Sprintf("%s:%d", b.File, b.Line); b.File != "" && !strings.HasSuffix(b.Spec, where) {
				segs = append(segs, paneSeg{" at " + paneText(where), muted})
			} else if b.File == "" && len(b.Addrs) > 0 && !strings.HasPrefix(b.Spec, "*") {
				segs = append(segs, paneSeg{" at " + b.Addrs[0], muted})
			}
			if b.Condition != "" {
				segs = append(segs, paneSeg{" if " + paneText(b.Condition), text})
			}
			if b.Pending {
				segs = append(segs, paneSeg{" (pending)", muted})
			}
			if b.Temporary {
				segs = append(segs, paneSeg{" (once)", muted})
			}
			if b.Disabled {
				segs = append(segs, paneSeg{" (disabled)", muted})
			}
		} else {
			w := p.wps[i-len(p.bps)]
			segs = append(segs, paneSeg{paneText(w.Expr), text}, paneSeg{fmt.Sprintf(" @%s/%d", w.Addr, w.Size), muted})
			if w.Access {
				segs = append(segs, paneSeg{" (access)", muted})
			}
			if w.Disabled {
				segs = append(segs, paneSeg{" (disabled)", muted})
			}
		}
		out = append(out, paneRow(p.w, row, segs...))
	}
	return paneBlock(out, p.w, p.h)
}

// Help lists the pane's keys; "x", Delete and space are literal keys, not
// actions, so the help overlay cannot list them from here.
func (p *Breakpoints) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown}
}
