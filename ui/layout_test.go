package ui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/keymaps"
	"github.com/rewind-debugger/rewind/themes"
)

// checkPlacement checks that a placement tiles the w×h area: every pane
// inside it, none overlapping, no cell left uncovered, each of the
// minimum size.
func checkPlacement(t *testing.T, pl placement, w, h int) {
	t.Helper()
	area := 0
	for id, r := range pl {
		if r.x < 0 || r.y < 0 || r.x+r.w > w || r.y+r.h > h {
			t.Errorf("%s at %+v: outside %dx%d", paneInfos[id].name, r, w, h)
		}
		if r.w < minPaneW || r.h < minPaneH {
			t.Errorf("%s at %+v: smaller than %dx%d", paneInfos[id].name, r, minPaneW, minPaneH)
		}
		for o, q := range pl {
			if o != id && r.overlaps(q) {
				t.Errorf("%s at %+v overlaps %s at %+v", paneInfos[id].name, r, paneInfos[o].name, q)
			}
		}
		area += r.w * r.h
	}
	if area != w*h {
		t.Errorf("the panes cover %d cells of %d", area, w*h)
	}
}

// TestLayoutPresets: at each size, with each pane focused, the default
// layout shows the panes its size promises (the focused one in the place
// of one of them when it has none of its own), tiling the screen.
func TestLayoutPresets(t *testing.T) {
	small := []paneID{pSource, pStack, pLocals, pConsole}
	medium := []paneID{pSource, pStack, pLocals, pRegisters, pTimeline, pConsole}
	large := []paneID{pSource, pStack, pLocals, pRegisters, pMemory, pTimeline, pWatch, pConsole}
	wide := append([]paneID{pDisasm, pBreakpoints}, large...)
	for _, c := range []struct {
		w, h    int // the screen; the panes get h-2 lines
		promise []paneID
	}{
		{60, 16, small}, {80, 24, small}, {100, 30, small}, {119, 40, small},
		{120, 36, medium}, {150, 40, medium},
		{160, 48, large}, {180, 50, large}, {199, 60, large},
		{200, 48, wide}, {250, 70, wide},
	} {
		for focus := paneID(0); focus < numPanes; focus++ {
			pl := layout(DefaultLayout(), c.w, c.h-2, focus, false)
			checkPlacement(t, pl, c.w, c.h-2)
			if _, ok := pl[focus]; !ok {
				t.Errorf("%dx%d: the focused %s is not on screen", c.w, c.h, paneInfos[focus].name)
			}
			missing := 0
			for _, id := range c.promise {
				if _, ok := pl[id]; !ok {
					missing++
					if id == pSource {
						t.Errorf("%dx%d, %s focused: Source gave its place", c.w, c.h, paneInfos[focus].name)
					}
				}
			}
			want := 0
			if !slices.Contains(c.promise, focus) {
				want = 1 // the pane whose place the focused one took
			}
			if missing != want || len(pl) != len(c.promise) {
				t.Errorf("%dx%d, %s focused: %d promised panes missing (want %d), %d shown: %v",
					c.w, c.h, paneInfos[focus].name, missing, want, len(pl), pl)
			}
		}
		zoomed := layout(DefaultLayout(), c.w, c.h-2, pWatch, true)
		if len(zoomed) != 1 || zoomed[pWatch] != (rect{0, 0, c.w, c.h - 2}) {
			t.Errorf("%dx%d zoomed: %v", c.w, c.h, zoomed)
		}
	}
}

// TestParseLayout: specs and presets place what they say, bad ones are
// one-line errors that say what is wrong.
func TestParseLayout(t *testing.T) {
	for _, c := range []struct {
		spec string
		w, h int
		want map[paneID]rect // nil: only tiling is checked
		err  string
	}{
		{spec: "source | console", w: 100, h: 20, want: map[paneID]rect{pSource: {0, 0, 50, 20}, pConsole: {50, 0, 50, 20}}},
		{spec: "source*3 / console", w: 100, h: 40, want: map[paneID]rect{pSource: {0, 0, 100, 30}, pConsole: {0, 30, 100, 10}}},
		{spec: " ( source | disassembly*2 )*2 / (memory | watch) ", w: 90, h: 30, want: map[paneID]rect{
			pSource: {0, 0, 30, 20}, pDisasm: {30, 0, 60, 20}, pMemory: {0, 20, 45, 10}, pWatch: {45, 20, 45, 10}}},
		{spec: "Source|LLM", w: 80, h: 20, want: map[paneID]rect{pSource: {0, 0, 40, 20}, pLLM: {40, 0, 40, 20}}},
		{spec: "(source*3 | (stack / locals*2)*2)*2 / (memory | watch | console)", w: 100, h: 30, want: map[paneID]rect{ // docs/ui.md's
			pSource: {0, 0, 60, 20}, pStack: {60, 0, 40, 6}, pLocals: {60, 6, 40, 14},
			pMemory: {0, 20, 33, 10}, pWatch: {33, 20, 33, 10}, pConsole: {66, 20, 34, 10}}},
		{spec: "wide", w: 220, h: 60}, {spec: "large", w: 160, h: 46}, {spec: "medium", w: 120, h: 34},
		{spec: "small", w: 80, h: 22}, {spec: "default", w: 80, h: 22}, {spec: "", w: 80, h: 22},
		{spec: "source | sauce", err: `unknown pane "sauce"`},
		{spec: "source | source", err: `pane "source" appears twice`},
		{spec: "source | (stack / locals", err: `")" missing`},
		{spec: "source |", err: "a pane name is missing"},
		{spec: "source*0 | stack", err: "weight at column 8 must be a number from 1 to 99"},
		{spec: "source*x", err: "must be a number"},
		{spec: "source stack", err: `unexpected 's' at column 8`},
		{spec: "/", err: "a pane name is missing at column 1"},
	} {
		l, err := ParseLayout(c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: error %v, want one line with %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.spec, err)
			continue
		}
		if back, err := ParseLayout(l.String()); err != nil || back.String() != l.String() {
			t.Errorf("%q: does not read back from %q: %v", c.spec, l.String(), err)
		}
		pl := layout(l, c.w, c.h, pSource, false)
		checkPlacement(t, pl, c.w, c.h)
		for id, r := range c.want {
			if pl[id] != r {
				t.Errorf("%q: %s at %+v, want %+v", c.spec, paneInfos[id].name, pl[id], r)
			}
		}
		if c.want != nil && len(pl) != len(c.want) {
			t.Errorf("%q: %d panes, want %d: %v", c.spec, len(pl), len(c.want), pl)
		}
	}
	// A layout with no room on the screen falls back to the small one.
	l, _ := ParseLayout("wide")
	pl := layout(l, 80, 22, pSource, false)
	checkPlacement(t, pl, 80, 22)
	if _, ok := pl[pDisasm]; ok || len(pl) != 4 {
		t.Errorf("the wide layout at 80x22: %v, want the small one", pl)
	}
}

// TestTabRow: the row names every pane with its key and fits the width,
// on one line down to 76 columns; with the Processes pane (a recording of
// several processes), down to 84.
func TestTabRow(t *testing.T) {
	keys, err := keymaps.New("default", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ processes, oneLine int }{{1, 76}, {2, 84}} {
		order := tabs(tc.processes)
		if has := slices.Contains(order, pProcesses); has != (tc.processes > 1) {
			t.Errorf("%d processes: Processes listed: %v", tc.processes, has)
		}
		for _, w := range []int{250, 160, 120, 100, 84, 80, 76, 60, 40} {
			lines, hits := tabRow(themes.NoColor(), keys, w, placement{pSource: {}, pMemory: {}}, pMemory, order)
			if len(lines) == 0 || (w >= tc.oneLine && len(lines) != 1) {
				t.Fatalf("%d processes, %d columns: %d lines", tc.processes, w, len(lines))
			}
			if len(hits) != len(order) {
				t.Errorf("%d columns: %d names, want %d", w, len(hits), len(order))
			}
			text := ansi.Strip(strings.Join(lines, "\n"))
			for i, h := range hits {
				line := []rune(strings.Split(text, "\n")[h.y])
				if ansi.StringWidth(string(line)) != w {
					t.Errorf("%d columns: line %q is %d wide", w, string(line), ansi.StringWidth(string(line)))
				}
				got := string(line[h.x : h.x+h.w])
				k := keys.Get(paneInfos[order[i]].key).Keys()[0]
				if h.id != order[i] || !strings.HasPrefix(got, k+" ") {
					t.Errorf("%d columns: name %d is %q at %d, want %s's key %s", w, i, got, h.x, paneInfos[order[i]].name, k)
				}
			}
		}
	}
}

// TestLayoutResize: the screen follows the terminal's size, and the
// config's layout and :layout change it.
func TestLayoutResize(t *testing.T) {
	trace := recordC(t, "../testdata/source/corrupt.c")
	m := openModel(t, trace, 160, 48, true)
	for _, c := range []struct {
		w, h       int
		cmd        string
		shown, not []paneID
	}{
		{w: 160, h: 48, shown: []paneID{pMemory, pWatch, pTimeline, pRegisters}, not: []paneID{pDisasm}},
		{w: 80, h: 24, shown: []paneID{pSource, pConsole}, not: []paneID{pMemory, pWatch}},
		{w: 220, h: 56, shown: []paneID{pDisasm, pMemory, pWatch}},
		{w: 220, h: 56, cmd: "layout source | memory*2", shown: []paneID{pSource, pMemory}, not: []paneID{pConsole, pWatch}},
		{w: 220, h: 56, cmd: "layout default", shown: []paneID{pDisasm, pMemory, pWatch}},
		{w: 120, h: 36, cmd: "layout small", shown: []paneID{pSource, pConsole}, not: []paneID{pTimeline}},
	} {
		m.Update(tea.WindowSizeMsg{Width: c.w, Height: c.h})
		if c.cmd != "" {
			drive(t, m, m.run(c.cmd))
		}
		screen := m.render()
		checkScreen(t, screen, c.w, c.h)
		for _, id := range c.shown {
			r, ok := m.lastRects[id]
			if !ok || !strings.Contains(strings.Split(screen, "\n")[r.y], paneInfos[id].tabs[0]) {
				t.Errorf("%dx%d %q: %s is not on screen:\n%s", c.w, c.h, c.cmd, paneInfos[id].name, screen)
			}
		}
		for _, id := range c.not {
			if _, ok := m.lastRects[id]; ok {
				t.Errorf("%dx%d %q: %s is on screen", c.w, c.h, c.cmd, paneInfos[id].name)
			}
		}
	}
	if got := m.Layout().String(); got != "small" {
		t.Errorf("Layout() = %q after :layout small", got)
	}
	drive(t, m, m.run("layout sauce"))
	if !strings.Contains(m.render(), `unknown pane "sauce"`) {
		t.Errorf("a bad :layout is not reported:\n%s", m.render())
	}
	// A pane's key focuses it and brings it on screen.
	m.Update(tea.KeyPressMsg{Code: '7', Text: "7"})
	if _, ok := m.lastRects[pWatch]; m.focus != pWatch || !ok {
		t.Errorf("7: focus %s, Watch on screen %v", paneInfos[m.focus].name, ok)
	}
	// So does a click on its name in the tab row.
	for _, h := range m.tabHits {
		if h.id == pThreads {
			m.Update(tea.MouseClickMsg{X: h.x + 1, Y: h.y, Button: tea.MouseLeft})
		}
	}
	if _, ok := m.lastRects[pThreads]; m.focus != pThreads || !ok {
		t.Errorf("click on Threads in the tab row: focus %s, Threads on screen %v", paneInfos[m.focus].name, ok)
	}
}
