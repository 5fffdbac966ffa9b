package views

import (
	"sort"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Limits of the timeline's lazy loading.
const (
	// tlCacheMax bounds the event descriptions kept in memory (and, with a
	// filter, the matching ones); the ones farthest from the cursor go first.
	tlCacheMax = 10000
	// tlFilterBatch is how many events a filtered list asks for at a time
	// when it searches for more matches.
	tlFilterBatch = 4096
	// tlBudget is how many requests one key press (or one new snapshot, or
	// one change of the filter) may start while a filter searches: a filter
	// matching nothing must not read the whole recording at once.
	tlBudget = 8
	// tlMaxPending bounds the requests remembered as under way.
	tlMaxPending = 16
	// tlMaxStops bounds the breakpoint and watchpoint hits remembered.
	tlMaxStops = 1000
)

// Timeline lists every event of the recording (system calls with their
// results, signals, thread events, exec, exit) and the breakpoint and
// watchpoint hits the session has seen, under a density bar of the whole
// recording. It loads event descriptions lazily, a window at a time, with
// RequestEvents, and keeps a bounded cache, so that a recording of
// millions of events costs no more to draw than a small one.
//
// Keys: Up/Down/PageUp/PageDown/Top/Bottom move the cursor over events,
// Enter runs "goto #N", Filter ("/") opens the filter input, Cancel (Esc)
// clears the filter, Expand (space) unfolds or folds the noise. A filter
// is comma-separated terms: event kinds ("syscall", "signal", "thread",
// "exec", "exit", "rdtsc", "cpuid", …), threads ("tid:4242"), processes
// ("pid:4240"), system calls by name ("sys:openat"), functions
// ("fn:main"), or text matched in the description ("write", or
// "text:exit" for a word that is also a kind). Terms of the same sort are
// alternatives; sorts must all match ("syscall,tid:7" is the system calls
// of thread 7).
//
// The events a user seldom looks for are folded by default into one line
// under the bar: everything before main's first line (the dynamic
// loader's work; SetMainEvent says where it is) and rdtsc/cpuid anywhere.
// Every stop the user reached is marked, and each event names the
// function it happened in, and its process when the recording has more
// than one.
type Timeline struct {
	ctx  *Context
	w, h int

	total   int64 // events in the recording
	event   int64 // the current moment's event
	density []uint32
	stops   []tlStop // sorted by event

	cursor int64
	top    int64 // first row: an event number (unfiltered) or a match (filtered)

	raw     tlStore  // loaded descriptions
	pending []tlSpan // requests under way

	filter     *tlFilter // nil: no filter
	filterText string
	fst        tlStore // the matching descriptions, over the searched spans
	seek       *tlSeek // a cursor move waiting for more matches
	budget     int     // requests still allowed before the next key press
	note       string  // one-line state of a search, in the footer

	input  textinput.Model
	typing bool

	// unfolded shows the folded events; mainEvent is the event of main's
	// first line (0: unknown), noise says an rdtsc/cpuid event was seen:
	// folding engages only when it has something to fold.
	unfolded  bool
	mainEvent int64
	noise     bool
	// multiProc adds the process column (the recording has several).
	multiProc bool
}

// tlStop is a breakpoint or watchpoint hit the session has seen.
type tlStop struct {
	event  int64
	reason string // "breakpoint", "watchpoint"
	label  string // "breakpoint 1", "watchpoint 2: x 1 -> 2"
}

// tlSeek is a cursor move over matches that needs more events loaded:
// from the event from, left more matches in direction dir.
type tlSeek struct {
	from int64
	dir  int64
	left int64
}

// NewTimeline returns an empty timeline; it shows nothing until the first
// snapshot.
func NewTimeline(ctx *Context) *Timeline {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "syscall,signal,thread,exec,exit · tid:N · pid:N · sys:NAME · fn:NAME · text"
	return &Timeline{ctx: ctx, input: in, budget: tlBudget}
}

// Title is the pane's name.
func (t *Timeline) Title() string { return "Timeline" }

// Cursor is the event number under the list cursor.
func (t *Timeline) Cursor() int64 { return t.cursor }

// Typing says whether the filter input is open: letters then go to it,
// not to the global key bindings.
func (t *Timeline) Typing() bool { return t.typing }

// Help lists the timeline's own actions.
func (t *Timeline) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown, keymaps.Top, keymaps.Bottom,
		keymaps.Enter, keymaps.Filter, keymaps.Cancel, keymaps.Expand}
}

// SetSize sets the inner size.
func (t *Timeline) SetSize(w, h int) {
	t.w, t.h = max(w, 0), max(h, 0)
	t.scroll(false)
}

// SetSnapshot shows a new moment: the cursor goes to the current event and
// a breakpoint or watchpoint stop joins the list of hits. The events it
// needs are asked for on the next Update.
func (t *Timeline) SetSnapshot(s *debugger.Snapshot) {
	if s == nil {
		return
	}
	if s.Total != t.total {
		// Another recording (or the first): nothing loaded applies.
		t.raw, t.fst, t.pending, t.seek = tlStore{}, tlStore{}, nil, nil
		t.total = s.Total
	}
	before := t.foldBefore()
	t.event, t.density = s.Event, s.Density
	if t.foldBefore() != before {
		t.setFilter(t.filterText) // into the loader's events, or out of them
	}
	t.addStop(s.Stop)
	t.seek, t.note, t.budget = nil, "", tlBudget
	t.cursor = t.clamp(s.Event)
	if t.filter != nil {
		t.settle()
	}
	t.scroll(true)
}

func (t *Timeline) clamp(n int64) int64 {
	return max(0, min(n, t.total-1))
}

// addStop remembers a stop the user reached (a goto is where they went,
// not a stop of the program).
func (t *Timeline) addStop(st *debugger.StopInfo) {
	if st == nil || st.Reason == "goto" || st.Reason == "" {
		return
	}
	label := st.Reason
	if st.Signal != "" {
		label += " " + st.Signal
	}
	if st.Reason == "breakpoint" && st.Breakpoint > 0 {
		label += " " + strconv.Itoa(st.Breakpoint)
	}
	if w := st.Watch; w != nil {
		label += " " + strconv.Itoa(w.ID) + ": " + w.Expr
		if w.Old != "" || w.New != "" {
			label += " " + w.Old + " -> " + w.New
		}
	}
	if st.Watch == nil && st.Function != "" {
		label += " in " + st.Function
		if st.File != "" {
			label += " at " + st.File + ":" + strconv.Itoa(st.Line)
		}
	}
	t.mark(tlStop{event: st.Event, reason: st.Reason, label: label})
}

// mark adds a mark, once.
func (t *Timeline) mark(m tlStop) {
	i := sort.Search(len(t.stops), func(i int) bool { return t.stops[i].event >= m.event })
	for j := i; j < len(t.stops) && t.stops[j].event == m.event; j++ {
		if t.stops[j].label == m.label {
			return
		}
	}
	t.stops = append(t.stops, tlStop{})
	copy(t.stops[i+1:], t.stops[i:])
	t.stops[i] = m
	if len(t.stops) > tlMaxStops {
		t.stops = t.stops[1:]
	}
}

// stopsAt returns the hits at an event.
func (t *Timeline) stopsAt(n int64) []tlStop {
	i := sort.Search(len(t.stops), func(i int) bool { return t.stops[i].event >= n })
	j := i
	for j < len(t.stops) && t.stops[j].event == n {
		j++
	}
	return t.stops[i:j]
}

// listRows is the number of rows of the event list.
func (t *Timeline) listRows() int {
	r := t.h - 1
	if t.footer() {
		r--
	}
	if t.folding() && t.h >= 4 {
		r-- // the fold line
	}
	return max(r, 0)
}

// footer says whether the last line shows the filter.
func (t *Timeline) footer() bool { return (t.typing || t.filterText != "") && t.h >= 3 }

// folding says whether events are folded now: not unfolded, and there is
// something to fold.
func (t *Timeline) folding() bool { return !t.unfolded && (t.foldBefore() > 0 || t.noise) }

// foldBefore is the first event not folded as the loader's: main's, unless
// the current moment is before it (the user went there: its events show).
func (t *Timeline) foldBefore() int64 {
	if t.event < t.mainEvent {
		return 0
	}
	return t.mainEvent
}

// SetMainEvent says where main's first line is: the events before it (the
// dynamic loader's) are folded.
func (t *Timeline) SetMainEvent(n int64) {
	if n == t.mainEvent {
		return
	}
	t.mainEvent = n
	t.setFilter(t.filterText)
}

// SetProcesses says whether the recording has several processes (events
// then show their process).
func (t *Timeline) SetProcesses(n int) { t.multiProc = n > 1 }

// SavedState is what the session file keeps of the timeline.
func (t *Timeline) SavedState() debugger.SavedTimeline {
	st := debugger.SavedTimeline{Filter: t.filterText, Unfolded: t.unfolded}
	for _, m := range t.stops {
		st.Marks = append(st.Marks, debugger.SavedMark{Event: m.event, Reason: m.reason, Label: m.label})
	}
	return st
}

// RestoreState sets the timeline up as a session file kept it.
func (t *Timeline) RestoreState(st debugger.SavedTimeline) {
	t.unfolded = st.Unfolded
	for _, m := range st.Marks {
		t.mark(tlStop{event: m.Event, reason: m.Reason, label: m.Label})
	}
	t.input.SetValue(st.Filter)
	t.setFilter(st.Filter)
}

// Update handles keys (when focused), loaded events, and asks for the
// events the list needs on any other message.
func (t *Timeline) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case tea.KeyPressMsg:
		return t.key(m)
	case EventsLoaded:
		t.ingest(m)
		return t.load()
	}
	if t.typing {
		var cmd tea.Cmd
		t.input, cmd = t.input.Update(msg)
		return tea.Batch(cmd, t.load())
	}
	return t.load()
}

func (t *Timeline) key(m tea.KeyPressMsg) tea.Cmd {
	s, k := m.String(), t.ctx.Keys
	t.budget, t.note = tlBudget, ""
	if t.typing {
		switch {
		case s == "enter":
			t.typing = false
			t.input.Blur()
			t.scroll(false)
			return t.load()
		case s == "esc" || k.Matches(s, keymaps.Cancel):
			t.typing = false
			t.input.Blur()
			t.input.SetValue("")
			t.setFilter("")
			return t.load()
		case m.Text == "" && (k.Matches(s, keymaps.Up) || k.Matches(s, keymaps.Down) ||
			k.Matches(s, keymaps.PageUp) || k.Matches(s, keymaps.PageDown)):
			// Moving while typing: handled below.
		default:
			old := t.input.Value()
			var cmd tea.Cmd
			t.input, cmd = t.input.Update(m)
			if v := t.input.Value(); v != old {
				t.setFilter(v)
			}
			return tea.Batch(cmd, t.load())
		}
	}
	rows := int64(max(t.listRows(), 1))
	switch {
	case k.Matches(s, keymaps.Up):
		return t.move(-1, false)
	case k.Matches(s, keymaps.Down):
		return t.move(1, false)
	case k.Matches(s, keymaps.PageUp):
		return t.move(-rows, true)
	case k.Matches(s, keymaps.PageDown):
		return t.move(rows, true)
	case k.Matches(s, keymaps.Top):
		return t.jump(-1)
	case k.Matches(s, keymaps.Bottom):
		return t.jump(1)
	case k.Matches(s, keymaps.Enter):
		if t.total <= 0 {
			return nil
		}
		line := "goto #" + strconv.FormatInt(t.cursor, 10)
		return func() tea.Msg { return RunCommand{Line: line} }
	case k.Matches(s, keymaps.Filter):
		t.typing = true
		t.styleInput()
		t.input.SetValue(t.filterText)
		t.input.CursorEnd()
		t.scroll(false)
		return t.input.Focus()
	case k.Matches(s, keymaps.Cancel):
		if t.filterText != "" {
			t.input.SetValue("")
			t.setFilter("")
			return t.load()
		}
	case k.Matches(s, keymaps.Expand):
		if t.mainEvent > 0 || t.noise {
			t.unfolded = !t.unfolded
			t.setFilter(t.filterText)
			return t.load()
		}
	}
	return nil
}

// move moves the cursor by delta events, or by delta matches with a
// filter; page moves the view with it.
func (t *Timeline) move(delta int64, page bool) tea.Cmd {
	if t.total <= 0 {
		return nil
	}
	if t.filter != nil {
		dir := int64(1)
		if delta < 0 {
			dir, delta = -1, -delta
		}
		t.seek = &tlSeek{from: t.cursor, dir: dir, left: delta}
		return t.load()
	}
	t.cursor = t.clamp(t.cursor + delta)
	if page {
		t.top += delta
	}
	t.scroll(false)
	return t.load()
}

// jump goes to the first (dir < 0) or last event, or match.
func (t *Timeline) jump(dir int64) tea.Cmd {
	if t.total <= 0 {
		return nil
	}
	if t.filter != nil {
		if dir < 0 {
			t.seek = &tlSeek{from: -1, dir: 1, left: 1}
		} else {
			t.seek = &tlSeek{from: t.total, dir: -1, left: 1}
		}
		return t.load()
	}
	if dir < 0 {
		t.cursor = 0
	} else {
		t.cursor = t.total - 1
	}
	t.scroll(false)
	return t.load()
}

// scroll keeps the cursor in view; center puts it in the middle when it
// is out of view (a new snapshot).
func (t *Timeline) scroll(center bool) {
	rows := int64(t.listRows())
	if rows <= 0 {
		return
	}
	if t.filter != nil {
		if ti, _, hi, ok := t.fwindow(); ok && ti < hi {
			t.top = t.fst.items[ti].N
		}
		return
	}
	switch {
	case center && (t.cursor < t.top || t.cursor >= t.top+rows):
		t.top = t.cursor - rows/2
	case t.cursor < t.top:
		t.top = t.cursor
	case t.cursor >= t.top+rows:
		t.top = t.cursor - rows + 1
	}
	t.top = max(0, min(t.top, t.total-rows))
}

// fwindow is the filtered list's window: the matches [lo, hi) of the
// searched span around the cursor, the first shown ti and the cursor's ci.
func (t *Timeline) fwindow() (ti, lo, hi int, ok bool) {
	sp, ok := t.fst.spanAt(t.cursor)
	if !ok {
		return 0, 0, 0, false
	}
	lo, hi = t.fst.lower(sp.lo), t.fst.lower(sp.hi)
	if lo >= hi {
		return lo, lo, hi, true
	}
	rows := max(t.listRows(), 1)
	ci := max(lo, min(t.fst.lower(t.cursor), hi-1))
	ti = max(lo, min(t.fst.lower(t.top), hi-1))
	if ci < ti {
		ti = ci
	}
	if ci >= ti+rows {
		ti = ci - rows + 1
	}
	if ti+rows > hi {
		ti = max(lo, hi-rows)
	}
	return ti, lo, hi, true
}

// setFilter applies a filter ("" clears it).
func (t *Timeline) setFilter(text string) {
	t.filterText = strings.TrimSpace(text)
	t.seek, t.note, t.budget = nil, "", tlBudget
	t.filter = tlParseFilter(t.filterText)
	if t.folding() {
		if t.filter == nil {
			t.filter = &tlFilter{kinds: map[string]bool{}, tids: map[int32]bool{}}
		}
		t.filter.before, t.filter.noNoise = t.foldBefore(), true
	}
	t.fst = tlStore{}
	if t.filter == nil {
		t.scroll(true)
		return
	}
	t.fst.spans = append([]tlSpan{}, t.raw.spans...)
	for _, it := range t.raw.items {
		if t.filter.match(&it) {
			t.fst.items = append(t.fst.items, it)
		}
	}
	t.fst.trim(tlCacheMax, t.cursor)
	t.settle()
	t.scroll(false)
}

// ingest stores loaded events.
func (t *Timeline) ingest(m EventsLoaded) {
	items := m.Items
	if !sort.SliceIsSorted(items, func(i, j int) bool { return items[i].N < items[j].N }) {
		items = append([]EventItem{}, items...)
		sort.Slice(items, func(i, j int) bool { return items[i].N < items[j].N })
	}
	lo, hi := m.From, m.From+int64(len(items))
	for i, p := range t.pending {
		if p.lo == m.From {
			hi = max(hi, p.hi)
			t.pending = append(t.pending[:i], t.pending[i+1:]...)
			break
		}
	}
	if n := len(items); n > 0 {
		hi = max(hi, items[n-1].N+1)
	}
	if t.total > 0 {
		hi = min(hi, t.total)
	}
	if hi <= lo {
		return
	}
	a := sort.Search(len(items), func(i int) bool { return items[i].N >= lo })
	b := sort.Search(len(items), func(i int) bool { return items[i].N >= hi })
	items = items[a:b]
	if !t.noise {
		for i := range items {
			if tlNoise(items[i].Kind) {
				// Something to fold: the list folds from now on.
				t.noise = true
				t.raw.add(lo, hi, items)
				t.setFilter(t.filterText)
				return
			}
		}
	}
	t.raw.add(lo, hi, items)
	t.raw.trim(tlCacheMax, t.cursor)
	if t.filter != nil {
		var match []EventItem
		for i := range items {
			if t.filter.match(&items[i]) {
				match = append(match, items[i])
			}
		}
		t.fst.add(lo, hi, match)
		t.fst.trim(tlCacheMax, t.cursor)
	}
}

// load moves a waiting search on and asks for what the list lacks.
func (t *Timeline) load() tea.Cmd {
	if t.total <= 0 || t.listRows() <= 0 {
		return nil
	}
	if t.filter == nil {
		rows := int64(t.listRows())
		m := max(16, rows/2)
		lo, hi := max(0, t.top-m), min(t.total, t.top+rows+m)
		if gap, ok := tlGaps(lo, hi, t.raw.spans, t.pending); ok {
			return t.request(gap)
		}
		return nil
	}
	if t.seek != nil {
		if cmd, waiting := t.runSeek(); waiting {
			t.scroll(false)
			return cmd
		}
	}
	t.settle()
	t.scroll(false)
	return t.fill()
}

// request asks for events [sp.lo, sp.hi).
func (t *Timeline) request(sp tlSpan) tea.Cmd {
	t.pending = append(t.pending, sp)
	if len(t.pending) > tlMaxPending {
		t.pending = t.pending[1:]
	}
	return func() tea.Msg { return RequestEvents{From: sp.lo, To: sp.hi} }
}

// importRaw fills the filtered store from loaded events around n, when
// they were loaded but the filtered store dropped them; it reports whether
// n is now searched.
func (t *Timeline) importRaw(n int64) bool {
	sp, ok := t.raw.spanAt(n)
	if !ok {
		return false
	}
	var match []EventItem
	for i := t.raw.lower(sp.lo); i < len(t.raw.items) && t.raw.items[i].N < sp.hi; i++ {
		if t.filter.match(&t.raw.items[i]) {
			match = append(match, t.raw.items[i])
		}
	}
	t.fst.add(sp.lo, sp.hi, match)
	return true
}

// searchFrom asks for the next unsearched events from pos in direction
// dir; waiting is true when they are under way (asked now or before).
func (t *Timeline) searchFrom(pos, dir int64) (tea.Cmd, bool) {
	for _, p := range t.pending {
		if pos >= p.lo && pos < p.hi {
			return nil, true
		}
	}
	if t.budget <= 0 {
		return nil, false
	}
	t.budget--
	var sp tlSpan
	if dir > 0 {
		sp = tlSpan{pos, min(t.total, pos+tlFilterBatch, tlNextStart(pos, t.fst.spans, t.pending))}
	} else {
		sp = tlSpan{max(0, pos-tlFilterBatch+1, tlPrevEnd(pos, t.fst.spans, t.pending)), pos + 1}
	}
	return t.request(sp), true
}

// runSeek moves the cursor over matches as far as the searched events
// allow, asking for more when needed.
func (t *Timeline) runSeek() (tea.Cmd, bool) {
	s := t.seek
	for s.left > 0 {
		pos := s.from + s.dir
		if pos < 0 || pos >= t.total {
			t.note = "no more matches"
			break
		}
		sp, ok := t.fst.spanAt(pos)
		if !ok {
			if t.importRaw(pos) {
				continue
			}
			cmd, waiting := t.searchFrom(pos, s.dir)
			if waiting {
				t.note = "searching from #" + strconv.FormatInt(pos, 10) + "…"
				return cmd, true
			}
			t.note = "searched to #" + strconv.FormatInt(pos-s.dir, 10) + ": press again to go on"
			break
		}
		var found *EventItem
		if s.dir > 0 {
			if i := t.fst.lower(pos); i < len(t.fst.items) && t.fst.items[i].N < sp.hi {
				found = &t.fst.items[i]
			}
		} else {
			if i := t.fst.lower(pos+1) - 1; i >= 0 && t.fst.items[i].N >= sp.lo {
				found = &t.fst.items[i]
			}
		}
		if found == nil {
			if s.dir > 0 {
				s.from = sp.hi - 1
			} else {
				s.from = sp.lo
			}
			continue
		}
		t.cursor, s.from = found.N, found.N
		s.left--
	}
	if s.left == 0 {
		t.note = ""
	}
	t.seek = nil
	return nil, false
}

// settle puts the cursor on a match: the one at or before it, else the
// first after, among the searched events around it.
func (t *Timeline) settle() {
	sp, ok := t.fst.spanAt(t.cursor)
	if !ok {
		if !t.importRaw(t.cursor) {
			return
		}
		sp, _ = t.fst.spanAt(t.cursor)
	}
	if i := t.fst.lower(t.cursor + 1); i > 0 && t.fst.items[i-1].N >= sp.lo {
		t.cursor = t.fst.items[i-1].N
		return
	}
	if i := t.fst.lower(t.cursor); i < len(t.fst.items) && t.fst.items[i].N < sp.hi {
		t.cursor = t.fst.items[i].N
	}
}

// fill asks for events until the filtered list has a screen of matches on
// each side of the cursor (within the budget).
func (t *Timeline) fill() tea.Cmd {
	sp, ok := t.fst.spanAt(t.cursor)
	if !ok {
		lo := max(0, t.cursor-tlFilterBatch/2)
		hi := min(t.total, lo+tlFilterBatch)
		if gap, ok := tlGaps(lo, hi, t.fst.spans, t.pending); ok && t.budget > 0 {
			t.budget--
			return t.request(gap)
		}
		return nil
	}
	rows := max(t.listRows(), 1)
	ci, lo, hi := t.fst.lower(t.cursor), t.fst.lower(sp.lo), t.fst.lower(sp.hi)
	var cmd tea.Cmd
	switch {
	case hi-ci <= rows && sp.hi < t.total:
		cmd, _ = t.searchFrom(sp.hi, 1)
	case ci-lo < rows && sp.lo > 0:
		cmd, _ = t.searchFrom(sp.lo-1, -1)
	}
	return cmd
}
