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
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/internal/prefault"
)

// writebackChunk is how much the background goroutine writes before it
// has the kernel start writing it to disk.
const writebackChunk = 4 << 20

// queueLen is how many frames may wait for the background writer before
// Append blocks: it bounds the writer's memory to a few frames.
const queueLen = 4

// Writer writes a trace file. It writes to a .partial file of its own
// (PATH.NNNN.partial, see Reserve), which is a readable trace at any time (up
// to its last complete frame), and renames it to PATH on Close.
//
// Events are encoded by Append into an in-memory frame; full frames are
// compressed and written by a background goroutine. Append, Push and Flush
// may be called from any goroutine, one at a time; AutoPush also pushes from
// a goroutine of its own. A Writer must be ended by Close or Abort.
type Writer struct {
	path     string
	partial  string
	reserved bool // path is the empty file Reserve created to claim the name
	f        *os.File

	// mu guards the frame being filled (codec, buf, nEvents, frameEvents)
	// against the AutoPush goroutine.
	mu       sync.Mutex
	autoStop chan struct{}

	codec   *codec
	buf     []byte // the events frame being filled
	nEvents int64
	nBlobs  uint32
	closed  bool
	// sources are the files blobs were read from (Footer.Sources).
	sources []BlobSource
	// frameEvents counts the events of each events frame sent, for the
	// footer's index; sent is the number of events they hold in all.
	frameEvents []int64
	sent        int64

	jobs chan job
	// late are the blob frames (AddBlob, ReadBlob, AddLateBlobs): the
	// background goroutine writes them before any queued job, so that blob
	// ids follow the order of the frames and a blob still comes before the
	// events that name it; the caller does not wait for their compression.
	// lateWake wakes an idle background goroutine.
	lateMu   sync.Mutex
	late     []job
	lateWake chan struct{}
	// lateBytes is what the late blobs hold, which AddBlob keeps under
	// maxLateBytes (lateDrained wakes it): a program that maps big files
	// faster than they compress waits rather than filling memory.
	lateBytes   int64
	lateDrained *sync.Cond
	// deferred counts the file blobs queued to be read in the background,
	// each holding a descriptor (maxDeferred).
	deferred atomic.Int32
	free     chan []byte // recycled event buffers
	done     chan struct{}
	// tailEnc compresses big blobs, on every CPU once Close has begun
	// (tailcompress.go).
	tailEnc tailEncoder
	// rawFrames counts the events frames stored uncompressed, the writer
	// behind (raw.go).
	rawFrames atomic.Int64
	err       atomic.Pointer[error] // first background error
}

// job is one unit of work for the background goroutine: a frame to write
// (if data is not nil) and/or a channel to close once everything before it
// has been written.
type job struct {
	typ     byte
	data    []byte
	recycle bool
	ack     chan struct{}
	// blob, with data, is a late blob's frame: its id goes before data
	// when it is written.
	blob *uint32
	// file is a blob read from a file the cache knows of (ReadFileBlob).
	file *fileBlob
	// cost is what the job counts for in lateBytes.
	cost int64
}

// Partial returns the path of the file the trace is written to: a readable
// trace up to its last complete frame, renamed to the final path by Close.
func (w *Writer) Partial() string { return w.partial }

// writeHeader writes the header frame, h encoded: the trace's frame 0.
// It returns the frame's bytes, whose buffer the frames after reuse.
func (w *Writer) writeHeader(enc *zstd.Encoder, h *Header) ([]byte, error) {
	if h.Late != nil {
		h.Late(h)
		h.Late = nil
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("%w %s: encoding the header: %w", ErrWrite, w.path, err)
	}
	out := appendFrame(nil, enc, FrameHeader, hj)
	if _, err := w.f.Write(out); err != nil {
		return out, fmt.Errorf("%w %s: writing the header: %w", ErrWrite, w.path, err)
	}
	return out, nil
}

// background compresses and writes the queued frames in order. After an
// error it keeps draining the queue without writing, so that the producer
// never blocks; the error is reported by the next Append, Flush or Close.
func (w *Writer) background(enc *zstd.Encoder, h *Header) {
	defer close(w.done)
	defer enc.Close()
	defer w.tailEnc.close()
	offset := int64(PreambleSize)
	out, err := w.writeHeader(enc, h)
	offset += int64(len(out))
	if err != nil {
		w.setErr(err)
	}
	frame := 1 // the header frame is frame 0
	flushed := offset
	for {
		j, ok := w.nextJob()
		if !ok {
			break
		}
		if j.blob != nil {
			payload := make([]byte, 4+len(j.data))
			binary.LittleEndian.PutUint32(payload, *j.blob)
			copy(payload[4:], j.data)
			j.data = payload
		}
		if j.file != nil && j.file.src != nil {
			w.deferred.Add(-1)
			if w.err.Load() != nil {
				j.file.src.Close()
			} else if payload, err := j.file.readSource(j.data); err != nil {
				w.setErr(fmt.Errorf("%w: reading blob %d: %w", ErrWrite, binary.LittleEndian.Uint32(j.data), err))
			} else {
				j.data = payload
				if j.file.pre != nil {
					j.data = payload[:4]
				}
			}
		}
		if j.data != nil && w.err.Load() == nil {
			// A big frame's buffer backed at once (prefault): 40 MB a
			// program read took 300 ms to frame, page fault by page fault.
			need := FrameHeaderSize + 64 + len(j.data) + len(j.data)/64
			if j.file != nil {
				need += len(j.file.pre)
			}
			if cap(out) < need && need >= prefault.Min {
				out = prefault.Bytes(need)
			}
			if j.file != nil {
				var z []byte
				out, z = appendFileBlob(out[:0], enc, &w.tailEnc, j.data, j.file)
				if z != nil {
					j.file.cache.put(j.file.key, j.data[4:], z, j.file.at)
				}
			} else {
				out = appendFrameWith(out[:0], j.typ, j.data, w.compressor(j.typ, enc))
			}
			_, err := w.f.Write(out)
			offset += int64(len(out))
			if j.file != nil && j.file.entry != nil {
				if err == nil {
					err = copyEntry(w.f, j.file.entry, j.file.zlen)
				}
				offset += j.file.zlen
			}
			if err != nil {
				w.setErr(fmt.Errorf("%w: writing frame %d at offset %d: %w", ErrWrite, frame, offset, err))
			}
			if offset-flushed >= writebackChunk {
				// Only starts the disk's writes: Close's fsync then waits
				// for the last few MB, not for the whole trace (a make's
				// 20 MB: 11 ms at the end of the recording).
				unix.SyncFileRange(int(w.f.Fd()), flushed, offset-flushed, unix.SYNC_FILE_RANGE_WRITE)
				flushed = offset
			}
			frame++
			if cap(out) > 4*frameTarget {
				out = nil // do not keep a huge blob's buffer
			}
		}
		if j.file != nil && j.file.entry != nil {
			j.file.entry.Close()
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

// compressor returns how the background goroutine compresses a frame of
// type typ: an events frame with frames waiting behind it stored raw (the
// program's data comes faster than it compresses: raw.go), any other
// through tailEnc (a big read's frame in 4 MB frames, on every CPU once
// the program has ended); the header and footer with enc.
func (w *Writer) compressor(typ byte, enc *zstd.Encoder) func(src, dst []byte) []byte {
	switch {
	case typ != FrameEvents:
		return func(src, dst []byte) []byte { return compress(enc, src, dst) }
	case len(w.jobs) >= behind:
		w.rawFrames.Add(1)
		return func(src, dst []byte) []byte { return appendRawFrame(dst, src) }
	default:
		return func(src, dst []byte) []byte { return w.tailEnc.compress(enc, src, dst) }
	}
}

// nextJob returns the next job: a late blob first, else a queued job, else
// it waits for either.
func (w *Writer) nextJob() (job, bool) {
	for {
		if j, have := w.takeLate(); have {
			return j, true
		}
		select {
		case j, ok := <-w.jobs:
			if !ok {
				// Closed: the late blobs left go before the end.
				j, ok = w.takeLate()
			}
			return j, ok
		case <-w.lateWake:
		}
	}
}

// takeLate takes the first late blob, if any.
func (w *Writer) takeLate() (job, bool) {
	w.lateMu.Lock()
	defer w.lateMu.Unlock()
	if len(w.late) == 0 {
		return job{}, false
	}
	j := w.late[0]
	w.late[0] = job{}
	w.late = w.late[1:]
	w.lateBytes -= j.cost
	w.lateDrained.Broadcast()
	return j, true
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
	return w.appendLocked(e)
}

// appendLocked encodes e into the current frame, sent once full; w.mu is
// held.
func (w *Writer) appendLocked(e *Event) error {
	if n := e.bulk(); n > frameTarget && len(w.buf)+n > cap(w.buf) {
		// A big event (a read of megabytes) gets a frame of its own, of
		// its size, backed at once (prefault): appended to the current
		// one, it grew it by doubling, 10 MB of copies and fresh pages for
		// a 6 MB read, 20 ms while the program waited.
		if err := w.sendEvents(); err != nil {
			return err
		}
		if cap(w.buf) < n+frameTarget/4 {
			w.buf = prefault.Bytes(n + frameTarget/4)
		}
	}
	w.buf = w.codec.appendEvent(w.buf, e)
	w.nEvents++
	if len(w.buf) > frameTarget {
		return w.sendEvents()
	}
	return nil
}

// AppendEach appends the events fill makes into e, one at a time, until it
// returns false or an error, holding the writer once for them all: a flush
// of the hook's buffer brings thousands.
func (w *Writer) AppendEach(e *Event, fill func(*Event) (bool, error)) error {
	if err := w.check(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		more, err := fill(e)
		if err != nil || !more {
			return err
		}
		if err := w.appendLocked(e); err != nil {
			return err
		}
	}
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
	w.frameEvents = append(w.frameEvents, w.nEvents-w.sent)
	w.sent = w.nEvents
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

// Events returns the number of events appended so far.
func (w *Writer) Events() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nEvents
}

// Close writes the remaining events and the footer, syncs the file to disk
// and renames it from its .partial name to the final path. The footer's
// Events, Blobs and FrameEvents are set by this Writer; f may be nil. If
// anything fails, the .partial file is left in place (readable up to its
// last complete frame), the name Reserve claimed is released, and the error
// (wrapping ErrWrite if the file could not be written) is returned.
func (w *Writer) Close(f *Footer) error {
	if w.closed {
		return ErrClosed
	}
	w.tailEnc.tail.Store(true) // the program has ended: every CPU compresses
	var foot Footer
	if f != nil {
		foot = *f
	}
	w.mu.Lock()
	err := w.bgErr()
	if err == nil {
		err = w.sendEvents()
	}
	if err == nil {
		foot.Events = w.nEvents
		foot.Blobs = int(w.nBlobs)
		foot.FrameEvents = w.frameEvents
		w.lateMu.Lock()
		foot.Sources = w.sources
		w.lateMu.Unlock()
		var fj []byte
		if fj, err = json.Marshal(&foot); err == nil {
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
			err = fmt.Errorf("%w: %w", ErrWrite, err)
		}
	}
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%w: %w", ErrWrite, cerr)
	}
	if err == nil {
		if err = os.Rename(w.partial, w.path); err != nil {
			err = fmt.Errorf("%w: %w", ErrWrite, err)
		}
	}
	if err != nil {
		w.release()
		return err
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
// readable trace whose Status says the recording did not finish. The name
// Reserve claimed is released. Errors are ignored. Abort after Close or
// Abort does nothing.
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
	w.release()
}

// release gives up the name Reserve claimed, so that an empty file is not
// left where the trace should have been.
func (w *Writer) release() {
	if w.reserved {
		dropReservation(w.path)
		w.reserved = false
	}
}

// stop marks the writer closed and waits for the background goroutine.
func (w *Writer) stop() {
	w.tailEnc.tail.Store(true)
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
