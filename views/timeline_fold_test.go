package views

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/themes"
)

// tlMainEvent is where main begins in tlTreeEvent's recording.
const tlMainEvent = 40

// tlTreeEvent is event n of a synthetic recording of two processes (pid
// 100 with threads 100 and 101, its child 200 from event 300): the loader
// before main with rdtsc every third event, then rdtsc every 11 and cpuid
// every 13 events among writes, reads and opens, each in a function.
func tlTreeEvent(n, total int64) EventItem {
	tid, pid := int32(100+n%2), int32(100)
	if n >= 300 && n%3 == 0 {
		tid, pid = 200, 200
	}
	it := EventItem{N: n, Tid: tid, Pid: pid}
	switch {
	case n == 0:
		it.Kind, it.Text, it.Function = "exec", "exec (rip 0x401000, rsp 0x7ffd1000)", "_start"
	case n < tlMainEvent && n%3 == 0, n%11 == 0:
		it.Kind, it.Text, it.Function = "rdtsc", fmt.Sprintf("rdtsc at rip 0x7ffff7fe7daf = %#x", 1000*n), "_dl_start"
	case n%13 == 0:
		it.Kind, it.Text, it.Function = "cpuid", "cpuid(0x1, 0) at rip 0x401136 = 0x806f8 0 0 0", "init_cpu_features"
	case n < tlMainEvent:
		it.Kind, it.Text, it.Function = "syscall", `openat(AT_FDCWD, "/lib/libc.so.6", O_RDONLY|O_CLOEXEC) = 3`, "_dl_map_object"
	case n == total-1:
		it.Kind, it.Text, it.Function = "exit", "+++ exited with 0 +++", ""
	case n%5 == 0:
		it.Kind, it.Text, it.Function = "syscall", `read(0, "abc\n", 4096) = 4`, "__GI___libc_read"
	default:
		it.Kind, it.Text, it.Function = "syscall", fmt.Sprintf(`write(1, "hi %d\n", 6) = 6`, n), "__GI___libc_write"
	}
	return it
}

// tlServeTree answers the timeline's requests from tlTreeEvent.
func tlServeTree(t testing.TB, tl *Timeline, cmd tea.Cmd) {
	t.Helper()
	queue := tlRequests(cmd)
	for served := 0; len(queue) > 0; served++ {
		if served > 200 {
			t.Fatal("too many requests")
		}
		r := queue[0]
		queue = queue[1:]
		ev := EventsLoaded{From: r.From}
		for n := r.From; n < r.To && n < tl.total; n++ {
			ev.Items = append(ev.Items, tlTreeEvent(n, tl.total))
		}
		queue = append(queue, tlRequests(tl.Update(ev))...)
	}
}

// tlTree is a Timeline of tlTreeEvent's recording at main's first line,
// as the UI opens it: main's event known, two processes.
func tlTree(t testing.TB, theme *themes.Theme, w, h int) *Timeline {
	t.Helper()
	ctx := tlCtx(t, false)
	ctx.Theme = theme
	tl := NewTimeline(ctx)
	tl.SetSize(w, h)
	s := tlSnap(1000, tlMainEvent)
	s.Stop = &debugger.StopInfo{Reason: "step", Event: tlMainEvent, Function: "main", File: "tree.c", Line: 12}
	tl.SetSnapshot(s)
	tl.SetProcesses(2)
	tl.SetMainEvent(tlMainEvent)
	tlServeTree(t, tl, tl.Update(struct{}{}))
	return tl
}

var tlGoldenThemes = []struct {
	name  string
	theme func() *themes.Theme
}{{"dark", themes.Dark}, {"light", themes.Light}, {"nocolor", themes.NoColor}}

// TestTimelineGoldenFolded: at main's first line the loader's events and
// rdtsc/cpuid are one line under the bar; rows name their process and
// function; the first-screen stop is marked.
func TestTimelineGoldenFolded(t *testing.T) {
	for _, th := range tlGoldenThemes {
		for _, sz := range tlSizes {
			t.Run(fmt.Sprintf("%dx%d_%s", sz[0], sz[1], th.name), func(t *testing.T) {
				tl := tlTree(t, th.theme(), sz[0], sz[1])
				v := tl.View()
				tlCheckSize(t, "folded", v, sz[0], sz[1])
				golden.RequireEqual(t, v)
			})
		}
	}
}

// TestTimelineGoldenTreeFilter: a filter by process and system call name
// over the folded list.
func TestTimelineGoldenTreeFilter(t *testing.T) {
	for _, th := range tlGoldenThemes {
		for _, sz := range tlSizes {
			t.Run(fmt.Sprintf("%dx%d_%s", sz[0], sz[1], th.name), func(t *testing.T) {
				tl := tlTree(t, th.theme(), sz[0], sz[1])
				tl.Update(ptPress("/"))
				tlServeTree(t, tl, tlType(tl, "pid:200,sys:write"))
				tlServeTree(t, tl, tl.Update(ptPress("enter")))
				v := tl.View()
				tlCheckSize(t, "filtered", v, sz[0], sz[1])
				golden.RequireEqual(t, v)
			})
		}
	}
}

// TestTimelineFold: nothing before main nor any rdtsc/cpuid is listed
// while folded; space shows them all, and folds them again.
func TestTimelineFold(t *testing.T) {
	tl := tlTree(t, themes.NoColor(), 120, 400)
	folded := func() bool {
		for _, r := range tlRows(tl.View()) {
			var n int64
			fmt.Sscanf(strings.TrimLeft(r[4:], " #"), "%d", &n)
			if it := tlTreeEvent(n, 1000); n < tlMainEvent || it.Kind == "rdtsc" || it.Kind == "cpuid" {
				return false
			}
		}
		return true
	}
	if !folded() || !strings.Contains(ansi.Strip(tl.View()), "folded: #0–#39 before main, rdtsc/cpuid · space unfolds") {
		t.Fatalf("not folded:\n%s", ansi.Strip(tl.View()))
	}
	tlServeTree(t, tl, tl.Update(ptPress("home")))
	tlServeTree(t, tl, tl.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}))
	tlServeTree(t, tl, tl.Update(ptPress("home")))
	v := ansi.Strip(tl.View())
	if folded() || strings.Contains(v, "folded:") || !strings.Contains(v, "#0 ") || !strings.Contains(v, "rdtsc at rip") {
		t.Fatalf("space did not unfold:\n%s", v)
	}
	tlServeTree(t, tl, tl.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}))
	if !folded() {
		t.Fatalf("space did not fold again:\n%s", ansi.Strip(tl.View()))
	}
	// Gone to the loader's events (goto start): they show, rdtsc stays
	// folded; back at main they fold again.
	tl.SetSnapshot(tlSnap(1000, 5))
	tlServeTree(t, tl, tl.Update(struct{}{}))
	v = ansi.Strip(tl.View())
	if !strings.Contains(v, "=>  #5 ") || strings.Contains(v, "before main") || strings.Contains(v, "rdtsc at") {
		t.Fatalf("at #5 in the loader:\n%s", v)
	}
	tl.SetSnapshot(tlSnap(1000, tlMainEvent))
	tlServeTree(t, tl, tl.Update(struct{}{}))
	if !folded() || !strings.Contains(ansi.Strip(tl.View()), "before main") {
		t.Fatalf("back at main, not folded:\n%s", ansi.Strip(tl.View()))
	}
}

// TestTimelineFilterTerms: each sort of filter term against events of the
// tree recording (folding apart).
func TestTimelineFilterTerms(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   func(it EventItem) bool
	}{
		{"pid:200", func(it EventItem) bool { return it.Pid == 200 }},
		{"PID:100,pid:200", func(it EventItem) bool { return true }},
		{"sys:write", func(it EventItem) bool { return strings.HasPrefix(it.Text, "write(") }},
		{"sys:openat,sys:read", func(it EventItem) bool {
			return strings.HasPrefix(it.Text, "openat(") || strings.HasPrefix(it.Text, "read(")
		}},
		{"fn:libc_read", func(it EventItem) bool { return it.Function == "__GI___libc_read" }},
		{"rdtsc", func(it EventItem) bool { return it.Kind == "rdtsc" }},
		{"cpuids,tid:101", func(it EventItem) bool { return it.Kind == "cpuid" && it.Tid == 101 }},
		{"sys:write,pid:100", func(it EventItem) bool { return it.Pid == 100 && strings.HasPrefix(it.Text, "write(") }},
		{"pid:x", func(it EventItem) bool { return strings.Contains(strings.ToLower(it.Text), "pid:x") }},
	} {
		f := tlParseFilter(tc.filter)
		for n := int64(0); n < 1000; n++ {
			it := tlTreeEvent(n, 1000)
			if got := f.match(&it); got != tc.want(it) {
				t.Errorf("%q on %+v: %v", tc.filter, it, got)
				break
			}
		}
	}
}

// TestTimelineSavedState: the filter, the folding and the marks go to the
// session file and come back.
func TestTimelineSavedState(t *testing.T) {
	tl := tlTree(t, themes.Dark(), 100, 20)
	tl.Update(ptPress("/"))
	tlServeTree(t, tl, tlType(tl, "sys:write"))
	tlServeTree(t, tl, tl.Update(ptPress("enter")))
	tlServeTree(t, tl, tl.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}))
	s := tlSnap(1000, 77)
	s.Stop = &debugger.StopInfo{Reason: "watchpoint", Event: 77, Watch: &debugger.WatchInfo{ID: 2, Expr: "counter", Old: "1", New: "2"}}
	tl.SetSnapshot(s)
	st := tl.SavedState()
	if st.Filter != "sys:write" || !st.Unfolded || len(st.Marks) != 2 {
		t.Fatalf("saved %+v", st)
	}
	back := NewTimeline(tlCtx(t, false))
	back.SetSize(100, 20)
	back.RestoreState(st)
	if got := back.SavedState(); fmt.Sprint(got) != fmt.Sprint(st) {
		t.Fatalf("restored %+v, want %+v", got, st)
	}
}
