package replay

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The pack: small stored files in one memfd. git log maps each of its
// loose objects (a few KB each, ~5000 mappings of ~2000 files): replay
// opened each file's copy in the process (the hook's openat of
// /proc/PID/fd/N, a path through procfs) and closed it around every
// mapping, and kept a descriptor of its own for each file. Small files go
// instead, once each, page-aligned, into one memfd that each process opens
// once and maps at the file's place in it: one mmap a mapping, as recorded.
//
// Only mappings that end within the file's last page: past it, a file's
// mapping faults (SIGBUS) where the pack has the next file. And not code,
// whose analysis finds a memfd's file by its name (execImage).

// maxPacked is the largest stored file the pack takes: the largest the
// hook reads into its record (git's loose objects are such files).
const maxPacked = hook.NewFileMax

// packMemfd names the pack's memfd (in /proc/PID/maps; mapNames gives its
// mappings their files' names).
const packMemfd = "rewind-stored-pack"

// pack is the memfd of small stored files, and where each is in it.
type pack struct {
	f   *os.File
	end int64            // where the next file goes (page-aligned)
	at  map[uint32]int64 // by blob
}

// close releases the memfd.
func (p *pack) close() {
	if p.f != nil {
		p.f.Close()
	}
	*p = pack{}
}

// packed returns where in the pack the stored file m is, putting it there
// first, for a private mapping of length bytes from offset of it with
// protection prot; false when the pack does not take it (code, a big file,
// a mapping past the file's last page, the stored files' memory bound).
func (s *Session) packed(m *trace.MapFile, offset, length, prot uint64) (int64, bool, error) {
	if prot&unix.PROT_EXEC != 0 || length == 0 {
		return 0, false, nil
	}
	size, ok := s.rd.BlobSize(m.Blob)
	if !ok || size == 0 || size > maxPacked || offset+length > pageEnd(0, uint64(size)) {
		return 0, false, nil
	}
	if at, ok := s.files.pack.at[m.Blob]; ok {
		return at, true, nil
	}
	if s.files.bytes+int64(size) > maxFileBytes {
		return 0, false, nil
	}
	// Straight from the trace, not through the blobs replay keeps
	// decompressed: once in the pack, they are not read again.
	data, err := s.rd.Blob(m.Blob)
	if err != nil {
		return 0, false, err
	}
	at, err := s.addToPack(m.Blob, data)
	return at, err == nil, err
}

// addToPack writes data, blob's file, at the pack's end.
func (s *Session) addToPack(blob uint32, data []byte) (int64, error) {
	p := &s.files.pack
	if p.f == nil {
		fd, err := unix.MemfdCreate(packMemfd, unix.MFD_CLOEXEC)
		if err != nil {
			return 0, fmt.Errorf("stored files' pack: memfd_create: %w", err)
		}
		p.f, p.at = os.NewFile(uintptr(fd), packMemfd), map[uint32]int64{}
	}
	at := p.end
	if _, err := p.f.WriteAt(data, at); err != nil {
		return 0, fmt.Errorf("stored files' pack: %w", err)
	}
	p.at[blob] = at
	p.end = int64(pageEnd(uint64(at), uint64(len(data))))
	s.files.bytes += int64(len(data))
	return at, nil
}
