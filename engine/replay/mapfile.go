package replay

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Private file mappings from the trace's copies. A recorded mmap of a file
// is replayed from the bytes the trace stored (the file may be gone or
// changed). Writing them into anonymous memory costs a copy of every
// mapping in every process: a shell's children each had their libc written
// page by page, most of a process tree's replay. Instead each stored file
// is written once into a sealed memfd, which the replaying process maps
// privately at the recorded address, as the recording mapped the file:
// its pages are shared until written, and those past the file's end fault
// as the file's did.

// maxFileBytes bounds the memory the memfds of stored files take; past it
// mappings are filled as before.
const maxFileBytes = 512 << 20

// storedFiles are the memfds of the trace's stored files, by blob.
type storedFiles struct {
	byBlob map[uint32]*os.File
	bytes  int64
	pack   pack // the small ones (packfile.go)
}

// close releases the memfds.
func (sf *storedFiles) close() {
	for _, f := range sf.byBlob {
		f.Close()
	}
	sf.pack.close()
	sf.byBlob, sf.bytes = nil, 0
}

// storedFile returns the file holding the stored file m maps, opened on
// first use: the file itself where it is still the one recorded
// (localFile), else a sealed memfd filled with the trace's copy; nil
// past maxFileBytes.
func (s *Session) storedFile(m *trace.MapFile) (*os.File, error) {
	s.noteStored(m)
	id := m.Blob
	if f := s.files.byBlob[id]; f != nil {
		return f, nil
	}
	if f := s.localFile(m); f != nil {
		if s.files.byBlob == nil {
			s.files.byBlob = map[uint32]*os.File{}
		}
		s.files.byBlob[id] = f
		return f, nil
	}
	data, err := s.blob(id)
	if err != nil {
		return nil, err
	}
	if s.files.bytes+int64(len(data)) > maxFileBytes {
		return nil, nil
	}
	name := fmt.Sprintf("%s%d", storedMemfd, id)
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("stored file %d: memfd_create: %w", id, err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("stored file %d: %w", id, err)
	}
	// Nothing may change it, the replayed program least of all.
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, fmt.Errorf("stored file %d: seal: %w", id, err)
	}
	if s.files.byBlob == nil {
		s.files.byBlob = map[uint32]*os.File{}
	}
	s.files.byBlob[id] = f
	s.files.bytes += int64(len(data))
	return f, nil
}

// localFile opens, read only, the file at m's path when it is the file
// the recording read blob m.Blob from: its identity (device, inode, size,
// times of modification and change, in nanoseconds: any write changes the
// last) is the recorded one (trace.Reader.BlobSource). On the machine
// that recorded, the libraries a program maps are mostly untouched since:
// mapping them spares decompressing the trace's copies (a third of the
// CPU of python's replay). Elsewhere, or once a file changed, nil.
func (s *Session) localFile(m *trace.MapFile) *os.File {
	if !s.unchanged(m) {
		return nil
	}
	f, err := os.Open(m.Path)
	if err != nil {
		return nil
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if k, ok := trace.FileKeyOf(st); ok && s.sameSource(m.Blob, k) {
			return f
		}
	}
	f.Close()
	return nil
}

// unchanged says whether the file at m's path is the one the recording
// read blob m.Blob from (localFile), asked once a blob.
func (s *Session) unchanged(m *trace.MapFile) bool {
	if s.fromTrace {
		return false // as on another machine: nothing of the program here
	}
	if same, ok := s.local[m.Blob]; ok {
		return same
	}
	same := false
	if m.Path != "" && filepath.IsAbs(m.Path) {
		if st, err := os.Stat(m.Path); err == nil && st.Mode().IsRegular() {
			k, ok := trace.FileKeyOf(st)
			same = ok && s.sameSource(m.Blob, k)
		}
	}
	if s.local == nil {
		s.local = map[uint32]bool{}
	}
	s.local[m.Blob] = same
	return same
}

// sameSource says whether k is the identity of the file blob was read
// from.
func (s *Session) sameSource(blob uint32, k trace.FileKey) bool {
	want, ok := s.rd.BlobSource(blob)
	return ok && k == want
}

// openStored opens f, a stored file's memfd, in the process of t, read
// only, and returns the descriptor (-1 when it cannot).
func (s *Session) openStored(t *rthread, f *os.File) (int, error) {
	path := append([]byte(fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd())), 0)
	cwd := int64(unix.AT_FDCWD)
	ret, err := s.injectWithString(t, path, func(addr uint64) (int64, error) {
		// reexec opens it at the call's PTRACE_SYSEMU stop.
		return ptrace.InjectSyscallAtEmu(t.real, t.proc.mem, unix.SYS_OPENAT, uint64(cwd), addr, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return -1, fmt.Errorf("open a stored file in the replay: %w", err)
	}
	if ret < 0 {
		return -1, nil
	}
	return int(ret), nil
}

// mapStored makes regs, a recorded private mmap of m about to be made
// again, map the stored file's memfd instead (opened in t's process, and
// kept open there for its next mappings), or reports false when the
// mapping must be filled. It returns a descriptor to close after the
// call, -1 for none.
func (s *Session) mapStored(t *rthread, m *trace.MapFile, regs *trace.Regs) (int, bool, error) {
	if at, ok, err := s.packed(m, regs[trace.R9], regs[trace.RSI], regs[trace.RDX]); err != nil {
		return -1, false, err
	} else if ok {
		fd, ok := t.proc.stored.packFd()
		if !ok {
			if fd, err = s.openStored(t, s.files.pack.f); err != nil || fd < 0 {
				return -1, false, err
			}
			t.proc.stored.keepPack(fd)
		}
		regs[trace.R8] = uint64(fd)
		regs[trace.R9] += uint64(at)
		return -1, true, nil
	}
	if fd, ok := t.proc.stored.fd(m.Blob); ok {
		regs[trace.R8] = uint64(fd)
		return -1, true, nil
	}
	f, err := s.storedFile(m)
	if err != nil || f == nil {
		return -1, false, err
	}
	fd, err := s.openStored(t, f)
	if err != nil || fd < 0 {
		return -1, false, err
	}
	regs[trace.R8] = uint64(fd)
	return t.proc.stored.keep(m.Blob, fd), true, nil
}

// closeStored closes a descriptor mapStored opened in t's process.
func (s *Session) closeStored(t *rthread, fd int) error {
	if _, err := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_CLOSE, uint64(fd)); err != nil {
		return fmt.Errorf("close a stored file in the replay: %w", err)
	}
	return nil
}

// noteStored remembers the recorded path of a stored file replay maps: the
// name of its memfd's mappings (Mappings) and where the debugger finds
// its symbols (ChangedFile).
func (s *Session) noteStored(m *trace.MapFile) {
	if m.Path == "" || !filepath.IsAbs(m.Path) {
		return
	}
	if s.storedPaths == nil {
		s.storedPaths = map[uint32]string{}
	}
	s.storedPaths[m.Blob] = m.Path
	if s.exeBlobs == nil {
		s.exeBlobs = map[string]uint32{}
	}
	if _, ok := s.exeBlobs[m.Path]; !ok {
		s.exeBlobs[m.Path] = m.Blob
	}
}

// ChangedFile returns the recording's copy of the file at path where the
// file here is not the one recorded (changed, gone, or another machine's),
// and false where the local file is the one to read, or the recording
// holds none. The debugger reads symbols from it. It reads the trace only,
// so it may be called from the OnMapping callback.
func (s *Session) ChangedFile(path string) ([]byte, bool) {
	id, ok := s.exeBlobs[path]
	if !ok || s.unchanged(&trace.MapFile{Blob: id, Path: path}) {
		return nil, false
	}
	data, err := s.blob(id)
	if err != nil {
		return nil, false
	}
	return bytes.Clone(data), true // the cache's copy stays untouched
}
