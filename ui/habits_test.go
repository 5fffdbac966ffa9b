package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestPromptHabits: gdb's habits at the prompt: a display shows in the
// Console after each stop, and quit ends the UI.
func TestPromptHabits(t *testing.T) {
	trace := recordC(t, "../testdata/source/steps.c")
	m := openModel(t, trace, 120, 36, true)
	for _, line := range []string{"break square", "continue", "display/x x", "continue"} {
		drive(t, m, m.run(line))
	}
	screen := m.render()
	for _, want := range []string{"Breakpoint 1, square (x=2)", "1: /x x = 0x2"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the Console lacks %q:\n%s", want, screen)
		}
	}
	// quit: the engine answers, then the model ends the program.
	var res tea.Msg
	for _, c := range m.run("quit")().(tea.BatchMsg) {
		if c == nil {
			continue
		}
		if msg, ok := c().(resultMsg); ok {
			res = msg
		}
	}
	if res == nil {
		t.Fatal("quit gave no result")
	}
	_, cmd := m.Update(res)
	if cmd == nil {
		t.Fatal("quit at the prompt did not end the UI")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("quit at the prompt did not end the UI")
	}
}
