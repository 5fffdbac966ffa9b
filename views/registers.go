package views

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Registers shows the general registers of the selected frame in as many
// columns as fit, eflags decoded on a line of its own, and the values that
// changed since the previous stop; Toggle switches to xmm0-15.
type Registers struct {
	ctx  *Context
	w, h int
	snap *debugger.Snapshot
	fp   bool
	top  int
	// prev holds the values at the previous moment, by register name.
	prev map[string]string
}

// NewRegisters returns an empty Registers pane.
func NewRegisters(ctx *Context) *Registers { return &Registers{ctx: ctx} }

// Title names the pane and which register set it shows.
func (r *Registers) Title() string {
	if r.fp {
		return "Registers: xmm"
	}
	return "Registers"
}

// SetSize sets the inner size.
func (r *Registers) SetSize(w, h int) {
	r.w, r.h = w, h
	r.scroll(0)
}

// SetSnapshot shows a new moment. The baseline for "changed" moves only
// when the moment does: a snapshot is rebuilt after every command, and
// setting a breakpoint must not wipe out what the last step changed.
func (r *Registers) SetSnapshot(sn *debugger.Snapshot) {
	if r.snap != nil && sn != nil && !paneSameMoment(r.snap, sn) {
		r.prev = map[string]string{}
		for _, rg := range r.snap.Registers {
			r.prev[rg.Name] = rg.Value
		}
		for _, rg := range r.snap.FPRegisters {
			r.prev[rg.Name] = rg.Value
		}
	}
	r.snap = sn
	r.scroll(0)
}

// paneSameMoment says whether two snapshots are of the same point in time.
func paneSameMoment(a, b *debugger.Snapshot) bool {
	return a.Moment == b.Moment && a.Event == b.Event
}

// Changed says whether a register's value differs from the previous stop.
func (r *Registers) Changed(name string) bool {
	if r.snap == nil || r.prev == nil {
		return false
	}
	old, ok := r.prev[name]
	if !ok {
		return false
	}
	for _, set := range [][]debugger.Register{r.snap.Registers, r.snap.FPRegisters} {
		for _, rg := range set {
			if rg.Name == name {
				return rg.Value != old
			}
		}
	}
	return false
}

// Update scrolls and toggles the register set.
func (r *Registers) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	ks, keys := k.String(), r.ctx.Keys
	page := max(r.h-1, 1)
	switch {
	case keys.Matches(ks, keymaps.Toggle):
		r.fp = !r.fp
		r.top = 0
	case keys.Matches(ks, keymaps.Up):
		r.scroll(-1)
	case keys.Matches(ks, keymaps.Down):
		r.scroll(1)
	case keys.Matches(ks, keymaps.PageUp):
		r.scroll(-page)
	case keys.Matches(ks, keymaps.PageDown):
		r.scroll(page)
	case keys.Matches(ks, keymaps.Top):
		r.top = 0
	case keys.Matches(ks, keymaps.Bottom):
		r.scroll(1 << 20)
	}
	return nil
}

func (r *Registers) scroll(d int) {
	r.top = max(0, min(r.top+d, len(r.lines())-max(r.h, 1)))
}

func (r *Registers) set() []debugger.Register {
	if r.snap == nil {
		return nil
	}
	if r.fp {
		return r.snap.FPRegisters
	}
	return r.snap.Registers
}

// lines lays the registers out for the current width: a grid of
// "name value" cells, row by row as gdb's TUI does, then the flags
// registers, whose decoded bits would not fit a cell.
func (r *Registers) lines() []string {
	t := r.ctx.Theme
	var grid, flags []debugger.Register
	for _, rg := range r.set() {
		if rg.Flags != "" {
			flags = append(flags, rg)
		} else {
			grid = append(grid, rg)
		}
	}
	nameW, valW := 0, 0
	for _, rg := range grid {
		nameW = max(nameW, len(rg.Name))
		valW = max(valW, len(rg.Value))
	}
	// A cell is "name value" plus one column for the NoColor "*" marker,
	// kept in every theme so that the columns do not move.
	cellW := nameW + 1 + valW + 1
	cols := max(1, (r.w+1)/(cellW+1))
	value := func(rg debugger.Register) paneSeg {
		if r.Changed(rg.Name) {
			v := paneText(rg.Value)
			if t.NoColor {
				v += "*"
			}
			return paneSeg{v, t.Changed}
		}
		return paneSeg{paneText(rg.Value), t.Base}
	}
	var out []string
	for i := 0; i < len(grid); i += cols {
		var segs []paneSeg
		for c := 0; c < cols && i+c < len(grid); c++ {
			rg := grid[i+c]
			v := value(rg)
			pad := ""
			if c < cols-1 && i+c+1 < len(grid) {
				pad = strings.Repeat(" ", valW+2-lipgloss.Width(v.text))
			}
			segs = append(segs, paneSeg{panePad(rg.Name, nameW) + " ", t.Muted}, v, paneSeg{pad, t.Base})
		}
		out = append(out, paneRow(r.w, lipgloss.NewStyle(), segs...))
	}
	for _, rg := range flags {
		out = append(out, paneRow(r.w, lipgloss.NewStyle(),
			paneSeg{panePad(rg.Name, nameW) + " ", t.Muted}, value(rg), paneSeg{" " + paneText(rg.Flags), t.Base}))
	}
	return out
}

// panePad pads plain text with spaces to n cells.
func panePad(s string, n int) string {
	if w := lipgloss.Width(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}

// View renders the visible part of the layout.
func (r *Registers) View() string {
	lines := r.lines()
	if len(lines) == 0 {
		what := "no registers"
		if r.fp {
			what = "no xmm registers"
		}
		return paneHint(r.ctx.Theme.Muted, r.w, r.h, what+": no thread runs at this moment",
			fmt.Sprintf("%s or %s go back into the program", keyFor(r.ctx, keymaps.ReverseStep), keyFor(r.ctx, keymaps.ReverseCont)))
	}
	top := max(0, min(r.top, len(lines)-max(r.h, 1)))
	return paneBlock(lines[top:], r.w, r.h)
}

// Help lists the pane's keys.
func (r *Registers) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown, keymaps.Toggle}
}
