package record

// Dispatch: each ptrace stop of a recorded thread (a system call, a
// signal, a clone, fork or exec, a death, an interrupt of ours) goes to
// the code that handles it.

import (
	"fmt"
	"os"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
	"golang.org/x/sys/unix"
)

// handle dispatches one stop; its errors say where the recording was.
func (r *Recorder) handle(st ptrace.Status) error {
	r.dog.stops.Add(1)
	if debug {
		t := r.threads[st.Tid]
		fmt.Fprintf(os.Stderr, "rec: %v (current %v)\n", st, t != nil && t.cpu().current == t)
	}
	if err := r.dispatch(st); err != nil {
		// Say where the recording was: the event being recorded, and
		// which thread stopped for what.
		return fmt.Errorf("at event %d (%v): %w", r.events(), st, err)
	}
	return nil
}

// dispatch handles one stop according to the thread and the kind of stop.
func (r *Recorder) dispatch(st ptrace.Status) error {
	t := r.threads[st.Tid]
	if t == nil {
		return r.handleStranger(st)
	}
	t.havePeek = false
	if t.mergeKick || t.merging {
		if done, err := r.mergeStopped(t, st); done || err != nil {
			return err
		}
	}
	if t.frame != nil {
		if done, err := r.frameStop(t, st); done || err != nil {
			return err
		}
	}
	if t == t.cpu().current && st.Kind != ptrace.Exited && st.Kind != ptrace.Killed {
		if err := r.flushHook(t); err != nil {
			return err
		}
	}
	switch st.Kind {
	case ptrace.Exited, ptrace.Killed:
		return r.onDeath(t, st)
	case ptrace.StopSyscall:
		// Under the recorder's filter, a syscall-entry stop (a thread
		// resumed with PTRACE_SYSCALL) is followed by the filter's
		// seccomp stop for the same call (onSeccompStop).
		t.seenEntry = r.filtered && !t.inSyscall
		return r.onSyscallStop(t)
	case ptrace.StopSignal:
		return r.onSignal(t, st.Sig)
	case ptrace.StopEvent:
		return r.onEvent(t, st)
	case ptrace.StopGroup:
		t.groupSig = st.Sig
		return r.onGroupStop(t)
	}
	return fmt.Errorf("unexpected %v", st)
}

// onSyscallStop handles the entry or exit of a system call: a
// syscall-stop, or the PTRACE_EVENT_SECCOMP stop that is the entry of a
// call under the recorder's filter.
func (r *Recorder) onSyscallStop(t *thread) error {
	if t.spin.active() {
		r.cancelSpin(t)
	}
	t.spin.heldBlocked = false // the mask may change in the call
	if t.birth {
		// A new thread's first syscall stop is the exit of the clone
		// that made it (reported from ret_from_fork): not an event.
		t.birth = false
		var regs trace.Regs
		if err := ptrace.GetRegs(t.tid, &regs); err != nil {
			return err
		}
		if bornAt(&regs) {
			t.resumeRegs, t.haveRegs = regs, true
			return r.resume(t, 0)
		}
	}
	if t.inSyscall {
		return r.onSyscallExit(t)
	}
	if untraced, err := r.hookCallEntry(t); untraced || err != nil {
		return err
	}
	return r.onSyscallEntry(t)
}

// handleStranger deals with a task we have not registered: a new thread or
// child whose first stop arrived before its parent's clone event.
func (r *Recorder) handleStranger(st ptrace.Status) error {
	if st.Kind == ptrace.Exited || st.Kind == ptrace.Killed {
		return nil
	}
	r.pending[st.Tid] = st
	return nil
}

// onEvent handles PTRACE_EVENT stops.
func (r *Recorder) onEvent(t *thread, st ptrace.Status) error {
	switch st.Event {
	case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
		msg, err := ptrace.EventMsg(t.tid)
		if err != nil {
			return err
		}
		child := int(msg)
		p := t.proc
		if isProcess(st.Event, child) {
			// A child process: recorded with the tree, scheduled with
			// every other thread. It inherits rdtsc trapping and CPUID
			// faulting from its parent.
			p = r.newProcess(child, t.proc.pid)
			t.forked = child
		}
		t.child = child
		nt := &thread{tid: child, proc: p, state: parked, park: parkResume, birth: true, tscSigsegv: t.tscSigsegv, tscTrapped: t.tscTrapped, ownFilter: t.ownFilter}
		r.threads[child] = nt
		// Its process's hook may no longer wait: another thread, or a
		// child sharing its memory, needs the queue.
		if err := r.runFlagsOn(t.cpu()); err != nil {
			return err
		}
		if err := r.followFork(t, nt, st.Event); err != nil {
			return err
		}
		if pst, ok := r.pending[child]; ok {
			delete(r.pending, child)
			if err := r.newThreadStop(nt, pst); err != nil {
				return err
			}
		} else {
			nt.state = running // until its first stop arrives
			nt.spin.starting = true
		}
		return r.let(t, 0)
	case unix.PTRACE_EVENT_EXEC:
		return r.onExecEvent(t)
	case unix.PTRACE_EVENT_SECCOMP:
		return r.onSeccompStop(t)
	case unix.PTRACE_EVENT_STOP:
		if r.ptraceContinued(t) {
			return nil // it stays in its emulated stop
		}
		if t.state == stopped {
			return r.onContinued(t)
		}
		if t.spin.starting {
			return r.newThreadStop(t, st)
		}
		return r.onInterrupt(t)
	}
	return r.let(t, 0)
}

// newThreadStop parks a new thread at its first stop until it is scheduled.
func (r *Recorder) newThreadStop(t *thread, st ptrace.Status) error {
	t.spin.starting = false
	if st.Kind == ptrace.Exited || st.Kind == ptrace.Killed {
		return r.onDeath(t, st)
	}
	if err := t.proc.openMem(); err != nil {
		return err
	}
	if err := r.setRunFlags(t.proc); err != nil {
		return err
	}
	if stopped, err := r.birthStop(t); stopped || err != nil {
		return err
	}
	t.state, t.park = parked, parkResume
	c := t.cpu()
	r.enqueue(t)
	// A parent waiting for its child (waitpid after fork) gives it the
	// CPU now rather than at the end of its slice.
	if err := r.yieldBlockedCall(c); err != nil {
		return err
	}
	return r.scheduleIfIdle(c)
}

// onDeath records the end of a thread or of the whole program.
func (r *Recorder) onDeath(t *thread, st ptrace.Status) error {
	c := t.cpu()
	wasCurrent := c.current == t
	r.ptraceDeath(t, st)
	t.state = gone
	r.dropReady(t)
	if r.chaos != nil {
		r.chaos.forget(t)
	}
	r.writeDone(t)
	delete(r.threads, t.tid)
	if t.tid == t.proc.pid {
		if err := r.onProcessExit(t, st); err != nil || r.done {
			return err
		}
	} else {
		if err := r.logSeccompKilled(t, st); err != nil {
			return err
		}
		e := &trace.Event{Kind: trace.KindThreadExit, Tid: int32(t.tid)}
		if t.robust != 0 {
			e.Mem = robustWords(t.proc.mem, t.robust)
		}
		if err := r.log(e); err != nil {
			return err
		}
	}
	if wasCurrent {
		c.current = nil
	}
	if t.tid == t.proc.pid {
		if err := r.queueGone(c); err != nil {
			return err
		}
	}
	// A death can make a waiting tracer ready (ptraceProcessGone).
	return r.scheduleIdle()
}

func (r *Recorder) dumpState() {
	for i, c := range r.cpus {
		cur := "nil"
		if t := c.current; t != nil {
			cur = fmt.Sprintf("%d(state %d inSys %v split %v spin %d)", t.tid, t.state, t.inSyscall, t.split, t.spin.phase)
		}
		var rd []int
		for _, t := range c.ready {
			rd = append(rd, t.tid)
		}
		fmt.Fprintf(os.Stderr, "   cpu %d: current %s ready %v\n", i, cur, rd)
	}
	fmt.Fprintf(os.Stderr, "   deadline %v\n", r.deadlineAt())
}
