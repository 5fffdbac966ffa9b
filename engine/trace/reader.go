package trace

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rewind-debugger/rewind/engine/internal/prefault"
)

// frameInfo is the header of one frame, found by the scan of Open.
type frameInfo struct {
	typ  byte
	off  int64 // offset of the frame's type byte
	clen uint32
	ulen uint32
	crc  uint32
}

// Reader reads a trace file. Open scans the frame headers (without reading
// the payloads) to find the blobs and the footer; Next then decodes the event
// frames in order.
//
// A damaged or unfinished file is read up to its first bad frame: Next
// returns io.EOF there and Status says why. Frames are checked (CRC,
// decompression) before any of their events is returned; an event that
// cannot be decoded in a frame that passed these checks (a bug, or a crafted
// file) ends the stream at that event, and so does an event that maps a
// blob whose frame fails its CRC check (replay could not go past it). Next
// is not safe for concurrent use; Blob, Header and Footer are.
type Reader struct {
	path   string
	f      *os.File
	ra     io.ReaderAt
	header *Header
	footer *Footer
	frames []frameInfo
	blobs  []int // frame index of each blob id
	// sources are the footer's Sources by blob.
	sources map[uint32]FileKey

	codec *codec
	next  int // next frame index for Next
	cur   dec // the rest of the current events frame
	curFr int // index of the current events frame
	nread int64
	done  bool
	// frameFirst is the number of the first event of the events frame
	// being read (or that could not be read), for messages.
	frameFirst int64
	// blobChecked says, per blob id, that its frame passed its CRC check
	// (done when an event first maps it).
	blobChecked []bool
	size        int64

	// scanStop is a problem found by the scan (an incomplete or unreadable
	// frame, or a bad footer); it ends the stream once Next gets there.
	scanStop error
	// stop is the problem that ended the stream, once Next has returned
	// io.EOF because of it.
	stop error

	cbuf, ubuf []byte
}

// Open opens a trace file, checks its magic and version, reads its header and
// footer and indexes its frames.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("trace: %w", err)
	}
	if st.Size() == 0 && st.Mode().IsRegular() {
		f.Close()
		return nil, emptyTrace(path)
	}
	r, err := newReader(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.f = f
	return r, nil
}

// newReader reads a trace of size bytes from ra; path is used in messages.
func newReader(ra io.ReaderAt, size int64, path string) (*Reader, error) {
	var pre [PreambleSize]byte
	n, err := ra.ReadAt(pre[:], 0)
	if n < len(Magic) || string(pre[:len(Magic)]) != Magic {
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("trace: %s: %w", path, err)
		}
		return nil, fmt.Errorf("%w: %s", ErrNotTrace, path)
	}
	if n < PreambleSize {
		return nil, fmt.Errorf("trace: %s: %w", path, errNoHeader)
	}
	if v := binary.LittleEndian.Uint32(pre[len(Magic):]); v == 0 || v > CurrentVersion {
		return nil, &versionError{path: path, version: v}
	}
	r := &Reader{path: path, ra: ra, codec: newCodec(), size: size}
	if err := r.scan(size); err != nil {
		return nil, err
	}
	r.blobChecked = make([]bool, len(r.blobs))
	return r, nil
}

// emptyTrace explains an empty file where a trace was expected: most likely
// the name Reserve claims for a recording that is still running or was
// killed, whose events are in its .partial file.
func emptyTrace(path string) error {
	partials, _ := filepath.Glob(globEscape(path) + ".*.partial")
	if len(partials) == 0 {
		return fmt.Errorf("%w: %s is empty (the name a recording reserves until it finishes, or a file cut to nothing)", ErrNotTrace, path)
	}
	return fmt.Errorf("%w: %s is empty: the name reserved by a recording that has not finished (still running, or killed); what it recorded is in %s",
		ErrNotTrace, path, strings.Join(partials, ", "))
}

// globEscape quotes the characters filepath.Match treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// scan reads the frame headers, and the header and footer frames.
func (r *Reader) scan(size int64) error {
	off := int64(PreambleSize)
	var hb [FrameHeaderSize]byte
	for off < size {
		idx := len(r.frames)
		var typ byte // once known and valid
		fe := func(err error) error { return &frameError{frame: idx, offset: off, typ: typ, err: err} }
		if size-off < FrameHeaderSize {
			// The type byte may be there, for the message.
			if _, err := r.ra.ReadAt(hb[:1], off); err == nil && hb[0] > FrameHeader && hb[0] <= FrameFooter {
				typ = hb[0]
			}
			r.scanStop = fe(errIncomplete)
			break
		}
		if _, err := r.ra.ReadAt(hb[:], off); err != nil {
			r.scanStop = fe(err)
			break
		}
		fi := frameInfo{
			typ:  hb[0],
			off:  off,
			clen: binary.LittleEndian.Uint32(hb[1:]),
			ulen: binary.LittleEndian.Uint32(hb[5:]),
			crc:  binary.LittleEndian.Uint32(hb[9:]),
		}
		if fi.typ < FrameHeader || fi.typ > FrameFooter {
			r.scanStop = fe(fmt.Errorf("unknown frame type %d", fi.typ))
			break
		}
		typ = fi.typ
		if (fi.typ == FrameHeader) != (idx == 0) {
			if idx == 0 {
				r.scanStop = fe(errors.New("first frame is not a header"))
			} else {
				r.scanStop = fe(errors.New("unexpected header frame"))
			}
			break
		}
		if fi.typ == FrameBlob && fi.ulen < 4 {
			r.scanStop = fe(fmt.Errorf("blob frame of %d bytes", fi.ulen))
			break
		}
		if int64(fi.clen) > size-off-FrameHeaderSize {
			r.scanStop = fe(errIncomplete)
			break
		}
		r.frames = append(r.frames, fi)
		if fi.typ == FrameBlob {
			r.blobs = append(r.blobs, idx)
		}
		off += FrameHeaderSize + int64(fi.clen)
		if fi.typ == FrameFooter {
			break // anything after the footer is not part of the trace
		}
	}

	if len(r.frames) == 0 {
		if r.scanStop == nil || errors.Is(r.scanStop, errIncomplete) {
			return fmt.Errorf("trace: %s: %w", r.path, errNoHeader)
		}
		return fmt.Errorf("trace: %s: no header: %w", r.path, r.scanStop)
	}
	var h Header
	if err := r.readJSON(0, &h); err != nil {
		var fe *frameError
		if errors.As(err, &fe) {
			return fmt.Errorf("trace: %s: the header (frame 0) %s: %w", r.path, why(fe.err), errUnreadable)
		}
		return fmt.Errorf("trace: %s: the header: %w", r.path, err)
	}
	r.header = &h

	if last := len(r.frames) - 1; r.frames[last].typ == FrameFooter {
		var ft Footer
		if err := r.readJSON(last, &ft); err != nil {
			r.scanStop = err
		} else {
			r.footer = &ft
			for _, src := range ft.Sources {
				if r.sources == nil {
					r.sources = map[uint32]FileKey{}
				}
				r.sources[src.Blob] = src.Key
			}
		}
		r.frames = r.frames[:last]
	}
	return nil
}

// readJSON decodes the JSON payload of frame idx into v.
func (r *Reader) readJSON(idx int, v any) error {
	data, err := r.readFrame(idx, nil, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &frameError{frame: idx, offset: r.frames[idx].off, typ: r.frames[idx].typ, err: err}
	}
	return nil
}

// readFrame reads, checks and decompresses the payload of frame idx. It
// uses cbuf and ubuf as buffers if they are large enough; the result is
// ubuf or a new slice.
func (r *Reader) readFrame(idx int, cbuf, ubuf []byte) ([]byte, error) {
	fi := r.frames[idx]
	fe := func(err error) error { return &frameError{frame: idx, offset: fi.off, typ: fi.typ, err: err} }
	cbuf, err := r.readRaw(idx, cbuf)
	if err != nil {
		return nil, err
	}
	// The decoder writes into ubuf and no further (WithDecodeAllCapLimit):
	// left to itself it allocates what a zstd frame header claims, up to
	// 4 GiB for a few crafted bytes. ulen is bounded by what clen bytes
	// of zstd can hold, so that ulen cannot claim it either.
	if uint64(fi.ulen) > uint64(fi.clen)*maxZstdExpansion {
		return nil, fe(fmt.Errorf("%d bytes cannot decompress to the %d the frame header says", fi.clen, fi.ulen))
	}
	if cap(ubuf) < int(fi.ulen) {
		ubuf = prefault.Bytes(int(fi.ulen)) // a big read's frame: no fault a page
	}
	dec, err := decoder()
	if err != nil {
		return nil, fe(err)
	}
	out, err := dec.DecodeAll(cbuf, ubuf[:0])
	if err != nil {
		return nil, fe(fmt.Errorf("zstd: %w", err))
	}
	if len(out) != int(fi.ulen) {
		return nil, fe(fmt.Errorf("decompressed to %d bytes, frame header says %d", len(out), fi.ulen))
	}
	return out, nil
}

// readRaw reads the compressed payload of frame idx into cbuf (if large
// enough) and checks its CRC.
func (r *Reader) readRaw(idx int, cbuf []byte) ([]byte, error) {
	fi := r.frames[idx]
	fe := func(err error) error { return &frameError{frame: idx, offset: fi.off, typ: fi.typ, err: err} }
	if cap(cbuf) < int(fi.clen) {
		cbuf = prefault.Bytes(int(fi.clen))
	}
	cbuf = cbuf[:fi.clen]
	if _, err := r.ra.ReadAt(cbuf, fi.off+FrameHeaderSize); err != nil {
		if err == io.EOF {
			return nil, fe(errIncomplete)
		}
		return nil, fe(err)
	}
	if crc32.Checksum(cbuf, castagnoli) != fi.crc {
		return nil, fe(errCRC)
	}
	return cbuf, nil
}

// Header returns the trace's header.
func (r *Reader) Header() *Header { return r.header }

// Footer returns the trace's footer, or nil if the recording did not finish
// (or the footer is damaged).
func (r *Reader) Footer() *Footer { return r.footer }

// Next returns the next event, or io.EOF after the last one. The event and
// its slices belong to the caller. A damaged frame ends the stream early:
// Next returns io.EOF, and Truncated says what happened. Next returns no
// other error.
func (r *Reader) Next() (*Event, error) {
	for {
		if len(r.cur.b) > 0 {
			e := r.codec.decodeEvent(&r.cur)
			if r.cur.err != nil {
				r.stopAt(&frameError{frame: r.curFr, offset: r.frames[r.curFr].off, typ: FrameEvents,
					err: &eventError{event: r.nread, err: r.cur.err}})
				continue
			}
			if e.Map != nil {
				if err := r.checkBlob(e.Map); err != nil {
					// Replay cannot map the file, nor run what follows.
					r.stopAt(err)
					continue
				}
			}
			r.nread++
			return e, nil
		}
		if r.done {
			return nil, io.EOF
		}
		r.frameFirst = r.nread
		if r.next >= len(r.frames) {
			r.stopAt(r.scanStop)
			continue
		}
		idx := r.next
		r.next++
		if r.frames[idx].typ != FrameEvents {
			continue
		}
		// Do not keep the buffers of an outsized frame.
		if cap(r.cbuf) > 4*frameTarget {
			r.cbuf = nil
		}
		if cap(r.ubuf) > 4*frameTarget {
			r.ubuf = nil
		}
		if c := int(r.frames[idx].clen); cap(r.cbuf) < c {
			r.cbuf = make([]byte, c)
		}
		data, err := r.readFrame(idx, r.cbuf, r.ubuf)
		if err != nil {
			r.stopAt(err)
			continue
		}
		r.ubuf = data
		r.cur, r.curFr = dec{b: data}, idx
	}
}

// checkBlob checks, once per blob, the CRC of the blob an event maps. A
// blob id the trace does not hold is left to the replayer to report.
func (r *Reader) checkBlob(m *MapFile) error {
	if uint64(m.Blob) >= uint64(len(r.blobs)) || r.blobChecked[m.Blob] {
		return nil
	}
	if _, err := r.readRaw(r.blobs[m.Blob], nil); err != nil {
		// The stream ends here: there is no need to remember it.
		return &blobError{blob: m.Blob, path: m.Path, err: err}
	}
	r.blobChecked[m.Blob] = true
	return nil
}

// stopAt ends the stream; err (nil for a normal end) says why.
func (r *Reader) stopAt(err error) {
	r.stop = err
	r.done = true
	r.cur = dec{}
}

// BlobSource returns the identity of the file blob id was read from, when
// the footer says it (Footer.Sources).
func (r *Reader) BlobSource(id uint32) (FileKey, bool) {
	k, ok := r.sources[id]
	return k, ok
}

// Blobs returns the number of blobs in the trace.
func (r *Reader) Blobs() int { return len(r.blobs) }

// BlobSize returns the length of blob id's contents, as its frame's header
// says (Blob checks it), without reading them; false for no such blob.
func (r *Reader) BlobSize(id uint32) (int, bool) {
	if uint64(id) >= uint64(len(r.blobs)) {
		return 0, false
	}
	n := int(r.frames[r.blobs[id]].ulen) - 4 // the id first
	return n, n >= 0
}

// Blob returns the contents of blob id, read from the file (nothing is
// cached). The slice belongs to the caller. Blob may be called at any time,
// also concurrently with Next.
func (r *Reader) Blob(id uint32) ([]byte, error) {
	if uint64(id) >= uint64(len(r.blobs)) {
		return nil, fmt.Errorf("trace: %s: no blob %d (the trace has %d)", r.path, id, len(r.blobs))
	}
	idx := r.blobs[id]
	data, err := r.readFrame(idx, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("trace: %s: blob %d: %w", r.path, id, err)
	}
	if got := binary.LittleEndian.Uint32(data); got != id {
		return nil, fmt.Errorf("trace: %s: blob %d: %w", r.path, id,
			&frameError{frame: idx, offset: r.frames[idx].off, typ: FrameBlob, err: fmt.Errorf("holds blob %d", got)})
	}
	return data[4:len(data):len(data)], nil
}

// Close closes the file.
func (r *Reader) Close() error {
	r.cur = dec{}
	r.ubuf, r.cbuf = nil, nil
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// ReadAll reads a whole trace: its header, all its events, its footer (nil
// if missing) and the warning of Truncated ("" if the trace is complete).
func ReadAll(path string) (h *Header, events []*Event, f *Footer, warning string, err error) {
	r, err := Open(path)
	if err != nil {
		return nil, nil, nil, "", err
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return r.Header(), events, r.Footer(), "", err
		}
		events = append(events, e)
	}
	return r.Header(), events, r.Footer(), r.Truncated(), nil
}

// Path returns the path the trace was opened from.
func (r *Reader) Path() string { return r.path }
