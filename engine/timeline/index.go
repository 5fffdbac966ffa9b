package timeline

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// entry is what the timeline keeps of each event: enough to find threads,
// segments, signals and the ends of the recording without reading it again.
type entry struct {
	tid     int32
	kind    trace.Kind
	flags   uint32
	signo   int16
	syscall int16
	pc      uint64 // Regs.rip at the event (entry of a system call, trap…)
}

// Index is a compact table of the events of a trace.
type Index struct {
	events []entry
	// First is the first event reached by running code: the program's
	// first instruction is the start of its segment.
	First int64
	// Last is the moment the program's end begins: the exit_group, or the
	// delivery of the signal that killed it.
	Last  int64
	ended bool
	// Process is the recorded pid of the process indexed; Procs the
	// recording's process tree.
	Process int32
	Procs   []*trace.Process
	// status says how much of the trace is usable, and why not all of it.
	status trace.Status
	// execs are the process's exec events, in order.
	execs []int64
	// siginfo holds the recorded siginfo of the signal events a debugger
	// stops at, by event: few, and what $_siginfo shows there.
	siginfo map[int64][]byte
}

// stopSignals are the signals a debugger stops at by default (gdb's list).
var stopSignals = map[int16]bool{int16(unix.SIGSEGV): true, int16(unix.SIGBUS): true, int16(unix.SIGFPE): true,
	int16(unix.SIGILL): true, int16(unix.SIGABRT): true, int16(unix.SIGTRAP): true}

// BuildIndex reads a trace once and indexes the events of one process
// (its recorded pid; 0: the first process). Events of other processes keep
// their place, as entries of no kind: the numbering stays the recording's.
func BuildIndex(path string, pid int32) (*Index, error) {
	rd, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	idx := &Index{First: -1, Last: -1, siginfo: map[int64][]byte{}}
	lastSignal := int64(-1)
	procs := trace.NewProcesses()
	var focus *trace.Process
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		n := int64(len(idx.events))
		p := procs.Of(e.Tid) // before an exit forgets it
		procs.Observe(n, e)
		if p == nil {
			p = procs.Of(e.Tid) // the first event, or a vfork child's
		}
		if focus == nil && p != nil && (p.Pid == pid || pid == 0) {
			focus = p
		}
		if p == nil || p != focus {
			idx.events = append(idx.events, entry{tid: e.Tid})
			continue
		}
		idx.events = append(idx.events, entry{tid: e.Tid, kind: e.Kind, flags: e.Flags, signo: int16(e.Signo),
			syscall: int16(e.Syscall), pc: e.Regs[trace.RIP]})
		if idx.First < 0 && runsCode(e.Kind, e.Flags) {
			idx.First = n
		}
		switch {
		case e.Kind == trace.KindSignal:
			lastSignal = n
			if stopSignals[int16(e.Signo)] && len(e.Siginfo) > 0 {
				idx.siginfo[n] = e.Siginfo
			}
		case e.Kind == trace.KindSyscall && e.Syscall == unix.SYS_EXIT_GROUP && idx.Last < 0:
			idx.Last = n
		case e.Kind == trace.KindExit:
			idx.ended = true
			ws := unix.WaitStatus(e.Status)
			if ws.Signaled() && idx.Last < 0 && lastSignal >= 0 && idx.events[lastSignal].signo == int16(ws.Signal()) {
				idx.Last = lastSignal + 1
			}
			if idx.Last < 0 {
				// Killed from outside (SIGKILL): the end is before the
				// deaths of its threads.
				idx.Last = n
				for idx.Last > 0 && idx.events[idx.Last-1].kind == trace.KindThreadExit {
					idx.Last--
				}
			}
		case e.Kind == trace.KindEnd:
			idx.Last = n
		case e.Kind == trace.KindExec:
			idx.execs = append(idx.execs, n)
		}
	}
	idx.status = rd.Status()
	if focus == nil && pid != 0 {
		return nil, fmt.Errorf("no process %d in the recording (see `rewind ps`)", pid)
	}
	if focus != nil {
		idx.Process = focus.Pid
	}
	idx.Procs = procs.List
	if idx.First < 0 {
		if msg := idx.status.Message; msg != "" {
			return nil, fmt.Errorf("%s: nothing to replay: %s", path, msg)
		}
		return nil, errors.New("the trace has no execution to replay")
	}
	if idx.Last < 0 {
		idx.Last = int64(len(idx.events)) // truncated: the end is as far as it goes
	}
	return idx, nil
}

func runsCode(k trace.Kind, flags uint32) bool {
	switch k {
	case trace.KindSyscall, trace.KindSyscallEntry, trace.KindRdtsc, trace.KindCpuid, trace.KindRdrand, trace.KindPreempt:
		return true
	case trace.KindSignal:
		return flags&trace.FlagSyncSignal != 0
	}
	return false
}

// TraceStatus says how many events of the trace are usable (Total), and
// why not all of them.
func (x *Index) TraceStatus() trace.Status { return x.status }

// ExecsBefore returns how many times the process exec'd a program in the
// events before n: which program it runs there, as a generation number.
// Before its first instruction (a replay just launched, at the exec that
// starts the recording) it runs that first one's program already.
func (x *Index) ExecsBefore(n int64) int {
	i, _ := slices.BinarySearch(x.execs, max(n, x.First))
	return i
}

// Total is the number of events.
func (x *Index) Total() int64 { return int64(len(x.events)) }

// Ended reports whether the recording saw the program end.
func (x *Index) Ended() bool { return x.ended }

// TidAt is the thread of event n (or of the last event past the end).
func (x *Index) TidAt(n int64) int32 {
	if n >= int64(len(x.events)) {
		n = int64(len(x.events)) - 1
	}
	if n < 0 {
		return 0
	}
	return x.events[n].tid
}

// exitCall returns the address of the exit_group instruction of event n,
// when n is that call: the last instruction of its segment, reached once
// (reaching it is making the call, which ends the segment).
func (x *Index) exitCall(n int64) (uint64, bool) {
	if n < 0 || n >= int64(len(x.events)) {
		return 0, false
	}
	e := x.events[n]
	if e.kind != trace.KindSyscall || e.syscall != unix.SYS_EXIT_GROUP || e.pc < 2 {
		return 0, false
	}
	return e.pc - 2, true // syscall and int $0x80 are both two bytes
}

// NextStopSignal returns the first event at or after from that delivers a
// signal a debugger stops at, or -1.
func (x *Index) NextStopSignal(from int64) int64 {
	for n := from; n < int64(len(x.events)); n++ {
		if e := x.events[n]; e.kind == trace.KindSignal && stopSignals[e.signo] {
			return n
		}
	}
	return -1
}

// SignalBefore reports the signal of event n-1 if it is one to stop at.
func (x *Index) SignalBefore(n int64) (int, bool) {
	if n <= 0 || n > int64(len(x.events)) {
		return 0, false
	}
	e := x.events[n-1]
	if e.kind == trace.KindSignal && stopSignals[e.signo] {
		return int(e.signo), true
	}
	return 0, false
}

// Siginfo returns the siginfo recorded with event n, a signal a debugger
// stops at (nil: n is no such event).
func (x *Index) Siginfo(n int64) []byte { return x.siginfo[n] }

// nextCodeEvent returns the first event from n on that thread tid reaches
// by running code (-1: none).
func (x *Index) nextCodeEvent(n int64, tid int32) int64 {
	for i := max(n, 0); i < int64(len(x.events)); i++ {
		if e := x.events[i]; e.tid == tid && runsCode(e.kind, e.flags) {
			return i
		}
	}
	return -1
}

// prevCodeEvent returns the last event before n, of thread tid, that was
// reached by running code, or -1.
func (x *Index) prevCodeEvent(n int64, tid int32) int64 {
	for i := n - 1; i >= 0; i-- {
		e := x.events[i]
		if e.tid == tid && runsCode(e.kind, e.flags) {
			return i
		}
	}
	return -1
}
