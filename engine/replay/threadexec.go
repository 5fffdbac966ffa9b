package replay

// An exec from a thread other than the main one. The kernel ends every
// other thread of the process, gives the exec'ing thread the main thread's
// tid and reports the exec stop under that tid (PTRACE_EVENT_EXEC's message
// is the former tid); the main thread's own end is never reported. The
// recording logs the exec and what follows under the main thread's tid, as
// the program sees it (gettid() == getpid() after the exec).

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// execTakesLeader reports whether t, about to re-execute an execve, is a
// thread other than its process's main one whose exec succeeded when
// recorded: the exec event then comes under the main thread's tid before
// any other event of t.
func (s *Session) execTakesLeader(t *rthread) bool {
	if t.real == t.proc.real {
		return false
	}
	for i := 1; i < lookahead; i++ {
		e, err := s.peek(i)
		if err != nil || e == nil {
			return false
		}
		if e.Tid == t.rec {
			return false // the call's exit: it failed
		}
		if e.Tid == t.proc.rec && e.Kind == trace.KindExec {
			return true
		}
	}
	return false
}

// waiterForExec returns the thread whose stops say how t's exec goes: the
// main thread's tid for an exec that takes its place.
func (s *Session) waiterForExec(t *rthread) *rthread {
	if !s.execTakesLeader(t) {
		return t
	}
	return &rthread{rec: t.proc.rec, real: t.proc.real, proc: t.proc}
}

// takeLeader makes t, stopped at its exec stop under the main thread's
// tid, the main thread: the former main thread is gone (the kernel ended it
// without a report).
func (s *Session) takeLeader(t *rthread) error {
	msg, err := ptrace.EventMsg(t.proc.real)
	if err != nil {
		return fmt.Errorf("exec from thread %d: %w", t.rec, err)
	}
	if int(msg) != t.real {
		return fmt.Errorf("exec from thread %d (tid %d): the exec stop says tid %d exec'd", t.rec, t.real, msg)
	}
	if old := s.threads[t.proc.rec]; old != nil && old != t {
		old.dead = true
	}
	delete(s.threads, t.rec)
	t.rec, t.real = t.proc.rec, t.proc.real
	s.threads[t.rec] = t
	return nil
}

// waitExec waits for the stop that ends t's exec as waiter reports it (the
// exec stop, or the exit of a failed call). The kernel holds an exec until
// the tracer has seen the deaths of the process's other threads, so these
// are reaped meanwhile (their ThreadExit events find them dead).
func (s *Session) waitExec(t, waiter *rthread) (ptrace.Status, error) {
	for {
		var others []*rthread
		for _, o := range s.threads {
			if o.proc == t.proc && o != t && o.real != waiter.real && !o.dead {
				others = append(others, o)
			}
		}
		if len(others) == 0 {
			return s.waitFor(waiter)
		}
		st, ok, err := ptrace.Wait(waiter.real, true)
		if err != nil || ok {
			return st, err
		}
		seen := false
		for _, o := range others {
			st, ok, err := ptrace.Wait(o.real, true)
			switch {
			case errors.Is(err, unix.ECHILD):
				o.dead, seen = true, true
			case err != nil:
				return st, err
			case !ok:
			case st.Kind == ptrace.Exited || st.Kind == ptrace.Killed:
				o.dead, seen = true, true
			default:
				// Stopped on its way out: let it go.
				seen = true
				if err := ptrace.Cont(o.real, 0); err != nil && !errors.Is(err, unix.ESRCH) {
					return st, fmt.Errorf("exec: thread %d on its way out: %w", o.rec, err)
				}
			}
		}
		if !seen {
			time.Sleep(execPoll)
		}
	}
}

// execPoll is how long waitExec sleeps when no thread had news: the
// kernel is busy ending the threads.
const execPoll = 100 * time.Microsecond
