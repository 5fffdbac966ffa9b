package ui

import (
	"encoding/json"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/views"
)

// open runs the initial command, then sets the session file's breakpoints
// and watchpoints up at the moment it reached (so that watchpoints on
// main's locals find them, and breakpoints before main do not keep the
// first screen from main), as one operation.
func (e *engine) open(initial string, f *debugger.SessionFile) tea.Cmd {
	e.cancelled.Store(false)
	return func() tea.Msg {
		e.mu.Lock()
		defer e.mu.Unlock()
		var res debugger.Result
		var mainEvent int64
		if initial != "start" {
			// Opening elsewhere (at the crash): the loader's events fold
			// all the same.
			if ev, ok := e.s.MainEvent(); ok {
				mainEvent = ev
			}
		}
		if initial != "" {
			res = e.s.Execute(initial)
		}
		out := resultMsg{line: initial, res: res, mainEvent: mainEvent}
		if f != nil && len(f.Breakpoints)+len(f.Watchpoints) > 0 {
			n, kept, problems := e.s.Restore(f)
			out.notes = append(out.notes, fmt.Sprintf("session: %d of %d breakpoints and watchpoints restored", n, len(f.Breakpoints)+len(f.Watchpoints)))
			out.problems, out.kept = problems, kept
		}
		out.snap = e.s.Snapshot()
		return out
	}
}

// restoreSession gives the panes and the layout what the session file
// kept; the breakpoints and watchpoints are set by engine.open.
func (m *Model) restoreSession(f *debugger.SessionFile) {
	m.timeline().RestoreState(f.Timeline)
	for id, p := range m.panes {
		if f.Layout.Focus != "" && p.Title() == f.Layout.Focus {
			m.focus = paneID(id)
		}
	}
	m.zoom = f.Layout.Zoom
	if f.Layout.Spec != "" {
		if l, err := ParseLayout(f.Layout.Spec); err == nil {
			m.SetLayout(l)
		} else {
			m.status = "session: layout ignored: " + err.Error()
		}
	}
	m.saved, _ = json.Marshal(m.sessionState())
}

func (m *Model) timeline() *views.Timeline { return m.panes[pTimeline].(*views.Timeline) }

// sessionState is what the session file keeps now.
func (m *Model) sessionState() *debugger.SessionFile {
	f := &debugger.SessionFile{Timeline: m.timeline().SavedState(),
		Layout: debugger.SavedLayout{Focus: m.panes[m.focus].Title(), Zoom: m.zoom}}
	if m.lay != nil && m.lay.String() != m.startLayout {
		f.Layout.Spec = m.lay.String()
	}
	if m.snap != nil {
		f.SetStops(m.snap.Breakpoints, m.snap.Watches, m.kept)
	} else if m.opts.Session != nil {
		// Not set up yet: keep what the file had.
		f.Breakpoints, f.Watchpoints = m.opts.Session.Breakpoints, m.opts.Session.Watchpoints
	}
	return f
}

// saveSession writes the session file when what it keeps changed. A
// failure is said once in the Console: the session goes on without it.
func (m *Model) saveSession() {
	if !m.opts.SaveSession {
		return
	}
	data, err := json.Marshal(m.sessionState())
	if err != nil || string(data) == string(m.saved) {
		return
	}
	m.saved = data
	if _, err := m.sessionState().Save(m.eng.s.Path()); err != nil && !m.saveFailed {
		m.saveFailed = true
		m.console().Append(views.ConsoleEntry{Output: "warning: " + err.Error(), Error: true})
	}
}
