package ui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/keymaps"
	"github.com/rewind-debugger/rewind/themes"
	"github.com/rewind-debugger/rewind/views"
)

// Minimum terminal size: below it the UI shows "terminal too small".
const (
	MinWidth  = 60
	MinHeight = 16
)

// paneID names a pane.
type paneID int

// The panes, in Tab order.
const (
	pSource paneID = iota
	pStack
	pLocals
	pConsole
	pTimeline
	pWatch
	pRegisters
	pDisasm
	pMemory
	pThreads
	pProcesses
	pBreakpoints
	pLLM
	numPanes
)

// paneInfo is what the layout and the tab row know of a pane. Adding a
// pane is a paneID, an entry here (with its keymaps action) and its
// constructor in New: layouts can then name it and the tab row lists it.
type paneInfo struct {
	name string         // in layout specs: "source"
	tabs [3]string      // in the tab row, from the full name to the tiniest
	key  keymaps.Action // focuses it
	// wide panes (lists of lines) prefer a wide slot: a focused pane the
	// layout does not show takes the place of a shown pane of its kind.
	wide bool
}

var paneInfos = [numPanes]paneInfo{
	pSource:      {"source", [3]string{"Source", "Source", "Src"}, keymaps.PaneSource, false},
	pStack:       {"stack", [3]string{"Stack", "Stack", "Stk"}, keymaps.PaneStack, false},
	pLocals:      {"locals", [3]string{"Locals", "Locals", "Loc"}, keymaps.PaneLocals, false},
	pRegisters:   {"registers", [3]string{"Registers", "Regs", "Regs"}, keymaps.PaneRegisters, false},
	pMemory:      {"memory", [3]string{"Memory", "Memory", "Mem"}, keymaps.PaneMemory, true},
	pTimeline:    {"timeline", [3]string{"Timeline", "Timeline", "Time"}, keymaps.PaneTimeline, true},
	pWatch:       {"watch", [3]string{"Watch", "Watch", "Watch"}, keymaps.PaneWatch, true},
	pConsole:     {"console", [3]string{"Console", "Console", "Cons"}, keymaps.PaneConsole, true},
	pDisasm:      {"disassembly", [3]string{"Disassembly", "Disasm", "Asm"}, keymaps.PaneDisasm, false},
	pThreads:     {"threads", [3]string{"Threads", "Threads", "Thr"}, keymaps.PaneThreads, false},
	pProcesses:   {"processes", [3]string{"Processes", "Procs", "Proc"}, keymaps.PaneProcesses, false},
	pBreakpoints: {"breakpoints", [3]string{"Breakpoints", "Bkpts", "Brk"}, keymaps.PaneBreakpoints, false},
	pLLM:         {"llm", [3]string{"LLM", "LLM", "LLM"}, keymaps.PaneLLM, true},
}

// tabOrder is the order of the tab row and of the pane keys.
var tabOrder = []paneID{pSource, pStack, pLocals, pRegisters, pMemory, pTimeline, pWatch, pConsole,
	pDisasm, pThreads, pProcesses, pBreakpoints, pLLM}

// tabs is tabOrder without the panes a recording has no use for: the
// Processes pane of a recording of one process (its key still shows it).
func tabs(processes int) []paneID {
	if processes > 1 {
		return tabOrder
	}
	out := make([]paneID, 0, len(tabOrder))
	for _, id := range tabOrder {
		if id != pProcesses {
			out = append(out, id)
		}
	}
	return out
}

// rect is a pane's place on the screen, frame included.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool { return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h }

func (r rect) overlaps(o rect) bool {
	return r.x < o.x+o.w && o.x < r.x+r.w && r.y < o.y+o.h && o.y < r.y+r.h
}

// placement is the layout of one screen: where each visible pane goes.
type placement map[paneID]rect

// A pane needs its frame, two lines and room for a few words.
const (
	minPaneW = 20
	minPaneH = 4
)

// layout places the panes of lay for a content area of w×h (status bar
// and tab row excluded). When lay does not fit, the small preset is used.
// The focused pane is always visible: when the layout has no place of its
// own for it, it takes the place of the last shown pane of its kind (wide
// or not; never Source's).
func layout(lay *Layout, w, h int, focus paneID, zoom bool) placement {
	if zoom {
		return placement{focus: {0, 0, w, h}}
	}
	if lay == nil {
		lay = DefaultLayout()
	}
	root := lay.pick(w, h)
	pl := placement{}
	var order []paneID
	root.place(rect{0, 0, w, h}, pl, &order)
	if !fits(pl) && root != presetSmall {
		pl, order = placement{}, nil
		presetSmall.place(rect{0, 0, w, h}, pl, &order)
	}
	if _, ok := pl[focus]; ok {
		return pl
	}
	victim := paneID(-1)
	for _, id := range order {
		if id != pSource && paneInfos[id].wide == paneInfos[focus].wide {
			victim = id
		}
	}
	if victim < 0 {
		for _, id := range order {
			if id != pSource || victim < 0 {
				victim = id
			}
		}
	}
	pl[focus] = pl[victim]
	delete(pl, victim)
	return pl
}

// fits says whether every pane of a placement has its minimum size.
func fits(pl placement) bool {
	for _, r := range pl {
		if r.w < minPaneW || r.h < minPaneH {
			return false
		}
	}
	return true
}

// node is a layout tree: a pane, or panes side by side or stacked.
type node struct {
	pane   paneID
	kids   []*node
	across bool // kids side by side ("|"), else stacked ("/")
	weight int
}

// place divides r among the node's panes in proportion to their weights,
// recording the panes in the order of the spec.
func (n *node) place(r rect, pl placement, order *[]paneID) {
	if n.kids == nil {
		pl[n.pane] = r
		*order = append(*order, n.pane)
		return
	}
	total := 0
	for _, k := range n.kids {
		total += k.weight
	}
	size := r.h
	if n.across {
		size = r.w
	}
	cum := 0
	for _, k := range n.kids {
		from := size * cum / total
		cum += k.weight
		to := size * cum / total
		kr := rect{r.x, r.y + from, r.w, to - from}
		if n.across {
			kr = rect{r.x + from, r.y, to - from, r.h}
		}
		k.place(kr, pl, order)
	}
}

// Layout is an arrangement of panes: a named preset or a spec in the
// layout grammar (docs/ui.md, "Layout"). Its String is what the config and a
// session file keep; ParseLayout reads it back.
type Layout struct {
	spec string
	root *node // nil for "default": the preset that fits the screen
}

// String is the layout as written in config.toml.
func (l *Layout) String() string { return l.spec }

// The presets, written in the grammar they document. The Console is kept
// tall and wide enough for the demo's welcome and the first stop together.
const (
	specSmall  = "(source*3 | (stack / locals)*2)*31 / console*19"
	specMedium = "(source*3 | (stack / locals / registers)*2)*4 / (timeline*2 | console*3)*3"
	specLarge  = "(source*3 | (stack*3 / locals*4 / registers*4)*2)*11 / (timeline*3 | memory*2)*5 / (console*3 | watch*2)*6"
	specWide   = "(source*5 | disassembly*3 | (stack*3 / locals*4 / registers*4)*3)*11 / (timeline*5 | memory*3 | watch*3)*5 / (console*8 | breakpoints*3)*6"
)

var (
	presetSmall  = mustParse(specSmall)
	presetMedium = mustParse(specMedium)
	presetLarge  = mustParse(specLarge)
	presetWide   = mustParse(specWide)
	presets      = map[string]*node{"small": presetSmall, "medium": presetMedium, "large": presetLarge, "wide": presetWide}
)

// LayoutNames are the preset names the config accepts besides a spec.
var LayoutNames = []string{"default", "small", "medium", "large", "wide"}

// DefaultLayout is the layout that picks the preset the screen has room
// for: wide from a 200x48 screen, large from 150x42, medium from 120x34
// (pick is given the area under the tab row and above the status bar).
func DefaultLayout() *Layout { return &Layout{spec: "default"} }

// pick is the tree to use on a w×h content area.
func (l *Layout) pick(w, h int) *node {
	if l.root != nil {
		return l.root
	}
	switch {
	case w >= 200 && h >= 46:
		return presetWide
	case w >= 150 && h >= 40:
		return presetLarge
	case w >= 120 && h >= 32:
		return presetMedium
	}
	return presetSmall
}

func mustParse(spec string) *node {
	n, err := parseSpec(spec)
	if err != nil {
		panic(fmt.Sprintf("layout preset %q: %v", spec, err))
	}
	return n
}

// ParseLayout reads a preset name or a spec:
//
//	spec  = row { "/" row }        rows, top to bottom
//	row   = item { "|" item }      side by side, left to right
//	item  = ( PANE | "(" spec ")" ) [ "*" WEIGHT ]
//
// where PANE is a pane's name (source, stack, locals, registers, memory,
// timeline, watch, console, disassembly, threads, breakpoints, llm) and
// WEIGHT (1 to 99, default 1) its share of the row or column.
func ParseLayout(s string) (*Layout, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "default" {
		return DefaultLayout(), nil
	}
	if n, ok := presets[s]; ok {
		return &Layout{spec: s, root: n}, nil
	}
	n, err := parseSpec(s)
	if err != nil {
		return nil, err
	}
	return &Layout{spec: s, root: n}, nil
}

// layoutParser is a recursive-descent parser over the spec's runes.
type layoutParser struct {
	s    string
	i    int
	seen map[paneID]bool
}

func parseSpec(s string) (*node, error) {
	p := &layoutParser{s: s, seen: map[paneID]bool{}}
	n, err := p.split('/')
	if err != nil {
		return nil, err
	}
	if p.skip(); p.i < len(p.s) {
		return nil, fmt.Errorf("layout %q: unexpected %q at column %d", s, p.s[p.i], p.i+1)
	}
	return n, nil
}

func (p *layoutParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// split reads items separated by sep ("/" rows, then "|" within a row).
func (p *layoutParser) split(sep byte) (*node, error) {
	var kids []*node
	for {
		var k *node
		var err error
		if sep == '/' {
			k, err = p.split('|')
		} else {
			k, err = p.item()
		}
		if err != nil {
			return nil, err
		}
		kids = append(kids, k)
		if p.skip(); p.i < len(p.s) && p.s[p.i] == sep {
			p.i++
			continue
		}
		break
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	return &node{kids: kids, across: sep == '|', weight: 1}, nil
}

// item reads a pane or a parenthesised spec, and its weight.
func (p *layoutParser) item() (*node, error) {
	p.skip()
	var n *node
	switch {
	case p.i >= len(p.s):
		return nil, fmt.Errorf("layout %q: a pane name is missing at the end", p.s)
	case p.s[p.i] == '(':
		p.i++
		inner, err := p.split('/')
		if err != nil {
			return nil, err
		}
		if p.skip(); p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, fmt.Errorf("layout %q: \")\" missing at column %d", p.s, p.i+1)
		}
		p.i++
		// Inside the parentheses a weight had no siblings to share with:
		// the group's own weight follows them.
		n = inner
		n.weight = 1
	default:
		start := p.i
		for p.i < len(p.s) && (p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] >= 'A' && p.s[p.i] <= 'Z') {
			p.i++
		}
		name := strings.ToLower(p.s[start:p.i])
		if name == "" {
			return nil, fmt.Errorf("layout %q: a pane name is missing at column %d", p.s, start+1)
		}
		id, ok := paneByName(name)
		if !ok {
			return nil, fmt.Errorf("layout %q: unknown pane %q (%s)", p.s, name, strings.Join(paneNames(), ", "))
		}
		if p.seen[id] {
			return nil, fmt.Errorf("layout %q: pane %q appears twice", p.s, name)
		}
		p.seen[id] = true
		n = &node{pane: id, weight: 1}
	}
	if p.skip(); p.i < len(p.s) && p.s[p.i] == '*' {
		p.i++
		p.skip()
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		w, err := strconv.Atoi(p.s[start:p.i])
		if err != nil || w < 1 || w > 99 {
			return nil, fmt.Errorf("layout %q: weight at column %d must be a number from 1 to 99", p.s, start+1)
		}
		n.weight = w
	}
	return n, nil
}

func paneByName(name string) (paneID, bool) {
	for id, in := range paneInfos {
		if in.name == name {
			return paneID(id), true
		}
	}
	return 0, false
}

func paneNames() []string {
	var out []string
	for _, id := range tabOrder {
		out = append(out, paneInfos[id].name)
	}
	return out
}

// frame draws a pane's content in a titled border of exactly r's size.
func frame(th *themes.Theme, title, content string, w, h int, focused bool) []string {
	st := th.Border
	tst := th.Title
	if focused {
		st, tst = th.BorderFocused, th.TitleFocused
	}
	b := st.GetBorderStyle()
	paint := lipgloss.NewStyle().Inherit(st).UnsetBorderStyle()
	if fg := st.GetBorderTopForeground(); fg != nil {
		paint = lipgloss.NewStyle().Foreground(fg)
	}
	if th.NoColor {
		paint = lipgloss.NewStyle()
	}
	inner := w - 2
	t := ansi.Truncate(" "+title+" ", max(inner-2, 0), "…")
	fill := max(inner-1-lipgloss.Width(t), 0)
	top := paint.Render(b.TopLeft+b.Top) + tst.Render(t) + paint.Render(strings.Repeat(b.Top, fill)+b.TopRight)
	if inner < 3 {
		top = paint.Render(b.TopLeft + strings.Repeat(b.Top, max(inner, 0)) + b.TopRight)
	}
	lines := strings.Split(content, "\n")
	out := make([]string, 0, h)
	out = append(out, top)
	for i := 0; i < h-2; i++ {
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		l = ansi.Truncate(l, max(inner, 0), "")
		if strings.Contains(l, "\x1b[") {
			// A truncated line may have lost its closing reset: a
			// highlight must not run into the border and the next pane.
			l += "\x1b[m"
		}
		if pad := inner - lipgloss.Width(l); pad > 0 {
			l += strings.Repeat(" ", pad)
		}
		out = append(out, paint.Render(b.Left)+l+paint.Render(b.Right))
	}
	out = append(out, paint.Render(b.BottomLeft+strings.Repeat(b.Bottom, max(inner, 0))+b.BottomRight))
	return out
}

// canvas composes framed panes into screen lines.
type canvas struct {
	w, h int
	rows []map[int]string // per row, the segments by starting column
}

func newCanvas(w, h int) *canvas {
	c := &canvas{w: w, h: h, rows: make([]map[int]string, h)}
	for i := range c.rows {
		c.rows[i] = map[int]string{}
	}
	return c
}

// place puts lines at column x, row y.
func (c *canvas) place(x, y int, lines []string) {
	for i, l := range lines {
		if y+i < c.h {
			c.rows[y+i][x] = l
		}
	}
}

// render joins every row's segments in column order, padding gaps.
func (c *canvas) render() []string {
	out := make([]string, c.h)
	for i, row := range c.rows {
		var xs []int
		for x := range row {
			xs = append(xs, x)
		}
		sort.Ints(xs)
		var b strings.Builder
		col := 0
		for _, x := range xs {
			if x > col {
				b.WriteString(strings.Repeat(" ", x-col))
				col = x
			}
			b.WriteString(row[x])
			col += lipgloss.Width(row[x])
		}
		if col < c.w {
			b.WriteString(strings.Repeat(" ", c.w-col))
		}
		out[i] = b.String()
	}
	return out
}

// tabHit is where a pane's name is in the tab row, for the mouse.
type tabHit struct {
	x, y, w int
	id      paneID
}

// tabRow lays out the row of pane names with their keys, the panes on
// screen highlighted, the focused one most: the full names when they fit
// in w, shorter ones when not, and more lines only when even the tiniest
// do not fit on one.
func tabRow(th *themes.Theme, keys *keymaps.Keys, w int, shown placement, focus paneID, order []paneID) ([]string, []tabHit) {
	label := func(id paneID, level int) string {
		k := "?"
		if ks := keys.Get(paneInfos[id].key).Keys(); len(ks) > 0 {
			k = ks[0]
		}
		return k + " " + paneInfos[id].tabs[level]
	}
	style := func(id paneID) lipgloss.Style {
		switch _, on := shown[id]; {
		case id == focus:
			return th.TitleFocused
		case on:
			return th.Title
		}
		return th.Muted
	}
	for _, try := range []struct {
		level int
		sep   string
		wrap  bool
	}{{0, "  ", false}, {1, "  ", false}, {2, " ", false}, {2, " ", true}} {
		var lines []string
		var hits []tabHit
		var b strings.Builder
		col, sep, wrap := 0, try.sep, try.wrap
		for i, id := range order {
			l := label(id, try.level)
			lw := lipgloss.Width(l)
			if i > 0 {
				if wrap && col+len(sep)+lw > w {
					lines = append(lines, b.String()+strings.Repeat(" ", max(0, w-col)))
					b.Reset()
					col = 0
				} else {
					b.WriteString(sep)
					col += len(sep)
				}
			}
			hits = append(hits, tabHit{col, len(lines), lw, id})
			b.WriteString(style(id).Render(l))
			col += lw
		}
		if col > w && !wrap {
			continue
		}
		lines = append(lines, ansi.Truncate(b.String(), w, "")+strings.Repeat(" ", max(0, w-col)))
		return lines, hits
	}
	return nil, nil
}

// Layout is the current arrangement of the panes, for a session file to
// keep: ParseLayout(l.String()) gives it back.
func (m *Model) Layout() *Layout { return m.lay }

// SetLayout arranges the panes anew (a restored session, :layout).
func (m *Model) SetLayout(l *Layout) {
	if l == nil {
		l = DefaultLayout()
	}
	m.lay = l
	m.resize()
}

// layoutCommand is ":layout [SPEC]": without SPEC it says which layout is
// used and what else there is; with one it switches to it.
func (m *Model) layoutCommand(line, spec string) {
	if spec == "" {
		m.console().Append(views.ConsoleEntry{Command: line, Output: fmt.Sprintf("layout %s (presets: %s; or a spec, see the README)",
			m.lay, strings.Join(LayoutNames, ", "))})
		return
	}
	l, err := ParseLayout(spec)
	if err != nil {
		m.console().Append(views.ConsoleEntry{Command: line, Output: err.Error(), Error: true})
		return
	}
	m.SetLayout(l)
	m.console().Append(views.ConsoleEntry{Command: line, Output: "layout " + l.String()})
}
