package ui

import (
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/themes"
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
	pBreakpoints
	pLLM
	numPanes
)

// rect is a pane's place on the screen, frame included.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool { return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h }

// placement is the layout of one screen: where each visible pane goes.
type placement map[paneID]rect

// bottomKind says which panes prefer the wide bottom slot.
func bottomKind(p paneID) bool {
	return p == pConsole || p == pTimeline || p == pWatch || p == pMemory || p == pLLM
}

// layout places the panes for a content area of w×h (status bar
// excluded). The focused pane is always visible: when the layout has no
// place of its own for it, it takes the auxiliary slot of its kind.
func layout(w, h int, focus paneID, zoom bool) placement {
	if zoom {
		return placement{focus: {0, 0, w, h}}
	}
	pl := placement{}
	large := w >= 120 && h >= 36
	leftW := w * 3 / 5
	rightW := w - leftW
	topH := h * 3 / 5
	if !large {
		topH = h * 62 / 100
	}
	botH := h - topH
	if large {
		third := topH / 3
		pl[pSource] = rect{0, 0, leftW, topH}
		pl[pStack] = rect{leftW, 0, rightW, third}
		pl[pLocals] = rect{leftW, third, rightW, third}
		pl[pRegisters] = rect{leftW, 2 * third, rightW, topH - 2*third}
		pl[pTimeline] = rect{0, topH, leftW, botH}
		pl[pConsole] = rect{leftW, topH, rightW, botH}
		if _, ok := pl[focus]; !ok {
			if bottomKind(focus) {
				delete(pl, pConsole)
				pl[focus] = rect{leftW, topH, rightW, botH}
			} else {
				delete(pl, pRegisters)
				pl[focus] = rect{leftW, 2 * third, rightW, topH - 2*third}
			}
		}
		return pl
	}
	half := topH / 2
	pl[pSource] = rect{0, 0, leftW, topH}
	pl[pStack] = rect{leftW, 0, rightW, half}
	pl[pLocals] = rect{leftW, half, rightW, topH - half}
	pl[pConsole] = rect{0, topH, w, botH}
	if _, ok := pl[focus]; !ok {
		if bottomKind(focus) {
			delete(pl, pConsole)
			pl[focus] = rect{0, topH, w, botH}
		} else {
			delete(pl, pLocals)
			pl[focus] = rect{leftW, half, rightW, topH - half}
		}
	}
	return pl
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
