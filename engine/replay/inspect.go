package replay

// What a session shows of the replayed program where it stands: its
// threads, their registers, its memory and its mappings.

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Thread describes one thread of the replay.
type Thread struct {
	Tid  int32 // as recorded
	Real int   // in the replaying process
	Dead bool
}

// Threads lists the live threads of the replay, in recorded tid order.
func (s *Session) Threads() []Thread {
	var out []Thread
	for _, t := range s.threads {
		if !t.dead {
			out = append(out, Thread{Tid: t.rec, Real: t.real})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tid < out[j].Tid })
	return out
}

// Regs returns the general registers of thread tid (as recorded).
func (s *Session) Regs(tid int32) (trace.Regs, error) {
	return onThread(s, tid, func(real int) (trace.Regs, error) {
		var regs trace.Regs
		err := ptrace.GetRegs(real, &regs)
		return regs, err
	})
}

// FPRegs returns the x87/SSE state (the 512-byte FXSAVE area) of thread tid.
func (s *Session) FPRegs(tid int32) ([]byte, error) {
	return onThread(s, tid, ptrace.GetFPRegs)
}

// XState returns the XSAVE area of thread tid (AVX state included).
func (s *Session) XState(tid int32) ([]byte, error) {
	return onThread(s, tid, ptrace.GetXState)
}

// onThread reads the state of thread tid (as recorded) with get, given its
// real tid, on the ptrace thread that traces it.
func onThread[T any](s *Session, tid int32, get func(real int) (T, error)) (T, error) {
	t := s.threads[tid]
	if t == nil || t.dead {
		var none T
		return none, fmt.Errorf("no thread %d at this point", tid)
	}
	return ptrace.DoValue(s.th, func() (T, error) { return get(t.real) })
}

// OnMapping, when set, is called (on the ptrace thread) after a file is
// mapped, so that breakpoints on symbols of a newly loaded library can be set.
func (s *Session) SetOnMapping(f func()) { s.onMapping = f }

// ReadMem reads n bytes of the replaying process's memory at addr. The
// rdrand and rdseed replaced by traps read as the program's instructions.
func (s *Session) ReadMem(addr uint64, n int) ([]byte, error) {
	buf := make([]byte, n)
	var got int
	var err error
	s.th.Do(func() {
		if s.mem == nil {
			err = errors.New("the process is gone")
			return
		}
		got, err = s.mem.ReadAt(buf, addr)
		s.main.code.Original(buf[:got], addr)
	})
	return buf[:got], err
}

// Mapping is one region of the replaying process's address space. Path is
// the file it was mapped from in the recording ("" for anonymous memory).
type Mapping struct {
	Start, End uint64
	Offset     uint64
	Perms      string
	Path       string
}

// Mappings lists the address space: the kernel's view, with the file names
// of mappings the replay rebuilt from the trace.
func (s *Session) Mappings() ([]Mapping, error) {
	maps, err := ptrace.ReadMaps(s.pid)
	if err != nil {
		return nil, err
	}
	out := make([]Mapping, 0, len(maps))
	for _, k := range maps {
		// A file deleted since it was mapped (go test's binary, written
		// back for the replay and removed) still has its symbols there.
		m := Mapping{Start: k.Start, End: k.End, Perms: k.Perms, Offset: k.Offset, Path: strings.TrimSuffix(k.Path, " (deleted)")}
		if m.Path == "" || strings.HasPrefix(m.Path, "/memfd:rewind-") {
			if path, off, ok := s.fileMaps.at(m.Start); ok {
				m.Path, m.Offset = path, off
			} else if id, ok := storedBlobOf(m.Path); ok && s.storedPaths[id] != "" {
				m.Path = s.storedPaths[id] // a stored file's memfd (mapfile.go)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// TID of the thread whose event comes next, or -1 at the end.
func (s *Session) NextThread() int32 {
	var tid int32 = -1
	s.th.Do(func() {
		if e, err := s.peek(0); err == nil && e != nil {
			tid = e.Tid
		}
	})
	return tid
}
