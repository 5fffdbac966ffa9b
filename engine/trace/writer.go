package trace

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"
)

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
	err      atomic.Pointer[error] // first background error
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

// fileBlob is how a blob of a file's contents is written: from the cache's
// compressed frames (pre), or compressed now and given to the cache.
type fileBlob struct {
	cache *BlobCache
	key   FileKey
	pre   []byte
	ulen  int // the payload's length (id and contents) when pre is set
	// src, when not nil, is the file to read n bytes of in the
	// background (the job's data is then only the id).
	src *os.File
	n   int64
}

// deferredRead is the size from which ReadFileBlob reads a file in the
// background: a program waits for the recorder at each mmap, and reading
// (then checking against the cache) a large library costs milliseconds;
// smaller files are read at once, which keeps few descriptors open.
const deferredRead = 64 << 10

// maxDeferred bounds the files waiting to be read (their descriptors).
const maxDeferred = 64

// Pending is a trace file prepared before its recording starts: the name is
// taken and the directory proven writable, so that a program is not run for
// a trace that cannot be written. Start turns it into a Writer; Discard
// gives it up.
type Pending struct {
	path     string
	partial  string
	reserved bool
	f        *os.File
}

// Reserve prepares a trace at path. It creates the file the trace is
// written to, PATH.NNNN.partial (NNNN makes it unique: concurrent recordings
// to one name never share it), in path's directory, and writes the magic and
// the version to it, so that a directory that cannot be written to or a
// full disk fails here.
//
// With exclusive, path must not exist: Reserve creates it empty (O_EXCL),
// which claims the name against other recordings until Close renames the
// trace over it, and returns an error satisfying errors.Is(err,
// fs.ErrExist) when it exists. Without, a file at path is replaced when the
// trace is complete. Other errors wrap ErrWrite.
func Reserve(path string, exclusive bool) (*Pending, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() && !exclusive {
		return nil, fmt.Errorf("%w %s: it is a directory", ErrWrite, path)
	} else if err == nil && !st.Mode().IsRegular() && !exclusive {
		// The trace is written beside it and renamed over it: a device
		// (-o /dev/null) or a FIFO would be replaced by a file.
		return nil, fmt.Errorf("%w %s: not a regular file (a trace is a file, written beside it and renamed there)", ErrWrite, path)
	}
	p := &Pending{path: path}
	if exclusive {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("trace: %w", err)
		}
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrWrite, path, err)
		}
		f.Close()
		p.reserved = true
	}
	var err error
	for range 100 {
		p.partial = fmt.Sprintf("%s.%d.partial", path, rand.Uint32())
		p.f, err = os.OpenFile(p.partial, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err == nil {
		if _, err = p.f.Write(appendPreamble(nil)); err != nil {
			p.f.Close()
			os.Remove(p.partial)
		}
	}
	if err != nil {
		p.f = nil
		p.Discard()
		return nil, fmt.Errorf("%w %s: %w", ErrWrite, path, err)
	}
	return p, nil
}

// Path returns the trace's final path.
func (p *Pending) Path() string { return p.path }

// Partial returns the path of the file the trace is written to until it is
// complete.
func (p *Pending) Partial() string { return p.partial }

// Discard removes the .partial file and the reservation of the name, unless
// Start handed them to a Writer. It may be called more than once.
func (p *Pending) Discard() {
	if p.f != nil {
		p.f.Close()
		os.Remove(p.partial)
		p.f = nil
	}
	if p.reserved {
		dropReservation(p.path)
		p.reserved = false
	}
}

// dropReservation removes the empty file Reserve created at path, unless
// something else took its place.
func dropReservation(path string) {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		os.Remove(path)
	}
}

// Create starts a trace at path: Reserve(path, false), then Start. Close
// replaces any existing file at path.
func Create(path string, h *Header) (*Writer, error) {
	p, err := Reserve(path, false)
	if err != nil {
		return nil, err
	}
	return p.Start(h)
}

// Start writes the header frame and returns a Writer for the rest. The
// Writer owns the files from then on; if Start fails, they are removed.
// h.FormatVersion is recorded as CurrentVersion whatever its value.
//
// The caller must end the Writer with Close or Abort, which also stop its
// background goroutine.
func (p *Pending) Start(h *Header) (*Writer, error) {
	if p.f == nil {
		return nil, errors.New("trace: Start of a discarded or started trace")
	}
	if h == nil {
		h = &Header{}
	}
	hc := *h
	hc.FormatVersion = CurrentVersion
	hj, err := json.Marshal(&hc)
	if err != nil {
		p.Discard()
		return nil, fmt.Errorf("trace: encoding header: %w", err)
	}
	enc, err := newEncoder()
	if err != nil {
		p.Discard()
		return nil, fmt.Errorf("trace: %w", err)
	}
	start := appendFrame(nil, enc, FrameHeader, hj)
	if _, err := p.f.Write(start); err != nil {
		enc.Close()
		p.Discard()
		return nil, fmt.Errorf("%w %s: writing the header: %w", ErrWrite, p.path, err)
	}
	w := &Writer{
		path:     p.path,
		partial:  p.partial,
		reserved: p.reserved,
		f:        p.f,
		codec:    newCodec(),
		buf:      make([]byte, 0, frameTarget+frameTarget/4),
		jobs:     make(chan job, queueLen),
		lateWake: make(chan struct{}, 1),
		free:     make(chan []byte, queueLen+1),
		done:     make(chan struct{}),
	}
	w.lateDrained = sync.NewCond(&w.lateMu)
	p.f, p.reserved = nil, false
	go w.background(enc, int64(preambleSize+len(start)))
	return w, nil
}

// Partial returns the path of the file the trace is written to: a readable
// trace up to its last complete frame, renamed to the final path by Close.
func (w *Writer) Partial() string { return w.partial }

// background compresses and writes the queued frames in order. After an
// error it keeps draining the queue without writing, so that the producer
// never blocks; the error is reported by the next Append, Flush or Close.
func (w *Writer) background(enc *zstd.Encoder, offset int64) {
	defer close(w.done)
	defer enc.Close()
	frame := 1 // the header frame is frame 0
	var out []byte
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
			if j.file != nil {
				var z []byte
				out, z = appendFileBlob(out[:0], enc, j.data, j.file)
				if z != nil {
					j.file.cache.put(j.file.key, j.data[4:], z)
				}
			} else {
				out = appendFrame(out[:0], enc, j.typ, j.data)
			}
			if _, err := w.f.Write(out); err != nil {
				w.setErr(fmt.Errorf("%w: writing frame %d at offset %d: %w", ErrWrite, frame, offset, err))
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

// maxLateBytes bounds the blobs waiting for compression.
const maxLateBytes = 256 << 20

// AddBlob stores data (typically the contents of a mapped file) in a blob
// frame and returns its id: 0 for the first blob, then 1, 2, … The data is
// copied. The blob frame is written before any event appended afterwards,
// so that events that refer to it come after it in the file; the caller
// does not wait for its compression.
func (w *Writer) AddBlob(data []byte) (uint32, error) {
	payload := make([]byte, 4+len(data))
	copy(payload[4:], data)
	return w.addPayload(payload)
}

// AddFileBlob is AddBlob of the contents of a file whose identity is key
// (a file the program mapped, read by the hook): replay may map the file
// itself while it is still that one (Footer.Sources).
func (w *Writer) AddFileBlob(data []byte, key FileKey) (uint32, error) {
	id, err := w.AddBlob(data)
	if err == nil {
		w.noteSource(id, key)
	}
	return id, err
}

// noteSource notes that blob id holds the file key names (Footer.Sources).
func (w *Writer) noteSource(id uint32, key FileKey) {
	w.lateMu.Lock()
	w.sources = append(w.sources, BlobSource{Blob: id, Key: key})
	w.lateMu.Unlock()
}

// ReadBlob is AddBlob of the n bytes of r from its start (a mapped file),
// read straight into the frame's buffer; fewer if r ends sooner.
func (w *Writer) ReadBlob(r io.ReaderAt, n int64) (uint32, error) {
	payload, err := readPayload(r, n)
	if err != nil {
		return 0, err
	}
	return w.addPayload(payload)
}

// readPayload reads a blob frame's payload: room for the id, then the n
// bytes of r from its start (fewer if r ends sooner).
func readPayload(r io.ReaderAt, n int64) ([]byte, error) {
	if n < 0 || uint64(n) > maxFrameLen-4 {
		return nil, fmt.Errorf("trace: blob of %d bytes is too large", n)
	}
	payload := make([]byte, 4+n)
	got, err := r.ReadAt(payload[4:], 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("trace: reading a blob: %w", err)
	}
	return payload[:4+got], nil
}

// ReadFileBlob is ReadBlob of a file whose identity is key: its compressed
// contents come from cache when it has them (the bytes read must match),
// and go to it once compressed otherwise. A nil cache is no cache. With a
// cache, a large file is read in the background, from a duplicate of f.
func (w *Writer) ReadFileBlob(f *os.File, n int64, key FileKey, cache *BlobCache) (uint32, error) {
	id, err := w.readFileBlob(f, n, key, cache)
	if err == nil {
		w.noteSource(id, key)
	}
	return id, err
}

// readFileBlob is ReadFileBlob but for noting the blob's source.
func (w *Writer) readFileBlob(f *os.File, n int64, key FileKey, cache *BlobCache) (uint32, error) {
	if cache != nil && n >= deferredRead && uint64(n) <= maxFrameLen-4 && w.deferred.Load() < maxDeferred {
		fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		if err == nil {
			w.deferred.Add(1)
			src := os.NewFile(uintptr(fd), f.Name())
			return w.queueBlob(make([]byte, 4), &fileBlob{cache: cache, key: key, src: src, n: n})
		}
	}
	payload, err := readPayload(f, n)
	if err != nil {
		return 0, err
	}
	if cache == nil {
		return w.addPayload(payload)
	}
	fb := &fileBlob{cache: cache, key: key, n: n}
	fb.check(payload)
	if fb.pre != nil {
		payload = payload[:4]
	}
	return w.queueBlob(payload, fb)
}

// check looks for payload's contents (after the id) in the cache: pre is
// set when it has them, and a file read short is not the one key names.
func (fb *fileBlob) check(payload []byte) {
	if int64(len(payload)-4) != fb.n {
		fb.cache = nil
		return
	}
	if fb.pre = fb.cache.get(fb.key, payload[4:]); fb.pre != nil {
		fb.ulen = len(payload)
	}
}

// readSource reads a deferred file blob (src): the payload, the job's id
// then the file's bytes, and what the cache has of them.
func (fb *fileBlob) readSource(id []byte) ([]byte, error) {
	defer fb.src.Close()
	payload, err := readPayload(fb.src, fb.n)
	fb.src = nil
	if err != nil {
		return nil, err
	}
	copy(payload, id)
	fb.check(payload)
	return payload, nil
}

// addPayload queues a blob frame whose first 4 bytes are room for its id.
func (w *Writer) addPayload(payload []byte) (uint32, error) { return w.queueBlob(payload, nil) }

// queueBlob queues a blob frame whose first 4 bytes are room for its id,
// written as file says when it is not nil.
func (w *Writer) queueBlob(payload []byte, file *fileBlob) (uint32, error) {
	if err := w.check(); err != nil {
		return 0, err
	}
	if uint64(len(payload)) > maxFrameLen {
		return 0, fmt.Errorf("trace: blob of %d bytes is too large", len(payload)-4)
	}
	cost := int64(len(payload))
	if file != nil && file.src != nil {
		cost += file.n
	}
	w.lateMu.Lock()
	for w.lateBytes > 0 && w.lateBytes+cost > maxLateBytes && w.bgErr() == nil {
		w.lateDrained.Wait()
	}
	if w.nBlobs == 1<<32-1 {
		w.lateMu.Unlock()
		return 0, errors.New("trace: too many blobs")
	}
	id := w.nBlobs
	w.nBlobs++
	binary.LittleEndian.PutUint32(payload, id)
	w.late = append(w.late, job{typ: FrameBlob, data: payload, file: file, cost: cost})
	w.lateBytes += cost
	w.lateMu.Unlock()
	w.wakeLate()
	return id, nil
}

// AddLateBlobs stores blobs without waiting for their compression (a
// snapshot's memory: the recorder lets the process run again meanwhile).
// It returns their ids at once; the background goroutine writes them before
// any frame queued after them. The data is not copied: the caller must not
// change it.
func (w *Writer) AddLateBlobs(data [][]byte) ([]uint32, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	// Every blob goes through the late list (addPayload too): ids follow
	// the order of the frames without waiting for the queue.
	ids := make([]uint32, len(data))
	w.lateMu.Lock()
	for i, d := range data {
		if uint64(len(d)) > maxFrameLen-4 {
			w.lateMu.Unlock()
			return nil, fmt.Errorf("trace: blob of %d bytes is too large", len(d))
		}
		id := w.nBlobs
		w.nBlobs++
		ids[i] = id
		w.late = append(w.late, job{typ: FrameBlob, data: d, blob: &id, cost: int64(len(d))})
		w.lateBytes += int64(len(d))
	}
	w.lateMu.Unlock()
	w.wakeLate()
	return ids, nil
}

// wakeLate wakes the background goroutine, idle or not, for late blobs.
func (w *Writer) wakeLate() {
	select {
	case w.lateWake <- struct{}{}:
	default:
	}
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
