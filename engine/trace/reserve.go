package trace

// Where a trace is written: a name reserved before the program starts
// (exclusively, so two recordings never share one), written as a
// partial file and renamed when the trace is closed.

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"sync"
)

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

// Start returns a Writer for the trace, whose first frame is the header:
// encoded, compressed and written by the Writer's background goroutine,
// off the caller's way (~0.7 ms of each recording's start, most of it the
// encoder's first tables), so h must not change from then on. The Writer
// owns the files from then on; if Start fails, they are removed.
// h.FormatVersion is recorded as CurrentVersion whatever its value; an
// error writing the header is the Writer's, as a later frame's would be.
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
	enc, err := newEncoder()
	if err != nil {
		p.Discard()
		return nil, fmt.Errorf("trace: %w", err)
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
	go w.background(enc, &hc)
	return w, nil
}
