package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/rewind-debugger/rewind/views"
)

// A watch history replays the whole recording in the background, one
// operation at a time like a command, but the user did not ask for it:
// it starts by itself when a watchpoint appears (`:watch -l b->next`, then
// C, is the README's demo). A command asked for meanwhile (a motion key,
// the prompt, Enter on a write) waits for it and runs when the history is
// ready, shown in the status bar, instead of being dropped as busy. Esc
// cancels the history and what waits for it.

// queueAfterHistory keeps line to run when the history being computed is
// ready; false when no history is running (the command that runs is the
// user's own: a second one is refused as busy).
func (m *Model) queueAfterHistory(line string) bool {
	if !m.busy || !m.histRunning {
		return false
	}
	m.afterHist = append(m.afterHist, line)
	return true
}

// nextQueued starts what waits, one at a time: the commands asked for
// during a history first, then the histories asked for during a command.
func (m *Model) nextQueued() tea.Cmd {
	if len(m.afterHist) > 0 {
		line := m.afterHist[0]
		m.afterHist = m.afterHist[1:]
		return m.run(line)
	}
	if len(m.pendingHist) > 0 {
		next := m.pendingHist[0]
		m.pendingHist = m.pendingHist[1:]
		return func() tea.Msg { return next }
	}
	return nil
}

// dropQueued says in the Console which waiting commands a cancel dropped.
func (m *Model) dropQueued() {
	for _, line := range m.afterHist {
		m.console().Append(views.ConsoleEntry{Command: line, Output: "not run: cancelled with " + m.busyCmd, Error: true})
	}
	m.afterHist = nil
}

// queuedNote is what the status bar adds to the operation under way:
// the commands that wait to run after it.
func (m *Model) queuedNote() string {
	if len(m.afterHist) == 0 {
		return ""
	}
	return ", then " + strings.Join(m.afterHist, ", ")
}
