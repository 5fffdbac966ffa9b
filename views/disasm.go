package views

import (
	"fmt"
	"slices"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Disassembly shows the instructions around the selected frame's pc, as
// gdb's "x/i": "=> 0x401136 <main+4>:  mov ...", with breakpoints marked
// and a cursor to set or delete a breakpoint on an instruction.
type Disassembly struct {
	ctx   *Context
	w, h  int
	snap  *debugger.Snapshot
	lines []debugger.DisasmLine
	cur   paneCursor
}

// NewDisassembly returns an empty Disassembly pane.
func NewDisassembly(ctx *Context) *Disassembly { return &Disassembly{ctx: ctx} }

// Title names the pane.
func (d *Disassembly) Title() string { return "Disassembly" }

// SetSize sets the inner size.
func (d *Disassembly) SetSize(w, h int) {
	d.w, d.h = w, h
	d.cur.fix(len(d.lines), d.h)
}

// SetSnapshot shows a new moment with the cursor on the current pc. The
// window only stays put when the listing starts at the same address: the
// snapshot's listing is a window around pc, so the same row index can be
// another instruction in a new one.
func (d *Disassembly) SetSnapshot(sn *debugger.Snapshot) {
	d.snap = sn
	prev := d.lines
	d.lines = nil
	if sn != nil {
		d.lines = sn.Disasm
	}
	d.cur.pos = 0
	for i, l := range d.lines {
		if l.Current {
			d.cur.pos = i
		}
	}
	same := len(prev) > 0 && len(d.lines) > 0 && prev[0].Addr == d.lines[0].Addr
	d.cur.follow(len(d.lines), d.h, !same)
}

// Update moves the cursor and turns Break into a command.
func (d *Disassembly) Update(msg tea.Msg) tea.Cmd {
	return d.cur.listKey(msg, d.ctx.Keys, len(d.lines), d.h, func(ks string) tea.Cmd {
		if !d.ctx.Keys.Matches(ks, keymaps.Break) {
			return nil
		}
		return d.breakCmd()
	})
}

// breakCmd toggles a breakpoint at the cursor's instruction, like the
// Source pane does on a line.
func (d *Disassembly) breakCmd() tea.Cmd {
	addr := fmt.Sprintf("%#x", d.lines[d.cur.pos].Addr)
	if d.snap != nil {
		for _, b := range d.snap.Breakpoints {
			if slices.Contains(b.Addrs, addr) {
				return paneRun(fmt.Sprintf("delete %d", b.ID))
			}
		}
	}
	return paneRun("break *" + addr)
}

// View renders the visible instructions.
func (d *Disassembly) View() string {
	t := d.ctx.Theme
	if len(d.lines) == 0 {
		return paneHint(t.Muted, d.w, d.h, "no disassembly: no code at this moment's pc",
			fmt.Sprintf("%sdisassemble FUNC shows a function", keyFor(d.ctx, keymaps.Prompt)))
	}
	var out []string
	for i := d.cur.top; i < len(d.lines) && len(out) < d.h; i++ {
		l := d.lines[i]
		row := lipgloss.NewStyle()
		gutter, sym, text := t.Base, t.Muted, t.Base
		if l.Current {
			row = t.Current
			gutter, sym, text = row, row, row
		}
		if i == d.cur.pos {
			gutter = t.Selected
		}
		bp, arrow := " ", "  "
		if l.Breakpoint {
			bp = paneBreakMark(t)
		}
		if l.Current {
			arrow = "=>"
		}
		symbol := ""
		// In a narrow pane the instruction matters more than "<main+4>",
		// which the Source and Stack panes say anyway.
		if l.Symbol != "" && d.w >= 56 {
			symbol = " <" + paneText(l.Symbol) + ">"
		}
		out = append(out, paneRow(d.w, row,
			paneSeg{bp, t.Breakpoint.Inherit(gutter)},
			paneSeg{fmt.Sprintf("%s %#x", arrow, l.Addr), gutter},
			paneSeg{symbol + ":", sym},
			paneSeg{"  " + paneText(l.Text), text}))
	}
	return paneBlock(out, d.w, d.h)
}

// Help lists the pane's keys.
func (d *Disassembly) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown, keymaps.Top, keymaps.Bottom, keymaps.Break}
}
