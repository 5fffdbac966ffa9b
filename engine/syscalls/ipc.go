package syscalls

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// System V IPC: message queues and semaphore sets. Their objects live in
// the kernel, outside the process; what reaches the process is each call's
// result and the structures it fills, which replay injects.

// System V IPC commands (linux/ipc.h, linux/msg.h, linux/sem.h).
const (
	ipcNoWait  = 04000 // IPC_NOWAIT
	msgStat    = 11
	msgInfo    = 12
	msgStatAny = 13
	semGetAll  = 13
	semStat    = 18
	semInfo    = 19
	semStatAny = 20

	msqidDsSize = 120 // struct msqid64_ds on x86-64
	msginfoSize = 32  // struct msginfo
	semidDsSize = 104 // struct semid64_ds on x86-64 (with its two padding longs)
	seminfoSize = 40  // struct seminfo
	semNsemsOff = 80  // sem_nsems in struct semid64_ds
)

// ipcCmd is the command of msgctl, semctl or shmctl at argument i, without IPC_64.
func ipcCmd(c *Call, i int) int { return int(int32(c.Args[i])) &^ ipc64 }

// msgFlagBlocks: msgsnd and msgrcv wait unless IPC_NOWAIT is in their flags.
func msgFlagBlocks(i int) func(c *Call) bool {
	return func(c *Call) bool { return c.Args[i]&ipcNoWait == 0 }
}

// msgctlOut: IPC_STAT, MSG_STAT and MSG_STAT_ANY fill a struct msqid64_ds,
// IPC_INFO and MSG_INFO a struct msginfo.
func msgctlOut(c *Call, _ Memory) ([]Range, error) {
	switch ipcCmd(c, 1) {
	case ipcStat, msgStat, msgStatAny:
		return span(c.Args[2], msqidDsSize), nil
	case ipcInfo, msgInfo:
		return span(c.Args[2], msginfoSize), nil
	}
	return nil, nil
}

// semctlOut: the fourth argument is a union semun passed by value, here a
// pointer. IPC_STAT, SEM_STAT and SEM_STAT_ANY fill a struct semid64_ds,
// IPC_INFO and SEM_INFO a struct seminfo, and GETALL one unsigned short per
// semaphore of the set: how many the arguments do not say, so the recorder
// asks the kernel (IPC_STAT, made by the tracee itself so that its IPC
// namespace answers).
func semctlOut(c *Call, m Memory) ([]Range, error) {
	arg := c.Args[3]
	switch ipcCmd(c, 2) {
	case ipcStat, semStat, semStatAny:
		return span(arg, semidDsSize), nil
	case ipcInfo, semInfo:
		return span(arg, seminfoSize), nil
	case semGetAll:
		if arg == 0 {
			return nil, nil
		}
		p, ok := m.(Prober)
		if !ok {
			return nil, fmt.Errorf("semctl(GETALL): the size of semaphore set %d is unknown here", int32(c.Args[0]))
		}
		ret, ds, err := p.Probe(unix.SYS_SEMCTL, semidDsSize, func(buf uint64) ([6]uint64, []byte) {
			return [6]uint64{c.Args[0], 0, ipcStat, buf}, nil
		})
		if err != nil {
			return nil, fmt.Errorf("semctl(GETALL): size of semaphore set %d: %w", int32(c.Args[0]), err)
		}
		if ret < 0 {
			return nil, fmt.Errorf("semctl(GETALL): size of semaphore set %d: IPC_STAT: %w", int32(c.Args[0]), unix.Errno(-ret))
		}
		return span(arg, 2*le64(ds[semNsemsOff:])), nil
	}
	return nil, nil
}
