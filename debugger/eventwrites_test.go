package debugger

import "testing"

// TestEventWrites: a snapshot places the current moment among the writes
// of a watchpoint's history that share its event. cursor.c makes all 17
// writes to pCur->eState in one event (#41, no system call between:
// calloc's, 15 in moveto's loops, free's), so the event number alone
// cannot tell the current write; after each motion the snapshot's count
// is the hits of the last write at or before it.
func TestEventWrites(t *testing.T) {
	// In moveto's second call: calloc's write and 5 of the loop made.
	s := openCursor(t, "break moveto", "continue", "continue", "delete", "watch -l pCur->eState")
	hist := mustRun(t, s, "history watchpoint 2").Value.([]HistoryWrite)
	moment := func(hits int) string {
		for _, h := range hist {
			if h.Hits == hits {
				return h.Moment
			}
		}
		t.Fatalf("no write with hits %d in %v", hits, hist)
		return ""
	}
	tests := []struct {
		line string
		want int
	}{
		{"", 6},
		{"continue", 7},
		{"next", 7},
		{"continue", 8},
		{"reverse-continue", 7},
		{"reverse-next", 6},
		{"goto " + moment(3), 3},
		{"stepi", 3},
		{"goto " + moment(12), 12},
		{"goto #41", 0},
	}
	for _, tt := range tests {
		if tt.line != "" {
			mustRun(t, s, tt.line)
		}
		ws := s.Snapshot().Watches
		if len(ws) != 1 || ws[0].EventWrites != tt.want {
			t.Errorf("after %q at %s: %+v, want %d writes of the event made", tt.line, s.tl.Now(), ws, tt.want)
		}
	}
}
