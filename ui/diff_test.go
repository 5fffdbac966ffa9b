package ui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/tracediff"
)

// TestDiffOpen opens recording B of two runs of a program that reads the
// time and random numbers as rewind replay --diff A B does: at the moment
// B leaves A, A's event beside the panes where the terminal has room, and
// :diff hides and shows it.
func TestDiffOpen(t *testing.T) {
	a, b := recordC(t, "../testdata/nondet.c"), recordC(t, "../testdata/nondet.c")
	rep, err := tracediff.Diff(a, b, tracediff.Options{Stacks: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.First == nil || rep.First.A == nil || rep.First.B == nil {
		t.Fatalf("no first difference: %+v", rep)
	}
	initial, beside, note := DiffOpening(rep)
	s, err := debugger.Open(b, debugger.Options{Process: rep.First.B.Pid})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	m, err := New(s, Options{NoColor: true, Initial: initial, Hint: note, Beside: beside})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	drive(t, m, m.Init())
	if m.snap == nil || fmt.Sprintf("#%d", m.snap.Event) != rep.First.B.Moment || rep.First.B.Moment == fmt.Sprintf("#%d", rep.First.B.Event) {
		t.Fatalf("opened at %+v, want %s, just after B's event #%d", m.snap, rep.First.B.Moment, rep.First.B.Event)
	}
	if !strings.Contains(ansi.Strip(m.console().View()), "diff: this is") {
		t.Errorf("no note of the diff in the Console:\n%s", m.console().View())
	}
	title := fmt.Sprintf("A: %s #%d", filepath.Base(a), rep.First.A.Event)
	call := strings.SplitN(rep.First.A.Text, "(", 2)[0] + "("
	for _, tc := range []struct {
		name      string
		w, h      int
		toggle    bool
		shown     bool
		besideCol int // where the panel starts
	}{
		{"wide", 160, 40, false, true, 160 - 53},
		{"80 columns", 80, 24, false, true, 60},
		{"too narrow", 70, 24, false, false, 0},
		{"hidden by :diff", 160, 40, true, false, 0},
		{"shown again", 160, 40, true, true, 160 - 53},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.toggle {
				drive(t, m, m.run("diff"))
			}
			m.Update(tea.WindowSizeMsg{Width: tc.w, Height: tc.h})
			lines := strings.Split(ansi.Strip(m.render()), "\n")
			if len(lines) != tc.h {
				t.Fatalf("%d lines, want %d", len(lines), tc.h)
			}
			screen := strings.Join(lines, "\n")
			if !tc.shown {
				if strings.Contains(screen, title) {
					t.Errorf("A's side shown:\n%s", screen)
				}
				return
			}
			var right []string
			for _, l := range lines[:tc.h-1] {
				if r := []rune(l); len(r) > tc.besideCol {
					right = append(right, string(r[tc.besideCol:]))
				}
			}
			side := strings.Join(right, "\n")
			if !strings.Contains(side, title) || !strings.Contains(side, call) || !strings.Contains(side, rep.First.Category+":") {
				t.Errorf("A's side (%s, %s) not on the right from column %d:\n%s", title, call, tc.besideCol, screen)
			}
			if tc.w >= 160 && !strings.Contains(side, "nondet.c") {
				t.Errorf("A's side without its source line:\n%s", side)
			}
		})
	}
}
