package tracediff

import (
	"strings"
	"testing"
)

// synth builds a recording from a script: one "T:call" a step, T the
// thread's number (1 is the main thread), events numbered in order.
func synth(pid int32, script string) *recording {
	p := &process{pid: pid, exe: "/bin/prog", args: []string{"prog"}, byTid: map[int32]*thread{}}
	for i, step := range strings.Fields(script) {
		th, key, _ := strings.Cut(step, ":")
		tid := pid + int32(th[0]-'1')
		t := p.byTid[tid]
		if t == nil {
			t = &thread{tid: tid}
			p.byTid[tid] = t
			p.threads = append(p.threads, t)
		}
		t.items = append(t.items, item{ev: int64(i), key: key, name: key, text: key + "()"})
	}
	return &recording{procs: []*process{p}, events: int64(len(strings.Fields(script)))}
}

// TestCompare checks what comes first and how differences are counted.
func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		first      string // category of the first entry ("" none)
		firstB     int64  // its B event
		count      int
	}{
		{"same", "1:open 2:read 1:close", "1:open 2:read 1:close", "", 0, 0},
		{"a call only in B", "1:open 1:close", "1:open 1:read 1:close", CatOnlyB, 1, 1},
		{"a call only in A", "1:open 1:read 1:close", "1:open 1:close", CatOnlyA, -1, 1},
		{"threads in another order", "1:open 2:read 1:close 2:exit", "1:open 1:close 2:read 2:exit", CatScheduling, 1, 2},
		{"a thread only in B", "1:open 1:close", "1:open 2:read 1:close", CatOnlyB, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := compare(synth(100, tc.a), synth(200, tc.b))
			if len(es) != tc.count {
				t.Errorf("%d differences, want %d: %+v", len(es), tc.count, es)
			}
			if tc.first == "" {
				return
			}
			if len(es) == 0 {
				t.Fatal("no difference")
			}
			e := es[0]
			ev := int64(-1)
			if e.b != nil {
				ev = e.b.ev
			}
			if e.cat != tc.first || ev != tc.firstB {
				t.Errorf("first %s at B #%d (%s), want %s at #%d", e.cat, ev, e.what, tc.first, tc.firstB)
			}
		})
	}
}

// TestPairProcesses pairs by command line first, then by program, in
// order of creation.
func TestPairProcesses(t *testing.T) {
	mk := func(pid int32, args ...string) *process {
		return &process{pid: pid, exe: "/usr/bin/" + args[0], args: args}
	}
	a := []*process{mk(1, "sh", "-c", "x"), mk(2, "cat", "f"), mk(3, "cat", "g"), mk(4, "ls")}
	b := []*process{mk(11, "sh", "-c", "x"), mk(12, "cat", "g"), mk(13, "cat", "f"), mk(14, "wc")}
	got := pairProcesses(a, b)
	want := map[int32]int32{1: 11, 2: 13, 3: 12}
	for _, p := range a {
		q := got[p]
		switch {
		case want[p.pid] == 0 && q != nil:
			t.Errorf("%d paired with %d, want none", p.pid, q.pid)
		case want[p.pid] != 0 && (q == nil || q.pid != want[p.pid]):
			t.Errorf("%d paired with %v, want %d", p.pid, q, want[p.pid])
		}
	}
}
