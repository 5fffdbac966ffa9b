package syscalls

// System V shared memory and the madvise advice that replay treats apart.

// IPC and shmctl commands.
const (
	ipc64      = 0x100 // IPC_64, which glibc may or into shmctl's command
	ipcStat    = 2
	ipcInfo    = 3
	shmStat    = 13
	shmInfo    = 14
	shmStatAny = 15

	// MadvFree is MADV_FREE: the kernel may drop the pages whenever it
	// needs memory, so what they read afterwards depends on the machine's
	// memory pressure. The recorder makes it a no-op that returns 0 (the
	// kernel never dropping them is one of its allowed outcomes) and replay
	// emulates it.
	MadvFree = 8
)

// shmctlOut: IPC_STAT, SHM_STAT and SHM_STAT_ANY fill a struct shmid64_ds
// (112 bytes), IPC_INFO a struct shminfo64 (72), SHM_INFO a struct shm_info
// (48).
func shmctlOut(c *Call, _ Memory) ([]Range, error) {
	if c.Ret < 0 {
		return nil, nil
	}
	switch c.Args[1] &^ ipc64 {
	case ipcStat, shmStat, shmStatAny:
		return span(c.Args[2], 112), nil
	case ipcInfo:
		return span(c.Args[2], 72), nil
	case shmInfo:
		return span(c.Args[2], 48), nil
	}
	return nil, nil
}

// madvisePolicy: madvise is re-executed (it shapes the address space),
// except MADV_FREE, a no-op when recorded (see MadvFree).
func madvisePolicy(c *Call) Policy {
	if int32(c.Args[2]) == MadvFree {
		return Emulate
	}
	return Reexec
}
