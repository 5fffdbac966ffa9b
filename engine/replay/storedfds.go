package replay

import (
	"maps"
	"slices"
)

// storedFds are the stored files' memfds open in a replayed process, by
// blob: each process maps the same libraries several times (the whole
// file, then each segment over it), and each new descriptor cost an open
// and a close injected around the mmap. They are close-on-exec, and the
// program's own descriptor calls are emulated, never made: nothing else
// closes or reuses them. At most maxStoredFds stay open (a program mapping
// many files, git's loose objects, each once, closes the oldest).
type storedFds struct {
	byBlob map[uint32]int
	order  []uint32 // oldest first
	pack   int      // the pack's descriptor plus one (packfile.go), 0 when not open
}

// packFd returns the descriptor of the stored files' pack open in the
// process.
func (sf *storedFds) packFd() (int, bool) { return sf.pack - 1, sf.pack > 0 }

// keepPack notes fd, the pack just opened in the process.
func (sf *storedFds) keepPack(fd int) { sf.pack = fd + 1 }

// maxStoredFds bounds the descriptors kept open in a process.
const maxStoredFds = 64

// fd returns the descriptor of blob open in the process.
func (sf *storedFds) fd(blob uint32) (int, bool) {
	fd, ok := sf.byBlob[blob]
	return fd, ok
}

// keep notes fd, just opened for blob, and returns a descriptor to close
// once the mmap is made (the oldest, when too many are open), or -1.
func (sf *storedFds) keep(blob uint32, fd int) int {
	if sf.byBlob == nil {
		sf.byBlob = map[uint32]int{}
	}
	sf.byBlob[blob] = fd
	sf.order = append(sf.order, blob)
	if len(sf.order) <= maxStoredFds {
		return -1
	}
	old := sf.order[0]
	sf.order = sf.order[1:]
	closeFd := sf.byBlob[old]
	delete(sf.byBlob, old)
	return closeFd
}

// clone is a copy, for a forked process or a checkpoint.
func (sf storedFds) clone() storedFds {
	if sf.byBlob == nil {
		return storedFds{pack: sf.pack}
	}
	return storedFds{byBlob: maps.Clone(sf.byBlob), order: slices.Clone(sf.order), pack: sf.pack}
}
