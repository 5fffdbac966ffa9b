package syscalls

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWaitMask(t *testing.T) {
	const chld = 1 << (unix.SIGCHLD - 1)
	const kill = 1 << (unix.SIGKILL - 1)
	// At 0x1000 a mask (SIGKILL cannot be blocked), at 0x1008 pselect6's
	// {mask, size}, at 0x1018 one with a size the kernel refuses.
	var data []byte
	for _, w := range []uint64{chld | kill, 0x1000, 8, 0x1000, 4} {
		data = binary.LittleEndian.AppendUint64(data, w)
	}
	mem := &fakeMem{base: 0x1000, data: data}
	call := func(nr int, args ...uint64) *Call {
		c := &Call{Nr: nr}
		copy(c.Args[:], args)
		return c
	}
	for _, tc := range []struct {
		name string
		c    *Call
		mask uint64
		ok   bool
	}{
		{"rt_sigsuspend", call(unix.SYS_RT_SIGSUSPEND, 0x1000, 8), chld, true},
		{"ppoll", call(unix.SYS_PPOLL, 0, 0, 0, 0x1000, 8), chld, true},
		{"ppoll without a mask", call(unix.SYS_PPOLL, 0, 0, 0, 0, 8), 0, false},
		{"epoll_pwait", call(unix.SYS_EPOLL_PWAIT, 3, 0, 1, 0, 0x1000, 8), chld, true},
		{"pselect6", call(unix.SYS_PSELECT6, 0, 0, 0, 0, 0, 0x1008), chld, true},
		{"pselect6 wrong size", call(unix.SYS_PSELECT6, 0, 0, 0, 0, 0, 0x1018), 0, false},
		{"unreadable mask", call(unix.SYS_RT_SIGSUSPEND, 0x9000, 8), 0, false},
		{"poll has none", call(unix.SYS_POLL, 0x1000, 1, 0), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mask, ok := WaitMask(tc.c, mem)
			if mask != tc.mask || ok != tc.ok {
				t.Errorf("WaitMask = %#x, %v; want %#x, %v", mask, ok, tc.mask, tc.ok)
			}
		})
	}
}
