package ui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rewind-debugger/rewind/debugger"
)

// BenchmarkKeypress measures a key press and the re-render of the whole
// screen at 160x48 over a recording of 1M events, with the Timeline
// focused and loaded around its cursor.
//
//	go test -run XXX -bench Keypress -benchtime 200x ./ui/
func BenchmarkKeypress(b *testing.B) {
	trace := recordC(b, "../testdata/bench/syscalls.c", "1000000")
	m := openModel(b, trace, 160, 48, false)
	if m.snap.Total < 1_000_000 {
		b.Fatalf("%d events, want 1M", m.snap.Total)
	}
	m.focus = pTimeline
	m.resize()
	m.opts.SaveSession = true // as the UI runs: the session file is checked at each key
	drive(b, m, m.run("goto #500000"))
	drive(b, m, m.panes[pTimeline].Update(snapshotMsg{}))
	m.render()
	keys := []tea.KeyPressMsg{{Code: tea.KeyDown}, {Code: tea.KeyUp}}
	var worst time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		m.Update(keys[i%2])
		m.render()
		worst = max(worst, time.Since(start))
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
}

// BenchmarkOpen measures opening a 100k-event recording until the first
// screen is drawn: the session, the snapshot at the start, the render.
func BenchmarkOpen(b *testing.B) {
	trace := recordC(b, "../testdata/bench/syscalls.c", "100000")
	var worst time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		s, err := debugger.Open(trace, debugger.Options{})
		if err != nil {
			b.Fatal(err)
		}
		m, err := New(s, Options{})
		if err != nil {
			b.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
		drive(b, m, m.Init())
		if m.snap == nil || m.snap.Total < 100_000 {
			b.Fatalf("snapshot %+v", m.snap)
		}
		m.render()
		worst = max(worst, time.Since(start))
		s.Close()
	}
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}
