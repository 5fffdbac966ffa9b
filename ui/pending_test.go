package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/rewind-debugger/rewind/views"
)

// TestKeyWhileHistoryLoads: a command asked for while a watchpoint's
// history is computed (the README's demo: `:watch -l n->next`, then C
// at once) waits for it, shown in the status bar, and runs when the
// history is ready; it was dropped as "busy". Esc cancels the history and
// what waits for it.
func TestKeyWhileHistoryLoads(t *testing.T) {
	trace := recordC(t, "../testdata/source/corrupt.c")
	key := func(s string) tea.KeyPressMsg {
		if s == "esc" {
			return tea.KeyPressMsg{Code: tea.KeyEscape}
		}
		r := []rune(s)[0]
		return tea.KeyPressMsg{Code: r, Text: s}
	}
	tests := []struct {
		name string
		keys []string
		// line is the command that waits; reason how it stops ("": it
		// does not run).
		line, reason string
	}{
		{"reverse-continue", []string{"C"}, "reverse-continue", "watchpoint"},
		{"continue", []string{"c"}, "continue", "watchpoint"},
		{"cancelled", []string{"C", "esc"}, "reverse-continue", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := openModel(t, trace, 160, 50, true)
			for _, line := range []string{"break set_name", "continue", "continue", "delete", "watch -l n->next"} {
				drive(t, m, m.run(line))
			}
			at := m.snap.Moment
			// Ask for the history again, as Enter on its header does, and
			// keep it from running: keys come while it is under way.
			_, hist := m.Update(views.RequestHistory{WatchID: 2, Expr: "n->next"})
			if !m.busy || !m.histRunning {
				t.Fatalf("history not under way: busy %v", m.busy)
			}
			for _, k := range tt.keys {
				if _, cmd := m.Update(key(k)); cmd != nil && k != "esc" {
					drive(t, m, cmd)
				}
			}
			status := m.statusLine()
			if tt.reason != "" && !strings.Contains(status, "then "+tt.line) {
				t.Errorf("status while waiting: %q, want %q shown", status, "then "+tt.line)
			}
			if m.snap.Moment != at {
				t.Fatalf("moved to %s before the history was ready", m.snap.Moment)
			}
			drive(t, m, hist)
			m.focusPane(pConsole)
			m.zoom = true
			m.resize()
			screen := m.render()
			if strings.Contains(screen, "busy:") {
				t.Errorf("the key was dropped as busy:\n%s", screen)
			}
			if tt.reason == "" {
				if m.snap.Moment != at || !strings.Contains(screen, "not run: cancelled") {
					t.Errorf("cancelled, yet at %s (from %s):\n%s", m.snap.Moment, at, screen)
				}
				return
			}
			if m.busy || m.snap.Stop == nil || m.snap.Stop.Reason != tt.reason || m.snap.Moment == at {
				t.Fatalf("after the history: busy %v, stop %+v at %s, want %s from %s", m.busy, m.snap.Stop, m.snap.Moment, tt.line, at)
			}
			if !strings.Contains(screen, tt.line) {
				t.Errorf("%s not in the Console:\n%s", tt.line, screen)
			}
		})
	}
}
