package views

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Watch shows the watchpoints of the session, each with every write to
// its location over the whole recording: "#1234  old -> new  func at
// file.c:16", the write at or just before the current moment marked "=>".
//
// The history of a watchpoint is asked for (RequestHistory) once when the
// watchpoint appears in a snapshot (or its expression or address changes),
// not on every moment: it does not depend on the moment. Enter on a
// watchpoint's header asks again. Enter on a write runs "goto MOMENT" with
// the write's moment ("#1234 write 3 to 0x…"), which the session knows
// from the history: it lands just after the writing instruction. A write
// made by a system call goes to its event.
type Watch struct {
	ctx  *Context
	w, h int

	watches []debugger.WatchpointInfo
	hist    map[int]*wtHist // by watchpoint id
	// event is the current moment's event; each watchpoint's EventWrites
	// places the moment among that event's writes.
	event int64
	want  []RequestHistory // to ask on the next Update

	rows []wtRow
	cur  paneCursor
}

// wtHist is the history of one watchpoint.
type wtHist struct {
	key     string // id, expression and address it was asked for
	writes  []WriteItem
	loading bool
	err     error
	current int // the write at or before the current moment, -1 if none
	// numW and oldW are the widths of the event and old-value columns.
	numW, oldW int
}

// Row kinds of the Watch pane.
const (
	wtHeader = iota
	wtInfo   // loading, error, no writes
	wtWrite
)

// wtRow is one line of the list.
type wtRow struct {
	kind  int
	watch int // index in watches
	write int // index in the history's writes
}

// NewWatch returns an empty Watch pane.
func NewWatch(ctx *Context) *Watch {
	return &Watch{ctx: ctx, hist: map[int]*wtHist{}}
}

// Title is the pane's name.
func (p *Watch) Title() string { return "Watch" }

// Help lists the pane's own actions.
func (p *Watch) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown, keymaps.Top, keymaps.Bottom, keymaps.Enter}
}

// SetSize sets the inner size.
func (p *Watch) SetSize(w, h int) {
	p.w, p.h = max(w, 0), max(h, 0)
	p.scroll()
}

func wtKey(w debugger.WatchpointInfo) string {
	return strconv.Itoa(w.ID) + "\x00" + w.Expr + "\x00" + w.Addr
}

// SetSnapshot shows a new moment. A watchpoint that is new (or whose
// expression or address changed) gets its history asked for on the next
// Update; the cursor follows the current write of its watchpoint.
func (p *Watch) SetSnapshot(s *debugger.Snapshot) {
	if s == nil {
		return
	}
	p.event = s.Event
	p.watches = append(p.watches[:0:0], s.Watches...)
	seen := map[int]bool{}
	for _, w := range p.watches {
		seen[w.ID] = true
		k := wtKey(w)
		if h := p.hist[w.ID]; h == nil || h.key != k {
			p.hist[w.ID] = &wtHist{key: k, loading: true, current: -1}
			p.want = append(p.want, RequestHistory{WatchID: w.ID, Expr: w.Expr})
		}
	}
	for id := range p.hist {
		if !seen[id] {
			delete(p.hist, id)
		}
	}
	want := p.want[:0]
	for _, r := range p.want {
		if seen[r.WatchID] {
			want = append(want, r)
		}
	}
	p.want = want
	var follow = -1
	if p.cur.pos < len(p.rows) {
		follow = p.rows[p.cur.pos].watch
	}
	p.rebuild()
	if follow >= 0 && follow < len(p.watches) {
		if h := p.hist[p.watches[follow].ID]; h != nil && h.current >= 0 {
			p.moveTo(follow, h.current)
		}
	}
}

// rebuild recomputes the current writes and the rows.
func (p *Watch) rebuild() {
	var sel *wtRow
	if p.cur.pos < len(p.rows) {
		r := p.rows[p.cur.pos]
		sel = &r
	}
	p.rows = p.rows[:0]
	for i, w := range p.watches {
		p.rows = append(p.rows, wtRow{kind: wtHeader, watch: i})
		h := p.hist[w.ID]
		if h == nil || h.loading || h.err != nil || len(h.writes) == 0 {
			p.rows = append(p.rows, wtRow{kind: wtInfo, watch: i})
			continue
		}
		h.current = currentWrite(h.writes, p.event, w.EventWrites)
		for j := range h.writes {
			p.rows = append(p.rows, wtRow{kind: wtWrite, watch: i, write: j})
		}
	}
	p.cur.pos = max(0, min(p.cur.pos, len(p.rows)-1))
	if sel != nil {
		for i, r := range p.rows {
			if r == *sel {
				p.cur.pos = i
				break
			}
		}
	}
	p.scroll()
}

// currentWrite is the index of the last write at or before the moment
// that made done writes of event (-1 before the first write). Writes of
// one event are ordered by their hits, not by the event number they
// share: a loop writing a variable five times without a system call
// makes five writes of one event. When done is not known (-1) the
// event's writes all count as made.
func currentWrite(ws []WriteItem, event int64, done int) int {
	return sort.Search(len(ws), func(j int) bool {
		w := ws[j]
		if w.Event != event {
			return w.Event > event
		}
		return done >= 0 && w.Hits > done
	}) - 1
}

// moveTo puts the cursor on a write of a watchpoint.
func (p *Watch) moveTo(watch, write int) {
	for i, r := range p.rows {
		if r.kind == wtWrite && r.watch == watch && r.write == write {
			p.cur.pos = i
			break
		}
	}
	p.scroll()
}

// scroll keeps the cursor in the window, once the pane has one.
func (p *Watch) scroll() {
	if p.h > 0 {
		p.cur.fix(len(p.rows), p.h)
	}
}

// Update handles keys (when focused) and loaded histories, and sends the
// history requests of new watchpoints on any other message.
func (p *Watch) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case tea.KeyPressMsg:
		return p.key(m.String())
	case HistoryLoaded:
		h := p.hist[m.WatchID]
		if h == nil {
			return nil
		}
		h.loading, h.writes, h.err = false, m.Writes, m.Err
		h.numW, h.oldW = 0, 0
		for _, x := range h.writes {
			h.numW = max(h.numW, 1+len(strconv.FormatInt(x.Event, 10)))
			h.oldW = max(h.oldW, ansi.StringWidth(x.Old))
		}
		h.oldW = min(h.oldW, 16)
		p.rebuild()
		for i, w := range p.watches {
			if w.ID == m.WatchID && h.current >= 0 && p.cur.pos < len(p.rows) && p.rows[p.cur.pos].watch == i && p.rows[p.cur.pos].kind != wtWrite {
				p.moveTo(i, h.current)
			}
		}
		return nil
	}
	if len(p.want) == 0 {
		return nil
	}
	cmds := make([]tea.Cmd, 0, len(p.want))
	for _, r := range p.want {
		cmds = append(cmds, func() tea.Msg { return r })
	}
	p.want = nil
	return tea.Batch(cmds...)
}

func (p *Watch) key(s string) tea.Cmd {
	if p.cur.navigate(p.ctx.Keys, s, len(p.rows), p.h) {
		return nil
	}
	if p.ctx.Keys.Matches(s, keymaps.Enter) {
		return p.enter()
	}
	return nil
}

// enter goes to the write under the cursor, or asks again for the history
// of the watchpoint under it.
func (p *Watch) enter() tea.Cmd {
	if p.cur.pos >= len(p.rows) {
		return nil
	}
	r := p.rows[p.cur.pos]
	w := p.watches[r.watch]
	h := p.hist[w.ID]
	if r.kind == wtWrite && h != nil {
		w := h.writes[r.write]
		line := "goto #" + strconv.FormatInt(w.Event, 10)
		if w.Moment != "" && !w.Syscall {
			line = "goto " + w.Moment // the exact write, not just its event
		}
		return func() tea.Msg { return RunCommand{Line: line} }
	}
	p.hist[w.ID] = &wtHist{key: wtKey(w), loading: true, current: -1}
	p.rebuild()
	req := RequestHistory{WatchID: w.ID, Expr: w.Expr}
	return func() tea.Msg { return req }
}

// View draws the watchpoints and their writes.
func (p *Watch) View() string {
	if p.h <= 0 {
		return ""
	}
	th := p.ctx.Theme
	if len(p.watches) == 0 {
		return paneHint(th.Muted, p.w, p.h, fmt.Sprintf("no watchpoints: %s on a local, or %swatch EXPR", keyFor(p.ctx, keymaps.Watch), keyFor(p.ctx, keymaps.Prompt)),
			"each write to a watched location is listed here, "+keyFor(p.ctx, keymaps.Enter)+" goes to it")
	}
	lines := make([]string, 0, p.h)
	for i := p.cur.top; i < len(p.rows) && i < p.cur.top+p.h; i++ {
		lines = append(lines, p.row(i))
	}
	return tlFrame(lines, p.w, p.h)
}

func (p *Watch) row(i int) string {
	th := p.ctx.Theme
	r := p.rows[i]
	w := p.watches[r.watch]
	h := p.hist[w.ID]
	var whole *lipgloss.Style
	if i == p.cur.pos {
		whole = &th.Selected
	}
	switch r.kind {
	case wtHeader:
		desc := fmt.Sprintf("  %s, %d bytes", w.Addr, w.Size)
		if w.Access {
			desc += ", read/write"
		}
		if h != nil && !h.loading && h.err == nil {
			n := len(h.writes)
			desc += fmt.Sprintf(" · %d write", n)
			if n != 1 {
				desc += "s"
			}
		}
		return tlLine(p.w, whole, tlSeg{"watch " + strconv.Itoa(w.ID) + ": ", th.Watch}, tlSeg{w.Expr, th.Watch},
			tlSeg{desc, th.Muted})
	case wtInfo:
		switch {
		case h == nil || h.loading:
			return tlLine(p.w, whole, tlSeg{"   loading…", th.Muted})
		case h.err != nil:
			return tlLine(p.w, whole, tlSeg{"   ! " + tlClean(h.err.Error()), th.Error})
		}
		return tlLine(p.w, whole, tlSeg{"   no writes in the recording", th.Muted})
	}
	wr := h.writes[r.write]
	mark := "  "
	if r.write == h.current {
		mark = "=>"
		if whole == nil {
			whole = &th.Current
		}
	}
	num := "#" + strconv.FormatInt(wr.Event, 10)
	num += strings.Repeat(" ", max(0, h.numW-len(num)))
	old := tlClean(wr.Old)
	old = strings.Repeat(" ", max(0, h.oldW-ansi.StringWidth(old))) + old
	place := ""
	switch {
	case wr.Syscall:
		place = "by a system call"
	case wr.Function != "" && wr.File != "":
		place = fmt.Sprintf("%s at %s:%d", wr.Function, wr.File, wr.Line)
	case wr.Function != "":
		place = "in " + wr.Function
	case wr.File != "":
		place = fmt.Sprintf("at %s:%d", wr.File, wr.Line)
	}
	return tlLine(p.w, whole, tlSeg{" " + mark + " ", th.Key}, tlSeg{num, th.LineNumber}, tlSeg{"  " + old, th.Muted},
		tlSeg{" -> ", th.Muted}, tlSeg{tlClean(wr.New), th.Changed}, tlSeg{"  " + tlClean(place), th.Muted})
}
