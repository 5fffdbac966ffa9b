package record

// Run queues. The recorder lets one thread at a time run on a run queue
// (a cpu), and logs the order in which they took turns: replay runs them
// in that order. Threads that can see one another's writes between two
// events must take turns on one queue: the threads of a process, and
// processes that share memory or trace one another. Processes that see
// one another only through system calls, whose results the trace holds,
// may run side by side, each on its own queue (sidebyside.go).
type cpu struct {
	// current is the thread that has the queue (running, or stopped
	// while the recorder handles it), or nil.
	current *thread
	// ready are the threads waiting for it, in order.
	ready []*thread
	// lastProc is the process of the thread that ran last on it.
	lastProc *process
}

// newCPU adds an empty run queue.
func (r *Recorder) newCPU() *cpu {
	c := &cpu{}
	r.cpus = append(r.cpus, c)
	return c
}

// cpuOf is the run queue t takes turns on.
func (t *thread) cpu() *cpu { return t.proc.cpu }

// enqueue adds t, parked, to the ready threads of its queue; while
// collapse waits for threads it interrupted, to those it holds
// (sidebyside.go).
func (r *Recorder) enqueue(t *thread) {
	c := t.cpu()
	if c == r.serial && r.mergePending > 0 {
		r.mergeHeld = append(r.mergeHeld, t)
		return
	}
	c.ready = append(c.ready, t)
}

// scheduleIdle gives every run queue that has none running a ready
// thread, if it has one.
func (r *Recorder) scheduleIdle() error {
	for _, c := range r.cpus {
		if err := r.scheduleIfIdle(c); err != nil {
			return err
		}
	}
	return nil
}

// someCurrent is a thread that has a run queue (the first queue's first),
// or nil: the thread an event of the whole recording is logged for.
func (r *Recorder) someCurrent() *thread {
	for _, c := range r.cpus {
		if c.current != nil && c.current.state != gone {
			return c.current
		}
	}
	return nil
}
