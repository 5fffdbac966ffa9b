package record

import (
	"slices"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// Job control. A stop signal taken with its default action (SIGSTOP;
// SIGTSTP, SIGTTIN, SIGTTOU when not caught) stops every thread of the
// process. Under PTRACE_SEIZE each thread reports the stop to the recorder
// (a group-stop), which keeps it there with PTRACE_LISTEN: the kernel's own
// bookkeeping then holds, as without rewind. The stop is complete once
// every thread is in it, the parent's wait(WUNTRACED) and SIGCHLD
// (CLD_STOPPED) see it, and a SIGCONT from anyone wakes the threads (each
// reports a PTRACE_EVENT_STOP with SIGTRAP), gives the parent its
// WCONTINUED status and CLD_CONTINUED. None of that is an event of its own:
// the stop signal's delivery is (replay holds the thread there instead of
// stopping the process), the parent's wait and SIGCHLD are, and the
// stopped threads' next events come after the SIGCONT in the log.
//
// A thread parked at a ptrace stop (waiting for the CPU, or at the exit of
// a call the stop interrupted) joins the stop when the scheduler next
// resumes it, before it runs any instruction: the CPU the stopped thread
// leaves goes round them in turn. A SIGCONT also makes every other thread
// of the process report a PTRACE_EVENT_STOP once, taken for a late
// interrupt (onInterrupt lets it go on).

// isJobStop reports whether sig is one of the signals whose default action
// stops the process.
func isJobStop(sig int) bool {
	switch unix.Signal(sig) {
	case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		return true
	}
	return false
}

// onGroupStop handles a group-stop: t stays stopped, off the CPU, until a
// SIGCONT. A thread reports it again when another signal wakes it while
// the process is still stopped.
func (r *Recorder) onGroupStop(t *thread) error {
	if t.spin.starting {
		// Born into a stopped process: its first stop is this one.
		t.spin.starting = false
		if err := t.proc.openMem(); err != nil {
			return err
		}
	}
	if t.spin.active() {
		r.cancelSpin(t)
	}
	r.dropReady(t)
	t.state = stopped
	if err := ptrace.Listen(t.tid); err != nil {
		return err
	}
	if c := t.cpu(); c.current == t {
		c.current = nil
		return r.scheduleIfIdle(c)
	}
	return nil
}

// onContinued handles the stop of a stopped thread that a SIGCONT woke: it
// waits for the CPU again, to resume where it stopped.
func (r *Recorder) onContinued(t *thread) error {
	r.parkReady(t, parkResume)
	return r.scheduleIfIdle(t.cpu())
}

// jobControl handles what is special about the job control signal sig,
// asynchronous, at its delivery stop in t. It reports whether it is done
// with it: a stop signal that a SIGCONT sent since discards is not
// delivered.
func (r *Recorder) jobControl(t *thread, sig int) (bool, error) {
	if isJobStop(sig) && contPending(t) {
		if t.injecting != nil && t.injecting.sig == sig {
			t.injecting = nil
		}
		return true, r.let(t, 0)
	}
	r.jobSignal(t, sig)
	return false, nil
}

// contPending reports whether a SIGCONT is pending for t's process. The
// arrival of a stop signal discards a pending SIGCONT, so it came after any
// stop signal t took from the queue (or the recorder holds): had that one
// still been pending, as it would be without rewind, the SIGCONT would
// have discarded it. A terminal's Ctrl-Z then fg does that: the program
// takes its SIGTSTP while rewind, stopped too, cannot deliver it.
func contPending(t *thread) bool {
	return ptrace.PendingSignal(t.proc.pid, int(unix.SIGCONT))
}

// dropDiscarded forgets the stop signals held for t that a pending SIGCONT
// discards: sent now, they would discard it instead.
func (r *Recorder) dropDiscarded(t *thread) {
	if slices.ContainsFunc(t.held, func(h heldSignal) bool { return isJobStop(h.sig) }) && contPending(t) {
		t.held = slices.DeleteFunc(t.held, func(h heldSignal) bool { return isJobStop(h.sig) })
	}
}

// jobSignal applies to the signals the recorder holds what the kernel does
// to pending ones when sig arrives: a SIGCONT discards the stop signals,
// and a stop signal discards SIGCONT. Held, they are out of the kernel's
// reach; left alone, a SIGSTOP sent before a SIGCONT would stop the
// process after it, for good.
//
// A stop signal also replaces the stop signals held before it: the process
// went on running since they arrived, as if continued, by a SIGCONT the
// kernel discarded when the new one came (the recorder never sees it).
// Had nothing come between, the first would have stopped the process and
// the second stayed pending until the SIGCONT discarded it: the stop is the
// same, only the signal it reports differs.
func (r *Recorder) jobSignal(t *thread, sig int) {
	var drop func(int) bool
	switch {
	case sig == int(unix.SIGCONT):
		drop = isJobStop
	case isJobStop(sig):
		drop = func(s int) bool { return s == int(unix.SIGCONT) || isJobStop(s) }
	default:
		return
	}
	for _, u := range r.threads {
		if u.proc != t.proc || u.state == gone {
			continue
		}
		u.held = slices.DeleteFunc(u.held, func(h heldSignal) bool { return drop(h.sig) })
		if u.injecting != nil && u.injecting.sig != sig && drop(u.injecting.sig) && !ptrace.PendingSignal(u.proc.pid, u.injecting.sig) {
			// Re-sent already, and discarded by the kernel since.
			u.injecting = nil
		}
	}
}
