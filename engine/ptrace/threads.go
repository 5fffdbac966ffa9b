package ptrace

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// scratchBelow is how far below a stopped thread's stack pointer the
// helpers put the data of injected calls (past the red zone); the bytes are
// put back afterwards.
const scratchBelow = 1024

// WithScratch runs f with n bytes of scratch memory of thread tid, then
// restores them.
func WithScratch(tid int, m *Mem, n int, f func(addr uint64) error) error {
	var regs trace.Regs
	if err := GetRegs(tid, &regs); err != nil {
		return err
	}
	addr := regs[trace.RSP] - scratchBelow
	saved := make([]byte, n)
	if _, err := m.ReadAt(saved, addr); err != nil {
		return err
	}
	defer m.WriteAt(saved, addr)
	return f(addr)
}

// SaveThread reads the state of a stopped thread of a process.
func SaveThread(pid, tid int, m *Mem) (*trace.ThreadState, error) {
	st := &trace.ThreadState{Tid: tid}
	if err := GetRegs(tid, &st.Regs); err != nil {
		return nil, err
	}
	xs, err := GetXState(tid)
	if err != nil {
		return nil, err
	}
	st.XState = xs
	st.Blocked = BlockedMask(pid, tid)
	var head, size uint64
	if _, _, e := unix.Syscall(unix.SYS_GET_ROBUST_LIST, uintptr(tid), uintptr(unsafe.Pointer(&head)), uintptr(unsafe.Pointer(&size))); e == 0 {
		st.RobustHead, st.RobustLen = head, size
	}
	err = WithScratch(tid, m, 32, func(addr uint64) error {
		if ret, err := InjectSyscall(tid, m, unix.SYS_PRCTL, unix.PR_GET_TID_ADDRESS, addr); err != nil || ret < 0 {
			return fmt.Errorf("read clear_child_tid of %d: %v %d", tid, err, ret)
		}
		var b [8]byte
		if _, err := m.ReadAt(b[:], addr); err != nil {
			return err
		}
		st.TidAddress = binary.LittleEndian.Uint64(b[:])
		if ret, err := InjectSyscall(tid, m, unix.SYS_SIGALTSTACK, 0, addr); err != nil || ret < 0 {
			return fmt.Errorf("read sigaltstack of %d: %v %d", tid, err, ret)
		}
		_, err := m.ReadAt(st.AltStack[:], addr)
		return err
	})
	return st, err
}

// StatusFields reads the named fields of a /proc status file ("SigBlk",
// "Tgid"…), as their text; a field that is missing is "".
func StatusFields(path string, names ...string) []string {
	out := make([]string, len(names))
	data, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		for i, n := range names {
			if k == n {
				out[i] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

// statusMask reads a signal-set field of a /proc status file (0 if absent).
func statusMask(path, name string) uint64 {
	n, _ := strconv.ParseUint(StatusFields(path, name)[0], 16, 64)
	return n
}

// BlockedMask reads the thread's blocked signal mask (SigBlk).
func BlockedMask(pid, tid int) uint64 {
	return statusMask(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid), "SigBlk")
}

// Catches reports whether thread tid runs a handler of its own for signal
// sig (SigCgt): a delivery builds a signal frame on its stack then. A
// thread that is gone catches nothing.
func Catches(tid, sig int) bool {
	return statusMask(fmt.Sprintf("/proc/%d/status", tid), "SigCgt")&(1<<(sig-1)) != 0
}

// StopsProcess reports whether signal sig, delivered to process pid with
// the dispositions it has now, would stop it: SIGSTOP always, and SIGTSTP,
// SIGTTIN and SIGTTOU when neither caught nor ignored (the kernel then
// stops the process, or discards the signal in an orphaned process group).
func StopsProcess(pid, sig int) bool {
	switch unix.Signal(sig) {
	case unix.SIGSTOP:
		return true
	case unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		f := StatusFields(fmt.Sprintf("/proc/%d/status", pid), "SigCgt", "SigIgn")
		bit := uint64(1) << (sig - 1)
		for _, v := range f {
			if n, _ := strconv.ParseUint(v, 16, 64); n&bit != 0 {
				return false
			}
		}
		return true
	}
	return false
}

// PendingSignal reports whether signal sig is pending for process pid,
// shared or for one of its threads.
func PendingSignal(pid, sig int) bool {
	bit := uint64(1) << (sig - 1)
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		for _, v := range StatusFields(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()), "SigPnd", "ShdPnd") {
			if n, _ := strconv.ParseUint(v, 16, 64); n&bit != 0 {
				return true
			}
		}
	}
	return false
}

// cloneThreadFlags make a plain thread of the same process; its TLS and
// registers are set from the saved state afterwards.
const cloneThreadFlags = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND |
	unix.CLONE_THREAD | unix.CLONE_SYSVSEM

// AddThread creates, in the process of thread via (stopped), a new thread
// with the saved state, and returns its tid (stopped at its first stop).
func AddThread(via int, m *Mem, st *trace.ThreadState) (int, error) {
	ret, child, err := injectSyscall(via, m, unix.SYS_CLONE, cloneThreadFlags, st.Regs[trace.RSP], 0, 0, 0)
	if err != nil {
		return 0, err
	}
	if ret < 0 || child == 0 {
		return 0, fmt.Errorf("create a thread through %d: %w", via, unix.Errno(-ret))
	}
	if s, _, err := Wait(child, false); err != nil || s.Kind != StopEvent {
		return 0, fmt.Errorf("first stop of new thread %d: %v %v", child, s, err)
	}
	return child, RestoreThread(child, m, st)
}

// RestoreThread gives stopped thread tid the saved state: its per-thread
// kernel state (mask, alternate stack, clear_child_tid, robust list) set
// by calls it makes itself, then its XSAVE area and registers.
func RestoreThread(tid int, m *Mem, st *trace.ThreadState) error {
	regs := st.Regs
	regs[trace.EFLAGS] &^= eflagsTF
	err := WithScratch(tid, m, 32, func(addr uint64) error {
		var b [24]byte
		binary.LittleEndian.PutUint64(b[:], st.Blocked)
		if _, err := m.WriteAt(b[:8], addr); err != nil {
			return err
		}
		if ret, err := InjectSyscall(tid, m, unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, addr, 0, 8); err != nil || ret < 0 {
			return fmt.Errorf("set signal mask of %d: %v %d", tid, err, ret)
		}
		if _, err := m.WriteAt(st.AltStack[:], addr); err != nil {
			return err
		}
		InjectSyscall(tid, m, unix.SYS_SIGALTSTACK, addr, 0)
		return nil
	})
	if err != nil {
		return err
	}
	if st.TidAddress != 0 {
		InjectSyscall(tid, m, unix.SYS_SET_TID_ADDRESS, st.TidAddress)
	}
	if st.RobustHead != 0 {
		InjectSyscall(tid, m, unix.SYS_SET_ROBUST_LIST, st.RobustHead, st.RobustLen)
	}
	if err := SetXState(tid, st.XState); err != nil {
		return err
	}
	return SetRegs(tid, &regs)
}

// SetXState writes the XSAVE area of the thread.
func SetXState(tid int, xs []byte) error {
	if len(xs) == 0 {
		return nil
	}
	iov := unix.Iovec{Base: &xs[0], Len: uint64(len(xs))}
	return wrap("setregset xstate", tid, ptracePtr(unix.PTRACE_SETREGSET, tid, ntX86XState, unsafe.Pointer(&iov)))
}
