package views

// Drawing the Timeline: the density bar, the rows (raw or filtered),
// the fold line and the filter's footer.

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rewind-debugger/rewind/keymaps"
)

// styleInput gives the filter input the theme's styles.
func (t *Timeline) styleInput() {
	th := t.ctx.Theme
	st := t.input.Styles()
	st.Focused = textinput.StyleState{Text: th.Base, Placeholder: th.Muted, Suggestion: th.Muted, Prompt: th.Prompt}
	st.Blurred = st.Focused
	st.Cursor.Color = th.P.Accent
	st.Cursor.Blink = false
	t.input.SetStyles(st)
}

// View draws the density bar, the list and the filter line.
func (t *Timeline) View() string {
	if t.h <= 0 {
		return ""
	}
	lines := make([]string, 0, t.h)
	lines = append(lines, t.bar())
	if t.folding() && t.h >= 4 {
		lines = append(lines, t.foldLine())
	}
	rows := t.listRows()
	if t.filter == nil {
		lines = append(lines, t.rawRows(rows)...)
	} else {
		lines = append(lines, t.filteredRows(rows)...)
	}
	if t.footer() {
		for len(lines) < t.h-1 {
			lines = append(lines, "")
		}
		lines = append(lines, t.footerLine())
	}
	return tlFrame(lines, t.w, t.h)
}

// foldLine says what is folded and how to see it.
func (t *Timeline) foldLine() string {
	th := t.ctx.Theme
	what := "rdtsc/cpuid"
	if b := t.foldBefore(); b > 0 {
		what = "#0–#" + strconv.FormatInt(b-1, 10) + " before main, " + what
	}
	key := "space"
	if ks := t.ctx.Keys.Get(keymaps.Expand).Keys(); len(ks) > 0 {
		key = ks[0]
	}
	arrow := "▸ "
	if th.NoColor {
		arrow = "> "
	}
	return tlLine(t.w, nil, tlSeg{arrow, th.Key}, tlSeg{"folded: " + what, th.Muted}, tlSeg{" · " + key + " unfolds", th.Muted})
}

// bar is the density of the whole recording with the current moment and
// the cursor marked, and (in colour) the hits.
func (t *Timeline) bar() string {
	w := t.w
	if w <= 0 {
		return ""
	}
	th := t.ctx.Theme
	ramp := []rune(tlBlocks)
	if th.NoColor {
		ramp = []rune(tlASCII)
	}
	chars := make([]rune, w)
	cols := make([]uint64, w)
	var peak uint64
	if n := len(t.density); n > 0 {
		for c := 0; c < w; c++ {
			b0, b1 := c*n/w, (c+1)*n/w
			if b1 <= b0 {
				b1 = b0 + 1
			}
			var sum uint64
			for _, d := range t.density[b0:b1] {
				sum += uint64(d)
			}
			cols[c] = sum * 1024 / uint64(b1-b0)
			peak = max(peak, cols[c])
		}
	}
	for c := range chars {
		chars[c] = ramp[0]
		if cols[c] > 0 && peak > 0 {
			chars[c] = ramp[1+int(cols[c]*uint64(len(ramp)-2)/peak)]
		}
	}
	styles := make([]*lipgloss.Style, w)
	for c := range styles {
		styles[c] = &th.Muted
	}
	col := func(n int64) int {
		if t.total <= 0 {
			return -1
		}
		return int(max(0, min(int64(w-1), n*int64(w)/t.total)))
	}
	if !th.NoColor {
		for _, s := range t.stops {
			if c := col(s.event); c >= 0 {
				styles[c] = &th.Breakpoint
				if s.reason == "watchpoint" {
					styles[c] = &th.Watch
				}
			}
		}
	}
	now, cur := col(t.event), col(t.cursor)
	if cur >= 0 {
		styles[cur] = &th.Selected
		if th.NoColor {
			chars[cur] = '^'
		}
	}
	if now >= 0 {
		if th.NoColor {
			chars[now] = '|'
		} else {
			chars[now] = '│'
			if now != cur {
				styles[now] = &th.Key
			}
		}
	}
	var b strings.Builder
	for c := 0; c < w; {
		e := c + 1
		for e < w && styles[e] == styles[c] {
			e++
		}
		b.WriteString(styles[c].Render(string(chars[c:e])))
		c = e
	}
	return b.String()
}

// numWidth is the width of "#N" for the largest event number.
func (t *Timeline) numWidth() int {
	return 1 + len(strconv.FormatInt(max(t.total-1, 0), 10))
}

// rawRows is the unfiltered list: events top, top+1, …
func (t *Timeline) rawRows(rows int) []string {
	if t.total <= 0 {
		if rows > 0 {
			return []string{t.ctx.Theme.Muted.Render(ansi.Truncate("no events", max(t.w, 0), "…"))}
		}
		return nil
	}
	top := max(0, min(t.top, t.total-int64(rows)))
	out := make([]string, 0, rows)
	tidW := 5
	for n := top; n < top+int64(rows) && n < t.total; n++ {
		if it, ok := t.raw.get(n); ok {
			tidW = max(tidW, len(strconv.FormatInt(int64(it.Tid), 10)))
		}
	}
	for n := top; n < top+int64(rows) && n < t.total; n++ {
		it, ok := t.raw.get(n)
		state := tlRowLoaded
		if !ok {
			state = tlRowLoading
			if t.raw.covers(n) {
				state = tlRowMissing
			}
		}
		out = append(out, t.row(n, it, state, tidW))
	}
	return out
}

// filteredRows is the matches of the searched span around the cursor.
func (t *Timeline) filteredRows(rows int) []string {
	th := t.ctx.Theme
	if rows <= 0 {
		return nil
	}
	muted := func(s string) string { return th.Muted.Render(ansi.Truncate(s, max(t.w, 0), "…")) }
	if t.total <= 0 {
		return []string{muted("no events")}
	}
	ti, lo, hi, ok := t.fwindow()
	if !ok {
		return []string{muted("   loading #" + strconv.FormatInt(t.cursor, 10) + "…")}
	}
	sp, _ := t.fst.spanAt(t.cursor)
	shown := t.fst.items[ti:min(hi, ti+rows)]
	var out []string
	if len(shown) < rows-1 && sp.lo > 0 && ti == lo {
		out = append(out, muted("   ⋯ not searched before #"+strconv.FormatInt(sp.lo, 10)))
	}
	if len(shown) == 0 {
		out = append(out, muted("   no match in #"+strconv.FormatInt(sp.lo, 10)+"–#"+strconv.FormatInt(sp.hi-1, 10)))
	}
	tidW := 5
	for i := range shown {
		tidW = max(tidW, len(strconv.FormatInt(int64(shown[i].Tid), 10)))
	}
	for i := range shown {
		out = append(out, t.row(shown[i].N, shown[i], tlRowLoaded, tidW))
	}
	if len(out) < rows && sp.hi < t.total && ti+len(shown) == hi {
		out = append(out, muted("   ⋯ not searched after #"+strconv.FormatInt(sp.hi-1, 10)))
	}
	return out
}

// row draws one event: "=>● #1234  4242  write(1, "hi\n", 3) = 3  [breakpoint 1]".
func (t *Timeline) row(n int64, it EventItem, state int, tidW int) string {
	th := t.ctx.Theme
	mark := "  "
	if n == t.event {
		mark = "=>"
	}
	stopCh, stopSt, label := " ", th.Base, ""
	if hits := t.stopsAt(n); len(hits) > 0 {
		stopCh, stopSt = "●", th.Breakpoint
		if th.NoColor {
			stopCh = "B"
		}
		switch hits[0].reason {
		case "watchpoint":
			stopCh, stopSt = "◆", th.Watch
			if th.NoColor {
				stopCh = "W"
			}
		case "signal", "exit":
			stopCh, stopSt = "!", th.Signal
		case "breakpoint":
		default: // steps and the other stops the user reached
			stopCh, stopSt = "•", th.Key
			if th.NoColor {
				stopCh = "*"
			}
		}
		var ls []string
		for _, h := range hits {
			ls = append(ls, h.label)
		}
		label = "  [" + strings.Join(ls, "; ") + "]"
	}
	num := "#" + strconv.FormatInt(n, 10)
	num += strings.Repeat(" ", max(0, t.numWidth()-len(num)))
	tid, pid, text, textSt, fn := strings.Repeat(" ", tidW), "", "", th.Base, ""
	if t.multiProc {
		pid = strings.Repeat(" ", tidW+3)
	}
	switch state {
	case tlRowLoading:
		text, textSt = "…", th.Muted
	case tlRowMissing:
		text, textSt = "(no description)", th.Muted
	default:
		tid = strconv.FormatInt(int64(it.Tid), 10)
		tid = strings.Repeat(" ", max(0, tidW-len(tid))) + tid
		if t.multiProc {
			pid = "p" + strconv.FormatInt(int64(it.Pid), 10)
			pid = "  " + strings.Repeat(" ", max(0, tidW+1-len(pid))) + pid
		}
		text, textSt = tlClean(it.Text), t.kindStyle(it.Kind)
		if it.Function != "" {
			fn = "  in " + tlClean(it.Function)
		}
	}
	segs := []tlSeg{{mark, th.Key}, {stopCh, stopSt}, {" ", th.Base}, {num, th.LineNumber}, {"  ", th.Base},
		{tid, th.Muted}, {pid, th.Muted}, {"  ", th.Base}, {text, textSt}, {fn, th.Muted}, {label, stopSt}}
	switch {
	case n == t.cursor:
		return tlLine(t.w, &th.Selected, segs...)
	case n == t.event:
		return tlLine(t.w, &th.Current, segs...)
	}
	return tlLine(t.w, nil, segs...)
}

// kindStyle colours an event by its kind.
func (t *Timeline) kindStyle(kind string) lipgloss.Style {
	th := t.ctx.Theme
	switch kind {
	case "syscall":
		return th.Syscall
	case "signal", "exit":
		return th.Signal
	case "thread", "exec":
		return th.Thread
	}
	return th.Muted
}

// footerLine is the filter input, or the active filter and the search.
func (t *Timeline) footerLine() string {
	th := t.ctx.Theme
	if t.typing {
		t.styleInput()
		t.input.SetWidth(max(1, t.w-2))
		return ansi.Truncate(t.input.View(), max(t.w, 0), "")
	}
	info := strconv.Itoa(len(t.fst.items)) + " matches loaded"
	if t.note != "" {
		info += " · " + t.note
	}
	return tlLine(t.w, nil, tlSeg{"/", th.Prompt}, tlSeg{t.filterText, th.Base}, tlSeg{"  " + info + " · Esc clears", th.Muted})
}

// tlSeg is a piece of a line and its style.
type tlSeg struct {
	s  string
	st lipgloss.Style
}

// tlLine renders segments in at most w cells, cutting with "…". With whole
// set, the line is padded to w and drawn in that one style (a cursor or
// current row).
func tlLine(w int, whole *lipgloss.Style, segs ...tlSeg) string {
	if w <= 0 {
		return ""
	}
	total := 0
	for _, s := range segs {
		total += ansi.StringWidth(s.s)
	}
	if whole != nil {
		var b strings.Builder
		for _, s := range segs {
			b.WriteString(s.s)
		}
		p := b.String()
		if total > w {
			p = ansi.Truncate(p, w, "…")
			total = ansi.StringWidth(p)
		}
		return whole.Render(p + strings.Repeat(" ", max(0, w-total)))
	}
	room, cut := w, total > w
	if cut {
		room = w - 1
	}
	var b strings.Builder
	for _, s := range segs {
		if s.s == "" {
			continue
		}
		sw := ansi.StringWidth(s.s)
		if cut && sw >= room {
			b.WriteString(s.st.Render(ansi.Truncate(s.s, room, "") + "…"))
			return b.String()
		}
		if strings.TrimLeft(s.s, " ") == "" {
			b.WriteString(s.s) // spaces look the same unstyled
		} else {
			b.WriteString(s.st.Render(s.s))
		}
		room -= sw
	}
	return b.String()
}

// tlClean makes a description safe to draw on one line.
func tlClean(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return strings.Map(func(r rune) rune {
				switch {
				case r == '\t':
					return ' '
				case r < 0x20 || r == 0x7f:
					return '?'
				}
				return r
			}, s)
		}
	}
	return s
}

// tlFrame makes exactly h lines of at most w cells.
func tlFrame(lines []string, w, h int) string {
	if h <= 0 {
		return ""
	}
	out := make([]string, h)
	for i := 0; i < h && i < len(lines); i++ {
		l := lines[i]
		if w <= 0 {
			continue
		}
		if ansi.StringWidth(l) > w {
			l = ansi.Truncate(l, w, "")
		}
		out[i] = l
	}
	return strings.Join(out, "\n")
}

// tlRamps are the density levels: zero, then low to high.
const (
	tlBlocks = " ▁▂▃▄▅▆▇█"
	tlASCII  = " .:-=+*#%@"
)

// Row states.
const (
	tlRowLoaded  = iota
	tlRowLoading // not loaded yet
	tlRowMissing // loaded but without a description
)
