package debugger

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// This file is the one lookup of source files and separate debug files:
// this machine's file when it can be read, else the copy the recording
// carries (rewind pack, record --with-sources). The UI, batch mode, MCP
// and DAP all read sources through Session.Source, so that they show the
// same lines and can say where they come from.

// SourceFile is a source file's lines and where they were read.
type SourceFile struct {
	// Path is the file as the debug information names it.
	Path  string
	Lines []string
	// Packed says the lines are the recording's copy: the file cannot be
	// read on this machine.
	Packed bool
}

// Origin says where the file was read, for JSON results: "recording"
// (rewind pack's copy) or "local".
func (f *SourceFile) Origin() string {
	if f.Packed {
		return "recording"
	}
	return "local"
}

// packedFiles holds the packed sources read so far (nil: the recording
// has no copy).
type packedFiles struct {
	mu    sync.Mutex
	lines map[string][]string
}

// withTrace runs f on the session's trace, opened for it: packed files
// are read seldom (once a file) and a reader holds buffers.
func (s *Session) withTrace(f func(rd *trace.Reader) error) error {
	rd, err := trace.Open(s.path)
	if err != nil {
		return err
	}
	defer rd.Close()
	return f(rd)
}

// Source returns the lines of the source file at path: this machine's
// file, else the recording's copy. The error is the local one when the
// recording has no copy either.
func (s *Session) Source(path string) (*SourceFile, error) {
	lines, err := readSource(path)
	if err == nil {
		return &SourceFile{Path: path, Lines: lines}, nil
	}
	if lines, ok := s.packedSource(path); ok {
		return &SourceFile{Path: path, Lines: lines, Packed: true}, nil
	}
	return nil, err
}

// PackedSourceBytes returns the recording's copy of the source file at
// path, whole (a DAP client shows it as it was).
func (s *Session) PackedSourceBytes(path string) ([]byte, error) {
	var data []byte
	err := s.withTrace(func(rd *trace.Reader) error {
		f, ok := rd.PackedSource(path)
		if !ok {
			return fmt.Errorf("%s: %w", path, errNotPacked)
		}
		var err error
		data, err = rd.ReadPacked(f)
		return err
	})
	return data, err
}

// packedSource returns the lines of the recording's copy of path.
func (s *Session) packedSource(path string) ([]string, bool) {
	p := &s.packed
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.lines[path]; ok {
		return l, l != nil
	}
	data, err := s.PackedSourceBytes(path)
	var lines []string
	if err == nil {
		lines = splitLines(data)
	}
	if p.lines == nil {
		p.lines = map[string][]string{}
	}
	p.lines[path] = lines
	return lines, lines != nil
}

// splitLines splits a file as readSource's scanner does.
func splitLines(data []byte) []string {
	lines := []string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// packedDebug is the session's dwarf.DebugLookup: the recording's copy
// of an image's separate debug file.
func (s *Session) packedDebug(image, buildID string) ([]byte, string, bool) {
	var data []byte
	var path string
	err := s.withTrace(func(rd *trace.Reader) error {
		f, ok := rd.PackedDebug(image, buildID)
		if !ok {
			return errNotPacked
		}
		path = f.Path
		var err error
		data, err = rd.ReadPacked(f)
		return err
	})
	return data, path, err == nil
}

// errNotPacked: the recording has no copy of the file.
var errNotPacked = errors.New("not packed in the recording")

// TargetFile returns the file at path as the recording's machine had it,
// for a client that reads the target's files itself (gdb's vFile packets
// under its default sysroot, target:): the recording's copy of an
// executable, loader or library where this machine's file is not the one
// recorded, a packed debug file, else this machine's file. fromTrace says
// which.
func (s *Session) TargetFile(path string) (data []byte, fromTrace bool, err error) {
	if data, ok := s.tl.Session().ChangedFile(path); ok {
		return data, true, nil
	}
	data, err = os.ReadFile(path)
	if err == nil {
		return data, false, nil
	}
	perr := s.withTrace(func(rd *trace.Reader) error {
		for _, f := range rd.Packed() {
			if f.Kind == trace.PackedDebug && f.Path == path {
				var rerr error
				data, rerr = rd.ReadPacked(f)
				return rerr
			}
		}
		return errNotPacked
	})
	if perr != nil {
		return nil, false, err // this machine's error: nothing else has it
	}
	return data, true, nil
}
