package replay

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// A private file mapping is replayed as anonymous memory filled with the
// file's recorded bytes (the file may be gone or changed). Natively, the
// pages of such a mapping that lie wholly past the file's end fault with
// SIGBUS; anonymous memory would not, and a program that touches one (a
// reader of a file truncated under it, a loader probing) took a signal
// when recorded and none in replay. Those pages are mapped from an empty
// memfd instead, where every access faults with SIGBUS as the file's did.

// pastEOF is replay's empty object: its id is 0, which no recorded shared
// object has.
var pastEOF = trace.SharedMap{Object: 0, Path: "rewind-past-eof"}

// pastEnd returns the part of the mapping at addr of length bytes of m that
// lies past the last page of its file (size bytes), or n == 0.
func pastEnd(m *trace.MapFile, size, addr, length uint64) (start, n uint64) {
	end := (size + pageSize - 1) &^ (pageSize - 1)
	length = (length + pageSize - 1) &^ (pageSize - 1)
	if m.Offset+length <= end {
		return 0, 0
	}
	skip := uint64(0)
	if end > m.Offset {
		skip = end - m.Offset
	}
	return addr + skip, length - skip
}

// faultPastEnd maps the pages of the mapping e made (m, t's process) that
// lie past its file's end from the empty object, with the mapping's
// protection.
func (s *Session) faultPastEnd(t *rthread, e *trace.Event, m *trace.MapFile) error {
	data, err := s.blob(m.Blob)
	if err != nil {
		return err
	}
	start, n := pastEnd(m, uint64(len(data)), e.ExitRegs[trace.RAX], e.Regs[trace.RSI])
	if n == 0 {
		return nil
	}
	fd, err := s.sharedFd(t, &pastEOF)
	if err != nil {
		return err
	}
	ret, err := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_MMAP, start, n, e.Regs[trace.RDX], unix.MAP_PRIVATE|unix.MAP_FIXED, uint64(fd), 0)
	if err == nil && ret < 0 {
		err = unix.Errno(-ret)
	}
	if err != nil {
		return fmt.Errorf("map the %d bytes past the end of %s: %w", n, m.Path, err)
	}
	return nil
}
