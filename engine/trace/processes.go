package trace

import (
	"errors"
	"io"
	"strings"
)

// Process is one process of a recorded tree, as the events tell it.
type Process struct {
	Pid    int32
	Parent int32 // 0 for the first process
	// Args is the argv of the process's last exec; a forked child that did
	// not exec has its parent's.
	Args []string
	// Born is the event that created it (the parent's fork, or 0 for the
	// first process); Exec the event of its last exec (-1: none of its own).
	Born, Exec int64
	// Last is its last event (its exit when it has one).
	Last int64
	// Exited is set when the recording holds its end; Status is then its
	// wait status.
	Exited bool
	Status int32
	// Tids are every thread it had, the first being the pid.
	Tids []int32
}

// Processes follows the process tree through the events of a trace: feed
// every event in order to Observe.
type Processes struct {
	// List holds every process seen, in order of birth. A pid the kernel
	// reused for a later process gets a second entry.
	List []*Process
	// live maps each thread now alive to its process.
	live map[int32]*Process
}

// NewProcesses returns an empty tracker.
func NewProcesses() *Processes { return &Processes{live: map[int32]*Process{}} }

// Of returns the process thread tid belongs to at the current point of the
// trace, or nil.
func (ps *Processes) Of(tid int32) *Process { return ps.live[tid] }

// Observe takes event i into account.
func (ps *Processes) Observe(i int64, e *Event) {
	p := ps.live[e.Tid]
	if p == nil && len(ps.List) == 0 {
		p = &Process{Pid: e.Tid, Exec: -1, Tids: []int32{e.Tid}}
		ps.List = append(ps.List, p)
		ps.live[e.Tid] = p
	}
	if p == nil {
		return
	}
	p.Last = i
	switch e.Kind {
	case KindExec:
		p.Exec = i
		if len(e.Data) > 0 {
			p.Args = strings.Split(string(e.Data), "\x00")
		}
	case KindSyscall, KindSyscallExit:
		if e.NewTid <= 0 {
			break
		}
		if e.Flags&FlagNewProcess != 0 {
			c := &Process{Pid: e.NewTid, Parent: p.Pid, Args: p.Args, Born: i, Exec: -1, Last: i, Tids: []int32{e.NewTid}}
			ps.List = append(ps.List, c)
			ps.live[e.NewTid] = c
		} else {
			p.Tids = append(p.Tids, e.NewTid)
			ps.live[e.NewTid] = p
		}
	case KindThreadExit:
		delete(ps.live, e.Tid)
	case KindExit:
		p.Exited, p.Status = true, e.Status
		for _, tid := range p.Tids {
			if ps.live[tid] == p {
				delete(ps.live, tid)
			}
		}
	}
}

// ReadProcesses reads a whole trace and returns its processes. A trace cut
// short gives what it holds.
func ReadProcesses(path string) ([]*Process, error) {
	rd, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	ps := NewProcesses()
	for i := int64(0); ; i++ {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return ps.List, nil
		}
		if err != nil {
			return ps.List, err
		}
		ps.Observe(i, e)
	}
}
