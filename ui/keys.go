package ui

// Keys: what a key press does, the focused pane first (a pane that is
// typing takes every key), then the global bindings, the dataflow keys
// (origin, watch) and moving the focus between panes.

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/rewind-debugger/rewind/keymaps"
	"github.com/rewind-debugger/rewind/views"
)

// onKey handles keys: the prompt and the help overlay first, then global
// actions, then the focused pane.
func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	ks := m.ctx.Keys
	s := k.String()
	if m.prompting {
		switch s {
		case "enter":
			line := m.prompt.Value()
			m.prompting = false
			m.prompt.Blur()
			if strings.TrimSpace(line) != "" {
				m.history = append(m.history, line)
			}
			m.histPos = len(m.history)
			return m.run(line)
		case "esc", "ctrl+c":
			m.prompting = false
			m.prompt.Blur()
			return nil
		case "up":
			if m.histPos > 0 {
				m.histPos--
				m.prompt.SetValue(m.history[m.histPos])
				m.prompt.CursorEnd()
			}
			return nil
		case "down":
			if m.histPos < len(m.history)-1 {
				m.histPos++
				m.prompt.SetValue(m.history[m.histPos])
			} else {
				m.histPos = len(m.history)
				m.prompt.SetValue("")
			}
			m.prompt.CursorEnd()
			return nil
		}
		var cmd tea.Cmd
		m.prompt, cmd = m.prompt.Update(k)
		return cmd
	}
	if m.showHelp {
		if ks.Matches(s, keymaps.Help) || ks.Matches(s, keymaps.Cancel) || ks.Matches(s, keymaps.Quit) {
			m.showHelp = false
		}
		return nil
	}
	if m.paneTyping() {
		// A filter or an expression is being typed: letters are text.
		return m.panes[m.focus].Update(k)
	}
	if ks.Matches(s, keymaps.Cancel) && m.askCancel != nil && m.focus == pLLM {
		m.askCancel() // stop a streaming answer
		m.askCancel = nil
		return nil
	}
	if ks.Matches(s, keymaps.Cancel) && m.busy {
		m.eng.cancelled.Store(true)
		m.dropQueued()
		return nil
	}
	if ks.Matches(s, keymaps.Quit) {
		if m.busy && !m.confirmQuit {
			m.confirmQuit = true
			return nil
		}
		return tea.Quit
	}
	m.confirmQuit = false
	motion := map[keymaps.Action]string{
		keymaps.Step: "step", keymaps.Next: "next", keymaps.Finish: "finish", keymaps.Continue: "continue",
		keymaps.ReverseStep: "reverse-step", keymaps.ReverseNext: "reverse-next", keymaps.ReverseFinish: "reverse-finish",
		keymaps.ReverseCont: "reverse-continue", keymaps.StepI: "stepi", keymaps.ReverseStepI: "reverse-stepi",
	}
	for _, a := range []keymaps.Action{keymaps.Step, keymaps.Next, keymaps.Finish, keymaps.Continue, keymaps.ReverseStep,
		keymaps.ReverseNext, keymaps.ReverseFinish, keymaps.ReverseCont, keymaps.StepI, keymaps.ReverseStepI} {
		if ks.Matches(s, a) {
			return m.run(motion[a])
		}
	}
	if cmd, ok := m.dataflowKey(s); ok {
		return cmd
	}
	switch {
	case ks.Matches(s, keymaps.Prompt):
		m.prompting = true
		m.prompt.SetValue("")
		m.histPos = len(m.history)
		return m.prompt.Focus()
	case ks.Matches(s, keymaps.Ask):
		m.focus = pLLM
		m.resize()
		m.panes[pLLM].(*views.LLM).OpenQuestion()
		return nil
	case ks.Matches(s, keymaps.Help):
		m.showHelp = true
		return nil
	case ks.Matches(s, keymaps.FocusNext):
		m.focusPane(m.nextPane(1))
		return nil
	case ks.Matches(s, keymaps.FocusPrev):
		m.focusPane(m.nextPane(numPanes - 1))
		return nil
	case ks.Matches(s, keymaps.Zoom):
		m.zoom = !m.zoom
		m.resize()
		return nil
	}
	for _, id := range tabOrder {
		if ks.Matches(s, paneInfos[id].key) {
			m.focusPane(id)
			return nil
		}
	}
	return m.panes[m.focus].Update(k)
}

// tabs are the panes of the tab row for this recording.
func (m *Model) tabs() []paneID {
	if m.snap == nil {
		return tabs(1)
	}
	return tabs(len(m.snap.Processes))
}

// nextPane is the pane step places after the focused one in Tab order,
// passing over those the tab row leaves out.
func (m *Model) nextPane(step paneID) paneID {
	in := map[paneID]bool{}
	for _, id := range m.tabs() {
		in[id] = true
	}
	id := (m.focus + step) % numPanes
	for !in[id] && id != m.focus {
		id = (id + step) % numPanes
	}
	return id
}

// focusPane gives a pane the focus, which brings it on screen.
func (m *Model) focusPane(id paneID) {
	m.focus = id
	m.resize()
}

// dataflowKey handles the jump list keys anywhere and the origin keys on
// a pane that shows values: origin on the value under the cursor; on
// Registers, which have no cursor, the prompt opens on "origin $".
func (m *Model) dataflowKey(s string) (tea.Cmd, bool) {
	ks := m.ctx.Keys
	switch {
	case ks.Matches(s, keymaps.JumpBack):
		if m.snap == nil || m.busy {
			return nil, true
		}
		if to, ok := m.jumps.Back(m.snap.Moment); ok {
			return m.run("goto " + to), true
		}
		m.status = "jump list: nothing to go back to (o on a value jumps to its origin)"
		return nil, true
	case ks.Matches(s, keymaps.JumpForward):
		if m.busy {
			return nil, true
		}
		if to, ok := m.jumps.Forward(); ok {
			return m.run("goto " + to), true
		}
		m.status = "jump list: nothing to go forward to"
		return nil, true
	}
	verbs := map[keymaps.Action]string{keymaps.Origin: "origin", keymaps.OriginForward: "origin --forward", keymaps.OriginRead: "origin --read"}
	for _, a := range []keymaps.Action{keymaps.Origin, keymaps.OriginForward, keymaps.OriginRead} {
		if !ks.Matches(s, a) {
			continue
		}
		switch p := m.panes[m.focus].(type) {
		case views.Valued:
			e := p.OriginExpr()
			if m.chainOn && m.focus == m.chainPane && (e == m.chain || e == "") {
				return m.run(verbs[a]), true // the same location, one write further
			}
			if e != "" {
				return m.run(verbs[a] + " " + e), true
			}
			return nil, true
		case *views.Registers:
			m.prompting = true
			m.prompt.SetValue(verbs[a] + " $")
			m.prompt.CursorEnd()
			m.histPos = len(m.history)
			return m.prompt.Focus(), true
		}
	}
	return nil, false
}

// originPane says whether the focused pane takes the origin keys.
func (m *Model) originPane() bool {
	switch m.panes[m.focus].(type) {
	case views.Valued, *views.Registers:
		return true
	}
	return false
}

// paneTyping says whether the focused pane has a text input open (a
// filter, an expression), where letters are text, not actions.
func (m *Model) paneTyping() bool {
	switch p := m.panes[m.focus].(type) {
	case interface{ Typing() bool }:
		return p.Typing()
	case interface{ Editing() bool }:
		return p.Editing()
	}
	return false
}
