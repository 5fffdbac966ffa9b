package views

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Processes lists the processes of a recording of a process tree: pid,
// parent, how it exited, its events and its command line, the debugged
// one marked; Enter debugs the one under the cursor (as `process N`).
type Processes struct {
	ctx   *Context
	w, h  int
	procs []debugger.ProcessInfo
	cur   int32 // the debugged process
	pos   paneCursor
}

// NewProcesses returns an empty Processes pane.
func NewProcesses(ctx *Context) *Processes { return &Processes{ctx: ctx} }

// Title names the pane.
func (p *Processes) Title() string { return "Processes" }

// SetSize sets the inner size.
func (p *Processes) SetSize(w, h int) {
	p.w, p.h = w, h
	p.pos.fix(len(p.procs), p.rows())
}

// rows is the number of process rows under the header.
func (p *Processes) rows() int { return max(p.h-1, 0) }

// SetSnapshot shows the processes with the cursor on the debugged one.
func (p *Processes) SetSnapshot(sn *debugger.Snapshot) {
	p.procs, p.cur = nil, 0
	if sn != nil {
		p.procs, p.cur = sn.Processes, sn.Process
	}
	p.pos.pos = 0
	for i, pr := range p.procs {
		if pr.Pid == p.cur {
			p.pos.pos = i
		}
	}
	p.pos.follow(len(p.procs), p.rows(), false)
}

// Update moves the cursor; Enter switches process.
func (p *Processes) Update(msg tea.Msg) tea.Cmd {
	return p.pos.enterRuns(msg, p.ctx.Keys, len(p.procs), p.rows(), func(row int) string {
		if pid := p.procs[row].Pid; pid != p.cur {
			return fmt.Sprintf("process %d", pid)
		}
		return "" // already the current process
	})
}

// View renders a header and one aligned row per process.
func (p *Processes) View() string {
	t := p.ctx.Theme
	if len(p.procs) == 0 {
		return paneHint(t.Muted, p.w, p.h, "no processes: the recording could not be read (rewind ps TRACE says why)")
	}
	p.pos.fix(len(p.procs), p.rows()) // the debugged one in view at any size
	pidW, evW := len("PPID"), len("EVENTS")
	ev := func(pr debugger.ProcessInfo) string { return fmt.Sprintf("#%d–#%d", pr.First, pr.Last) }
	for _, pr := range p.procs {
		pidW = max(pidW, len(fmt.Sprint(pr.Pid)), len(fmt.Sprint(pr.Parent)))
		evW = max(evW, lipgloss.Width(ev(pr)))
	}
	exitW := len("EXIT")
	for _, pr := range p.procs {
		exitW = max(exitW, lipgloss.Width(pr.Exit))
	}
	out := []string{paneRow(p.w, t.Muted, paneSeg{fmt.Sprintf("   %*s  %*s  %s  %s  CMD", pidW, "PID", pidW, "PPID",
		panePad("EXIT", exitW), panePad("EVENTS", evW)), t.Muted})}
	for i := p.pos.top; i < len(p.procs) && len(out) < p.h; i++ {
		pr := p.procs[i]
		row, text, muted := lipgloss.NewStyle(), t.Base, t.Muted
		arrow := "  "
		if pr.Pid == p.cur {
			row, text, muted = t.Current, t.Current, t.Current
			arrow = "=>"
		}
		if i == p.pos.pos {
			row, text, muted = t.Selected, t.Selected, t.Selected
		}
		parent := "-"
		if pr.Parent != 0 {
			parent = fmt.Sprint(pr.Parent)
		}
		out = append(out, paneRow(p.w, row,
			paneSeg{fmt.Sprintf("%s %*d  %*s  ", arrow, pidW, pr.Pid, pidW, parent), text},
			paneSeg{panePad(pr.Exit, exitW) + "  " + panePad(ev(pr), evW) + "  ", muted},
			paneSeg{paneText(strings.Join(pr.Args, " ")), text}))
	}
	return paneBlock(out, p.w, p.h)
}

// Help lists the pane's keys.
func (p *Processes) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown, keymaps.Enter}
}
