package record

import (
	"fmt"
	"slices"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Events are written beside the program. A flush of the hook's buffer
// holds up to thousands of records, and turning each into an event and
// encoding it (~0.4 µs) while the program waited at its stop cost more
// than the calls themselves: twice a getppid's time. At the stop the
// recorder now only copies the records and takes what it decides on from
// them (takeRecords: the descriptors of the standard streams, a thread's
// robust list, mappings and the files they map); a goroutine of its own,
// on another CPU than the program's, turns them into events while the
// program runs on. Every event goes that way, in order (log hands it a
// copy): the call that stopped the program for the flush comes after the
// flushed ones without waiting for them. What needs the trace as it is
// (the number of events, its end) waits for the logger first (drainLog).

// asyncFlush is the size of a flush from which the logger takes it: waking
// it costs a process tree's many small flushes more (10-20 µs here) than
// encoding them at once.
const asyncFlush = 32 << 10

// maxLogFlushes bounds the flushes waiting for the logger (each holds a
// copy of a hook buffer), maxLogJobs the jobs.
const (
	maxLogFlushes = 3
	maxLogJobs    = 256
)

// bigEvent is the size of the outputs from which an event the recorder
// owns goes to the logger (logOwned): appended at the stop, a 6 MB read's
// bytes were copied into the trace's frame, into memory backed for it,
// while the program waited (3 of the 8 ms of sort's stop for its input).
const bigEvent = 1 << 20

// outputBytes is how many bytes e's outputs hold.
func outputBytes(e *trace.Event) int {
	n := 0
	for _, m := range e.Mem {
		n += len(m.Data)
	}
	return n
}

// handOver is e for the logger: a copy, but for its outputs' bytes, which
// the logger shares (logOwned).
func handOver(e *trace.Event) *trace.Event {
	mem := e.Mem
	e.Mem = nil
	c := e.Clone()
	e.Mem = mem
	c.Mem = slices.Clone(mem)
	return c
}

// bufLogger logs events and the events of flushed hook buffers, in order.
type bufLogger struct {
	jobs    chan logJob
	results chan logResult
	// free and big hold copies logged, for others: big those of flushes
	// from asyncFlush, whose pages are backed (a full buffer is 256
	// pages, ~0.3 ms of page faults on a VM when fresh), so that the
	// many small flushes do not take their place.
	free, big chan []byte
	pending   []bool // the jobs sent whose result is not taken: flushes?
	flushes   int    // how many of them are
	err       error  // the first error a job met, which the next drain returns
}

// logResult is what the logger says of a job.
type logResult struct {
	err   error
	flush bool
}

// logJob is one flush: the records of thread tid, and the files its
// mmaps mapped, by record (maps[i] for the i-th, or nil); or one event,
// the writer pushed after it when push says so.
type logJob struct {
	w     *trace.Writer
	now   func() int64
	tid   int32
	recs  []byte
	maps  []*trace.MapFile
	event *trace.Event
	push  bool
}

// startLogger starts the goroutine that logs flushed records; stopLogger
// ends it.
func (r *Recorder) startLogger() {
	l := &bufLogger{jobs: make(chan logJob, maxLogJobs), results: make(chan logResult, maxLogJobs), free: make(chan []byte, maxLogFlushes+1), big: make(chan []byte, maxLogFlushes+1)}
	go l.run()
	r.logger = l
}

func (r *Recorder) stopLogger() {
	if r.logger != nil {
		r.drainLog()
		close(r.logger.jobs)
		r.logger = nil
	}
}

// buffer is room for a copy of n bytes of a hook buffer.
func (l *bufLogger) buffer(n int) []byte {
	pools := []chan []byte{l.free}
	if n >= asyncFlush {
		pools = []chan []byte{l.big, l.free}
	}
	for _, pool := range pools {
		select {
		case b := <-pool:
			if cap(b) >= n {
				return b[:n]
			}
		default:
		}
	}
	return make([]byte, n, hook.BufSize)
}

// sendLog hands job to the logger, once fewer than maxLogJobs, and for a
// flush fewer than maxLogFlushes flushes, wait; it returns the first error
// the logger met since the last call.
func (r *Recorder) sendLog(job logJob) error {
	l := r.logger
	flush := job.event == nil
	for len(l.pending) >= maxLogJobs || flush && l.flushes >= maxLogFlushes {
		l.take()
	}
	err := l.err
	l.err = nil
	l.jobs <- job
	l.pending = append(l.pending, flush)
	if flush {
		l.flushes++
	}
	return err
}

// busy says whether the logger has jobs to do: an event logged meanwhile
// goes after them; else it is appended at once, with no copy or hand-over
// (a process tree's events, mostly of calls that stopped).
func (l *bufLogger) busy() bool {
	if l == nil || len(l.pending) == 0 {
		return false
	}
	for len(l.pending) > 0 {
		select {
		case res := <-l.results:
			l.done(res)
			continue
		default:
		}
		break
	}
	return len(l.pending) > 0
}

// take waits for the result of the oldest job sent.
func (l *bufLogger) take() error {
	return l.done(<-l.results)
}

// done takes res, the result of the oldest job sent.
func (l *bufLogger) done(res logResult) error {
	l.pending = l.pending[1:]
	if res.flush {
		l.flushes--
	}
	if res.err != nil && l.err == nil {
		l.err = res.err
	}
	return res.err
}

// drainLog waits for the logger to have logged every job sent, and
// returns the first error it met.
func (r *Recorder) drainLog() error {
	l := r.logger
	if l == nil {
		return nil
	}
	for len(l.pending) > 0 {
		l.take()
	}
	err := l.err
	l.err = nil
	return err
}

// events is the number of events logged, the logger drained: the number
// of the next one.
func (r *Recorder) events() int64 {
	r.drainLog()
	return r.w.Events() + int64(r.noting)
}

func (l *bufLogger) run() {
	var rec hook.Record
	var e trace.Event
	for job := range l.jobs {
		var err error
		flush := job.event == nil
		if flush {
			err = job.log(&rec, &e)
			l.recycle(job.recs)
		} else {
			err = job.logEvent()
		}
		l.results <- logResult{err: err, flush: flush}
	}
}

// recycle keeps recs, a flush's copy logged, for another.
func (l *bufLogger) recycle(recs []byte) {
	pool := l.free
	if len(recs) >= asyncFlush {
		pool = l.big
	}
	select {
	case pool <- recs[:0]:
	default:
	}
}

// logEvent appends the job's event, and pushes the events so far when
// asked.
func (job *logJob) logEvent() error {
	if err := job.w.Append(job.event); err != nil {
		return fmt.Errorf("write trace at event %d: %w", job.w.Events(), err)
	}
	if !job.push {
		return nil
	}
	if err := job.w.Push(); err != nil {
		return fmt.Errorf("write trace at event %d: %w", job.w.Events(), err)
	}
	return nil
}

// log appends the events of the job's records (rec and e are scratch),
// all stamped with one time: that of the flush, near enough.
func (job *logJob) log(rec *hook.Record, e *trace.Event) error {
	now := job.now()
	i, off := 0, 0
	err := job.w.AppendEach(e, func(e *trace.Event) (bool, error) {
		if off >= len(job.recs) {
			return false, nil
		}
		size, err := hook.ParseRecord(job.recs, off, rec)
		if err != nil {
			return false, fmt.Errorf("thread %d: %w", job.tid, err)
		}
		off += size
		if rec.Nr == hook.NrRdtsc {
			bufferedRdtsc(job.tid, rec, e)
		} else {
			bufferedEvent(job.tid, rec, e)
			if i < len(job.maps) {
				e.Map = job.maps[i]
			}
		}
		e.Time = now
		i++
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("write trace at event %d: %w", job.w.Events(), err)
	}
	return nil
}
