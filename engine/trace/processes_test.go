package trace

import (
	"slices"
	"testing"
)

// TestProcesses follows trees through event sequences as the recorder
// writes them: a fork whose child runs after the parent's call, a vfork
// whose child runs (and execs) before its parent's call returns, threads,
// a pid the kernel reused for a later process.
func TestProcesses(t *testing.T) {
	execOf := func(tid int32, exe string, args ...string) *Event {
		data := exe
		for _, a := range args {
			data += "\x00" + a
		}
		if len(args) == 0 {
			data += "\x00"
		}
		return &Event{Kind: KindExec, Tid: tid, Data: []byte(data)}
	}
	type want struct {
		pid, parent int32
		args        []string
		born, last  int64
		exited      bool
		status      int32
	}
	for _, tc := range []struct {
		name   string
		events []*Event
		want   []want
	}{
		{
			name: "fork",
			events: []*Event{
				execOf(10, "/bin/p", "p"),
				{Kind: KindSyscall, Tid: 10, Syscall: 57, NewTid: 11, Flags: FlagNewProcess},
				{Kind: KindSyscall, Tid: 11, Syscall: 39},
				{Kind: KindExit, Tid: 11, Status: 3 << 8},
				{Kind: KindExit, Tid: 10},
			},
			want: []want{{10, 0, []string{"p"}, 0, 4, true, 0}, {11, 10, []string{"p"}, 1, 3, true, 3 << 8}},
		},
		{
			name: "vfork child first",
			events: []*Event{
				execOf(10, "/bin/p", "p"),
				{Kind: KindSyscallEntry, Tid: 10, Syscall: 58},
				{Kind: KindSyscallEntry, Tid: 12, Syscall: 59},
				execOf(12, "/bin/echo", "echo", "hi"),
				{Kind: KindSyscallExit, Tid: 10, Syscall: 58, NewTid: 12, Flags: FlagNewProcess},
				{Kind: KindExit, Tid: 12},
			},
			want: []want{{10, 0, []string{"p"}, 0, 4, false, 0}, {12, 10, []string{"echo", "hi"}, 1, 5, true, 0}},
		},
		{
			name: "threads and a reused pid",
			events: []*Event{
				execOf(10, "/bin/p", "p"),
				{Kind: KindSyscall, Tid: 10, Syscall: 56, NewTid: 20},
				{Kind: KindSyscall, Tid: 20, Syscall: 57, NewTid: 30, Flags: FlagNewProcess},
				{Kind: KindThreadExit, Tid: 20},
				{Kind: KindExit, Tid: 30},
				{Kind: KindSyscall, Tid: 10, Syscall: 57, NewTid: 30, Flags: FlagNewProcess},
				{Kind: KindExit, Tid: 30, Status: 9},
			},
			want: []want{{10, 0, []string{"p"}, 0, 5, false, 0}, {30, 10, []string{"p"}, 2, 4, true, 0}, {30, 10, []string{"p"}, 5, 6, true, 9}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := NewProcesses()
			for i, e := range tc.events {
				ps.Observe(int64(i), e)
			}
			if len(ps.List) != len(tc.want) {
				t.Fatalf("%d processes, want %d: %+v", len(ps.List), len(tc.want), ps.List)
			}
			for i, w := range tc.want {
				p := ps.List[i]
				if p.Pid != w.pid || p.Parent != w.parent || !slices.Equal(p.Args, w.args) || p.Born != w.born ||
					p.Last != w.last || p.Exited != w.exited || p.Status != w.status {
					t.Errorf("process %d = %+v, want %+v", i, *p, w)
				}
			}
		})
	}
}
