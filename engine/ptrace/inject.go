package ptrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// eflagsTF is the trap flag.
const eflagsTF = 0x100

// archSetCPUID is ARCH_SET_CPUID for arch_prctl.
const archSetCPUID = 0x1012

// syscallInfo is the head of struct ptrace_syscall_info.
type syscallInfo struct {
	Op    uint8
	_     [3]uint8
	Arch  uint32
	IP    uint64
	SP    uint64
	Nr    uint64 // entry: nr; exit: rval
	Args  [6]uint64
	Extra uint64
}

// Syscall info ops.
const (
	syscallInfoEntry = 1
	syscallInfoExit  = 2
)

// What a stop is, as PTRACE_GET_SYSCALL_INFO tells it.
const (
	SyscallNone  = 0 // not a system call stop
	SyscallEntry = syscallInfoEntry
	SyscallExit  = syscallInfoExit
	// SyscallSeccomp is a PTRACE_EVENT_SECCOMP stop: a call's entry under
	// a filter that traces it, before the kernel runs it.
	SyscallSeccomp = 3
)

// SyscallStop says whether the stopped thread is at a system call's entry
// (SyscallEntry), its exit (SyscallExit), or some other stop (SyscallNone).
func SyscallStop(tid int) (uint8, error) {
	op, _, err := syscallOp(tid)
	return op, err
}

// syscallOp says whether a syscall stop is an entry or an exit.
func syscallOp(tid int) (uint8, uint64, error) {
	var info syscallInfo
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GET_SYSCALL_INFO, uintptr(tid), unsafe.Sizeof(info), uintptr(unsafe.Pointer(&info)), 0, 0)
	if e != 0 {
		return 0, 0, wrap("get_syscall_info", tid, e)
	}
	return info.Op, info.Nr, nil
}

// InjectSyscall makes a stopped thread run one system call of our choosing
// and leaves it as it was (registers and memory). A `syscall` instruction is
// written over the code at rip for the time of the call. It works from any
// stop in user context (a system call entry or exit, a signal or event stop).
// A fork it makes is returned as child (the child is left at its first stop).
func InjectSyscall(tid int, m *Mem, nr uint64, args ...uint64) (int64, error) {
	ret, _, err := injectSyscall(tid, m, nr, args...)
	return ret, err
}

// InjectSyscallAtEmu is InjectSyscall for a thread at a PTRACE_SYSEMU
// stop (or a filter's stop), whose own call is not made: the injected call runs to an int3
// with one stop (as from a call's exit), where InjectSyscall would stop at
// the skipped call's exit, then at the injected call's entry and exit.
// The thread is then at a signal stop.
func InjectSyscallAtEmu(tid int, m *Mem, nr uint64, args ...uint64) (int64, error) {
	var saved trace.Regs
	if err := GetRegs(tid, &saved); err != nil {
		return 0, err
	}
	ret, caught, ok, err := injectToTrap(tid, m, &saved, nr, args, true)
	if !ok && err == nil {
		return InjectSyscall(tid, m, nr, args...)
	}
	requeueAll(tid, m, caught)
	return ret, err
}

func injectSyscall(tid int, m *Mem, nr uint64, args ...uint64) (ret int64, child int, err error) {
	// Asynchronous signals that arrive meanwhile (a Ctrl-C) are not for
	// the injected call: they are queued again, siginfo and all, once the
	// thread is back where it was, to be seen by the caller as if they
	// had just arrived.
	ret, child, caught, err := injectRaw(tid, m, nr, args...)
	requeueAll(tid, m, caught)
	return ret, child, err
}

// injectRaw is injectSyscall without queueing again the signals it caught:
// it returns their siginfo.
func injectRaw(tid int, m *Mem, nr uint64, args ...uint64) (ret int64, child int, caught [][]byte, err error) {
	var saved trace.Regs
	if err := GetRegs(tid, &saved); err != nil {
		return 0, 0, caught, err
	}
	if ret, caught, ok, err := injectToTrap(tid, m, &saved, nr, args, false); ok || err != nil {
		return ret, 0, caught, err
	}
	var code [2]byte
	if _, err := m.ReadAt(code[:], saved[trace.RIP]); err != nil {
		return 0, 0, caught, err
	}
	if _, err := m.WriteAt([]byte{0x0f, 0x05}, saved[trace.RIP]); err != nil {
		return 0, 0, caught, err
	}
	defer m.WriteAt(code[:], saved[trace.RIP])
	regs := saved
	regs[trace.RAX], regs[trace.OrigRAX] = nr, nr
	argRegs := []int{trace.RDI, trace.RSI, trace.RDX, trace.R10, trace.R8, trace.R9}
	for i, a := range args {
		regs[argRegs[i]] = a
	}
	if err := SetRegs(tid, &regs); err != nil {
		return 0, 0, caught, fmt.Errorf("inject syscall %d: %w", nr, err)
	}
	entered := false
	for {
		if err := Syscall(tid, 0); err != nil {
			return 0, 0, caught, err
		}
		st, _, err := Wait(tid, false)
		if err != nil {
			return 0, 0, caught, err
		}
		switch st.Kind {
		case StopSyscall:
			op, val, err := syscallOp(tid)
			if err != nil {
				return 0, 0, caught, err
			}
			if op == syscallInfoEntry && val == nr {
				entered = true
			}
			if op == syscallInfoExit && entered {
				ret = int64(val)
				if err := SetRegs(tid, &saved); err != nil {
					return 0, 0, caught, fmt.Errorf("restore the registers after injected syscall %d: %w", nr, err)
				}
				return ret, child, caught, nil
			}
		case StopEvent:
			if st.Event == unix.PTRACE_EVENT_FORK || st.Event == unix.PTRACE_EVENT_VFORK || st.Event == unix.PTRACE_EVENT_CLONE {
				msg, err := EventMsg(tid)
				if err != nil {
					return 0, 0, caught, err
				}
				child = int(msg)
			}
		case StopSignal:
			info, err := GetSiginfo(tid)
			if err != nil || !Sent(st.Sig, info) {
				return 0, 0, caught, fmt.Errorf("inject syscall %d into %d: got %v", nr, tid, st)
			}
			caught = append(caught, info)
		default:
			return 0, 0, caught, fmt.Errorf("inject syscall %d into %d: got %v", nr, tid, st)
		}
	}
}

// injectToTrap is injectRaw's quick way: `syscall; int3` written at rip
// and PTRACE_CONT, one stop (two under a filter that traces the call)
// where stopping at the call's entry and exit takes two or three. Only
// from a stop where resuming returns to user code with the registers set:
// a system call's exit, or a stop outside any call (orig_rax -1, or
// afterInjection's); not for
// a call that makes a process (the child would copy the bytes); and only
// where the three bytes can be written (or the hook page's are there:
// gadget). atEmu allows a PTRACE_SYSEMU stop, a call's entry, or a
// filter's stop at one (PTRACE_EVENT_SECCOMP): orig_rax -1 has the kernel
// skip that call (which is the stop's point) and return to user code. ok
// is false when it did nothing.
// A signal pending on the way back to user code is caught, as one that
// comes during the call is.
func injectToTrap(tid int, m *Mem, saved *trace.Regs, nr uint64, args []uint64, atEmu bool) (ret int64, caught [][]byte, ok bool, err error) {
	switch nr {
	case unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_CLONE, unix.SYS_CLONE3, unix.SYS_EXECVE, unix.SYS_EXECVEAT,
		unix.SYS_RT_TGSIGQUEUEINFO, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_TGKILL, unix.SYS_TKILL, unix.SYS_KILL:
		// A signal the call queues for the thread would be delivered on
		// the way to the int3, and caught: requeue is made of these.
		return 0, nil, false, nil
	}
	op, _, err := syscallOp(tid)
	if err != nil || !(op == syscallInfoExit || op == SyscallNone && (int64(saved[trace.OrigRAX]) == -1 || afterInjection(tid, saved)) ||
		atEmu && (op == syscallInfoEntry || op == SyscallSeccomp)) {
		return 0, nil, false, nil
	}
	at := saved[trace.RIP]
	var code [3]byte
	if gadget(m) {
		at = ReexecIP - 2
	} else {
		if _, err := m.ReadAt(code[:], at); err != nil {
			return 0, nil, false, nil
		}
		if _, err := m.WriteAt(syscallInt3, at); err != nil {
			m.WriteAt(code[:], at) // a part may have been written
			return 0, nil, false, nil
		}
		defer m.WriteAt(code[:], at)
	}
	regs := *saved
	regs[trace.RIP] = at
	regs[trace.RAX], regs[trace.OrigRAX] = nr, ^uint64(0)
	regs[trace.EFLAGS] &^= eflagsTF
	argRegs := []int{trace.RDI, trace.RSI, trace.RDX, trace.R10, trace.R8, trace.R9}
	for i, a := range args {
		regs[argRegs[i]] = a
	}
	if err := SetRegs(tid, &regs); err != nil {
		return 0, nil, true, fmt.Errorf("inject syscall %d: %w", nr, err)
	}
	for {
		if err := Cont(tid, 0); err != nil {
			return 0, caught, true, err
		}
		st, _, err := Wait(tid, false)
		if err != nil {
			return 0, caught, true, err
		}
		switch st.Kind {
		case StopEvent:
			continue // a filter's stop for the call: on to it
		case StopSignal:
			info, err := GetSiginfo(tid)
			if err != nil {
				return 0, caught, true, err
			}
			if st.Sig == int(unix.SIGTRAP) && SiCode(info) == siKernel {
				var got trace.Regs
				if err := GetRegs(tid, &got); err != nil {
					return 0, caught, true, err
				}
				if got[trace.RIP] == at+3 {
					if err := SetRegs(tid, saved); err != nil {
						return 0, caught, true, fmt.Errorf("restore the registers after injected syscall %d: %w", nr, err)
					}
					return int64(got[trace.RAX]), caught, true, nil
				}
			}
			if !Sent(st.Sig, info) {
				return 0, caught, true, fmt.Errorf("inject syscall %d into %d: got %v", nr, tid, st)
			}
			caught = append(caught, info)
		default:
			return 0, caught, true, fmt.Errorf("inject syscall %d into %d: got %v", nr, tid, st)
		}
	}
}

// afterInjection says whether a thread stopped outside any call is at the
// int3 an earlier injection ran to, its registers (those of a call's
// exit) given back: a SIGTRAP of an int3 with orig_rax set, which only a
// tracer sets there (an exception's is -1). Resuming returns to user code
// with the registers set unless rax asks the kernel to restart a call.
// An exec's several injected calls (rdtsc trapping, the hook's two
// mappings) took the slow way after the first: three stops each.
func afterInjection(tid int, saved *trace.Regs) bool {
	if IsRestart(saved[trace.RAX]) {
		return false
	}
	info, err := GetSiginfo(tid)
	return err == nil && len(info) >= 12 && int32(binary.LittleEndian.Uint32(info)) == int32(unix.SIGTRAP) && SiCode(info) == siKernel
}

// syscallInt3 is the code injectToTrap runs: syscall; int3.
var syscallInt3 = []byte{0x0f, 0x05, 0xcc}

// gadget says whether the process of m maps the hook page, whose code
// ending at ReexecIP is syscall; int3 and which the filter lets through:
// a call injected there needs no code written, nor stops at the filter.
func gadget(m *Mem) bool {
	var code [3]byte
	n, _ := m.ReadAt(code[:], ReexecIP-2)
	return n == len(code) && bytes.Equal(code[:], syscallInt3)
}

// siKernel is SI_KERNEL, the si_code of the SIGTRAP of an int3.
const siKernel = 0x80

// ForkCopy makes a stopped, traced copy of the process of thread tid (a
// fork injected into it), with tid's registers and memory as they are now.
// Only tid is copied: the copy has one thread.
func ForkCopy(tid int, m *Mem) (int, error) {
	var saved trace.Regs
	if err := GetRegs(tid, &saved); err != nil {
		return 0, err
	}
	var code [2]byte
	if _, err := m.ReadAt(code[:], saved[trace.RIP]); err != nil {
		return 0, err
	}
	// clone with no exit signal: the copy's death must not send SIGCHLD into
	// the process being replayed (checkpoints come and go).
	ret, child, err := injectSyscall(tid, m, unix.SYS_CLONE, 0, 0, 0, 0, 0)
	if err != nil {
		return 0, err
	}
	if ret < 0 || child == 0 {
		return 0, fmt.Errorf("fork a copy of %d: %w", tid, unix.Errno(-ret))
	}
	if st, _, err := Wait(child, false); err != nil || st.Kind != StopEvent {
		return 0, fmt.Errorf("fork a copy of %d: first stop of %d: %v %v", tid, child, st, err)
	}
	// The copy was made with our syscall instruction in place and stands
	// after it: give it the original code and registers.
	cm, err := OpenMem(child)
	if err != nil {
		return 0, err
	}
	defer cm.Close()
	if _, err := cm.WriteAt(code[:], saved[trace.RIP]); err != nil {
		return 0, err
	}
	// A trap flag forced by an earlier single-step must not be copied.
	saved[trace.EFLAGS] &^= eflagsTF
	return child, SetRegs(child, &saved)
}

// TrapInstructions makes the thread's rdtsc and rdtscp fault (PR_SET_TSC)
// when withTSC is set, and its cpuid too when withCPUID is set (CPUID
// faulting): their answers differ between runs, cores and machines, so the
// recorder logs them from the SIGSEGV they raise. Both settings are
// inherited by new threads; CPUID faulting is reset by execve, so this runs
// at every execve exit, before the new image executes its first
// instruction (PR_SET_TSC is kept: withTSC only the first time).
func TrapInstructions(tid int, m *Mem, withTSC, withCPUID bool) error {
	if withTSC {
		ret, err := InjectSyscall(tid, m, unix.SYS_PRCTL, unix.PR_SET_TSC, unix.PR_TSC_SIGSEGV)
		if err != nil {
			return err
		}
		if ret < 0 {
			return fmt.Errorf("prctl(PR_SET_TSC): %w", unix.Errno(-ret))
		}
	}
	if !withCPUID {
		return nil
	}
	ret, err := InjectSyscall(tid, m, unix.SYS_ARCH_PRCTL, archSetCPUID, 0)
	if err != nil {
		return err
	}
	if ret < 0 {
		return fmt.Errorf("arch_prctl(ARCH_SET_CPUID): %w", unix.Errno(-ret))
	}
	return nil
}

// Sent reports whether signal sig with siginfo info was sent to the thread
// (kill, a terminal, a timer) rather than caused by its instruction, which
// causes it again when the thread runs on.
func Sent(sig int, info []byte) bool {
	switch unix.Signal(sig) {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGILL, unix.SIGFPE, unix.SIGTRAP:
		return SiCode(info) <= 0
	}
	return true
}

// pidOf returns the process (thread group) of thread tid.
func pidOf(tid int) int {
	if n, err := Tgid(tid); err == nil {
		return n
	}
	return tid
}

// Tgid returns the process (thread group) of thread tid, from /proc.
func Tgid(tid int) (int, error) {
	n, err := strconv.Atoi(StatusFields(fmt.Sprintf("/proc/%d/status", tid), "Tgid")[0])
	if err != nil {
		return 0, fmt.Errorf("thread %d: no thread group id: %w", tid, err)
	}
	return n, nil
}

// Requeue makes thread tid of process pid, stopped, send itself the signal
// of siginfo info with rt_tgsigqueueinfo: only a process may queue to
// itself a siginfo that says it came from kill or from the kernel, so the
// signal is delivered with its sender and code as if it had never been
// taken out of the queue.
func Requeue(pid, tid int, m *Mem, info []byte) error {
	caught, err := requeue(pid, tid, m, info)
	requeueAll(tid, m, caught)
	return err
}

// requeue is Requeue; it returns the signals caught while it injected.
func requeue(pid, tid int, m *Mem, info []byte) (caught [][]byte, err error) {
	sig := uint64(binary.LittleEndian.Uint32(info[:4]))
	err = WithScratch(tid, m, len(info), func(addr uint64) error {
		if _, err := m.WriteAt(info, addr); err != nil {
			return err
		}
		var ret int64
		var err error
		ret, _, caught, err = injectRaw(tid, m, unix.SYS_RT_TGSIGQUEUEINFO, uint64(pid), uint64(tid), sig, addr)
		if err != nil {
			return fmt.Errorf("queue signal %d again in thread %d: %w", sig, tid, err)
		}
		if ret < 0 {
			return fmt.Errorf("queue signal %d again in thread %d: %w", sig, tid, unix.Errno(-ret))
		}
		return nil
	})
	return caught, err
}

// maxRequeue bounds the signals requeueAll queues again: under a flood of
// signals each injected call would catch another.
const maxRequeue = 64

// requeueAll queues again the signals an injected call caught, one after
// the other. A signal caught meanwhile joins the list, unless it is a
// standard signal already in it (the kernel keeps one of those pending).
// Past maxRequeue, or when a requeue fails, the signal is sent with tgkill,
// without its siginfo.
func requeueAll(tid int, m *Mem, infos [][]byte) {
	if len(infos) == 0 {
		return // (the usual case: no /proc read for the pid)
	}
	pid := pidOf(tid)
	for i := 0; i < len(infos); i++ {
		sig := int(binary.LittleEndian.Uint32(infos[i]))
		if i >= maxRequeue {
			Tgkill(pid, tid, sig)
			continue
		}
		more, err := requeue(pid, tid, m, infos[i])
		if err != nil {
			Tgkill(pid, tid, sig)
		}
		for _, info := range more {
			if !pendingAgain(infos[i+1:], info) {
				infos = append(infos, info)
			}
		}
	}
}

// sigRTMin is the first real-time signal, of which each instance counts.
const sigRTMin = 34

// pendingAgain reports a standard signal whose number is already in infos.
func pendingAgain(infos [][]byte, info []byte) bool {
	sig := binary.LittleEndian.Uint32(info)
	if sig >= sigRTMin {
		return false
	}
	for _, o := range infos {
		if binary.LittleEndian.Uint32(o) == sig {
			return true
		}
	}
	return false
}

// Errors a system call interrupted by a stop returns for the kernel to
// restart it (include/linux/errno.h), and restart_syscall's numbers.
const (
	errRestartSys         = 512
	errRestartNoIntr      = 513
	errRestartNoHand      = 514
	errRestartBlock       = 516
	sysRestartSyscall     = 219
	sysRestartSyscallI386 = 0
)

// Restarted is RestartCall's answer: whether the registers were those of
// a call the kernel restarts, and whether it resumes it through
// restart_syscall (a nanosleep, a poll with a timeout…).
type Restarted struct{ Restart, Block bool }

// RestartCall does to regs, at the end of a system call, what the kernel
// does when it resumes the thread without a signal to handle and the call
// returned a restart code: rip goes back to the syscall instruction and
// rax becomes the call's number (restart_syscall's for a call that kernel
// resumes itself; i386 for int $0x80). Other registers are left alone.
func RestartCall(regs *trace.Regs, i386 bool) Restarted {
	var r Restarted
	switch -int64(regs[trace.RAX]) {
	case errRestartSys, errRestartNoIntr, errRestartNoHand:
		regs[trace.RAX] = regs[trace.OrigRAX]
	case errRestartBlock:
		r.Block = true
		regs[trace.RAX] = sysRestartSyscall
		if i386 {
			regs[trace.RAX] = sysRestartSyscallI386
		}
	default:
		return r
	}
	r.Restart = true
	regs[trace.RIP] -= 2 // the syscall (or int $0x80) instruction
	return r
}

// IsRestart reports a system call result that asks the kernel to restart
// the call.
func IsRestart(ret uint64) bool {
	switch -int64(ret) {
	case errRestartSys, errRestartNoIntr, errRestartNoHand, errRestartBlock:
		return true
	}
	return false
}
