package ptrace

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// StopKind classifies what a wait returned.
type StopKind int

// Stop kinds, after the ptrace(2) manual's vocabulary.
const (
	StopSyscall StopKind = iota + 1 // syscall-enter-stop or syscall-exit-stop
	StopSignal                      // signal-delivery-stop
	StopEvent                       // PTRACE_EVENT_* stop (clone, exec, exit, stop…)
	StopGroup                       // group-stop of a seized tracee
	Exited                          // the task exited
	Killed                          // the task was killed by a signal
)

// Status is a decoded wait status of one task.
type Status struct {
	Tid   int
	Kind  StopKind
	Sig   int // the stop signal, or the killing signal
	Event int // PTRACE_EVENT_* for StopEvent
	Code  int // exit code for Exited
	Raw   unix.WaitStatus
}

func (s Status) String() string {
	switch s.Kind {
	case StopSyscall:
		return fmt.Sprintf("tid %d syscall-stop", s.Tid)
	case StopSignal:
		return fmt.Sprintf("tid %d signal-stop %d", s.Tid, s.Sig)
	case StopEvent:
		return fmt.Sprintf("tid %d event-stop %d", s.Tid, s.Event)
	case StopGroup:
		return fmt.Sprintf("tid %d group-stop %d", s.Tid, s.Sig)
	case Exited:
		return fmt.Sprintf("tid %d exited %d", s.Tid, s.Code)
	case Killed:
		return fmt.Sprintf("tid %d killed by %d", s.Tid, s.Sig)
	}
	return fmt.Sprintf("tid %d status %#x", s.Tid, uint32(s.Raw))
}

// Decode classifies a raw wait status.
func Decode(tid int, ws unix.WaitStatus) Status {
	s := Status{Tid: tid, Raw: ws}
	switch {
	case ws.Exited():
		s.Kind, s.Code = Exited, ws.ExitStatus()
	case ws.Signaled():
		s.Kind, s.Sig = Killed, int(ws.Signal())
	case ws.Stopped():
		sig := int(ws.StopSignal())
		event := int(ws) >> 16 & 0xff
		switch {
		case sig == int(unix.SIGTRAP)|0x80:
			s.Kind, s.Sig = StopSyscall, int(unix.SIGTRAP)
		case event == unix.PTRACE_EVENT_STOP:
			s.Sig = sig
			if sig == int(unix.SIGSTOP) || sig == int(unix.SIGTSTP) || sig == int(unix.SIGTTIN) || sig == int(unix.SIGTTOU) {
				s.Kind = StopGroup
			} else {
				s.Kind, s.Event = StopEvent, event
			}
		case event != 0:
			s.Kind, s.Sig, s.Event = StopEvent, sig, event
		default:
			s.Kind, s.Sig = StopSignal, sig
		}
	}
	return s
}

// wNoThread is __WNOTHREAD: wait for the calling thread's own children and
// tracees only. Without it, wait4(-1) also reaps the tracees of the other
// threads of the process, so two sessions in one process (tests, a UI that
// replays while it records) would steal each other's stops.
const wNoThread = 0x20000000

// Wait waits for any task traced by the calling thread (pid -1) or one
// task, threads included. With nohang it returns ok=false when nothing is
// ready.
func Wait(pid int, nohang bool) (st Status, ok bool, err error) {
	var ws unix.WaitStatus
	opts := unix.WALL | wNoThread
	if nohang {
		opts |= unix.WNOHANG
	}
	for {
		tid, err := unix.Wait4(pid, &ws, opts, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Status{}, false, fmt.Errorf("wait4 %d: %w", pid, err)
		}
		if tid == 0 {
			return Status{}, false, nil
		}
		return Decode(tid, ws), true, nil
	}
}

// WaitNoReap waits for the next stop or the death of task tid like Wait,
// except that a death is observed without reaping the task: it stays a
// zombie. Reaping a traced child tells its real parent, with a SIGCHLD,
// which replay must not send where the recording did not have it. A stop
// other than a group-stop is left to the task's resumption to clear: a
// second Wait for the same task before it is resumed sees it again.
func WaitNoReap(tid int) (Status, error) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, tid, &info, unix.WEXITED|unix.WNOWAIT|unix.WALL|wNoThread, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Status{}, fmt.Errorf("waitid %d: %w", tid, err)
		}
		// The layout of siginfo for SIGCHLD: si_code at 8, si_status at 24.
		raw := (*[128]byte)(unsafe.Pointer(&info))
		code := int32(binary.LittleEndian.Uint32(raw[8:]))
		status := int(int32(binary.LittleEndian.Uint32(raw[24:])))
		var ws unix.WaitStatus
		switch code {
		case cldExited:
			ws = unix.WaitStatus(status&0xff) << 8
		case cldKilled:
			ws = unix.WaitStatus(status & 0x7f)
		case cldDumped:
			ws = unix.WaitStatus(status&0x7f | 0x80)
		case cldTrapped, cldStopped:
			// A stop, whose status siginfo holds whole (event bits
			// included): resuming the task clears it, so it need not
			// be taken with another wait, except a group-stop, which
			// a tracer may leave as it is.
			st := Decode(tid, unix.WaitStatus(status<<8|0x7f))
			if st.Kind == StopGroup {
				st, _, err = Wait(tid, false)
			}
			return st, err
		default:
			st, _, err := Wait(tid, false)
			return st, err
		}
		return Decode(tid, ws), nil
	}
}

// si_code values of SIGCHLD.
const (
	cldExited  = 1
	cldKilled  = 2
	cldDumped  = 3
	cldTrapped = 4
	cldStopped = 5
)
