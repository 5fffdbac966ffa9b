package record

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// How the recorder waits for its tracees: in wait4, always, woken by the
// waker's death (ptrace.Waker) when rewind gets a signal or a scheduling
// deadline comes (the waker's alarm). A spare waker, started while the
// tracees run, takes over when one dies.

// wait returns the next stop, or ok=false when rewind must step in first:
// the scheduling deadline passed, a Ctrl-C is to be passed on, or rewind was
// told to stop. It sleeps in wait4, which the waker's death interrupts:
// when rewind gets a signal, or at the deadline (its alarm). Polling with a
// timer would have each stop send rewind a SIGCHLD, relayed by the runtime
// (a sixth of the recorder's CPU in a shell forking children, whose parent
// waits for the CPU while each child runs).
func (r *Recorder) wait() (ptrace.Status, bool, error) {
	for {
		dl := r.wakeAt()
		if !r.fwdAt.IsZero() && (dl.IsZero() || r.fwdAt.Before(dl)) {
			dl = r.fwdAt
		}
		if !dl.IsZero() {
			// A stop already there comes first: the deadline's work may
			// wait for it (a thread waiting for a hit stays late until
			// something happens).
			st, ok, err := ptrace.Wait(-1, true)
			if ok && err == nil && r.spareDied(st) {
				continue
			}
			if ok && err == nil && st.Tid == r.wakerPid() {
				if r.wake() {
					return ptrace.Status{}, false, nil
				}
				continue
			}
			if ok || err != nil {
				return st, ok, err
			}
			if !time.Now().Before(dl) {
				return ptrace.Status{}, false, nil
			}
		}
		if !dl.IsZero() && r.spare == nil {
			// Now, while the tracees run and rewind would sleep: not
			// between the alarm and the deadline's work.
			r.spare, _ = ptrace.StartWaker()
		}
		r.alarm(dl)
		st, ok, err := ptrace.Wait(-1, false)
		if err == nil && r.spareDied(st) {
			continue
		}
		if err != nil || st.Tid != r.wakerPid() {
			return st, ok, err
		}
		if r.wake() {
			return ptrace.Status{}, false, nil
		}
	}
}

// spareDied reports whether st is the spare waker's death (killed by
// someone else: wakers have a process group of their own, out of the
// terminal's reach), and forgets it then: a dead spare taking over would
// leave the recorder asleep for good. The next deadline starts another.
func (r *Recorder) spareDied(st ptrace.Status) bool {
	if r.spare == nil || st.Tid != r.spare.Pid() {
		return false
	}
	r.spare.Close(true)
	r.spare = nil
	return true
}

// alarm sets the waker's alarm to dl (none if zero), if it is not set so.
func (r *Recorder) alarm(dl time.Time) {
	if dl.Equal(r.alarmAt) {
		return
	}
	r.alarmAt = dl
	if wk := r.waker.Load(); wk != nil {
		d := time.Duration(-1)
		if !dl.IsZero() {
			d = max(time.Until(dl), 0)
		}
		wk.Alarm(d)
	}
}

// wakerPid is the pid of the current waker.
func (r *Recorder) wakerPid() int {
	if wk := r.waker.Load(); wk != nil {
		return wk.Pid()
	}
	return -1
}

// relayStops passes the signals sent to rewind to the recorder, waking it
// from wait4 by ending the waker.
func (r *Recorder) relayStops() {
	for sig := range r.stop {
		r.stops <- sig.(unix.Signal)
		if wk := r.waker.Load(); wk != nil {
			wk.Wake()
		}
	}
}

// wake handles the waker's death: it starts a new waker, then the signals
// rewind got. It reports whether the recording must end.
func (r *Recorder) wake() bool {
	// The spare, started before, is running already: a waker started
	// now would take 0.3–4 ms (a fork and an exec, longer under load),
	// all of it late for the deadline that ended the last one.
	w, err := r.spare, error(nil)
	r.spare = nil
	if w == nil {
		w, err = ptrace.StartWaker()
	}
	if err != nil {
		// Without a waker the next signal could go unseen: stop now
		// rather than risk a recording that cannot be stopped.
		r.interrupted = unix.SIGTERM
		return true
	}
	r.waker.Swap(w).Close(true)
	r.alarmAt = time.Time{} // the new waker has none
	end := false
	for {
		select {
		case sig := <-r.stops:
			end = r.onStopSignal(sig) || end
		default:
			return end
		}
	}
}

// closeWakers ends the waker and the spare, and reaps them.
func (r *Recorder) closeWakers() {
	if wk := r.waker.Swap(nil); wk != nil {
		wk.Close(false)
	}
	if r.spare != nil {
		r.spare.Close(false)
		r.spare = nil
	}
}
