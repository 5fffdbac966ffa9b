package replay_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/testprog"
	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

// watchcount builds testdata/bench/watchcount.c (a global counter written
// in a loop) with flags and returns it with the counter's address.
func watchcount(t *testing.T, flags ...string) (string, uint64) {
	t.Helper()
	prog := filepath.Join(t.TempDir(), "watchcount")
	src := filepath.Join("..", "..", "testdata", "bench", "watchcount.c")
	cc.Build(t, src, prog, append([]string{"-no-pie"}, flags...)...)
	return prog, testprog.Symbol(t, prog, "counter")
}

// toFirstWrite opens a replay of path and runs it to the first write to
// addr, with the watchpoint then removed.
func toFirstWrite(t *testing.T, path string, addr uint64) (*replay.Session, *replay.Stop) {
	t.Helper()
	s, err := replay.Open(path, replay.Options{Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.SetWatchpoints([]replay.Watchpoint{{Addr: addr, Len: 8}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Continue(0)
	if err != nil || st == nil || st.Kind != replay.StopWatchpoint {
		t.Fatalf("first write: %+v, %v", st, err)
	}
	if err := s.SetWatchpoints(nil); err != nil {
		t.Fatal(err)
	}
	return s, st
}

func readWord(t *testing.T, s *replay.Session, addr uint64) uint64 {
	t.Helper()
	b, err := s.ReadMem(addr, 8)
	if err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint64(b)
}

// TestCounterStopsWhereBreakpointDoes: the n-th arrival found by a counter
// (in the program) is the state the n-th breakpoint hit gives, the
// counter counts every arrival of the run, and the replay goes on to the
// end of the recording as recorded once the counter is closed.
func TestCounterStopsWhereBreakpointDoes(t *testing.T) {
	for _, opt := range []string{"-O0", "-O1", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			const writes, stopAt = 20000, 1234
			prog, addr := watchcount(t, opt)
			path, printed, _ := recordProg(t, prog, "20000", "0")

			// The sites near the write, counted together: the busiest is
			// in the loop.
			s0, first := toFirstWrite(t, path, addr)
			sites := s0.CounterSites([]uint64{first.PC}, 4)
			if len(sites) == 0 {
				t.Fatalf("no counter site near %#x", first.PC)
			}
			if err := s0.OpenCounters(sites); err != nil {
				t.Fatal(err)
			}
			if _, err := s0.Continue(s0.Next() + 1); err != nil {
				t.Fatal(err)
			}
			site, total := uint64(0), 0
			for _, a := range sites {
				if n, err := s0.CounterValue(a); err != nil {
					t.Fatal(err)
				} else if n > total {
					site, total = a, n
				}
			}
			if total < writes-1 || total > 2*writes {
				t.Fatalf("arrivals at the sites %#x: busiest %d; want about %d", sites, total, writes)
			}

			// By breakpoint: the site's stopAt-th arrival after the first write.
			s, _ := toFirstWrite(t, path, addr)
			s.SetBreakpoints([]uint64{site})
			var want trace.Regs
			for i := 1; i <= stopAt; i++ {
				st, err := s.Continue(0)
				if err != nil || st == nil || st.Kind != replay.StopBreakpoint || st.PC != site {
					t.Fatalf("arrival %d at %#x: %+v, %v", i, site, st, err)
				}
			}
			want, _ = s.Regs(first.Tid)
			wantCount := readWord(t, s, addr)

			// By counter, in a second replay.
			s2, _ := toFirstWrite(t, path, addr)
			seg := s2.Next()
			if err := s2.OpenCounters([]uint64{site}); err != nil {
				t.Fatal(err)
			}
			if err := s2.SetCounterStop(site, stopAt); err != nil {
				t.Fatal(err)
			}
			st, err := s2.Continue(0)
			if err != nil || st == nil || st.Kind != replay.StopCounter || st.PC != site || s2.Next() != seg {
				t.Fatalf("counter stop: %+v, %v (event %d, want %d)", st, err, s2.Next(), seg)
			}
			got, _ := s2.Regs(first.Tid)
			if got != want || readWord(t, s2, addr) != wantCount {
				t.Fatalf("at the counter's stop: counter %d, regs %v; at the breakpoint's: counter %d, regs %v",
					readWord(t, s2, addr), got, wantCount, want)
			}
			if n, err := s2.CounterValue(site); err != nil || n != stopAt-1 {
				t.Fatalf("counter at its stop: %d, %v; want %d (the arrival that stopped is pending)", n, err, stopAt-1)
			}
			// On to the end of the segment: every arrival counted, the
			// counter closed at the event, the rest replays as recorded.
			if _, err := s2.Continue(seg + 1); err != nil {
				t.Fatal(err)
			}
			if n, err := s2.CounterValue(site); err != nil || n != total {
				t.Fatalf("arrivals in the run: %d, %v; want %d as when counted with the others", n, err, total)
			}
			if _, err := s2.Continue(0); !errors.Is(err, io.EOF) {
				t.Fatalf("replay after the counter: %v", err)
			}
			if printed == "" {
				t.Fatal("the program printed nothing")
			}
		})
	}
}

// TestCounterSitesOnlyInCode: a seed that is not in the program's code (a
// word of the stack taken for a return address) gives no site: a counter
// there would patch the stack.
func TestCounterSitesOnlyInCode(t *testing.T) {
	prog, addr := watchcount(t, "-O1")
	path, _, _ := recordProg(t, prog, "2000", "0")
	s, first := toFirstWrite(t, path, addr)
	regs, err := s.Regs(first.Tid)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{regs[trace.RSP], regs[trace.RSP] - 64, addr} {
		if sites := s.CounterSites([]uint64{seed}, 4); len(sites) != 0 {
			t.Errorf("sites %#x from %#x, outside the code", sites, seed)
		}
	}
	if sites := s.CounterSites([]uint64{first.PC}, 4); len(sites) == 0 {
		t.Errorf("no site from the write at %#x", first.PC)
	}
}

// TestCounterRunEnteredInTheMiddle: a counter whose patch covers two
// instructions, in a loop entered through the second (testdata/rotated.c):
// every entry lands in the patch's jump and is sent on through the
// trampoline's copy, the counter counts exactly the arrivals at its site,
// and the replay goes on to the end as recorded.
func TestCounterRunEnteredInTheMiddle(t *testing.T) {
	const calls, n = 5000, 3
	prog := filepath.Join(t.TempDir(), "rotated")
	src := filepath.Join("..", "..", "testdata", "rotated.c")
	cc.Build(t, src, prog, "-no-pie")
	walk, top := testprog.Symbol(t, prog, "walk"), testprog.Symbol(t, prog, "walk_top")
	path, printed, _ := recordProg(t, prog, fmt.Sprint(calls), fmt.Sprint(n))
	if want := fmt.Sprintf("walking\ntotal %d\n", calls*n*(n+1)/2); printed != want {
		t.Fatalf("the program printed %q, want %q", printed, want)
	}

	s, err := replay.Open(path, replay.Options{Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetBreakpoints([]uint64{walk})
	if st, err := s.Continue(0); err != nil || st == nil || st.Kind != replay.StopBreakpoint || st.PC != walk {
		t.Fatalf("to walk's first call: %+v, %v", st, err)
	}
	s.SetBreakpoints(nil)
	if err := s.OpenCounters([]uint64{top}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Continue(s.Next() + 1); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CounterValue(top); err != nil || got != calls*n {
		t.Fatalf("arrivals at walk_top: %d, %v; want %d", got, err, calls*n)
	}
	if _, err := s.Continue(0); !errors.Is(err, io.EOF) {
		t.Fatalf("replay after the counter: %v", err)
	}
}
