package syscalls

// Calls that move a program's bytes into a file descriptor. The recorder
// hashes what they wrote and keeps what reached the program's standard
// streams; the replayer reads the same bytes from the replaying process to
// check and re-emit them. Both must agree on where the bytes are, so the
// answer lives here.

// Numbers of the x86-64 calls below (the table's numbers come from names,
// these are only compared against).
const (
	nrWrite         = 1
	nrPwrite64      = 18
	nrWritev        = 20
	nrSendfile      = 40
	nrSendto        = 44
	nrSendmsg       = 46
	nrSplice        = 275
	nrTee           = 276
	nrVmsplice      = 278
	nrPwritev       = 296
	nrSendmmsg      = 307
	nrCopyFileRange = 326
	nrPwritev2      = 328
)

// Source says where the bytes of a write-like call come from.
type Source uint8

const (
	// NotWrite: the call does not write a program's bytes to a descriptor.
	NotWrite Source = iota
	// FromMemory: the caller's memory (write, writev, sendmsg, vmsplice…).
	FromMemory
	// FromFile: another descriptor (sendfile, splice, copy_file_range,
	// tee); InFd names it.
	FromFile
	// FromMessages: several messages in one call (sendmmsg), whose bytes
	// are not gathered.
	FromMessages
)

// WriteTarget returns the descriptor a call writes to and where its bytes
// come from; NotWrite for other calls.
func WriteTarget(c *Call) (fd int, src Source) {
	switch c.Nr {
	case nrWrite, nrPwrite64, nrWritev, nrPwritev, nrPwritev2, nrSendto, nrSendmsg, nrVmsplice:
		return int(int32(c.Args[0])), FromMemory
	case nrSendfile:
		return int(int32(c.Args[0])), FromFile
	case nrSplice, nrCopyFileRange:
		return int(int32(c.Args[2])), FromFile
	case nrTee:
		return int(int32(c.Args[1])), FromFile
	case nrSendmmsg:
		return int(int32(c.Args[0])), FromMessages
	}
	return -1, NotWrite
}

// InFd returns, for a FromFile call, the descriptor its bytes come from and
// the address of its offset argument (0: the descriptor's file position is
// used and advanced).
func InFd(c *Call) (fd int, offPtr uint64) {
	switch c.Nr {
	case nrSendfile:
		return int(int32(c.Args[1])), c.Args[2]
	case nrSplice, nrCopyFileRange:
		return int(int32(c.Args[0])), c.Args[1]
	case nrTee:
		return int(int32(c.Args[0])), 0
	}
	return -1, 0
}

// Written returns the first n bytes a successful FromMemory call wrote,
// read from m (fewer if m cannot be read). Other calls give nil.
func Written(c *Call, m Memory, n int) []byte {
	switch c.Nr {
	case nrWrite, nrPwrite64, nrSendto:
		buf := make([]byte, n)
		got, _ := m.ReadAt(buf, c.Args[1])
		return buf[:got]
	case nrWritev, nrPwritev, nrPwritev2, nrVmsplice:
		return GatherIovecs(m, c.Args[1], int(c.Args[2]), n)
	case nrSendmsg:
		// struct msghdr: msg_iov at 16, msg_iovlen at 24.
		b, err := readFull(m, c.Args[1], 32)
		if err != nil {
			return nil
		}
		return GatherIovecs(m, le64(b[16:]), int(min(le64(b[24:]), 1024)), n)
	}
	return nil
}
