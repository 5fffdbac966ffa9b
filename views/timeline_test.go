package views

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
	"github.com/rewind-debugger/rewind/themes"
)

// tlCtx is a context with the default keys and a theme.
func tlCtx(t testing.TB, noColor bool) *Context {
	t.Helper()
	k, err := keymaps.New("default", nil)
	if err != nil {
		t.Fatal(err)
	}
	th := themes.Dark()
	if noColor {
		th = themes.NoColor()
	}
	return &Context{Theme: th, Keys: k}
}

// tlThemes are the golden variants.
var tlThemes = []struct {
	name    string
	noColor bool
}{{"dark", false}, {"nocolor", true}}

// tlSizes are the golden sizes.
var tlSizes = [][2]int{{78, 12}, {158, 20}}

// tlGolden checks what view draws at each golden size in each theme
// against the golden file of the subtest "WxH_THEME".
func tlGolden(t *testing.T, view func(t *testing.T, ctx *Context, w, h int) string) {
	for _, th := range tlThemes {
		for _, sz := range tlSizes {
			t.Run(fmt.Sprintf("%dx%d_%s", sz[0], sz[1], th.name), func(t *testing.T) {
				golden.RequireEqual(t, view(t, tlCtx(t, th.noColor), sz[0], sz[1]))
			})
		}
	}
}

// tlGoldenEach checks what view draws in each theme against the golden
// file of the subtest named after the theme.
func tlGoldenEach(t *testing.T, view func(t *testing.T, ctx *Context) string) {
	for _, th := range tlThemes {
		t.Run(th.name, func(t *testing.T) {
			golden.RequireEqual(t, view(t, tlCtx(t, th.noColor)))
		})
	}
}

// tlEvent is the hand-built event n of a synthetic recording: mostly
// writes and reads of two threads, a thread switch every 7 events, a
// signal every 50 (every 5000 past event 1000), an exec at 0 and the exit
// at the end.
func tlEvent(n, total int64) EventItem {
	tid := int32(4242 + n%2)
	switch {
	case n == 0:
		return EventItem{N: n, Tid: 4242, Kind: "exec", Text: "exec (rip 0x401000, rsp 0x7ffd1000)"}
	case n == total-1:
		return EventItem{N: n, Tid: 4242, Kind: "exit", Text: "+++ exited with 0 +++"}
	case (n < 1000 && n%50 == 0) || n%5000 == 0:
		return EventItem{N: n, Tid: tid, Kind: "signal", Text: "--- SIGALRM (async) at rip 0x401136 ---"}
	case n%7 == 0:
		return EventItem{N: n, Tid: tid, Kind: "thread", Text: "preempted at rip 0x401150 (spin)"}
	case n%3 == 0:
		return EventItem{N: n, Tid: tid, Kind: "syscall", Text: `read(0, "abc\n", 4096) = 4`}
	}
	return EventItem{N: n, Tid: tid, Kind: "syscall", Text: fmt.Sprintf(`write(1, "hi %d\n", %d) = %d`, n, 4+len(fmt.Sprint(n)), 4+len(fmt.Sprint(n)))}
}

// tlSnap is a snapshot of a recording of total events at event.
func tlSnap(total, event int64) *debugger.Snapshot {
	d := make([]uint32, 512)
	for i := range d {
		d[i] = uint32(10 + (i*37)%90)
		if i > 400 && i < 420 {
			d[i] = 0
		}
	}
	return &debugger.Snapshot{Moment: fmt.Sprintf("#%d", event), Event: event, Total: total, Thread: 4242, Density: d}
}

// tlMsgs runs a command and returns the messages it produces (batches
// flattened).
func tlMsgs(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, tlMsgs(c)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	return []tea.Msg{msg}
}

// tlRequests returns the RequestEvents among a command's messages.
func tlRequests(cmd tea.Cmd) []RequestEvents {
	var out []RequestEvents
	for _, m := range tlMsgs(cmd) {
		if r, ok := m.(RequestEvents); ok {
			out = append(out, r)
		}
	}
	return out
}

// tlServe answers every RequestEvents of cmd (and of the answers' own
// commands) like the root model would; it returns the requests served.
func tlServe(t testing.TB, tl *Timeline, cmd tea.Cmd) []RequestEvents {
	t.Helper()
	var served []RequestEvents
	queue := tlRequests(cmd)
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		served = append(served, r)
		if len(served) > 200 {
			t.Fatalf("too many requests: %v", served[len(served)-5:])
		}
		ev := EventsLoaded{From: r.From}
		for n := r.From; n < r.To && n < tl.total; n++ {
			ev.Items = append(ev.Items, tlEvent(n, tl.total))
		}
		queue = append(queue, tlRequests(tl.Update(ev))...)
	}
	return served
}

// tlType types text into a pane.
func tlType(p interface{ Update(tea.Msg) tea.Cmd }, s string) tea.Cmd {
	var cmds []tea.Cmd
	for _, r := range s {
		cmds = append(cmds, p.Update(ptPress(string(r))))
	}
	return tea.Batch(cmds...)
}

// tlPlain is a view without escape sequences, as lines.
func tlPlain(v string) []string { return strings.Split(ansi.Strip(v), "\n") }

// tlCheckSize fails unless v is exactly h lines of at most w cells.
func tlCheckSize(t *testing.T, what, v string, w, h int) {
	t.Helper()
	if h <= 0 {
		if v != "" {
			t.Errorf("%s at %dx%d: want nothing, got %q", what, w, h, v)
		}
		return
	}
	lines := strings.Split(v, "\n")
	if len(lines) != h {
		t.Errorf("%s at %dx%d: %d lines", what, w, h, len(lines))
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("%s at %dx%d: line %d is %d cells: %q", what, w, h, i, lw, ansi.Strip(l))
		}
	}
}

// tlLoaded is a timeline of total events at event, sized and with its
// window loaded.
func tlLoaded(t testing.TB, ctx *Context, w, h int, total, event int64) *Timeline {
	t.Helper()
	tl := NewTimeline(ctx)
	tl.SetSize(w, h)
	tl.SetSnapshot(tlSnap(total, event))
	tlServe(t, tl, tl.Update(struct{}{}))
	return tl
}

func TestTimelineGolden(t *testing.T) {
	tlGolden(t, func(t *testing.T, ctx *Context, w, h int) string {
		tl := NewTimeline(ctx)
		tl.SetSize(w, h)
		s := tlSnap(1000, 500)
		s.Stop = &debugger.StopInfo{Reason: "breakpoint", Event: 498, Breakpoint: 1}
		tl.SetSnapshot(s)
		s = tlSnap(1000, 500)
		s.Stop = &debugger.StopInfo{Reason: "watchpoint", Event: 500,
			Watch: &debugger.WatchInfo{ID: 2, Expr: "counter", Old: "1", New: "2"}}
		tl.SetSnapshot(s)
		tlServe(t, tl, tl.Update(struct{}{}))
		tl.Update(ptPress("down"))
		tl.Update(ptPress("down"))
		return tl.View()
	})
}

func TestTimelineGoldenFilter(t *testing.T) {
	tlGolden(t, func(t *testing.T, ctx *Context, w, h int) string {
		tl := tlLoaded(t, ctx, w, h, 1000, 500)
		tl.Update(ptPress("/"))
		tlServe(t, tl, tlType(tl, "signal,thread,tid:4242"))
		tlServe(t, tl, tl.Update(ptPress("enter")))
		return tl.View()
	})
}

func TestTimelineRequestsWindow(t *testing.T) {
	const total = 1_000_000
	tl := NewTimeline(tlCtx(t, false))
	tl.SetSize(80, 20) // 19 rows under the bar
	tl.SetSnapshot(tlSnap(total, 500_000))
	if tl.Cursor() != 500_000 {
		t.Fatalf("cursor %d, want the current event", tl.Cursor())
	}
	reqs := tlRequests(tl.Update(struct{}{}))
	if len(reqs) != 1 {
		t.Fatalf("requests %v, want one", reqs)
	}
	r := reqs[0]
	top := tl.top
	if r.From > top || r.To < top+19 || r.To-r.From > 19+2*16 {
		t.Fatalf("request %v for rows [%d, %d): want the visible window and a bit more", r, top, top+19)
	}
	// Asked for once: the same window is not asked for again while under way.
	if again := tlRequests(tl.Update(struct{}{})); len(again) != 0 {
		t.Fatalf("asked again while under way: %v", again)
	}
	tlServe(t, tl, func() tea.Msg { return r })
	if again := tlRequests(tl.Update(struct{}{})); len(again) != 0 {
		t.Fatalf("asked again once loaded: %v", again)
	}
	// Moving within what is loaded asks for nothing.
	if got := tlRequests(tl.Update(ptPress("down"))); len(got) != 0 {
		t.Fatalf("a step within the loaded window asked %v", got)
	}
	// A page down asks for what follows the loaded window only.
	got := tlRequests(tl.Update(ptPress("pgdown")))
	if len(got) != 1 || got[0].From != r.To || got[0].To <= tl.top+19-1 {
		t.Fatalf("page down asked %v after %v (rows from %d)", got, r, tl.top)
	}
	tlServe(t, tl, func() tea.Msg { return got[0] })
	// End and Home ask for the ends of the recording.
	got = tlRequests(tl.Update(ptPress("end")))
	if tl.Cursor() != total-1 || len(got) != 1 || got[0].To != total || got[0].From > total-19 {
		t.Fatalf("end: cursor %d, asked %v", tl.Cursor(), got)
	}
	got = tlRequests(tl.Update(ptPress("home")))
	if tl.Cursor() != 0 || len(got) != 1 || got[0].From != 0 || got[0].To < 19 {
		t.Fatalf("home: cursor %d, asked %v", tl.Cursor(), got)
	}
	// Not loaded yet: rows say so.
	v := strings.Join(tlPlain(tl.View()), "\n")
	if !strings.Contains(v, "#0") || !strings.Contains(v, "…") {
		t.Fatalf("unloaded rows:\n%s", v)
	}
	tlServe(t, tl, func() tea.Msg { return got[0] })
	if v := tlPlain(tl.View()); !strings.Contains(v[1], "exec (rip") {
		t.Fatalf("first row once loaded: %q", v[1])
	}
}

func TestTimelineCacheBounded(t *testing.T) {
	tl := tlLoaded(t, tlCtx(t, false), 80, 40, 1_000_000, 0)
	for i := 0; i < 600; i++ {
		tlServe(t, tl, tl.Update(ptPress("pgdown")))
	}
	if n := len(tl.raw.items); n > tlCacheMax {
		t.Fatalf("%d events cached, limit %d", n, tlCacheMax)
	}
	if _, ok := tl.raw.get(tl.Cursor()); !ok {
		t.Fatal("the cursor's event was evicted")
	}
	if _, ok := tl.raw.get(10); ok {
		t.Fatal("far events were kept")
	}
	// Back to the start: evicted events are asked for again.
	if got := tlRequests(tl.Update(ptPress("home"))); len(got) != 1 || got[0].From != 0 {
		t.Fatalf("home after eviction asked %v", got)
	}
}

func TestTimelineEnterGoto(t *testing.T) {
	tl := tlLoaded(t, tlCtx(t, false), 80, 20, 1000, 500)
	tl.Update(ptPress("down"))
	tl.Update(ptPress("down"))
	tl.Update(ptPress("up"))
	msgs := tlMsgs(tl.Update(ptPress("enter")))
	if len(msgs) != 1 || msgs[0] != (RunCommand{Line: "goto #501"}) {
		t.Fatalf("enter gave %v", msgs)
	}
	// The vim preset's keys work too.
	k, _ := keymaps.New("vim", nil)
	ctx := tlCtx(t, false)
	ctx.Keys = k
	tl = tlLoaded(t, ctx, 80, 20, 1000, 500)
	tl.Update(ptPress("G"))
	if msgs := tlMsgs(tl.Update(ptPress("o"))); len(msgs) != 1 || msgs[0] != (RunCommand{Line: "goto #999"}) {
		t.Fatalf("vim G then o gave %v", msgs)
	}
}

func TestTimelineNewSnapshotMovesCursor(t *testing.T) {
	tl := tlLoaded(t, tlCtx(t, false), 80, 20, 1000, 500)
	tl.Update(ptPress("pgdown"))
	tl.SetSnapshot(tlSnap(1000, 100))
	if tl.Cursor() != 100 {
		t.Fatalf("cursor %d after a snapshot at #100", tl.Cursor())
	}
	tlServe(t, tl, tl.Update(struct{}{}))
	var cur string
	for _, l := range tlPlain(tl.View()) {
		if strings.HasPrefix(l, "=>") {
			cur = l
		}
	}
	if !strings.HasPrefix(cur, "=>  #100 ") {
		t.Fatalf("current row %q", cur)
	}
}

// tlRows returns the event rows of a view (lines with an event number).
func tlRows(v string) []string {
	var out []string
	for _, l := range tlPlain(v)[1:] {
		if r := []rune(l); len(r) > 4 && strings.HasPrefix(string(r[3:]), " #") {
			out = append(out, l)
		}
	}
	return out
}

func TestTimelineFilters(t *testing.T) {
	for _, c := range []struct {
		filter string
		ok     func(r string) bool
	}{
		{"syscall", func(r string) bool { return strings.Contains(r, "write(") || strings.Contains(r, "read(") }},
		{"signal,thread", func(r string) bool { return strings.Contains(r, "SIGALRM") || strings.Contains(r, "preempted") }},
		{"tid:4243", func(r string) bool { return strings.Contains(r, " 4243  ") }},
		{"syscall,tid:4242", func(r string) bool {
			return strings.Contains(r, " 4242  ") && (strings.Contains(r, "write(") || strings.Contains(r, "read("))
		}},
		{"ABC", func(r string) bool { return strings.Contains(r, `read(0, "abc`) }},
		{"text:exit", func(r string) bool { return strings.Contains(r, "exited") }},
	} {
		t.Run(c.filter, func(t *testing.T) {
			tl := tlLoaded(t, tlCtx(t, false), 100, 30, 1000, 500)
			tl.Update(ptPress("/"))
			if !tl.Typing() {
				t.Fatal("/ did not open the filter input")
			}
			tlServe(t, tl, tlType(tl, c.filter))
			tlServe(t, tl, tl.Update(ptPress("enter")))
			if tl.Typing() {
				t.Fatal("enter did not close the input")
			}
			rows := tlRows(tl.View())
			if len(rows) == 0 {
				t.Fatalf("no rows:\n%s", ansi.Strip(tl.View()))
			}
			for _, r := range rows {
				if !c.ok(r) {
					t.Fatalf("row %q does not match %q:\n%s", r, c.filter, ansi.Strip(tl.View()))
				}
			}
			if it, ok := tl.raw.get(tl.Cursor()); !ok || !tl.filter.match(&it) {
				t.Fatalf("cursor on #%d, not a match", tl.Cursor())
			}
			// Down moves to the next match, Enter goes there.
			before := tl.Cursor()
			tlServe(t, tl, tl.Update(ptPress("down")))
			if it, _ := tl.raw.get(tl.Cursor()); tl.Cursor() <= before || !tl.filter.match(&it) {
				if tl.note != "no more matches" {
					t.Fatalf("down from #%d went to #%d (%s)", before, tl.Cursor(), tl.note)
				}
			}
			want := RunCommand{Line: fmt.Sprintf("goto #%d", tl.Cursor())}
			if msgs := tlMsgs(tl.Update(ptPress("enter"))); len(msgs) != 1 || msgs[0] != want {
				t.Fatalf("enter gave %v, want %v", msgs, want)
			}
			// Esc clears the filter: every event again.
			tlServe(t, tl, tl.Update(ptPress("esc")))
			if tl.filter != nil {
				t.Fatal("esc kept the filter")
			}
			if rows := tlRows(tl.View()); len(rows) != 29 {
				t.Fatalf("%d rows after esc", len(rows))
			}
		})
	}
}

func TestTimelineFilterSearchesFurther(t *testing.T) {
	const total = 1_000_000
	tl := tlLoaded(t, tlCtx(t, false), 100, 20, total, 20_000)
	tl.Update(ptPress("/"))
	// Signals are every 5000 events here: the loaded window has none near
	// the cursor, so the filter asks for more, in batches, both ways.
	served := tlServe(t, tl, tlType(tl, "signal"))
	if len(served) == 0 {
		t.Fatal("the filter asked for nothing")
	}
	for _, r := range served {
		if r.To-r.From > tlFilterBatch {
			t.Fatalf("request %v larger than a batch", r)
		}
	}
	tlServe(t, tl, tl.Update(ptPress("enter")))
	if tl.Cursor() != 20_000 {
		t.Fatalf("cursor on #%d, want the signal at the current event", tl.Cursor())
	}
	// Down searches forward until the next signal, asking for windows as it
	// goes.
	served = tlServe(t, tl, tl.Update(ptPress("down")))
	if tl.Cursor() != 25_000 {
		t.Fatalf("down: cursor #%d, want #25000 (asked %v)", tl.Cursor(), served)
	}
	// The list shows only signals.
	for _, r := range tlRows(tl.View()) {
		if !strings.Contains(r, "SIGALRM") {
			t.Fatalf("row %q with the signal filter", r)
		}
	}
	// A filter matching nothing stops after its budget, and says so.
	tl.Update(ptPress("/"))
	for range len("signal") {
		tlServe(t, tl, tl.Update(ptPress("backspace")))
	}
	served = tlServe(t, tl, tlType(tl, "nothing-matches-this"))
	if len(served) > len("nothing-matches-this")*tlBudget {
		t.Fatalf("%d requests for a filter matching nothing", len(served))
	}
	tlServe(t, tl, tl.Update(ptPress("enter")))
	served = tlServe(t, tl, tl.Update(ptPress("down")))
	if len(served) > tlBudget || !strings.Contains(tl.note, "press again") {
		t.Fatalf("down with no match: %d requests, note %q", len(served), tl.note)
	}
	if !strings.Contains(ansi.Strip(tl.View()), "no match in") {
		t.Fatalf("no-match view:\n%s", ansi.Strip(tl.View()))
	}
}

func TestTimelineDensityBar(t *testing.T) {
	tl := NewTimeline(tlCtx(t, true))
	tl.SetSize(8, 3)
	tl.SetSnapshot(&debugger.Snapshot{Event: 7, Total: 8, Density: []uint32{0, 1, 2, 4}})
	tl.Update(ptPress("up"))
	tl.Update(ptPress("up"))
	if bar := tlPlain(tl.View())[0]; bar != "  --+^@|" {
		t.Fatalf("no-colour bar %q, want %q", bar, "  --+^@|")
	}
	// Same column: the current moment wins the character.
	tl.SetSnapshot(&debugger.Snapshot{Event: 3, Total: 8, Density: []uint32{0, 1, 2, 4}})
	if bar := tlPlain(tl.View())[0]; bar != "  -|++@@" {
		t.Fatalf("no-colour bar %q", bar)
	}
	// Colour: blocks, a line at the current moment, the cursor in the
	// selected style.
	tl = NewTimeline(tlCtx(t, false))
	tl.SetSize(8, 3)
	tl.SetSnapshot(&debugger.Snapshot{Event: 7, Total: 8, Density: []uint32{0, 1, 2, 4}})
	tl.Update(ptPress("up"))
	tl.Update(ptPress("up"))
	bar := tl.View()
	bar = bar[:strings.Index(bar, "\n")]
	if p := ansi.Strip(bar); p != "  ▂▂▄▄█│" {
		t.Fatalf("colour bar %q", p)
	}
	if sel := tl.ctx.Theme.Selected.Render("▄"); !strings.Contains(bar, sel) {
		t.Fatalf("cursor column not selected: %q", bar)
	}
	// Resampling: many buckets to a few columns, a few to many.
	tl.SetSize(4, 3)
	d := make([]uint32, 512)
	for i := 256; i < 512; i++ {
		d[i] = 5
	}
	tl.SetSnapshot(&debugger.Snapshot{Event: 0, Total: 1_000_000, Density: d})
	if p := tlPlain(tl.View())[0]; p != "│ ██" {
		t.Fatalf("512 buckets in 4 columns: %q", p)
	}
	tl.SetSize(200, 3)
	if p := tlPlain(tl.View())[0]; !strings.HasPrefix(p, "│"+strings.Repeat(" ", 99)+"█") {
		t.Fatalf("512 buckets in 200 columns: %q", p)
	}
}

func TestTimelineStops(t *testing.T) {
	for _, th := range tlThemes {
		tl := NewTimeline(tlCtx(t, th.noColor))
		tl.SetSize(100, 10)
		s := tlSnap(100, 40)
		s.Stop = &debugger.StopInfo{Reason: "breakpoint", Event: 40, Breakpoint: 3}
		tl.SetSnapshot(s)
		s = tlSnap(100, 42)
		s.Stop = &debugger.StopInfo{Reason: "watchpoint", Event: 42, Watch: &debugger.WatchInfo{ID: 1, Expr: "x", Old: "0", New: "5"}}
		tl.SetSnapshot(s)
		s = tlSnap(100, 43) // a step is a stop the user reached too; the old stop again: kept once
		s.Stop = &debugger.StopInfo{Reason: "step", Event: 43, Function: "main", File: "a.c", Line: 7}
		tl.SetSnapshot(s)
		s = tlSnap(100, 42)
		s.Stop = &debugger.StopInfo{Reason: "watchpoint", Event: 42, Watch: &debugger.WatchInfo{ID: 1, Expr: "x", Old: "0", New: "5"}}
		tl.SetSnapshot(s)
		tlServe(t, tl, tl.Update(struct{}{}))
		if len(tl.stops) != 3 {
			t.Fatalf("%s: stops %v", th.name, tl.stops)
		}
		b, w, st := "●", "◆", "•"
		if th.noColor {
			b, w, st = "B", "W", "*"
		}
		v := strings.Join(tlPlain(tl.View()), "\n")
		if !strings.Contains(v, "  "+b+" #40 ") || !strings.Contains(v, "[breakpoint 3]") ||
			!strings.Contains(v, "=>"+w+" #42 ") || !strings.Contains(v, "[watchpoint 1: x 0 -> 5]") ||
			!strings.Contains(v, "  "+st+" #43 ") || !strings.Contains(v, "[step in main at a.c:7]") {
			t.Fatalf("%s: stops not shown:\n%s", th.name, v)
		}
	}
}

// tlPanes builds each pane in a few states, for the size checks.
func tlPanes(t *testing.T, w, h int) map[string]Pane {
	out := map[string]Pane{}
	ctx := tlCtx(t, false)
	empty := NewTimeline(ctx)
	empty.SetSize(w, h)
	out["timeline empty"] = empty
	out["timeline loaded"] = tlLoaded(t, ctx, w, h, 1_000_000, 123_456)
	tl := NewTimeline(tlCtx(t, true))
	tl.SetSize(w, h)
	tl.SetSnapshot(tlSnap(1_000_000, 123_456))
	tl.Update(struct{}{}) // under way
	out["timeline loading nocolor"] = tl
	tl = tlLoaded(t, ctx, w, h, 1000, 500)
	tl.Update(ptPress("/"))
	tlServe(t, tl, tlType(tl, "syscall"))
	out["timeline typing"] = tl
	tl = tlLoaded(t, ctx, w, h, 1000, 500)
	tl.Update(ptPress("/"))
	tlServe(t, tl, tlType(tl, "signal"))
	tl.Update(ptPress("enter"))
	out["timeline filtered"] = tl
	for name, p := range wtPanes(t) {
		out[name] = p
	}
	for name, p := range conPanes(t) {
		out[name] = p
	}
	return out
}

func TestTimelineWatchConsoleSizes(t *testing.T) {
	for _, sz := range [][2]int{{0, 0}, {1, 1}, {5, 3}, {20, 5}, {78, 12}, {200, 60}} {
		w, h := sz[0], sz[1]
		for name, p := range tlPanes(t, w, h) {
			p.SetSize(w, h)
			tlCheckSize(t, name, p.View(), w, h)
			// Keys at that size neither panic nor break the size.
			for _, k := range []string{"down", "pgdown", "end", "up", "pgup", "home"} {
				p.Update(ptPress(k))
				tlCheckSize(t, name+" after "+k, p.View(), w, h)
			}
		}
	}
}

func TestTimelineHelp(t *testing.T) {
	ctx := tlCtx(t, false)
	for _, p := range []Pane{NewTimeline(ctx), NewWatch(ctx), NewConsole(ctx)} {
		if len(p.Help()) == 0 || p.Title() == "" {
			t.Fatalf("%T: no help or title", p)
		}
		for _, a := range p.Help() {
			if len(ctx.Keys.Bindings(a)) == 0 {
				t.Fatalf("%T: help action %s has no key", p, a)
			}
		}
	}
}

// BenchmarkTimelineRender draws a 160x48 timeline of a million-event
// recording (one window loaded) after a key press.
func BenchmarkTimelineRender(b *testing.B) {
	tl := tlLoaded(b, tlCtx(b, false), 160, 48, 1_000_000, 500_000)
	keys := []tea.KeyPressMsg{ptPress("down"), ptPress("up")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		tl.Update(keys[i%2])
		_ = tl.View()
	}
}
