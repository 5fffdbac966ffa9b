package record

// How a recording stops early: rewind's own signals (Ctrl-C passed on to
// the program or ending the recording, SIGTERM, SIGHUP, the end of
// --duration), and the end itself, which settles the running calls, logs
// the end event and kills or detaches the program.

import (
	"time"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
	"golang.org/x/sys/unix"
)

// settleMax bounds how long the end of a recording waits for the running
// thread's system call to return.
const settleMax = 200 * time.Millisecond

// settleCurrent lets the running threads' system calls, already in the
// kernel and not expected to block, reach their exit stops and be logged
// before the program is killed: the kernel may have done its work (a write
// the user saw on the terminal), which replay must then do too.
func (r *Recorder) settleCurrent() {
	end := time.Now().Add(settleMax)
	for _, c := range r.cpus {
		if t := c.current; t != nil {
			r.settle(t, end)
		}
	}
}

// settle is settleCurrent for t, the current thread of a run queue, until
// end.
func (r *Recorder) settle(t *thread, end time.Time) {
	if !t.inSyscall || t.split || t.state != running {
		return
	}
	for t.inSyscall && t.state == running && time.Now().Before(end) {
		st, ok, err := ptrace.Wait(t.tid, true)
		if err != nil {
			return
		}
		if !ok {
			time.Sleep(time.Millisecond)
			continue
		}
		if r.handle(st) != nil || r.done {
			return
		}
	}
}

// onStopSignal handles a signal sent to rewind itself, and reports whether
// the recording must end now. Ctrl-C (and Ctrl-\\) from the terminal reach
// the whole foreground process group: the program gets its own and handles
// it as it would without rewind. So the first one is passed on only if the
// program has not got it shortly after (a kill aimed at rewind alone; see
// forward). The second one, or SIGTERM or SIGHUP, stops the recording.
func (r *Recorder) onStopSignal(sig unix.Signal) bool {
	switch sig {
	case rotateSignal:
		r.rotateDue = true
		return true
	case durationElapsed:
		r.interrupted = sig
		return true
	case stallSignal:
		r.reportStall()
		return !r.daemonRetry.IsZero() // the run loop asks about daemons
	}
	if r.att != nil {
		// The process is not in rewind's terminal: any of these is for
		// rewind, and ends the recording at once.
		switch sig {
		case unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGHUP, unix.SIGUSR2:
			r.interrupted = sig
			return true
		}
		otherSignal(sig)
		return false
	}
	if r.fromProgram(sig) {
		return false
	}
	switch sig {
	case unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGHUP:
	default:
		otherSignal(sig)
		return false
	}
	if sig == unix.SIGINT || sig == unix.SIGQUIT {
		r.interrupts++
		if r.interrupts == 1 {
			r.fwd = sig
			r.fwdSince = time.Now()
			r.fwdAt = r.fwdSince.Add(fwdGrace)
			return false
		}
	}
	r.interrupted = sig
	return true
}

// fwdGrace is how long the program's own copy of a terminal signal may take
// to show up (as pending, or delivered) before rewind passes one on.
const fwdGrace = 50 * time.Millisecond

// forward passes the first Ctrl-C rewind received on to the program, unless
// the program got one of its own around the same time.
func (r *Recorder) forward() {
	sig := r.fwd
	r.fwd, r.fwdAt = 0, time.Time{}
	if t, ok := r.sawSig[sig]; ok && t.After(r.fwdSince.Add(-time.Second)) {
		return
	}
	if ptrace.PendingSignal(r.pid, int(sig)) {
		return
	}
	unix.Kill(r.pid, sig)
}

// durationElapsed stands, among the signals that stop a recording, for the
// end of Options.Duration.
const durationElapsed = unix.Signal(-1)

// stopReason says in words why rewind stopped a recording.
func (r *Recorder) stopReason(sig unix.Signal) string {
	if r.att != nil {
		if sig == durationElapsed {
			return "detached after " + r.opts.Duration.String()
		}
		return "detached (" + unix.SignalName(sig) + " to rewind)"
	}
	if sig == unix.SIGINT || sig == unix.SIGQUIT {
		return "interrupted (" + unix.SignalName(sig) + " to rewind twice)"
	}
	return "interrupted (" + unix.SignalName(sig) + " to rewind)"
}

// end stops the recording while the program runs: the end event goes last
// in the trace, then the program is killed (it cannot go on unrecorded: it
// is traced with PTRACE_O_EXITKILL and its threads are serialized by us).
// Its death is not an event: replay stops at the end event, with the
// program alive there.
func (r *Recorder) end() error {
	r.settleCurrent()
	tid := r.pid
	if t := r.someCurrent(); t != nil {
		tid = t.tid
	}
	for _, c := range r.cpus {
		if t := c.current; t != nil && t.state == running {
			if err := r.flushRunning(t); err != nil {
				return err
			}
		}
	}
	if err := r.log(&trace.Event{Kind: trace.KindEnd, Tid: int32(tid), Data: []byte(r.stopReason(r.interrupted))}); err != nil {
		return err
	}
	r.closeWakers()
	if r.att != nil {
		r.done = true
		return r.detach()
	}
	r.killAll()
	for {
		st, _, err := ptrace.Wait(-1, false)
		if err != nil {
			break // ECHILD: every task is gone
		}
		if st.Tid == r.pid && !r.rootDone && (st.Kind == ptrace.Exited || st.Kind == ptrace.Killed) {
			r.status = st.Raw
		}
	}
	r.done = true
	return nil
}
