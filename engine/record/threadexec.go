package record

// An exec from a thread other than the main one. The kernel ends every
// other thread of the process (the others' deaths are reported as exits,
// the main thread's is not), gives the exec'ing thread the main thread's
// tid and reports the exec stop under it, PTRACE_EVENT_EXEC's message
// being the former tid. From the exec on, the thread is recorded under the
// main thread's tid, as the program sees it; replay makes the same switch
// when it sees the same stop (engine/replay/threadexec.go).

import "fmt"

// execTakesLeader retires leader, the main thread whose tid the exec stop
// came under, and gives its tid to the thread that exec'd (former), which
// it returns.
func (r *Recorder) execTakesLeader(leader *thread, former int) (*thread, error) {
	t := r.threads[former]
	if t == nil || t.proc != leader.proc {
		return nil, fmt.Errorf("exec stop of %d: thread %d, which exec'd, is not one of its process", leader.tid, former)
	}
	leader.state = gone
	r.dropReady(leader)
	r.writeDone(leader)
	if c := leader.cpu(); c.current == leader {
		c.current = t
	}
	delete(r.threads, former)
	t.tid = leader.tid
	r.threads[t.tid] = t
	return t, nil
}
