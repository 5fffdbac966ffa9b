package ui

import (
	"strings"
	"testing"
)

// TestWatchPaneMarksWriteInEvent: in a recording whose writes to a
// variable share one event (cursor.c: calloc's, 15 in moveto's loops,
// free's, no system call between), the Watch pane marks the write the
// current moment follows, not the event's last one.
func TestWatchPaneMarksWriteInEvent(t *testing.T) {
	trace := recordC(t, "../testdata/source/cursor.c")
	m := openModel(t, trace, 160, 50, true)
	for _, line := range []string{"break moveto", "continue", "continue", "delete", "watch -l pCur->eState"} {
		drive(t, m, m.run(line))
	}
	m.focusPane(pWatch)
	m.zoom = true
	m.resize()
	tests := []struct {
		line string
		want string // the marked write's change
	}{
		{"", `4 '\004' -> 5 '\005'`}, // moveto's second call: its first write is next
		{"continue", `5 '\005' -> 6 '\006'`},
		{"next", `5 '\005' -> 6 '\006'`},
		{"continue", `6 '\006' -> 7 '\a'`},
		{"reverse-continue", `5 '\005' -> 6 '\006'`},
	}
	for _, tt := range tests {
		if tt.line != "" {
			drive(t, m, m.run(tt.line))
		}
		var marked []string
		for _, l := range strings.Split(m.render(), "\n") {
			if strings.Contains(l, "=>") {
				marked = append(marked, l)
			}
		}
		if len(marked) != 1 || !strings.Contains(marked[0], tt.want) {
			t.Errorf("after %q at %s: marked %q, want the write %s\n%s", tt.line, m.snap.Moment, marked, tt.want, m.render())
		}
	}
}
