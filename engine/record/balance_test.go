package record

import (
	"os"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

func TestBalancerPlan(t *testing.T) {
	// proc is one watched process: its CPU, and what it did in the last
	// period: "idle", "busy" (computed), "crowded" (computed and waited).
	type proc struct {
		cpu   int
		state string
	}
	tests := []struct {
		name   string
		others []int
		procs  map[int]proc
		want   []move
	}{
		{"one crowded stays with the tracer", []int{1}, map[int]proc{10: {0, "crowded"}, 11: {0, "idle"}}, nil},
		{"two crowded: the younger moves", []int{1}, map[int]proc{10: {0, "crowded"}, 11: {0, "crowded"}}, []move{{11, 1}}},
		{"two taking turns stay", []int{1}, map[int]proc{10: {0, "busy"}, 11: {0, "busy"}}, nil},
		{"balanced already", []int{1}, map[int]proc{10: {0, "crowded"}, 11: {0, "crowded"}, 12: {1, "busy"}}, nil},
		{"an idle process elsewhere does not count", []int{1}, map[int]proc{10: {0, "crowded"}, 11: {0, "crowded"}, 12: {1, "idle"}}, []move{{11, 1}}},
		{"three crowded over three CPUs", []int{1, 2}, map[int]proc{10: {0, "crowded"}, 11: {0, "crowded"}, 12: {0, "crowded"}}, []move{{11, 1}, {12, 2}}},
		{"four crowded over two CPUs", []int{1}, map[int]proc{10: {0, "crowded"}, 11: {0, "crowded"}, 12: {0, "crowded"}, 13: {0, "crowded"}}, []move{{11, 1}, {12, 1}}},
		{"to the least busy CPU", []int{1, 2}, map[int]proc{10: {0, "crowded"}, 11: {0, "crowded"}, 12: {0, "crowded"}, 13: {1, "busy"}}, []move{{11, 2}}},
		{"nothing busy", []int{1}, map[int]proc{10: {0, "idle"}, 11: {0, "idle"}}, nil},
		{"a process on CPUs of its choice stays", []int{1}, map[int]proc{10: {0, "crowded"}, 11: {-1, "crowded"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &balancer{prog: 0, others: tt.others, procs: map[int]*balanced{}}
			for pid, p := range tt.procs {
				b.procs[pid] = &balanced{cpu: p.cpu, busy: p.state != "idle", crowded: p.state == "crowded"}
			}
			if got := b.plan(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMoveThreadsOfChoice: a process the balancer found on CPUs of its
// choice (-1) is never moved, nor is a thread bound elsewhere.
func TestMoveThreadsOfChoice(t *testing.T) {
	var before, after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	moveThreads(os.Getpid(), -1, 0)
	moveThreads(os.Getpid(), 1023, 0) // no thread is bound to CPU 1023 alone
	if err := unix.SchedGetaffinity(0, &after); err != nil || after != before {
		t.Errorf("affinity %v, then %v (%v): want it left alone", before, after, err)
	}
}
