package views

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/themes"
)

// TestBeside checks that the panel fills its size exactly, continues a
// long line on indented lines without losing a character, and scrolls.
func TestBeside(t *testing.T) {
	long := "A #60  getrandom(\"abcdefghijklmnopqrstuvwxyz\", 16, 0) = 16"
	p := NewBeside(ptContext(t, themes.NoColor()), "A: a.rwd #60", []string{"random: getrandom", long, "end"})
	p.SetSize(20, 5)
	lines := strings.Split(ansi.Strip(p.View()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5", len(lines))
	}
	var joined string
	for i, l := range lines {
		if ansi.StringWidth(l) != 20 {
			t.Errorf("line %d %q is %d wide, want 20", i, l, ansi.StringWidth(l))
		}
		if i >= 1 {
			joined += strings.TrimPrefix(strings.TrimRight(l, " "), "  ")
		}
	}
	// Spaces at the ends of pieces are padding's too: compare without.
	if nospace := strings.ReplaceAll(long, " ", ""); strings.ReplaceAll(joined, " ", "") != nospace {
		t.Errorf("long line continued as %q", joined)
	}
	p.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if got := strings.Split(ansi.Strip(p.View()), "\n")[0]; !strings.HasPrefix(got, "A #60") {
		t.Errorf("after one line down, first line %q", got)
	}
	for range 10 {
		p.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	if got := strings.Split(ansi.Strip(p.View()), "\n")[4]; !strings.HasPrefix(got, "end") {
		t.Errorf("scrolled to the end, last line %q", got)
	}
}
