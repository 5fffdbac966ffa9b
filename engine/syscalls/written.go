package syscalls

import "golang.org/x/sys/unix"

// Calls that move a program's bytes into a file descriptor. The recorder
// hashes what they wrote and keeps what reached the program's standard
// streams; the replayer reads the same bytes from the replaying process to
// check and re-emit them. Both must agree on where the bytes are, so the
// answer lives here.

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
	case unix.SYS_WRITE, unix.SYS_PWRITE64, unix.SYS_WRITEV, unix.SYS_PWRITEV, unix.SYS_PWRITEV2, unix.SYS_SENDTO, unix.SYS_SENDMSG, unix.SYS_VMSPLICE:
		return int(int32(c.Args[0])), FromMemory
	case unix.SYS_SENDFILE:
		return int(int32(c.Args[0])), FromFile
	case unix.SYS_SPLICE, unix.SYS_COPY_FILE_RANGE:
		return int(int32(c.Args[2])), FromFile
	case unix.SYS_TEE:
		return int(int32(c.Args[1])), FromFile
	case unix.SYS_SENDMMSG:
		return int(int32(c.Args[0])), FromMessages
	}
	return -1, NotWrite
}

// InFd returns, for a FromFile call, the descriptor its bytes come from and
// the address of its offset argument (0: the descriptor's file position is
// used and advanced).
func InFd(c *Call) (fd int, offPtr uint64) {
	switch c.Nr {
	case unix.SYS_SENDFILE:
		return int(int32(c.Args[1])), c.Args[2]
	case unix.SYS_SPLICE, unix.SYS_COPY_FILE_RANGE:
		return int(int32(c.Args[0])), c.Args[1]
	case unix.SYS_TEE:
		return int(int32(c.Args[0])), 0
	}
	return -1, 0
}

// Written returns the first n bytes a successful FromMemory call wrote,
// read from m (fewer if m cannot be read). Other calls give nil.
func Written(c *Call, m Memory, n int) []byte {
	switch c.Nr {
	case unix.SYS_WRITE, unix.SYS_PWRITE64, unix.SYS_SENDTO:
		buf := make([]byte, n)
		got, _ := m.ReadAt(buf, c.Args[1])
		return buf[:got]
	case unix.SYS_WRITEV, unix.SYS_PWRITEV, unix.SYS_PWRITEV2, unix.SYS_VMSPLICE:
		return GatherIovecs(m, c.Args[1], int(c.Args[2]), n)
	case unix.SYS_SENDMSG:
		// struct msghdr: msg_iov at 16, msg_iovlen at 24.
		b, err := readFull(m, c.Args[1], 32)
		if err != nil {
			return nil
		}
		return GatherIovecs(m, le64(b[16:]), int(min(le64(b[24:]), 1024)), n)
	}
	return nil
}
