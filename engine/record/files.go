package record

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// maxBlob caps the size of one mapped file stored in a trace.
const maxBlob = 2 << 30

// A stored file is known by what stat says of it, as the hook's table of
// stored files holds it (hook.StoredFile).

// fileStore saves the contents of mmap'ed files once per trace, so that a
// trace replays after the files change or disappear.
type fileStore struct {
	w     *trace.Writer
	cache *trace.BlobCache // compressed contents from earlier recordings
	blobs map[hook.StoredFile]uint32
	// stored lists the files stored, in order: the table the hook page
	// checks an mmap's file against, which names them by index (the
	// recorder then needs no look at the descriptor, gone by the flush).
	stored []storedFile
	// onStore publishes a file just stored, the index-th (hook pages).
	onStore func(index int, f storedFile)
}

// storedFile is a file stored in the trace: what an mmap of it refers to.
type storedFile struct {
	key  hook.StoredFile
	blob uint32
	path string
}

// hookFiles is the table of stored files as the hook holds it.
func (s *fileStore) hookFiles() []hook.StoredFile {
	out := make([]hook.StoredFile, len(s.stored))
	for i, f := range s.stored {
		out[i] = f.key
	}
	return out
}

// mapFile is how replay fills an mmap the hook recorded of the index-th
// file stored (from 0), of length bytes from offset.
func (s *fileStore) mapFile(index uint64, offset, length uint64) (*trace.MapFile, error) {
	if index >= uint64(len(s.stored)) {
		return nil, fmt.Errorf("the hook recorded an mmap of stored file %d of %d", index, len(s.stored))
	}
	f := s.stored[index]
	return &trace.MapFile{Blob: f.blob, Offset: offset, Length: length, Path: f.path}, nil
}

func newFileStore(w *trace.Writer) *fileStore {
	return &fileStore{w: w, cache: trace.DefaultBlobCache(), blobs: map[hook.StoredFile]uint32{}}
}

func (s *fileStore) count() int { return len(s.blobs) }

// capture stores the file behind fd of tid (if not yet stored) and returns
// how replay fills the mapping. A nil result means the mapping needs no
// contents (/dev/zero).
func (s *fileStore) capture(tid, fd int, offset, length uint64) (*trace.MapFile, error) {
	return s.captureFile(fmt.Sprintf("/proc/%d/fd/%d", tid, fd), offset, length)
}

// captureFile is capture for a file named by a /proc link.
func (s *fileStore) captureFile(path string, offset, length uint64) (*trace.MapFile, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, fmt.Errorf("stat mapped file: %w", err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFCHR:
		if unix.Major(st.Rdev) == 1 && unix.Minor(st.Rdev) == 5 { // /dev/zero
			return nil, nil
		}
		return nil, fmt.Errorf("mapping of a device is not supported")
	default:
		return nil, fmt.Errorf("mapping of file type %#o is not supported", st.Mode&unix.S_IFMT)
	}
	key := hook.StoredFile{Dev: st.Dev, Ino: st.Ino, Size: uint64(st.Size), MtimeNs: uint64(st.Mtim.Nano())}
	id, ok := s.blobs[key]
	if !ok {
		if st.Size > maxBlob {
			return nil, fmt.Errorf("mapped file of %d bytes is too large to store", st.Size)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read mapped file: %w", err)
		}
		if st.Size > 0 {
			fk := trace.FileKey{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
			id, err = s.w.ReadFileBlob(f, st.Size, fk, s.cache)
		} else {
			// A file that says it is empty may not be (procfs, sysfs).
			var data []byte
			if data, err = io.ReadAll(f); err == nil {
				id, err = s.w.AddBlob(data)
			}
		}
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read mapped file: %w", err)
		}
		target, _ := os.Readlink(path)
		s.add(key, id, target)
		return &trace.MapFile{Blob: id, Offset: offset, Length: length, Path: target}, nil
	}
	target, _ := os.Readlink(path)
	return &trace.MapFile{Blob: id, Offset: offset, Length: length, Path: target}, nil
}

// add notes blob id, just stored, as the file key names, at path, and
// publishes it to the hook pages.
func (s *fileStore) add(key hook.StoredFile, id uint32, path string) {
	s.blobs[key] = id
	sf := storedFile{key: key, blob: id, path: path}
	s.stored = append(s.stored, sf)
	if s.onStore != nil {
		s.onStore(len(s.stored)-1, sf)
	}
}

// storeNew stores f, a file the hook read whole when the program mapped
// it (not stored yet then), unless another mapping stored it since, and
// returns how replay fills the mapping, of length bytes from offset.
func (s *fileStore) storeNew(f *hook.NewFile, offset, length uint64) (*trace.MapFile, error) {
	key := hook.StoredFile{Dev: f.Dev, Ino: f.Ino, Size: f.Size, MtimeNs: f.MtimeNs}
	id, ok := s.blobs[key]
	if !ok {
		var err error
		fk := trace.FileKey{Dev: f.Dev, Ino: f.Ino, Size: int64(f.Size), Mtime: int64(f.MtimeNs), Ctime: int64(f.CtimeNs)}
		if id, err = s.w.AddFileBlob(f.Data, fk); err != nil {
			return nil, fmt.Errorf("store a mapped file: %w", err)
		}
		s.add(key, id, f.Path)
	}
	return &trace.MapFile{Blob: id, Offset: offset, Length: length, Path: f.Path}, nil
}
