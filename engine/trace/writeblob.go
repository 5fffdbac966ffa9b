package trace

// The trace's blobs: data too big for an event (what a read returned, a
// file the program mapped), stored once by content, read from the file
// itself when it can be deferred, and late ones (stored after the events
// that name them).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"time"

	"golang.org/x/sys/unix"
)

// fileBlob is how a blob of a file's contents is written: from the cache's
// compressed frames (pre, or entry when they are copied from the cache's
// file), or compressed now and given to the cache.
type fileBlob struct {
	cache *BlobCache
	key   FileKey
	pre   []byte
	ulen  int // the payload's length (id and contents) when pre or entry is set
	// entry, when not nil, is the cache's file whose zlen bytes of frames,
	// from offset cacheHeader, are copied into the trace as they are
	// (copyEntry). zsum is the CRC-32C of the cached frames (pre or entry's).
	entry *os.File
	zlen  int64
	zsum  uint32
	// src, when not nil, is the file to read n bytes of in the
	// background (the job's data is then only the id).
	src *os.File
	n   int64
	// at is when the file's key was taken (about): whether the file had
	// settled then decides whether its key alone vouches for its bytes.
	at time.Time
}

// deferredRead is the size from which ReadFileBlob reads a file in the
// background: a program waits for the recorder at each mmap, and reading
// (then checking against the cache) a large library costs milliseconds;
// smaller files are read at once, which keeps few descriptors open.
const deferredRead = 64 << 10

// maxDeferred bounds the files waiting to be read (their descriptors).
const maxDeferred = 64

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
			return w.queueBlob(make([]byte, 4), &fileBlob{cache: cache, key: key, src: src, n: n, at: time.Now()})
		}
	}
	payload, err := readPayload(f, n)
	if err != nil {
		return 0, err
	}
	if cache == nil {
		return w.addPayload(payload)
	}
	fb := &fileBlob{cache: cache, key: key, n: n, at: time.Now()}
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
	if e, ok := fb.cache.get(fb.key, payload[4:], fb.at); ok {
		fb.pre, fb.zsum, fb.ulen = e.frames, e.zsum, len(payload)
	}
}

// readSource reads a deferred file blob (src): the payload, the job's id
// then the file's bytes, unless the cache has them. The payload is then
// only the id, and entry the cache's file, whose frames are copied into
// the trace without passing through the recorder's memory: the file's key
// vouched for them, or the file was checked where it lies (checkMapped).
// Reading a make's 20 MB of cached compilers and libraries, and framing
// them in fresh memory, page fault by page fault, was a seventh of its
// recorder's CPU.
func (fb *fileBlob) readSource(id []byte) ([]byte, error) {
	defer fb.src.Close()
	if f, e, ok := fb.cache.open(fb.key); ok {
		if e.size == uint64(fb.n) && (e.settled || fb.checkMapped(e)) {
			fb.cache.use(fb.key, e, fb.at)
			fb.entry, fb.zlen, fb.zsum, fb.ulen = f, e.zlen, e.zsum, 4+int(fb.n)
			fb.src = nil
			return id[:4:4], nil
		}
		f.Close()
	}
	payload, err := readPayload(fb.src, fb.n)
	fb.src = nil
	if err != nil {
		return nil, err
	}
	copy(payload, id)
	fb.check(payload)
	return payload, nil
}

// copyEntry appends the n bytes of frames that follow the header of the
// cache's entry to dst, in the kernel (copy_file_range: neither read into
// the recorder's memory nor, on a file system that shares extents, even
// copied).
func copyEntry(dst, entry *os.File, n int64) error {
	if _, err := entry.Seek(cacheHeader, io.SeekStart); err != nil {
		return fmt.Errorf("trace: copying a cached blob: %w", err)
	}
	got, err := dst.ReadFrom(io.LimitReader(entry, n))
	if err == nil && got != n {
		err = fmt.Errorf("trace: copying a cached blob: %d bytes of %d: %w", got, n, io.ErrUnexpectedEOF)
	}
	return err
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

// checkMapped says whether the file holds the bytes the cache's entry e
// was made from, looking through a mapping of the file: no copy of the
// file into fresh memory (libc's 2 MB cost ~1 ms of each recording so,
// read). False too when the file is shorter than n, even when cut short
// during the check (a read of the mapping past the file's end faults).
func (fb *fileBlob) checkMapped(e cacheEntry) bool {
	if fb.n <= 0 || fb.n > math.MaxInt32 {
		return false
	}
	fd := int(fb.src.Fd())
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Size < fb.n {
		return false
	}
	data, err := unix.Mmap(fd, 0, int(fb.n), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return false
	}
	defer unix.Munmap(data)
	holds := false
	faulted := faultSafe(func() { holds = e.holds(data) })
	return holds && !faulted
}

// faultSafe runs f, which reads a mapping of a file, and says whether a
// read faulted (past the end of a file cut short meanwhile: SIGBUS)
// instead of letting the fault end rewind.
func faultSafe(f func()) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			faulted = true
		}
	}()
	f()
	return false
}
