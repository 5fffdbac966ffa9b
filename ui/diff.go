package ui

import (
	"fmt"
	"path/filepath"

	"github.com/rewind-debugger/rewind/tracediff"
	"github.com/rewind-debugger/rewind/views"
)

// Beside is what `rewind replay --diff A B` shows next to the panes: the
// other recording's side of where the two part.
type Beside struct {
	Title string
	Lines []string
}

// Widths of the Beside panel: a third of the screen, within bounds, and
// only where the panes keep MinWidth.
const (
	besideMin = 20
	besideMax = 64
)

// DiffOpening is how the UI opens recording B of a comparison: initial
// goes where B leaves A (B's side's moment: just after its event, where
// its thread stands once the call returned; where B lacks A's step, where
// it would have been), beside shows A's side, note says what differs for
// the Console.
func DiffOpening(rep *tracediff.Report) (initial string, beside *Beside, note string) {
	if rep.Same || rep.First == nil {
		return "start", nil, fmt.Sprintf("diff: %s and %s do not differ", filepath.Base(rep.A.Trace), filepath.Base(rep.B.Trace))
	}
	d := rep.First
	initial = "goto end"
	if d.B != nil {
		initial = "goto " + d.B.Moment
	}
	lines := append([]string{d.Category + ": " + d.What, ""}, tracediff.SideLines("A", d.A)...)
	at := "its end"
	if d.A != nil && d.A.Event >= 0 {
		at = fmt.Sprintf("#%d", d.A.Event)
	}
	beside = &Beside{Title: fmt.Sprintf("A: %s %s", filepath.Base(rep.A.Trace), at), Lines: lines}
	note = fmt.Sprintf("diff: this is %s where it leaves %s (%s: %s); A's side is on the right (:diff hides it)",
		filepath.Base(rep.B.Trace), filepath.Base(rep.A.Trace), d.Category, d.What)
	return initial, beside, note
}

// besideWidth is the width of the Beside panel on the screen, 0 when it is
// hidden or there is no room.
func (m *Model) besideWidth() int {
	if m.beside == nil || m.besideOff {
		return 0
	}
	bw := min(besideMax, m.w/3)
	if m.w-bw < MinWidth {
		bw = m.w - MinWidth
	}
	if bw < besideMin {
		return 0
	}
	return bw
}

// toggleBeside is the :diff command: hide or show the other recording's
// side.
func (m *Model) toggleBeside(line string) {
	out := "no other recording: rewind replay --diff A B shows A's side here"
	if m.beside != nil {
		m.besideOff = !m.besideOff
		out = "A's side shown"
		if m.besideOff {
			out = "A's side hidden (:diff shows it)"
		} else if m.besideWidth() == 0 {
			out = "A's side needs a wider terminal"
		}
	}
	m.console().Append(views.ConsoleEntry{Command: line, Output: out})
	m.resize()
}
