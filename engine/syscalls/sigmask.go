package syscalls

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Calls that wait with a temporary signal mask (ppoll, pselect6,
// epoll_pwait, epoll_pwait2, and rt_sigsuspend, which does nothing else)
// install it on entry and put the thread's own back on return: a signal
// the thread blocks may end such a call, one it does not may not.

// TempMask returns the address and size of the temporary mask c waits
// with, or 0 when it has none. rt_sigsuspend is left out: its mask is
// the call's whole purpose, see WaitMask.
func TempMask(c *Call, m Memory) (addr, size uint64) {
	switch c.Nr {
	case unix.SYS_PPOLL:
		return c.Args[3], c.Args[4]
	case unix.SYS_EPOLL_PWAIT, unix.SYS_EPOLL_PWAIT2:
		return c.Args[4], c.Args[5]
	case unix.SYS_PSELECT6:
		// The sixth argument points to {const sigset_t *ss; size_t ss_len}.
		if c.Args[5] == 0 {
			return 0, 0
		}
		var b [16]byte
		if n, err := m.ReadAt(b[:], c.Args[5]); err != nil || n < len(b) {
			return 0, 0
		}
		return binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
	}
	return 0, 0
}

// WaitMask returns the signal mask c blocks signals with while it waits,
// when it installs one of its own (TempMask, or rt_sigsuspend's); ok is
// false when it keeps the thread's (or its mask cannot be read: the call
// fails with EFAULT and installs none).
func WaitMask(c *Call, m Memory) (mask uint64, ok bool) {
	addr, size := TempMask(c, m)
	if c.Nr == unix.SYS_RT_SIGSUSPEND {
		addr, size = c.Args[0], c.Args[1]
	}
	if addr == 0 || size != 8 {
		return 0, false
	}
	var b [8]byte
	if n, err := m.ReadAt(b[:], addr); err != nil || n < len(b) {
		return 0, false
	}
	// SIGKILL and SIGSTOP are never blocked.
	return binary.LittleEndian.Uint64(b[:]) &^ (1<<(unix.SIGKILL-1) | 1<<(unix.SIGSTOP-1)), true
}
