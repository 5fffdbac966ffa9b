package record

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The tracer's side of the emulated ptrace (emuptrace.go): its wait4 and
// waitid, answered with its tracees' stops and ends, or left waiting
// outside the kernel until one comes.

// waitPoll is how often the recorder looks for signals that came for a
// tracer waiting outside the kernel: no stop tells it of them.
const waitPoll = 10 * time.Millisecond

// waitPollAt is when the recorder must next look at the waiting tracers
// (zero: none waits).
func (r *Recorder) waitPollAt() time.Time {
	for _, w := range r.threads {
		if w.pt.waiting {
			if r.ptPoll.IsZero() {
				r.ptPoll = time.Now().Add(waitPoll)
			}
			return r.ptPoll
		}
	}
	r.ptPoll = time.Time{}
	return r.ptPoll
}

// wakeAt is when the recorder's wait must end: the scheduling deadline,
// the next look at the waiting tracers or the next daemon question,
// whichever comes first.
func (r *Recorder) wakeAt() time.Time {
	at := r.deadlineAt()
	for _, t := range []time.Time{r.waitPollAt(), r.daemonRetry} {
		if at.IsZero() || !t.IsZero() && t.Before(at) {
			at = t
		}
	}
	return at
}

// pollWaits wakes the tracer threads waiting outside the kernel that have a
// signal pending they do not block: natively the signal interrupts their
// wait. Their wait then goes to the kernel (sigWake), where the signal,
// held by the recorder until then, is delivered at the call's end.
func (r *Recorder) pollWaits(now time.Time) error {
	if at := r.waitPollAt(); at.IsZero() || now.Before(at) {
		return nil
	}
	r.ptPoll = now.Add(waitPoll)
	woke := false
	for _, w := range r.threads {
		if !w.pt.waiting {
			continue
		}
		path := fmt.Sprintf("/proc/%d/task/%d/status", w.proc.pid, w.tid)
		var pending uint64
		for _, v := range ptrace.StatusFields(path, "SigPnd", "ShdPnd") {
			n, _ := strconv.ParseUint(v, 16, 64)
			pending |= n
		}
		if pending&^ptrace.BlockedMask(w.proc.pid, w.tid) == 0 {
			continue
		}
		w.pt.waiting, w.pt.sigWake = false, true
		r.parkReady(w, parkResume)
		woke = true
	}
	if !woke {
		return nil
	}
	return r.scheduleIdle()
}

// waitArgs decodes a wait4 or waitid: which child it waits for (-1: any),
// its options, and the register that holds them.
func waitArgs(c *syscalls.Call) (pid int, options uint64, reg int) {
	if c.Nr == unix.SYS_WAIT4 {
		pid = int(int32(c.Args[0]))
		if pid < -1 || pid == 0 {
			pid = -1 // a process group: any tracee, as an approximation
		}
		return pid, c.Args[2], trace.RDX
	}
	pid = -1
	switch c.Args[0] {
	case pPid:
		pid = int(int32(c.Args[1]))
	case pAll:
	default:
		pid = -2 // a group or a pidfd: left to the kernel
	}
	return pid, c.Args[3], trace.R10
}

// waitEntry answers the wait of a tracer that has a tracee's stop to
// report. With none yet, a wait that may block runs with WNOHANG: if no
// child answers either, the thread waits outside the kernel (waitExit).
func (r *Recorder) waitEntry(t *thread, c *syscalls.Call) (handled, done bool, err error) {
	pid, options, reg := waitArgs(c)
	if pid == -2 || t.pt.sigWake {
		t.pt.sigWake = false
		return false, false, nil
	}
	if ret, ok := r.reportExit(t, c, pid, options); ok {
		t.pt.emulated = true
		return true, false, r.skipCall(t, c, ret)
	}
	var match *thread
	any := false
	for _, x := range r.threads {
		if x.pt.tracer != t.proc.pid || (pid != -1 && x.tid != pid) {
			continue
		}
		any = true
		if x.pt.stopped && !x.pt.reported && (match == nil || x.tid < match.tid) {
			match = x
		}
	}
	if match != nil {
		ret := r.reportStop(t, c, match, options)
		t.pt.emulated = true
		return true, false, r.skipCall(t, c, ret)
	}
	if !any || options&unix.WNOHANG != 0 {
		return false, false, nil
	}
	regs := t.entry
	regs[reg] |= unix.WNOHANG
	if err := ptrace.SetRegs(t.tid, &regs); err != nil {
		return true, false, fmt.Errorf("wait of a tracer: %w", err)
	}
	t.pt.waitRetry = true
	return true, true, r.resume(t, 0)
}

// tracedExit is the end of a tracee that is not a child of its tracer:
// the kernel would report it to the tracer's wait, and knows nothing of
// the emulated tracer.
type tracedExit struct {
	tid    int
	status unix.WaitStatus
}

// ptraceDeath notes the death of x for its tracer's wait when the kernel
// does not report it there (x is not the tracer's child), and wakes the
// tracer if it waits.
func (r *Recorder) ptraceDeath(x *thread, st ptrace.Status) {
	tracer := r.procs[x.pt.tracer]
	if x.pt.tracer == 0 || tracer == nil || x.tid == x.proc.pid && x.proc.parent == tracer.pid {
		return
	}
	tracer.tracedExits = append(tracer.tracedExits, tracedExit{tid: x.tid, status: st.Raw})
	r.wakeWaiters(tracer.pid)
	r.kickWaits(tracer.pid)
}

// reportExit answers t's wait with the end of a tracee that is not its
// process's child, if one matches pid.
func (r *Recorder) reportExit(t *thread, c *syscalls.Call, pid int, options uint64) (int64, bool) {
	exits := t.proc.tracedExits
	for i, x := range exits {
		if pid != -1 && x.tid != pid {
			continue
		}
		m := t.proc.mem
		if c.Nr == unix.SYS_WAIT4 {
			if st := c.Args[1]; st != 0 {
				if n, err := m.WriteAt(binary.LittleEndian.AppendUint32(nil, uint32(x.status)), st); err != nil || n < 4 {
					return errno(unix.EFAULT), true
				}
			}
		} else if info := c.Args[2]; info != 0 {
			b := make([]byte, ptrace.SiginfoSize)
			binary.LittleEndian.PutUint32(b[0:], uint32(unix.SIGCHLD))
			code, status := cldExited, x.status.ExitStatus()
			if x.status.Signaled() {
				code, status = cldKilled, int(x.status.Signal())
			}
			binary.LittleEndian.PutUint32(b[8:], uint32(code))
			binary.LittleEndian.PutUint32(b[16:], uint32(x.tid))
			binary.LittleEndian.PutUint32(b[20:], uint32(unix.Getuid()))
			binary.LittleEndian.PutUint32(b[24:], uint32(status))
			if n, err := m.WriteAt(b, info); err != nil || n < len(b) {
				return errno(unix.EFAULT), true
			}
		}
		if options&unix.WNOWAIT == 0 {
			t.proc.tracedExits = append(exits[:i], exits[i+1:]...)
		}
		if c.Nr == unix.SYS_WAITID {
			return 0, true
		}
		return int64(x.tid), true
	}
	return 0, false
}

// reportStop writes x's stop where t's wait asked and returns its result.
func (r *Recorder) reportStop(t *thread, c *syscalls.Call, x *thread, options uint64) int64 {
	m := t.proc.mem
	if c.Nr == unix.SYS_WAIT4 {
		if st := c.Args[1]; st != 0 {
			b := binary.LittleEndian.AppendUint32(nil, uint32(x.pt.status))
			if n, err := m.WriteAt(b, st); err != nil || n < 4 {
				return errno(unix.EFAULT)
			}
		}
	} else if info := c.Args[2]; info != 0 {
		b := trappedSiginfo(x)
		if n, err := m.WriteAt(b, info); err != nil || n < len(b) {
			return errno(unix.EFAULT)
		}
	}
	if options&unix.WNOWAIT == 0 {
		x.pt.reported = true
	}
	if c.Nr == unix.SYS_WAITID {
		return 0
	}
	return int64(x.tid)
}

// emulatedExit handles the exit stop of a call the emulation changed at its
// entry. done says it dealt with the stop.
func (r *Recorder) emulatedExit(t *thread) (done bool, err error) {
	if t.pt.untraced {
		// The program's flags, as it passed them, in what is logged.
		t.pt.untraced = false
		var regs trace.Regs
		if err := ptrace.GetRegs(t.tid, &regs); err != nil {
			return true, err
		}
		regs[trace.RDI] = t.entry[trace.RDI]
		if err := ptrace.SetRegs(t.tid, &regs); err != nil {
			return true, fmt.Errorf("clone without CLONE_UNTRACED: %w", err)
		}
	}
	if t.pt.waitRetry {
		return true, r.waitExit(t)
	}
	return false, nil
}

// waitExit handles the exit of a wait run with WNOHANG for a tracer: a
// child's answer is logged as the call's, with the program's options back;
// none (or ECHILD, the kernel not knowing of tracees that are not its
// children) makes the thread wait outside the kernel, at the call's entry
// again, until a tracee stops or a child ends (wakeWaiters). That attempt
// is not an event: the call replay sees is the one that answers.
func (r *Recorder) waitExit(t *thread) error {
	t.pt.waitRetry = false
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return err
	}
	c := t.call()
	_, _, reg := waitArgs(&c)
	regs[reg] = t.entry[reg]
	if ret := int64(regs[trace.RAX]); ret != 0 && ret != errno(unix.ECHILD) {
		if err := ptrace.SetRegs(t.tid, &regs); err != nil {
			return fmt.Errorf("wait of a tracer: %w", err)
		}
		return r.finishSyscall(t)
	}
	again := t.entry
	again[trace.RIP] -= 2 // syscall and int $0x80 are both two bytes
	again[trace.RAX] = again[trace.OrigRAX]
	if err := ptrace.SetRegs(t.tid, &again); err != nil {
		return fmt.Errorf("wait of a tracer: %w", err)
	}
	t.inSyscall = false
	t.pt.waiting = true
	// Entered again, the wait is the same call to a tracer of the thread.
	t.pt.entryDone = true
	// A signal that stops the thread now is not at a point of the log:
	// it is held for its next system call (no registers match these).
	t.resumeRegs, t.haveRegs = trace.Regs{}, true
	t.state, t.park = parked, parkResume
	return r.scheduleIdle()
}
