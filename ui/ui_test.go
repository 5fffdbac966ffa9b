package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

func TestMain(m *testing.M) { testprog.Main(m) }

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

// recording is what the crash screens show that depends on the machine,
// read from the recording itself: TestCrashScreens normalises the screen
// with it, so that its goldens hold wherever the recording was made.
type recording struct {
	tid   int32            // the program's only thread
	crash int64            // the moment of the crash: the signal event + 1
	total int64            // events in the recording
	texts map[int64]string // each event's description
	tids  map[int64]int32  // each event's thread
	main  int64            // where main's first line is: the loader's events before it fold
}

// readRecording reads the events of a trace with their descriptions.
func readRecording(t *testing.T, path string) *recording {
	t.Helper()
	rec := &recording{crash: -1, texts: map[int64]string{}, tids: map[int64]int32{}}
	_, err := debugger.ReadEvents(path, 0, -1, func(i int64, e *trace.Event, text string) {
		rec.texts[i], rec.tids[i] = text, e.Tid
		rec.total = i + 1
		if debugger.EventRecord(i, e, nil).Type == "signal" {
			rec.crash, rec.tid = i+1, e.Tid
		}
	})
	if err != nil || rec.crash < 0 {
		t.Fatalf("reading %s: %v (crash %d)", path, err, rec.crash)
	}
	s, err := debugger.Open(path, debugger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res := s.Execute("start"); res.OK && res.Stop != nil {
		rec.main = res.Stop.Event
	}
	return rec
}

// rel writes event n relative to the crash: "#c", "#c-15".
func (r *recording) rel(n int64) string {
	switch d := n - r.crash; {
	case d == 0:
		return "#c"
	case d < 0:
		return fmt.Sprintf("#c%d", d)
	default:
		return fmt.Sprintf("#c+%d", d)
	}
}

// hexRE is an address or a register value.
var hexRE = regexp.MustCompile(`0x[0-9a-f]{4,16}\b`)

// stable removes from a screen what changes from one machine or recording
// to the next: event numbers (the loader's events and whether a cpuid is
// one vary), thread ids, the Timeline's events before the crash and its
// density bar (checked against the recording by checkTimeline, then
// replaced), and addresses outside the program and its heap (the stack's
// depend on the kernel and the environment, the libraries' on their build
// and the stack limit), which become the name of their mapping.
func stable(t *testing.T, m *Model, rec *recording, screen string) string {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if r, ok := m.lastRects[pTimeline]; ok {
		checkTimeline(t, m, rec, lines, r)
	}
	screen = strings.Join(lines, "\n")
	// The Console's stop line and the status bar name the crash.
	screen = strings.ReplaceAll(screen, fmt.Sprintf("[#%d,", rec.crash), "[#c,")
	screen = strings.ReplaceAll(screen, fmt.Sprintf(" #%d/%d %d%% ", rec.crash, rec.total, rec.crash*100/rec.total), " #c/total pct% ")
	maps, err := m.eng.s.Timeline().Session().Mappings()
	if err != nil {
		t.Fatal(err)
	}
	program := m.eng.s.Header().Program
	screen = hexRE.ReplaceAllStringFunc(screen, func(h string) string {
		a, _ := strconv.ParseUint(h[2:], 16, 64)
		for _, mp := range maps {
			if a < mp.Start || a >= mp.End {
				continue
			}
			switch {
			case mp.Path == program || mp.Path == "[heap]":
				return h // placed by the program's own layout
			case mp.Path == "":
				return "<anon>"
			}
			return "<" + strings.Trim(filepath.Base(mp.Path), "[]") + ">"
		}
		return h
	})
	// Not \b: after an escape sequence ("…m6340") there is no boundary.
	screen = regexp.MustCompile(`(^|[^0-9])`+strconv.Itoa(int(rec.tid))+`([^0-9]|$)`).ReplaceAllString(screen, "${1}TID${2}")
	// A thread id of another length moves padding and truncation: the
	// golden keeps the words and their order, checkScreen keeps the sizes.
	screen = regexp.MustCompile(` *TID`).ReplaceAllString(screen, "TID")
	if i := strings.LastIndex(screen, "\n"); i >= 0 {
		// The status bar's key hints are cut where the width runs out.
		screen = screen[:i] + regexp.MustCompile(`(corrupt\.c:\d+) .*$`).ReplaceAllString(screen[i:], "$1")
	}
	return regexp.MustCompile(` {2,}`).ReplaceAllString(screen, " ")
}

// emptySGR is a style, or resets, that nothing follows before the next
// reset.
var emptySGR = regexp.MustCompile(`\x1b\[[0-9;]*m\x1b\[m`)

// tlRowRE is a row of the Timeline without its styles: the mark of the
// current event, the stop mark, the event, the thread and the text.
// eventRangeRE is a range of event numbers in the fold line.
var eventRangeRE = regexp.MustCompile(`#\d+–#\d+`)

var tlRowRE = regexp.MustCompile(`^(=>|  ). #(\d+) +(\d+)  (.*?) *$`)

// checkTimeline checks the Timeline pane drawn in lines at r against the
// recording: the density bar marks the crash where it falls in the
// recording, the rows are the events up to the crash with their threads
// and descriptions (cut with "…" where the width ends), the crash's row
// marked. It then replaces the pane's content with what holds on every
// machine: DENSITY, and each row as its event relative to the crash.
func checkTimeline(t *testing.T, m *Model, rec *recording, lines []string, r rect) {
	t.Helper()
	x0, x1 := r.x+1, r.x+r.w-1 // inside the border
	inner := func(y int) string { return ansi.Strip(ansi.Cut(lines[y], x0, x1)) }
	put := func(y int, s string) {
		// Cutting keeps the styles of the cells cut out, with nothing
		// left to style: they go, as they vary with the events.
		l := ansi.Truncate(lines[y], x0, "") + s + strings.Repeat(" ", max(0, x1-x0-len([]rune(s)))) + ansi.TruncateLeft(lines[y], x1, "")
		for prev := ""; prev != l; {
			prev, l = l, emptySGR.ReplaceAllString(l, "\x1b[m")
		}
		lines[y] = l
	}
	bar, w := []rune(inner(r.y+1)), int64(x1-x0)
	now := '│'
	if m.opts.NoColor {
		now = '|'
	}
	if at := min(w-1, rec.crash*w/rec.total); int64(len(bar)) != w || bar[at] != now || strings.Count(string(bar), string(now)) != 1 {
		t.Errorf("density bar %q: want one %c, at column %d of %d", string(bar), now, at, w)
	}
	put(r.y+1, "DENSITY")
	top, rows := r.y+2, r.h-3
	// rdtsc and cpuid events are folded into a line under the bar.
	var shown []int64 // the events the rows must show, last first
	for n := rec.crash; n >= rec.main && len(shown) < rows; n-- {
		if !rec.noise(n) {
			shown = append(shown, n)
		}
	}
	if len(shown) < int(rec.crash+1) {
		if l := inner(top); !strings.Contains(l, "folded: ") || (rec.main > 0 && !strings.Contains(l, "before main")) {
			t.Errorf("Timeline: no fold line (main at #%d): %q", rec.main, l)
		}
		// How many events the loader makes varies: the numbers go.
		put(top, eventRangeRE.ReplaceAllString(inner(top), "#…"))
		top, rows = top+1, rows-1
		shown = shown[:min(rows, len(shown))]
	}
	// Fewer events than rows: they fill the top, blank rows follow.
	for y := top + len(shown); y < top+rows; y++ {
		if l := inner(y); strings.TrimSpace(l) != "" {
			t.Errorf("Timeline row %d after the last event: %q", y-top, l)
		}
	}
	rows = min(rows, len(shown))
	for i := 0; i < rows; i++ {
		y := top + i
		want := shown[rows-1-i] // the crash's row is the last
		f := tlRowRE.FindStringSubmatch(inner(y))
		if f == nil {
			t.Errorf("Timeline row %d: %q", i, inner(y))
			continue
		}
		n, _ := strconv.ParseInt(f[2], 10, 64)
		tid, _ := strconv.ParseInt(f[3], 10, 32)
		// The text, then the function it happened in and the stop: cut
		// with "…" where the width ends.
		text, cut := strings.CutSuffix(f[4], "…")
		ok := strings.HasPrefix(text, rec.texts[n]+"  in ") || strings.HasPrefix(text, rec.texts[n]+"  [") || text == rec.texts[n] ||
			(cut && (strings.HasPrefix(rec.texts[n], text) || strings.HasPrefix(text, rec.texts[n])))
		if n != want || int32(tid) != rec.tids[n] || !ok || (f[1] == "=>") != (n == rec.crash) {
			t.Errorf("Timeline row %d: %q, want #%d by %d: %q (marked only at #%d)", i, inner(y), want, rec.tids[want], rec.texts[want], rec.crash)
		}
		// By row: which events are folded depends on the machine's libc.
		put(y, fmt.Sprintf("%s row%d EVENT", f[1], i-rows+1))
	}
}

// noise says whether an event is folded by the Timeline.
func (r *recording) noise(n int64) bool {
	return strings.HasPrefix(r.texts[n], "rdtsc") || strings.HasPrefix(r.texts[n], "cpuid")
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
// in each layout the default picks by size (small at 80x24, large at
// 160x48 with Memory and Watch, wide at 220x56 with Disassembly), in the
// dark and light themes and without colour.
func TestCrashScreens(t *testing.T) {
	trace := recordC(t, "../testdata/source/corrupt.c")
	rec := readRecording(t, trace)
	for _, c := range []struct {
		w, h  int
		theme string
		want  []string // what this layout shows besides the crash
	}{
		{80, 24, "nocolor", nil}, {80, 24, "dark", nil}, {80, 24, "light", nil},
		{160, 48, "nocolor", []string{"Memory", "Watch", "no watchpoints: w on a local"}},
		{160, 48, "dark", []string{"Memory", "Watch"}}, {160, 48, "light", []string{"Memory", "Watch"}},
		{220, 56, "nocolor", []string{"Disassembly", "<sum+29>", "Memory", "Watch", "Breakpoints"}},
	} {
		name := strconv.Itoa(c.w) + "x" + strconv.Itoa(c.h) + "-" + c.theme
		t.Run(name, func(t *testing.T) {
			m := openModel(t, trace, c.w, c.h, c.theme == "nocolor")
			if c.theme == "light" {
				m.Update(tea.BackgroundColorMsg{Color: lipgloss.Color("#ffffff")})
			}
			drive(t, m, m.run("continue"))
			screen := m.render()
			checkScreen(t, screen, c.w, c.h)
			// The tab row names the panes in full when there is room.
			tabs := []string{"1 Source", "8 Console", "9 Disassembly"}
			if c.w < 100 {
				tabs = []string{"1 Src", "8 Cons", "9 Asm"}
			}
			for _, want := range append(append([]string{"SIGSEGV", "total += n->value", "sum (head=0x", "Stack", "Locals"}, tabs...), c.want...) {
				if !strings.Contains(screen, want) {
					t.Errorf("screen lacks %q:\n%s", want, screen)
				}
			}
			golden.RequireEqual(t, []byte(stable(t, m, rec, screen)))
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
		// The zoomed pane's frame is under the tab row.
		if top := strings.Split(zoomed, "\n")[m.lastRects[m.focus].y]; !strings.Contains(top, title) || m.lastRects[m.focus].y != len(m.tabLines) {
			t.Errorf("zoomed %q: top line %q", title, top)
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
	// Cancel once the replay is under way (it has reported progress), not
	// after some time: how far a replay gets in a given time depends on
	// the machine and its load.
	for deadline := time.Now().Add(60 * time.Second); m.eng.done.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the replay reported no progress")
		}
	}
	if !strings.Contains(m.statusLine(), "continue: replaying") {
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
