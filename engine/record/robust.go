package record

import (
	"encoding/binary"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// robustLimit is the kernel's ROBUST_LIST_LIMIT: it walks no more entries
// than this, so neither do we (a corrupted list must not loop forever).
const robustLimit = 2048

// robustWords reads the futex words of the robust list whose head is at head
// (as given to set_robust_list), after the thread that owned it has died.
//
// Why: a dying thread's robust mutexes are marked FUTEX_OWNER_DIED by the
// kernel, a write to the program's memory that no system call reports. In
// replay the kernel walks the same list, but it only marks words holding
// the dying thread's tid, and the replaying thread has another tid, so
// pthread_mutex_lock would not see EOWNERDEAD. The words are logged with the
// thread's exit and written back there.
func robustWords(m *ptrace.Mem, head uint64) []trace.Mem {
	var hdr [24]byte // struct robust_list_head: next, futex_offset, list_op_pending
	if n, _ := m.ReadAt(hdr[:], head); n != len(hdr) {
		return nil
	}
	offset := binary.LittleEndian.Uint64(hdr[8:])
	var out []trace.Mem
	word := func(entry uint64) {
		entry &^= 1 // bit 0 marks a PI futex
		if entry == 0 {
			return
		}
		buf := make([]byte, 4)
		if n, _ := m.ReadAt(buf, entry+offset); n == 4 {
			out = append(out, trace.Mem{Addr: entry + offset, Data: buf})
		}
	}
	entry := binary.LittleEndian.Uint64(hdr[0:]) &^ 1
	for i := 0; entry != head && entry != 0 && i < robustLimit; i++ {
		word(entry)
		var next [8]byte
		if n, _ := m.ReadAt(next[:], entry); n != 8 {
			break
		}
		entry = binary.LittleEndian.Uint64(next[:]) &^ 1
	}
	word(binary.LittleEndian.Uint64(hdr[16:]))
	return out
}
