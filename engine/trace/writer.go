package trace

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
)

// queueLen is how many frames may wait for the background writer before
// Append blocks: it bounds the writer's memory to a few frames.
const queueLen = 4

// Writer writes a trace file. It writes to PATH.partial, which is a readable
// trace at any time (up to its last complete frame), and renames it to PATH
// on Close.
//
// Events are encoded by Append into an in-memory frame; full frames are
// compressed and written by a background goroutine. Append, Push and Flush
// may be called from any goroutine, one at a time; AutoPush also pushes from
// a goroutine of its own. A Writer must be ended by Close or Abort.
type Writer struct {
	path    string
	partial string
	f       *os.File

	// mu guards the frame being filled (codec, buf, nEvents) against the
	// AutoPush goroutine.
	mu       sync.Mutex
	autoStop chan struct{}

	codec   *codec
	buf     []byte // the events frame being filled
	nEvents int64
	nBlobs  uint32
	closed  bool

	jobs chan job
	free chan []byte // recycled event buffers
	done chan struct{}
	err  atomic.Pointer[error] // first background error
}

// job is one unit of work for the background goroutine: a frame to write
// (if data is not nil) and/or a channel to close once everything before it
// has been written.
type job struct {
	typ     byte
	data    []byte
	recycle bool
	ack     chan struct{}
}

// Create starts a trace at path: it creates path+".partial" (replacing any
// previous one), writes the magic, the version and the header frame, and
// returns a Writer for the rest. h.FormatVersion is recorded as
// CurrentVersion whatever its value. Close replaces any existing file at path.
//
// The caller must end the Writer with Close or Abort, which also stop its
// background goroutine.
func Create(path string, h *Header) (*Writer, error) {
	if h == nil {
		h = &Header{}
	}
	hc := *h
	hc.FormatVersion = CurrentVersion
	hj, err := json.Marshal(&hc)
	if err != nil {
		return nil, fmt.Errorf("trace: encoding header: %w", err)
	}
	enc, err := newEncoder()
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	partial := path + ".partial"
	f, err := os.OpenFile(partial, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		enc.Close()
		return nil, fmt.Errorf("trace: %w", err)
	}
	start := appendFrame(appendPreamble(nil), enc, FrameHeader, hj)
	if _, err := f.Write(start); err != nil {
		enc.Close()
		f.Close()
		return nil, fmt.Errorf("trace: writing header: %w", err)
	}
	w := &Writer{
		path:    path,
		partial: partial,
		f:       f,
		codec:   newCodec(),
		buf:     make([]byte, 0, frameTarget+frameTarget/4),
		jobs:    make(chan job, queueLen),
		free:    make(chan []byte, queueLen+1),
		done:    make(chan struct{}),
	}
	go w.background(enc, int64(len(start)))
	return w, nil
}

// background compresses and writes the queued frames in order. After an
// error it keeps draining the queue without writing, so that the producer
// never blocks; the error is reported by the next Append, Flush or Close.
func (w *Writer) background(enc *zstd.Encoder, offset int64) {
	defer close(w.done)
	defer enc.Close()
	frame := 1 // the header frame is frame 0
	var out []byte
	for j := range w.jobs {
		if j.data != nil && w.err.Load() == nil {
			out = appendFrame(out[:0], enc, j.typ, j.data)
			if _, err := w.f.Write(out); err != nil {
				w.setErr(fmt.Errorf("trace: writing frame %d at offset %d: %w", frame, offset, err))
			}
			offset += int64(len(out))
			frame++
			if cap(out) > 4*frameTarget {
				out = nil // do not keep a huge blob's buffer
			}
		}
		if j.recycle {
			select {
			case w.free <- j.data[:0]:
			default:
			}
		}
		if j.ack != nil {
			close(j.ack)
		}
	}
}

func (w *Writer) setErr(err error) {
	w.err.CompareAndSwap(nil, &err)
}

func (w *Writer) bgErr() error {
	if p := w.err.Load(); p != nil {
		return *p
	}
	return nil
}

// check returns the error that prevents using the writer, if any.
func (w *Writer) check() error {
	if w.closed {
		return ErrClosed
	}
	return w.bgErr()
}

// Append adds an event to the trace. It copies what it keeps: the caller may
// reuse the event and its slices once Append returns. Events are written in
// frames of about 256 KiB of encoded events; Append blocks only when several
// frames are waiting to be written. An error of the background writer is
// returned by the next Append.
func (w *Writer) Append(e *Event) error {
	if err := w.check(); err != nil {
		return err
	}
	if e == nil {
		return errors.New("trace: Append of a nil event")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = w.codec.appendEvent(w.buf, e)
	w.nEvents++
	if len(w.buf) > frameTarget {
		return w.sendEvents()
	}
	return nil
}

// sendEvents queues the current events frame and starts a new one.
func (w *Writer) sendEvents() error {
	if len(w.buf) == 0 {
		return nil
	}
	if len(w.buf) > maxFrameLen {
		err := fmt.Errorf("trace: events frame of %d bytes is too large", len(w.buf))
		w.setErr(err)
		return err
	}
	w.jobs <- job{typ: FrameEvents, data: w.buf, recycle: true}
	select {
	case b := <-w.free:
		w.buf = b
	default:
		w.buf = make([]byte, 0, frameTarget+frameTarget/4)
	}
	return nil
}

// Push queues the events appended so far as a frame, so that they reach the
// file within moments without waiting for it: the recorder pushes at least
// once a second and at every exit or fatal signal, so that a recorder killed
// with SIGKILL loses at most its last second. It blocks only when several
// frames are already waiting to be written.
func (w *Writer) Push() error {
	if err := w.check(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sendEvents()
}

// AutoPush pushes the pending events every period from a goroutine of its
// own, until Close or Abort: events then reach the file within a period of
// being appended, even while the appender sleeps.
func (w *Writer) AutoPush(period time.Duration) {
	if w.autoStop != nil {
		return
	}
	w.autoStop = make(chan struct{})
	stopped := w.autoStop
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-stopped:
				return
			case <-tick.C:
				w.mu.Lock()
				if !w.closed && w.bgErr() == nil {
					w.sendEvents()
				}
				w.mu.Unlock()
			}
		}
	}()
}

// Flush writes the events appended so far as a frame (if there are any) and
// waits until every queued frame is in the file, so that a reader of the
// .partial file sees them. It returns the background writer's error, if any.
func (w *Writer) Flush() error {
	if err := w.check(); err != nil {
		return err
	}
	w.mu.Lock()
	err := w.sendEvents()
	w.mu.Unlock()
	if err != nil {
		return err
	}
	ack := make(chan struct{})
	w.jobs <- job{ack: ack}
	<-ack
	return w.bgErr()
}

// AddBlob stores data (typically the contents of a mapped file) in a blob
// frame and returns its id: 0 for the first blob, then 1, 2, … The data is
// copied. The blob frame is queued before any event appended afterwards, so
// that events that refer to it come after it in the file.
func (w *Writer) AddBlob(data []byte) (uint32, error) {
	if err := w.check(); err != nil {
		return 0, err
	}
	if uint64(len(data)) > maxFrameLen-4 {
		return 0, fmt.Errorf("trace: blob of %d bytes is too large", len(data))
	}
	if w.nBlobs == 1<<32-1 {
		return 0, errors.New("trace: too many blobs")
	}
	id := w.nBlobs
	payload := make([]byte, 4+len(data))
	binary.LittleEndian.PutUint32(payload, id)
	copy(payload[4:], data)
	w.jobs <- job{typ: FrameBlob, data: payload}
	w.nBlobs++
	return id, nil
}

// Events returns the number of events appended so far.
func (w *Writer) Events() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nEvents
}

// Close writes the remaining events and the footer, syncs the file to disk
// and renames it from PATH.partial to PATH. The footer's Events and Blobs are
// set to the counts of this Writer; f may be nil. If anything fails, the
// .partial file is left in place (readable up to its last complete frame)
// and the error is returned.
func (w *Writer) Close(f *Footer) error {
	if w.closed {
		return ErrClosed
	}
	var foot Footer
	if f != nil {
		foot = *f
	}
	w.mu.Lock()
	foot.Events = w.nEvents
	foot.Blobs = int(w.nBlobs)
	fj, err := json.Marshal(&foot)
	if err == nil && w.bgErr() == nil {
		if err = w.sendEvents(); err == nil {
			w.jobs <- job{typ: FrameFooter, data: fj}
		}
	}
	w.mu.Unlock()
	w.stop()
	if err == nil {
		err = w.bgErr()
	}
	if err == nil {
		if err = w.f.Sync(); err != nil {
			err = fmt.Errorf("trace: %w", err)
		}
	}
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("trace: %w", cerr)
	}
	if err != nil {
		return err
	}
	if err := os.Rename(w.partial, w.path); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	// Make the rename durable. Not all file systems support syncing a
	// directory; the trace itself is already on disk.
	if d, err := os.Open(filepath.Dir(w.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort ends the writer without a footer: the events appended so far are
// written, then the .partial file is closed and left in place. It is a
// readable trace whose Truncated warning says the recording did not finish.
// Errors are ignored. Abort after Close or Abort does nothing.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.mu.Lock()
	if w.bgErr() == nil {
		w.sendEvents()
	}
	w.mu.Unlock()
	w.stop()
	w.f.Close()
}

// stop marks the writer closed and waits for the background goroutine.
func (w *Writer) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.autoStop != nil {
		close(w.autoStop)
	}
	w.closed = true
	close(w.jobs)
	<-w.done
	w.buf = nil
}
