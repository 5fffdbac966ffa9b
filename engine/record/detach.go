package record

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/attach"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The end of a recording of a process rewind attached to, or of daemons
// the recorded program left running (daemon.go): the process must go on as
// if rewind had never been there. Every thread is brought to a
// stop where its registers say what it will do next (stopAll), what
// the recorder changed is put back (undo), the signals it held are queued
// again, and the threads are let go.

// detach releases every process of the tree, each thread at its next
// instruction, unharmed.
func (r *Recorder) detach() error {
	held, err := r.stopAll(false)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	var tids []int
	for _, t := range r.threads {
		if t.state != gone {
			tids = append(tids, t.tid)
		}
	}
	errs = append(errs, r.undoAttach(tids, held))
	for _, t := range r.threads {
		if t.state == gone {
			continue
		}
		infos := held[t.tid]
		for _, h := range t.held {
			infos = append(infos, h.info)
		}
		for _, info := range infos {
			if err := ptrace.Requeue(t.proc.pid, t.tid, t.proc.mem, info); err != nil {
				errs = append(errs, err)
			}
		}
		if r.filtered {
			// Stopped before it runs anything untraced: the shepherd
			// takes it over (ptrace/shepherd.go).
			if err := unix.Tgkill(t.proc.pid, t.tid, unix.SIGSTOP); err != nil && !errors.Is(err, unix.ESRCH) {
				errs = append(errs, err)
			}
		}
		if err := ptrace.Detach(t.tid, 0); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, err)
		}
		t.state = gone
	}
	if r.filtered {
		var pids []int
		for pid := range r.procs {
			pids = append(pids, pid)
		}
		if len(pids) > 0 {
			var err error
			if r.shepherd, err = ptrace.StartShepherd(pids); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if r.att != nil && r.att.guard != nil {
		r.att.guard.Release()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("detach from %d: %w", r.pid, err)
	}
	return nil
}

// stopAll stops every thread where its registers describe its next
// instruction: a running thread is interrupted, and a system call stop is
// turned into the state before the call. It returns the signals taken out
// of the queue on the way, by thread, to be queued again. With logging
// (a new segment of the ring buffer, see ring.go), the recording goes on
// afterwards: the exits of calls the kernel completed are logged, and so
// are deaths.
func (r *Recorder) stopAll(logging bool) (map[int][][]byte, error) {
	held := map[int][][]byte{}
	var errs []error
	for again := true; again; {
		again = false
		for _, t := range r.threads {
			if t.state == gone {
				continue
			}
			if t.spin.active() {
				r.cancelSpin(t)
			}
			if t.state == parked {
				errs = append(errs, r.settleStop(t, held, logging))
				continue
			}
			if err := ptrace.Interrupt(t.tid); err != nil {
				if errors.Is(err, unix.ESRCH) {
					t.state = gone
					continue
				}
				errs = append(errs, err)
				continue
			}
			errs = append(errs, r.waitStopped(t, held, logging))
			// A death logged on the way may have changed the map.
			again = logging
		}
		if again {
			again = false
			for _, t := range r.threads {
				if t.state == running || t.state == inKernel {
					again = true
				}
			}
		}
	}
	return held, errors.Join(errs...)
}

// waitStopped waits for a running thread to stop after PTRACE_INTERRUPT.
func (r *Recorder) waitStopped(t *thread, held map[int][][]byte, logging bool) error {
	for {
		st, _, err := ptrace.Wait(t.tid, false)
		if err != nil {
			return err
		}
		switch st.Kind {
		case ptrace.Exited, ptrace.Killed:
			if logging {
				return r.onDeath(t, st)
			}
			t.state = gone
			return nil
		case ptrace.StopEvent:
			switch st.Event {
			case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
				if logging {
					// Recorded as ever: the call then ends, the new
					// task is stopped with the others.
					if err := r.onEvent(t, st); err != nil {
						return err
					}
					continue
				}
				// The call goes on to its end; the new task is
				// released with the others.
				if msg, err := ptrace.EventMsg(t.tid); err == nil {
					r.adoptAtDetach(t, int(msg), st.Event)
				}
				if err := ptrace.Syscall(t.tid, 0); err != nil {
					return err
				}
				continue
			}
		}
		t.state = parked
		return r.settleStop(t, held, logging)
	}
}

// adoptAtDetach registers a task created while the recording was ending,
// so that it is detached too.
func (r *Recorder) adoptAtDetach(parent *thread, tid, event int) {
	if r.threads[tid] != nil {
		return
	}
	p := parent.proc
	if isProcess(event, tid) {
		p = r.newProcess(tid, parent.proc.pid)
		p.openMem()
	}
	nt := &thread{tid: tid, proc: p, state: running}
	r.threads[tid] = nt
	if err := ptrace.Interrupt(tid); err == nil {
		r.waitStopped(nt, map[int][][]byte{}, false)
	}
}

// settleStop turns the stop a thread is in into one from which calls can
// be injected and after which it runs its next instruction as if never
// stopped. A system call entry is undone (the call is skipped and the
// thread put back before it: it makes the call again once released); an
// interrupted blocking call is put back before the call; a signal a
// thread was stopped for is held, to be queued again.
func (r *Recorder) settleStop(t *thread, held map[int][][]byte, logging bool) error {
	op, err := ptrace.SyscallStop(t.tid)
	if err != nil {
		return err
	}
	switch op {
	case ptrace.SyscallEntry, ptrace.SyscallSeccomp:
		t.inSyscall = false
		return r.undoEntry(t)
	case ptrace.SyscallExit:
		if logging && t.inSyscall {
			// The kernel did the call: the log says so.
			if _, err := r.logExit(t); err != nil {
				return err
			}
		}
		_, err := attach.BeforeRestart(t.tid)
		return err
	}
	info, err := ptrace.GetSiginfo(t.tid)
	if err != nil {
		return nil // an event or group stop: nothing is pending
	}
	// An event stop's siginfo is a SIGTRAP with the event above its code.
	sig := int(binary.LittleEndian.Uint32(info))
	event := sig == int(unix.SIGTRAP) && ptrace.SiCode(info)>>8 != 0
	if !event && ptrace.Sent(sig, info) {
		held[t.tid] = append(held[t.tid], info)
	}
	_, err = attach.BeforeRestart(t.tid)
	return err
}

// undoEntry takes a thread stopped at a system call's entry back to before
// the call: the kernel skips it (orig_rax -1), and at its exit stop the
// registers are set to make it again.
func (r *Recorder) undoEntry(t *thread) error {
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return err
	}
	before := regs
	attach.BeforeCall(&before, regs[trace.OrigRAX])
	if err := runSkipped(t.tid, regs); err != nil {
		return err
	}
	return ptrace.SetRegs(t.tid, &before)
}

// runSkipped makes the kernel skip the call thread tid is at the entry of,
// its registers regs, and waits for the call's exit stop.
func runSkipped(tid int, regs trace.Regs) error {
	regs[trace.OrigRAX] = ^uint64(0) // the kernel runs nothing
	if err := ptrace.SetRegs(tid, &regs); err != nil {
		return err
	}
	for {
		if err := ptrace.Syscall(tid, 0); err != nil {
			return err
		}
		st, _, err := ptrace.Wait(tid, false)
		if err != nil {
			return err
		}
		if st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_SECCOMP {
			// The recorder's filter judges the call -1 after its
			// syscall-entry stop: its exit stop comes next.
			continue
		}
		if st.Kind != ptrace.StopSyscall {
			return fmt.Errorf("thread %d: %v while skipping its system call", tid, st)
		}
		return nil
	}
}

// undoAttach puts back what the recorder changed in the threads tids and
// their processes: patched code, the vDSO, rdtsc and cpuid trapping, rseq
// areas, CPU affinity. The threads are stopped where calls can be injected.
func (r *Recorder) undoAttach(tids []int, held map[int][][]byte) error {
	c := r.changes()
	var errs []error
	byProc := map[*process][]int{}
	for _, tid := range tids {
		if t := r.threads[tid]; t != nil {
			byProc[t.proc] = append(byProc[t.proc], tid)
		}
	}
	for p, ptids := range byProc {
		// A child whose first stop came only now has no memory file yet.
		if err := p.openMem(); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, c.UndoCode(p.pid, ptids, p.mem, held))
	}
	for _, tid := range tids {
		if r.threads[tid].proc.mem == nil {
			continue // said above
		}
		errs = append(errs, c.UndoThread(tid, r.threads[tid].proc.mem))
	}
	return errors.Join(errs...)
}
