package trace

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
)

// Process is one process of a recorded tree, as the events tell it.
type Process struct {
	Pid    int32
	Parent int32 // 0 for the first process
	// Exe and Args are the executable and argv of the process's last exec;
	// a forked child that did not exec has its parent's.
	Exe  string
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
	// vforkEntry is each thread's last blocking entry: a vfork's.
	vforkEntry map[int32]int64
	// unborn are the processes seen before the call that made them
	// returned (vfork children): that call fills in their parent.
	unborn map[int32]*Process
}

// NewProcesses returns an empty tracker.
func NewProcesses() *Processes {
	return &Processes{live: map[int32]*Process{}, vforkEntry: map[int32]int64{}, unborn: map[int32]*Process{}}
}

// Of returns the process thread tid belongs to at the current point of the
// trace, or nil.
func (ps *Processes) Of(tid int32) *Process { return ps.live[tid] }

// Observe takes event i into account.
func (ps *Processes) Observe(i int64, e *Event) {
	p := ps.live[e.Tid]
	if e.Kind == KindSnapshot && len(ps.List) == 0 {
		ps.observeSnapshot(e)
		return
	}
	if p == nil && len(ps.List) == 0 {
		p = &Process{Pid: e.Tid, Exec: -1, Tids: []int32{e.Tid}}
		ps.List = append(ps.List, p)
		ps.live[e.Tid] = p
	}
	if p == nil {
		// A vfork child runs, and may exec, before the exit of its
		// parent's vfork names it: its parent is filled in then.
		p = &Process{Pid: e.Tid, Born: i, Exec: -1, Tids: []int32{e.Tid}}
		ps.List = append(ps.List, p)
		ps.live[e.Tid] = p
		ps.unborn[e.Tid] = p
	}
	p.Last = i
	switch e.Kind {
	case KindExec:
		p.Exec = i
		if exe, args, ok := ExecInfo(e); ok {
			p.Exe, p.Args = exe, args
		}
	case KindSyscallEntry:
		ps.vforkEntry[e.Tid] = i
	case KindSyscall, KindSyscallExit:
		if e.NewTid <= 0 {
			break
		}
		if e.Flags&FlagNewProcess != 0 {
			if c := ps.unborn[e.NewTid]; c != nil {
				delete(ps.unborn, e.NewTid)
				// The vfork child seen first (above): its birth is the
				// parent's vfork entry, before its first event.
				c.Parent, c.Born = p.Pid, ps.vforkEntry[e.Tid]
				if c.Args == nil {
					c.Exe, c.Args = p.Exe, p.Args
				}
				break
			}
			c := &Process{Pid: e.NewTid, Parent: p.Pid, Exe: p.Exe, Args: p.Args, Born: i, Exec: -1, Last: i, Tids: []int32{e.NewTid}}
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

// observeSnapshot starts the tree at a snapshot: the process rewind attached
// to, with every thread it had.
func (ps *Processes) observeSnapshot(e *Event) {
	p := &Process{Pid: e.Tid, Exec: 0}
	if snap, err := DecodeSnapshot(e); err == nil {
		p.Pid, p.Exe, p.Args = int32(snap.Pid), snap.Exe, snap.Cmdline
		for _, t := range snap.Threads {
			p.Tids = append(p.Tids, int32(t.Tid))
		}
	}
	if len(p.Tids) == 0 {
		p.Tids = []int32{e.Tid}
	}
	ps.List = append(ps.List, p)
	for _, tid := range p.Tids {
		ps.live[tid] = p
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

// ExecInfo decodes what an exec event says of the new image: the
// executable's path and its argv (traces before process trees say nothing).
func ExecInfo(e *Event) (exe string, args []string, ok bool) {
	if e.Kind != KindExec || len(e.Data) == 0 {
		return "", nil, false
	}
	exe, rest, _ := strings.Cut(string(e.Data), "\x00")
	if rest != "" {
		args = strings.Split(rest, "\x00")
	}
	return exe, args, true
}

// Crashed tells whether a process died of a signal that means a bug (a
// fault, an abort or a trap), the process a debugger opens on first.
func (p *Process) Crashed() bool {
	if !p.Exited || p.Status&0x7f == 0 || p.Status&0x7f == 0x7f {
		return false
	}
	switch p.Status & 0x7f {
	case 4, 5, 6, 7, 8, 11, 31: // SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS
		return true
	}
	return false
}

// DefaultProcess picks the process a debugger opens on: the first that
// crashed, else the last that exec'd the recorded program (the one the user
// named), else the first.
func DefaultProcess(procs []*Process, program string) *Process {
	if len(procs) == 0 {
		return nil
	}
	if real, err := filepath.EvalSymlinks(program); err == nil {
		program = real // /proc/PID/exe names the file itself
	}
	for _, p := range procs {
		if p.Crashed() {
			return p
		}
	}
	for i := len(procs) - 1; i >= 0; i-- {
		if p := procs[i]; p.Exec >= 0 && p.Exe == program {
			return p
		}
	}
	return procs[0]
}
