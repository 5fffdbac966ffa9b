package views

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/rewind-debugger/rewind/debugger"
)

// wtSnap is a snapshot at event with watchpoints.
func wtSnap(event int64, watches ...debugger.WatchpointInfo) *debugger.Snapshot {
	return &debugger.Snapshot{Event: event, Total: 5000, Watches: watches}
}

var (
	wtCounter = debugger.WatchpointInfo{ID: 1, Expr: "counter", Addr: "0x404028", Size: 4}
	wtHead    = debugger.WatchpointInfo{ID: 2, Expr: "list->head", Addr: "0x4052a0", Size: 8, Access: true}
)

// wtWrites is the hand-built history of counter.
func wtWrites() []WriteItem {
	return []WriteItem{
		{Event: 12, Moment: "#12 write 1 to 0x404028", Old: "0", New: "1", Function: "main", File: "counter.c", Line: 16},
		{Event: 340, Moment: "#340 write 2 to 0x404028", Old: "1", New: "2", Function: "bump", File: "counter.c", Line: 9},
		{Event: 1200, Moment: "#1200 write 3 to 0x404028", Old: "2", New: "1000", Syscall: true},
		{Event: 1201, Moment: "#1201 write 1 to 0x404028", Old: "1000", New: "-1", Function: "reset"},
		{Event: 4096, Moment: "#4096 write 1 to 0x404028", Old: "-1", New: "0", Function: "main", File: "counter.c", Line: 30},
	}
}

// wtRequests returns the RequestHistory among a command's messages.
func wtRequests(msgs []tea.Msg) []RequestHistory {
	var out []RequestHistory
	for _, m := range msgs {
		if r, ok := m.(RequestHistory); ok {
			out = append(out, r)
		}
	}
	return out
}

func wtReqs(p *Watch, msg tea.Msg) []RequestHistory {
	return wtRequests(tlMsgs(p.Update(msg)))
}

// wtLoaded is a Watch pane at event 1000 with counter's history loaded
// and head's still loading.
func wtLoaded(ctx *Context, w, h int) *Watch {
	p := NewWatch(ctx)
	p.SetSize(w, h)
	p.SetSnapshot(wtSnap(1000, wtCounter, wtHead))
	p.Update(struct{}{})
	p.Update(HistoryLoaded{WatchID: 1, Writes: wtWrites()})
	return p
}

func TestWatchGolden(t *testing.T) {
	tlGolden(t, func(_ *testing.T, ctx *Context, w, h int) string {
		return wtLoaded(ctx, w, h).View()
	})
}

func TestWatchGoldenError(t *testing.T) {
	tlGoldenEach(t, func(_ *testing.T, ctx *Context) string {
		p := wtLoaded(ctx, 78, 12)
		p.Update(HistoryLoaded{WatchID: 2, Err: errors.New("No symbol \"list\" in current context.")})
		p.Update(ptPress("home"))
		return p.View()
	})
}

func TestWatchLoadingThenWrites(t *testing.T) {
	p := NewWatch(tlCtx(t, false))
	p.SetSize(80, 20)
	if v := strings.Join(tlPlain(p.View()), "\n"); !strings.Contains(v, "no watchpoints") {
		t.Fatalf("empty pane:\n%s", v)
	}
	p.SetSnapshot(wtSnap(1000, wtCounter))
	if v := strings.Join(tlPlain(p.View()), "\n"); !strings.Contains(v, "watch 1: counter") || !strings.Contains(v, "loading…") {
		t.Fatalf("loading:\n%s", v)
	}
	// The history is asked for once, on the next message.
	if got := wtReqs(p, struct{}{}); len(got) != 1 || got[0] != (RequestHistory{WatchID: 1, Expr: "counter"}) {
		t.Fatalf("asked %v", got)
	}
	if got := wtReqs(p, struct{}{}); len(got) != 0 {
		t.Fatalf("asked again: %v", got)
	}
	// A new moment with the same watchpoints asks nothing.
	p.SetSnapshot(wtSnap(1300, wtCounter))
	if got := wtReqs(p, struct{}{}); len(got) != 0 {
		t.Fatalf("asked again at a new moment: %v", got)
	}
	// A new watchpoint: only it is asked for.
	p.SetSnapshot(wtSnap(1000, wtCounter, wtHead))
	if got := wtReqs(p, struct{}{}); len(got) != 1 || got[0].WatchID != 2 {
		t.Fatalf("new watchpoint asked %v", got)
	}
	p.Update(HistoryLoaded{WatchID: 1, Writes: wtWrites()})
	lines := tlPlain(p.View())
	var cur []string
	for _, l := range lines {
		if strings.Contains(l, "=>") {
			cur = append(cur, l)
		}
	}
	if len(cur) != 1 || !strings.Contains(cur[0], "#340") || !strings.Contains(cur[0], "1 -> 2") ||
		!strings.Contains(cur[0], "bump at counter.c:9") {
		t.Fatalf("current write at #1000: %q\n%s", cur, strings.Join(lines, "\n"))
	}
	v := strings.Join(lines, "\n")
	if !strings.Contains(v, "by a system call") || !strings.Contains(v, "in reset") || !strings.Contains(v, "5 writes") {
		t.Fatalf("writes:\n%s", v)
	}
	// The cursor went to the current write; Enter goes to that very write
	// (its moment), or to the event of a system call's write.
	if msgs := tlMsgs(p.Update(ptPress("enter"))); len(msgs) != 1 || msgs[0] != (RunCommand{Line: "goto #340 write 2 to 0x404028"}) {
		t.Fatalf("enter gave %v", msgs)
	}
	p.Update(ptPress("down"))
	if msgs := tlMsgs(p.Update(ptPress("enter"))); len(msgs) != 1 || msgs[0] != (RunCommand{Line: "goto #1200"}) {
		t.Fatalf("enter gave %v", msgs)
	}
	// A moment before any write: no mark.
	p.SetSnapshot(wtSnap(5, wtCounter, wtHead))
	if strings.Contains(wtPlain(p.View()), "=>") {
		t.Fatalf("a mark before the first write:\n%s", wtPlain(p.View()))
	}
	// At a write's own event, that write is marked, and the cursor follows.
	p.SetSnapshot(wtSnap(4096, wtCounter, wtHead))
	if msgs := tlMsgs(p.Update(ptPress("enter"))); len(msgs) != 1 || msgs[0] != (RunCommand{Line: "goto #4096 write 1 to 0x404028"}) {
		t.Fatalf("enter at #4096 gave %v", msgs)
	}
	// Enter on a header asks again, and shows loading meanwhile.
	p.Update(ptPress("home"))
	if got := wtRequests(tlMsgs(p.Update(ptPress("enter")))); len(got) != 1 || got[0].WatchID != 1 {
		t.Fatalf("enter on the header asked %v", got)
	}
	if !strings.Contains(wtPlain(p.View()), "loading…") {
		t.Fatalf("reload:\n%s", wtPlain(p.View()))
	}
	// A removed watchpoint goes, and its late history is ignored.
	p.SetSnapshot(wtSnap(4096, wtHead))
	p.Update(HistoryLoaded{WatchID: 1, Writes: wtWrites()})
	if v := wtPlain(p.View()); strings.Contains(v, "counter") {
		t.Fatalf("removed watchpoint still shown:\n%s", v)
	}
}

// wtPlain is a view as plain text.
func wtPlain(v string) string { return strings.Join(tlPlain(v), "\n") }

func TestWatchScrolls(t *testing.T) {
	p := NewWatch(tlCtx(t, false))
	p.SetSize(60, 6)
	p.SetSnapshot(wtSnap(50_000, wtCounter))
	p.Update(struct{}{})
	var ws []WriteItem
	for i := int64(0); i < 100_000; i++ {
		ws = append(ws, WriteItem{Event: i, Old: fmt.Sprint(i), New: fmt.Sprint(i + 1), Function: "loop"})
	}
	p.Update(HistoryLoaded{WatchID: 1, Writes: ws})
	v := wtPlain(p.View())
	if !strings.Contains(v, "=>") || !strings.Contains(v, "#50000") {
		t.Fatalf("the current write is not in view:\n%s", v)
	}
	p.Update(ptPress("end"))
	if v := wtPlain(p.View()); !strings.Contains(v, "#99999") {
		t.Fatalf("end:\n%s", v)
	}
	p.Update(ptPress("pgup"))
	if msgs := tlMsgs(p.Update(ptPress("enter"))); len(msgs) != 1 || msgs[0] != (RunCommand{Line: "goto #99994"}) {
		t.Fatalf("enter after page up gave %v", msgs)
	}
}

// wtPanes are Watch panes in a few states, for the size checks.
func wtPanes(t *testing.T) map[string]Pane {
	ctx := tlCtx(t, false)
	empty := NewWatch(ctx)
	loading := NewWatch(tlCtx(t, true))
	loading.SetSnapshot(wtSnap(10, wtCounter, wtHead))
	loading.Update(struct{}{})
	return map[string]Pane{"watch empty": empty, "watch loading": loading, "watch loaded": wtLoaded(ctx, 80, 20)}
}

// TestWatchCurrentWriteInEvent: the "=>" write is the last one at or
// before the current moment, compared by the moment's place among the
// writes of its event, not by the event number alone: a loop writing a
// variable five times with no system call between makes five writes of
// one event, and between the 3rd and the 4th the 3rd is current.
func TestWatchCurrentWriteInEvent(t *testing.T) {
	writes := []WriteItem{
		{Event: 12, Moment: "#12 write 1 to 0x404028", Hits: 1, Old: "0", New: "a", Function: "main"},
		{Event: 41, Moment: "#41", Old: "a", New: "sys", Syscall: true},
	}
	for k := 1; k <= 5; k++ {
		writes = append(writes, WriteItem{Event: 41, Moment: fmt.Sprintf("#41 write %d to 0x404028", k), Hits: k,
			Old: "x", New: fmt.Sprintf("loop%d", k), Function: "loop"})
	}
	writes = append(writes, WriteItem{Event: 50, Moment: "#50 write 1 to 0x404028", Hits: 1, Old: "loop5", New: "b", Function: "main"})
	tests := []struct {
		name  string
		event int64
		done  int    // writes of the event made (-1: not known)
		want  string // the New value of the marked write, "" for none
	}{
		{"between the 3rd and the 4th", 41, 3, "loop3"},
		{"at the 1st", 41, 1, "loop1"},
		{"after the last", 41, 5, "loop5"},
		{"at the event's start, after its system call", 41, 0, "sys"},
		{"in the event, place not known", 41, -1, "loop5"},
		{"at an event's start before its write", 50, 0, "loop5"},
		{"after an event's only write", 50, 1, "b"},
		{"between events", 30, 0, "a"},
		{"before every write", 5, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewWatch(tlCtx(t, false))
			p.SetSize(80, 20)
			w := wtCounter
			w.EventWrites = tt.done
			p.SetSnapshot(wtSnap(tt.event, w))
			p.Update(struct{}{})
			p.Update(HistoryLoaded{WatchID: 1, Writes: writes})
			var marked []string
			for _, l := range tlPlain(p.View()) {
				if strings.Contains(l, "=>") {
					marked = append(marked, l)
				}
			}
			switch {
			case tt.want == "" && len(marked) != 0:
				t.Fatalf("marked %q, want none", marked)
			case tt.want != "" && (len(marked) != 1 || !strings.Contains(marked[0], "-> "+tt.want+" ")):
				t.Fatalf("marked %q, want the write of %s\n%s", marked, tt.want, wtPlain(p.View()))
			}
		})
	}
}
