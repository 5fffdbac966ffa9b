package ui

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

func TestMain(m *testing.M) {
	ptrace.MaybeRunHelper()
	os.Exit(m.Run())
}

// recordC compiles a C program and records it with the fixed environment.
func recordC(t testing.TB, src string, args ...string) string {
	t.Helper()
	return testprog.RecordCT(t, src, nil, args...)
}

// drive runs a model's commands synchronously: the command's engine work,
// then the answers, as the Bubble Tea runtime would.
func drive(t testing.TB, m *Model, cmd tea.Cmd) {
	t.Helper()
	pending := []tea.Cmd{cmd}
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		if c == nil {
			continue
		}
		msg := c()
		switch msg := msg.(type) {
		case tea.BatchMsg:
			pending = append(pending, msg...)
			continue
		case tickMsg, nil:
			continue
		}
		if _, isBG := msg.(tea.BackgroundColorMsg); isBG {
			continue
		}
		_, next := m.Update(msg)
		pending = append(pending, next)
	}
}

func openModel(t testing.TB, trace string, w, h int, noColor bool) *Model {
	t.Helper()
	s, err := debugger.Open(trace, debugger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	m, err := New(s, Options{NoColor: noColor})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	drive(t, m, m.Init())
	return m
}

// stable removes what changes from one recording to the next: thread ids
// and the random bytes the kernel gives (getrandom, rdtsc).
func stable(screen string, tid int32) string {
	// Not \b: after an escape sequence ("…m6340") there is no boundary.
	screen = regexp.MustCompile(`(^|[^0-9])`+strconv.Itoa(int(tid))+`([^0-9]|$)`).ReplaceAllString(screen, "${1}TID${2}")
	// Random bytes change the padding too: everything to the border goes.
	screen = regexp.MustCompile(`getrandom\([^│]*`).ReplaceAllString(screen, `getrandom(RANDOM) `)
	screen = regexp.MustCompile(`(rdtsc at rip 0x[0-9a-f]+ = )0x[0-9a-f]+`).ReplaceAllString(screen, "${1}TSC")
	// A thread id of another length moves padding and truncation: the
	// golden keeps the words and their order, checkScreen keeps the sizes.
	screen = regexp.MustCompile(` *TID`).ReplaceAllString(screen, "TID")
	if i := strings.LastIndex(screen, "\n"); i >= 0 {
		// The status bar's key hints are cut where the width runs out.
		screen = screen[:i] + regexp.MustCompile(`(corrupt\.c:\d+) .*$`).ReplaceAllString(screen[i:], "$1")
	}
	return regexp.MustCompile(` {2,}`).ReplaceAllString(screen, " ")
}

// checkScreen checks the size invariant of a rendered screen.
func checkScreen(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Fatalf("%dx%d: %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw != w {
			t.Fatalf("%dx%d: line %d is %d wide: %q", w, h, i, lw, l)
		}
	}
}

// TestCrashScreens: the whole screen at the crash of the corrupted list,
// at 80x24 and 160x48, with and without colour.
func TestCrashScreens(t *testing.T) {
	trace := recordC(t, "../testdata/source/corrupt.c")
	for _, c := range []struct {
		w, h    int
		noColor bool
	}{{80, 24, true}, {160, 48, true}, {80, 24, false}, {160, 48, false}} {
		name := strconv.Itoa(c.w) + "x" + strconv.Itoa(c.h)
		if c.noColor {
			name += "-nocolor"
		}
		t.Run(name, func(t *testing.T) {
			m := openModel(t, trace, c.w, c.h, c.noColor)
			drive(t, m, m.run("continue"))
			screen := m.render()
			checkScreen(t, screen, c.w, c.h)
			for _, want := range []string{"SIGSEGV", "total += n->value", "sum (head=0x", "Stack", "Locals"} {
				if !strings.Contains(screen, want) {
					t.Errorf("screen lacks %q:\n%s", want, screen)
				}
			}
			golden.RequireEqual(t, []byte(stable(screen, m.snap.Thread)))
		})
	}
}

// TestEveryPaneFocused renders the screen with each pane focused and
// zoomed: every pane is reachable with Tab and fits.
func TestEveryPaneFocused(t *testing.T) {
	trace := recordC(t, "../testdata/source/corrupt.c")
	m := openModel(t, trace, 80, 24, true)
	drive(t, m, m.run("continue"))
	for i := 0; i < int(numPanes); i++ {
		title := m.panes[m.focus].Title()
		screen := m.render()
		checkScreen(t, screen, 80, 24)
		if !strings.Contains(screen, title) {
			t.Errorf("focused pane %q not on screen:\n%s", title, screen)
		}
		m.Update(tea.KeyPressMsg{Code: 'z', Text: "z"})
		zoomed := m.render()
		checkScreen(t, zoomed, 80, 24)
		if !strings.Contains(strings.Split(zoomed, "\n")[0], title) {
			t.Errorf("zoomed %q: first line %q", title, strings.Split(zoomed, "\n")[0])
		}
		m.Update(tea.KeyPressMsg{Code: 'z', Text: "z"})
		m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	}
}

// TestSizes: any terminal size renders exactly; small ones say so.
func TestSizes(t *testing.T) {
	trace := recordC(t, "../testdata/source/corrupt.c")
	m := openModel(t, trace, 80, 24, false)
	for _, sz := range [][2]int{{30, 8}, {59, 30}, {60, 16}, {80, 24}, {100, 30}, {120, 36}, {160, 48}, {250, 70}, {1, 1}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		screen := m.render()
		checkScreen(t, screen, sz[0], sz[1])
		small := sz[0] < MinWidth || sz[1] < MinHeight
		if small != strings.Contains(screen, "too small") && sz[0] > 20 {
			t.Errorf("%v: too small = %v:\n%s", sz, small, screen)
		}
	}
}

// TestPromptAndKeys: the prompt runs commands with history; keys step.
func TestPromptAndKeys(t *testing.T) {
	trace := recordC(t, "../testdata/source/steps.c")
	m := openModel(t, trace, 100, 30, true)
	typeLine := func(s string) {
		_, cmd := m.Update(tea.KeyPressMsg{Code: ':', Text: ":"})
		drive(t, m, cmd)
		for _, r := range s {
			_, cmd := m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
			drive(t, m, cmd)
		}
		_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		drive(t, m, cmd)
	}
	typeLine("break square")
	typeLine("continue")
	if m.snap.Stop == nil || m.snap.Stop.Function != "square" {
		t.Fatalf("after :continue: %+v", m.snap.Stop)
	}
	key := func(r rune) {
		_, cmd := m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		drive(t, m, cmd)
	}
	key('n')
	if m.snap.Stop.Line != 7 {
		t.Errorf("n: line %d, want 7", m.snap.Stop.Line)
	}
	key('N')
	if m.snap.Stop.Line != 6 {
		t.Errorf("N: line %d, want 6", m.snap.Stop.Line)
	}
	key('f')
	if m.snap.Stop.Function != "main" {
		t.Errorf("f: in %s, want main", m.snap.Stop.Function)
	}
	// History: Up recalls the last command.
	m.Update(tea.KeyPressMsg{Code: ':', Text: ":"})
	m.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	if v := m.prompt.Value(); v != "continue" {
		t.Errorf("prompt history: %q", v)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if !strings.Contains(m.render(), "Breakpoint 1, square") {
		t.Errorf("console lacks the breakpoint stop:\n%s", m.render())
	}
	// ? shows the keys of the focused pane and the global ones.
	m.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	help := m.render()
	for _, want := range []string{"Source: steps.c — keys", "reverse-continue", "breakpoint here", "zoom pane"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	m.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	// q quits when nothing runs.
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"}); cmd == nil {
		t.Error("q did not quit")
	}
}

// TestCancel: Esc cancels a long replay; the session stays usable.
func TestCancel(t *testing.T) {
	trace := recordC(t, "../testdata/bench/longrun.c", "20000", "20000")
	m := openModel(t, trace, 100, 30, true)
	cmd := m.run("continue")
	done := make(chan tea.Msg, 1)
	go func() {
		for _, c := range cmd().(tea.BatchMsg) {
			if c == nil {
				continue
			}
			if msg, ok := c().(resultMsg); ok {
				done <- msg
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	if !strings.Contains(m.statusLine(), "continue") {
		t.Errorf("status while busy: %q", m.statusLine())
	}
	// q while busy asks first.
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"}); cmd != nil {
		t.Error("q quit while an operation runs")
	}
	if !strings.Contains(m.statusLine(), "q again quits") {
		t.Errorf("status after q while busy: %q", m.statusLine())
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	select {
	case msg := <-done:
		m.Update(msg)
	case <-time.After(60 * time.Second):
		t.Fatal("cancel did not stop the replay")
	}
	if !strings.Contains(m.render(), "cancelled") {
		t.Errorf("no cancelled message:\n%s", m.render())
	}
	drive(t, m, m.run("when"))
	if m.busy {
		t.Error("still busy after a cancel")
	}
}

// TestMouse: a click focuses the pane under the pointer; the wheel
// scrolls the pane under it.
func TestMouse(t *testing.T) {
	trace := recordC(t, "../testdata/source/corrupt.c")
	m := openModel(t, trace, 100, 30, true)
	drive(t, m, m.run("continue"))
	m.render()
	r := m.lastRects[pStack]
	m.Update(tea.MouseClickMsg{X: r.x + 2, Y: r.y + 1, Button: tea.MouseLeft})
	if m.focus != pStack {
		t.Fatalf("click on the Stack focused pane %d", m.focus)
	}
	src := m.lastRects[pSource]
	before := m.panes[pSource].View()
	for i := 0; i < 5; i++ {
		m.Update(tea.MouseWheelMsg{X: src.x + 3, Y: src.y + 3, Button: tea.MouseWheelUp})
	}
	if m.panes[pSource].View() == before {
		t.Error("the wheel did not scroll the Source pane")
	}
	if m.focus != pStack {
		t.Error("the wheel moved the focus")
	}
}

// TestIncompleteTraceNotice opens a trace whose recording did not finish
// (its footer cut off): the Console says why and how many events are
// usable, and the status bar marks the trace as long as the UI runs.
func TestIncompleteTraceNotice(t *testing.T) {
	full := recordC(t, "../testdata/source/corrupt.c")
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	frames := testprog.Frames(data)
	last := frames[len(frames)-1]
	if last.Type != 4 {
		t.Fatalf("the last frame of %s is of type %d, not the footer", full, last.Type)
	}
	cut := filepath.Join(t.TempDir(), "cut.rwd")
	if err := os.WriteFile(cut, data[:last.Off], 0o644); err != nil {
		t.Fatal(err)
	}
	m := openModel(t, cut, 100, 30, true)
	msg := regexp.MustCompile(`the recording did not finish \(the trace has no footer\); (\d+) events usable`)
	screen := m.render()
	found := msg.FindStringSubmatch(screen)
	if found == nil {
		t.Fatalf("the screen does not say the trace is unfinished:\n%s", screen)
	}
	if n, _ := strconv.ParseInt(found[1], 10, 64); n != m.snap.Total {
		t.Errorf("the notice counts %s usable events, the session has %d", found[1], m.snap.Total)
	}
	for _, cmd := range []string{"continue", "reverse-continue"} {
		drive(t, m, m.run(cmd))
		lines := strings.Split(m.render(), "\n")
		if status := lines[len(lines)-1]; !strings.Contains(status, "unfinished trace") {
			t.Errorf("after %s, the status bar does not mark the trace: %q", cmd, status)
		}
	}
}
