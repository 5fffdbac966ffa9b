// Package prefault allocates memory the kernel backs at once.
//
// Fresh memory touched page by page costs a page fault per page: on a VM,
// 5–30 ms for the 6 MB that a program's single big read brings the
// recorder, once to read it and once to frame it, while the program waits.
// One madvise(MADV_POPULATE_WRITE) backs the pages in one go.
package prefault

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Min is the size from which Bytes asks the kernel: below it, the pages
// are few and the call costs more than their faults.
const Min = 256 << 10

// Bytes returns an empty slice with room for n bytes, whose pages are
// backed when n is at least Min. The kernel may refuse (before Linux 5.14,
// or short of memory): the memory is then as make gives it.
func Bytes(n int) []byte {
	b := make([]byte, n)
	if n >= Min {
		const page = 4096
		off := (page - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%page)) % page
		if whole := (n - off) / page * page; whole > 0 {
			unix.Madvise(b[off:off+whole], unix.MADV_POPULATE_WRITE)
		}
	}
	return b[:0]
}
