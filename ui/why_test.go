package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestWhyCommand: :why in the UI explains corrupt.c's crash in the
// console, naming the overflowing write, and leaves the view at the
// failure.
func TestWhyCommand(t *testing.T) {
	trace := recordC(t, "../testdata/source/corrupt.c")
	m := openModel(t, trace, 120, 40, true)
	_, cmd := m.Update(tea.KeyPressMsg{Code: ':', Text: ":"})
	drive(t, m, cmd)
	for _, r := range "why" {
		_, cmd := m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		drive(t, m, cmd)
	}
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	drive(t, m, cmd)
	screen := m.render()
	for _, want := range []string{"SUSPICIOUS", "out of bounds"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the console lacks %q after :why:\n%s", want, screen)
		}
	}
	if len(m.snap.Frames) == 0 || m.snap.Frames[0].Function != "sum" {
		t.Errorf("after :why the view is at %+v, want the crash in sum", m.snap.Frames)
	}
}
