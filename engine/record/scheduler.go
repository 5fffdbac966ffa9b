package record

// The scheduler: the threads of a run queue take turns, one at a time
// (process trees side by side, sidebyside.go); a turn ends at a blocking
// call, a yield, or the end of its slice (a deadline, spin.go), and the
// next thread is the oldest ready one, or a random one in chaos mode
// (chaos.go).

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// deadlineAt returns when the recorder must step in: a run queue's current
// thread has used its slice while others wait, or holds a signal back.
// Zero: never.
func (r *Recorder) deadlineAt() time.Time {
	dl := r.mergeRetry
	for _, c := range r.cpus {
		t := c.current
		if t == nil || t.state == gone {
			continue
		}
		if d := r.busyDeadline(t); !d.IsZero() && (dl.IsZero() || d.Before(dl)) {
			dl = d
		}
	}
	return dl
}

func (r *Recorder) dropReady(t *thread) {
	c := t.cpu()
	for i, x := range c.ready {
		if x == t {
			c.ready = append(c.ready[:i], c.ready[i+1:]...)
			return
		}
	}
}

// resume lets t run until its next stop, delivering sig.
func (r *Recorder) resume(t *thread, sig int) error {
	if r.pausing && sig == 0 {
		t.state, t.park = parked, parkResume
		return nil
	}
	t.state = running
	return r.let(t, sig)
}

// let resumes t until its next stop, delivering sig, without changing
// its scheduling state. Under the recorder's seccomp filter a thread out
// of a system call runs with PTRACE_CONT (its next call stops it as a
// PTRACE_EVENT_SECCOMP stop); one in a call, or a new thread whose first
// stop is the end of the clone that made it, with PTRACE_SYSCALL, which
// stops it at the call's exit. So does a thread under a filter of the
// program's own, whose verdicts (an errno, a kill) the kernel gives
// before any seccomp stop: the recorder sees its calls at their
// syscall-entry stops, as without its filter.
func (r *Recorder) let(t *thread, sig int) error {
	if t.birth && r.filtered && !t.ownFilter && t.pt.tracer == 0 && sig == 0 {
		// A new thread stands where its clone returns, registers and
		// all: they are what its clone's exit stop showed, one stop
		// (of each fork) later.
		var regs trace.Regs
		if ptrace.GetRegs(t.tid, &regs) == nil && bornAt(&regs) {
			t.birth = false
			t.resumeRegs, t.haveRegs = regs, true
		}
	}
	if r.filtered && !t.inSyscall && !t.birth && !t.ownFilter {
		return ptrace.Cont(t.tid, sig)
	}
	return ptrace.Syscall(t.tid, sig)
}

// bornAt says whether regs are those of a thread a clone, clone3, fork or
// vfork just made: the call's number, and 0 its result.
func bornAt(regs *trace.Regs) bool {
	switch regs[trace.OrigRAX] {
	case unix.SYS_CLONE, unix.SYS_CLONE3, unix.SYS_FORK, unix.SYS_VFORK:
		return regs[trace.RAX] == 0
	}
	return false
}

// park stops considering t as running; it will be resumed when scheduled.
func (r *Recorder) parkReady(t *thread, k parkKind) {
	t.state, t.park = parked, k
	r.enqueue(t)
}

// scheduleIfIdle gives run queue c to its next ready thread when none
// runs there.
func (r *Recorder) scheduleIfIdle(c *cpu) error {
	if r.pausing {
		return nil
	}
	if t := c.current; t != nil && t.state != gone && t.state != inKernel && t.state != parked && t.state != stopped {
		return nil
	}
	if len(c.ready) == 0 {
		c.current = nil
		return nil
	}
	return r.switchTo(r.takeNext(c))
}

// switchTo makes t the running thread of its run queue.
func (r *Recorder) switchTo(t *thread) error {
	c := t.cpu()
	c.current = t
	t.sliceStart = time.Now()
	t.spin.slice = r.newSlice()
	if prev := c.lastProc; prev != t.proc || t.proc.syncDue {
		// Memory another process of the tree shares with this one may
		// have changed since it last ran: what it will read is logged, so
		// that a replay of this process alone (-p) sees it.
		c.lastProc = t.proc
		if (prev != nil || t.proc.syncDue) && r.shared.tracking(t.proc.pid) {
			t.proc.syncDue = false
			if err := r.syncShared(t, r.procOf(t), nil); err != nil {
				return err
			}
		}
	}
	switch t.park {
	case parkBlockedExit:
		t.park = parkResume
		return r.finishSyscall(t)
	case parkHeldEntry:
		t.park = parkResume
		c := t.effective(t.call())
		return r.startCall(t, &c)
	case parkSaved:
		// Its stop waited for this turn (sidebyside.go): handled now.
		st := t.saved
		t.park, t.saved, t.state = parkResume, ptrace.Status{}, running
		return r.dispatch(st)
	case parkEntry:
		t.park, t.state, t.havePeek = parkResume, running, false
		return r.onSyscallEntry(t)
	}
	return r.resumeLogged(t)
}

// resumeLogged resumes a thread whose last event is logged, first delivering
// a held signal if there is one to deliver here.
func (r *Recorder) resumeLogged(t *thread) error {
	if held, err := r.resumeEntry(t); held || err != nil {
		return err
	}
	if stopped, err := r.resumeExit(t); stopped || err != nil {
		return err
	}
	if !t.haveRegs {
		if err := ptrace.GetRegs(t.tid, &t.resumeRegs); err != nil {
			return err
		}
		t.haveRegs = true
	}
	if err := r.injectHeld(t); err != nil {
		return err
	}
	return r.resume(t, t.takeResumeSig())
}

// yield ends t's turn at a point where its last event is logged, if others
// wait and its slice is used up. It reports whether it switched.
func (r *Recorder) yield(t *thread) (bool, error) {
	c := t.cpu()
	if len(c.ready) == 0 || time.Since(t.sliceStart) < r.sliceOf(t) || r.inHookNow(t) {
		return false, nil
	}
	r.parkReady(t, parkResume)
	return true, r.switchTo(r.takeNext(c))
}
