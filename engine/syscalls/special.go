package syscalls

import "golang.org/x/sys/unix"

// Calls whose outputs or blocking depend on a command argument.

const (
	cloneVM          = 0x00000100
	cloneVfork       = 0x00004000
	clonePidfd       = 0x00001000
	cloneParentSetID = 0x00100000
	timerAbstime     = 1
	lockNB           = 4
)

func always(*Call) bool { return true }

// futexCmd strips FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME.
func futexCmd(c *Call) int { return int(c.Args[1] & futexCmdMask) }

func futexBlocks(c *Call) bool {
	switch futexCmd(c) {
	case 0, 6, 9, 11, 13: // WAIT, LOCK_PI, WAIT_BITSET, WAIT_REQUEUE_PI, LOCK_PI2
		return true
	}
	return false
}

// futexOut: the PI operations and WAKE_OP change futex words themselves
// (owner TID, FUTEX_WAITERS, the WAKE_OP arithmetic); since futex is emulated
// those words must be injected. PI operations can change the word even when
// they fail (a timed-out LOCK_PI leaves FUTEX_WAITERS), so only failures that
// prove nothing was touched are skipped.
func futexOut(c *Call, _ Memory) ([]Range, error) {
	untouched := c.Ret == -errEFAULT || c.Ret == -errEINVAL || c.Ret == -errENOSYS
	var word uint64
	switch futexCmd(c) {
	case 5: // WAKE_OP
		if c.Ret >= 0 {
			word = c.Args[4]
		}
	case 6, 7, 8, 13: // LOCK_PI, UNLOCK_PI, TRYLOCK_PI, LOCK_PI2
		if !untouched {
			word = c.Args[0]
		}
	case 11, 12: // WAIT_REQUEUE_PI, CMP_REQUEUE_PI
		if !untouched {
			word = c.Args[4]
		}
	}
	return span(word, 4), nil
}

func pollBlocks(c *Call) bool  { return int32(c.Args[2]) != 0 }
func epollBlocks(c *Call) bool { return int32(c.Args[3]) != 0 }
func flockBlocks(c *Call) bool { return c.Args[1]&lockNB == 0 }

func fcntlBlocks(c *Call) bool {
	cmd := int32(c.Args[1])
	return cmd == 7 || cmd == 38 // F_SETLKW, F_OFD_SETLKW
}

// clonePolicy: a clone that creates a thread must really happen in replay,
// while one that creates a process (fork-like, or posix_spawn's
// CLONE_VM|CLONE_VFORK) is emulated because the child runs unrecorded.
func clonePolicy(c *Call) Policy {
	if c.Args[0]&cloneVM != 0 && c.Args[0]&cloneVfork == 0 {
		return Reexec
	}
	return Emulate
}

// rlimitStack is RLIMIT_STACK.
const rlimitStack = 3

// rlimitPolicy: a process's own stack limit shapes its address space (the
// stack may grow that far: a deep recursion overflows where it did; a
// program it execs is laid out below it), so setting it is done again in
// replay; other limits only change results, which are recorded.
func rlimitPolicy(c *Call) Policy {
	resource, limit := c.Args[0], c.Args[1]
	if c.Nr == unix.SYS_PRLIMIT64 {
		if c.Args[0] != 0 { // another process, by its recorded pid
			return Emulate
		}
		resource, limit = c.Args[1], c.Args[2]
	}
	if uint32(resource) == rlimitStack && limit != 0 {
		return Reexec
	}
	return Emulate
}

// cloneBlocks: with CLONE_VFORK the parent sleeps until the child execs or
// exits (posix_spawn).
func cloneBlocks(c *Call) bool { return c.Args[0]&cloneVfork != 0 }

// cloneOut: the child's TID (CLONE_PARENT_SETTID) or a pidfd (CLONE_PIDFD)
// lands at parent_tid in the parent's memory.
func cloneOut(c *Call, _ Memory) ([]Range, error) {
	if c.Ret <= 0 || c.Args[0]&(cloneParentSetID|clonePidfd) == 0 {
		return nil, nil
	}
	return span(c.Args[2], 4), nil
}

func fcntlOut(c *Call, _ Memory) ([]Range, error) {
	if c.Ret < 0 {
		return nil, nil
	}
	switch int32(c.Args[1]) {
	case 5, 36: // F_GETLK, F_OFD_GETLK: struct flock
		return span(c.Args[2], 32), nil
	case 16, 1035, 1037: // F_GETOWN_EX, F_GET_RW_HINT, F_GET_FILE_RW_HINT
		return span(c.Args[2], 8), nil
	}
	return nil, nil
}

// ioctlSizes covers the common requests that predate the _IOC encoding
// (their direction bits are zero, so they cannot be decoded). The kernel's
// struct termios is 36 bytes (NCCS 19), not glibc's 60: the kernel writes
// exactly 36 and glibc converts.
var ioctlSizes = map[uint32]uint64{
	0x5401: 36, // TCGETS
	0x5405: 18, // TCGETA
	0x5456: 36, // TIOCGLCKTRMIOS
	0x5413: 8,  // TIOCGWINSZ
	0x540F: 4,  // TIOCGPGRP
	0x5411: 4,  // TIOCOUTQ
	0x5415: 4,  // TIOCMGET
	0x5419: 4,  // TIOCGSOFTCAR
	0x541B: 4,  // FIONREAD
	0x5424: 4,  // TIOCGETD
	0x5429: 4,  // TIOCGSID
	0x8905: 4,  // SIOCATMARK
	0x8906: 16, // SIOCGSTAMP
	0x8907: 16, // SIOCGSTAMPNS
	0x8910: 40, // SIOCGIFNAME (struct ifreq)
	0x8913: 40, // SIOCGIFFLAGS
	0x8915: 40, // SIOCGIFADDR
	0x8917: 40, // SIOCGIFDSTADDR
	0x8919: 40, // SIOCGIFBRDADDR
	0x891b: 40, // SIOCGIFNETMASK
	0x891d: 40, // SIOCGIFMETRIC
	0x8921: 40, // SIOCGIFMTU
	0x8927: 40, // SIOCGIFHWADDR
	0x8933: 40, // SIOCGIFINDEX
	0x8942: 40, // SIOCGIFTXQLEN
}

func ioctlOut(c *Call, m Memory) ([]Range, error) {
	if c.Ret < 0 || c.Args[2] == 0 {
		return nil, nil
	}
	if rs, ok, err := ioctlMore(c, m); ok { // ioctl.go
		return rs, err
	}
	req, arg := uint32(c.Args[1]), c.Args[2]
	if n, ok := ioctlSizes[req]; ok {
		return span(arg, n), nil
	}
	if req == 0x8912 { // SIOCGIFCONF: struct ifconf {int len; char *buf}
		b, err := readFull(m, arg, 16)
		if err != nil {
			return nil, err
		}
		return append([]Range{{Addr: arg, Len: 16}}, span(le64(b[8:]), uint64(le32(b)))...), nil
	}
	if req>>30&2 != 0 { // _IOC_READ: the kernel fills _IOC_SIZE bytes
		return span(arg, uint64(req>>16&0x3fff)), nil
	}
	return nil, nil
}

// archOut is listed although arch_prctl is re-executed, so that a listing
// shows what the call returned and a replayer may check it.
func archOut(c *Call, _ Memory) ([]Range, error) {
	if c.Ret < 0 {
		return nil, nil
	}
	switch uint32(c.Args[0]) {
	case 0x1003, 0x1004, 0x1021, 0x1022, 0x1024: // ARCH_GET_FS, _GS, _XCOMP_SUPP, _XCOMP_PERM, _XCOMP_GUEST_PERM
		return span(c.Args[1], 8), nil
	}
	return nil, nil
}

// capgetOut: an unknown header version makes the kernel store the version it
// prefers (libcap probes this way), even when the call fails with EINVAL.
func capgetOut(c *Call, m Memory) ([]Range, error) {
	if c.Ret != 0 && c.Ret != -errEINVAL {
		return nil, nil
	}
	rs := span(c.Args[0], 4)
	if c.Ret != 0 || c.Args[0] == 0 || c.Args[1] == 0 {
		return rs, nil
	}
	v, err := u32(m, c.Args[0])
	if err != nil {
		return rs, err
	}
	switch v {
	case 0x19980330: // _LINUX_CAPABILITY_VERSION_1
		rs = append(rs, span(c.Args[1], 12)...)
	case 0x20071026, 0x20080522: // versions 2 and 3
		rs = append(rs, span(c.Args[1], 24)...)
	}
	return rs, nil
}

func capsetOut(c *Call, _ Memory) ([]Range, error) {
	if c.Ret != -errEINVAL {
		return nil, nil
	}
	return span(c.Args[0], 4), nil
}

// nameToHandleOut: on success the file_handle (8-byte header plus
// handle_bytes) and the mount id; on EOVERFLOW the header carries the size
// needed, which is how callers probe, and the mount id is written too.
func nameToHandleOut(c *Call, m Memory) ([]Range, error) {
	if c.Ret != 0 && c.Ret != -errEOVERFLOW {
		return nil, nil
	}
	mnt := uint64(4)
	if c.Args[4]&1 != 0 { // AT_HANDLE_MNT_ID_UNIQUE: a u64
		mnt = 8
	}
	rs := span(c.Args[3], mnt)
	h := uint64(8)
	if c.Ret == 0 {
		n, err := u32(m, c.Args[2])
		if err != nil {
			return rs, err
		}
		h += uint64(n)
	}
	return append(rs, span(c.Args[2], h)...), nil
}

// xattrArgsOut: getxattrat passes struct xattr_args {u64 value; u32 size;
// u32 flags} at argument 4.
func xattrArgsOut(c *Call, m Memory) ([]Range, error) {
	if c.Ret <= 0 || c.Args[4] == 0 {
		return nil, nil
	}
	b, err := readFull(m, c.Args[4], 16)
	if err != nil {
		return nil, err
	}
	if le32(b[8:]) == 0 {
		return nil, nil
	}
	return span(le64(b), min(uint64(c.Ret), uint64(le32(b[8:])))), nil
}

// mempolicyOut: get_mempolicy writes the mode and a nodemask of maxnode
// bits rounded up to longs.
func mempolicyOut(c *Call, _ Memory) ([]Range, error) {
	if c.Ret < 0 {
		return nil, nil
	}
	rs := span(c.Args[0], 4)
	if n := c.Args[2]; n > 0 {
		rs = append(rs, span(c.Args[1], (n-1+63)/64*8)...)
	}
	return rs, nil
}

func sizeArgPositive(i int) func(c *Call) bool {
	return func(c *Call) bool { return int64(c.Args[i]) > 0 }
}

func notAbstime(c *Call) bool { return c.Args[1]&timerAbstime == 0 }

func seccompNotifSizes(c *Call) bool { return uint32(c.Args[0]) == 3 } // SECCOMP_GET_NOTIF_SIZES
