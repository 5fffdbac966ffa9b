package record

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// logSeccompKilled logs the call a thread died in when a seccomp filter
// killed that thread alone (SECCOMP_RET_KILL_THREAD while other threads
// live): the kernel ends it inside the call with do_exit(SIGSYS), so no exit
// stop reports the call. It is logged as the kernel leaves a call a filter
// refused, rolled back (its result register holds its number), which is
// how replay recognizes the verdict and has the kernel give it again
// (replay's seccomp.go). Other deaths inside a call (SIGKILL, another
// thread's exit_group) end a call already logged or one replay need not
// see.
func (r *Recorder) logSeccompKilled(t *thread, st ptrace.Status) error {
	if !t.inSyscall || st.Kind != ptrace.Killed || st.Sig != int(unix.SIGSYS) {
		return nil
	}
	t.inSyscall = false
	exit := t.entry
	exit[trace.RAX] = exit[trace.OrigRAX]
	e := &trace.Event{Kind: trace.KindSyscall, Flags: t.callFlags(), Tid: int32(t.tid), Syscall: int32(t.nr), Regs: t.entry, ExitRegs: exit, In: t.in}
	if t.split {
		// Its entry was logged (it may block): this is its end.
		e.Kind, e.Regs, e.In = trace.KindSyscallExit, trace.Regs{}, nil
	}
	return r.log(e)
}

// Registers of the x86-64 system call arguments, in order.
var argRegs = [...]int{trace.RDI, trace.RSI, trace.RDX, trace.R10, trace.R8, trace.R9}

// skipForm sets regs, t's registers at the entry of c, so that the kernel
// does nothing and fails: the call number -1 (ENOSYS). Under a seccomp
// filter of the program that number is what the filter judges, and a
// filter that allows only the calls it knows kills or traps on it where
// the program made an allowed call (glibc's clone3 and rseq in each
// pthread_create, which rewind refuses so that glibc falls back): there,
// the calls rewind refuses keep their number and get arguments the kernel
// rejects before doing anything, so that the filter judges the call the
// program made. completeSkipped gives the program the chosen result.
func (r *Recorder) skipForm(t *thread, c *syscalls.Call, regs *trace.Regs) {
	if !t.i386 && r.hasSeccompFilter(t) {
		if arg, v, ok := failingArg(c); ok {
			regs[argRegs[arg]] = v
			return
		}
		r.warnOnce("seccomp skip "+syscalls.Name(c.Nr), "rewind: warning: the program's seccomp filter judges %s, which rewind refuses, as system call -1: its verdict on that applies\n", syscalls.Name(c.Nr))
	}
	regs[trace.OrigRAX] = ^uint64(0)
}

// restoreArgs gives regs the argument registers of entry: the kernel keeps
// them across a call, and skipForm may have changed one.
func restoreArgs(regs, entry *trace.Regs) {
	for _, r := range argRegs {
		regs[r] = entry[r]
	}
}

// failingArg returns an argument value that makes the kernel fail c before
// it has any effect, for the calls rewind refuses or answers itself.
func failingArg(c *syscalls.Call) (arg int, v uint64, ok bool) {
	switch c.Nr {
	case unix.SYS_RSEQ:
		return 2, 2, true // flags: an unknown one (EINVAL)
	case unix.SYS_CLONE3:
		return 1, 0, true // size: smaller than any struct clone_args (EINVAL)
	case unix.SYS_IO_URING_SETUP:
		return 0, 0, true // entries: none (EINVAL)
	case unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER:
		return 0, ^uint64(0), true // fd: -1 (EBADF)
	case unix.SYS_PRCTL:
		if uint32(c.Args[0]) == syscalls.PrctlSetTSC {
			return 1, 0, true // mode: neither PR_TSC_ENABLE nor PR_TSC_SIGSEGV (EINVAL)
		}
	}
	return 0, 0, false
}

// onSeccompStop handles a PTRACE_EVENT_SECCOMP stop. Under the recorder's
// filter it is the entry of a call. A thread resumed with PTRACE_SYSCALL
// (in a call, or under a filter of the program's own) saw the entry as a
// syscall-stop already: the seccomp stop that follows is the filters'
// SECCOMP_RET_TRACE, the recorder's own (nothing to do) or a filter of
// the program's (its data differs: the kernel reports the most recent
// filter's), which with no tracer of the program's fails the call with
// ENOSYS, as it does natively: the recorder makes the kernel skip it.
func (r *Recorder) onSeccompStop(t *thread) error {
	if !t.inSyscall && !t.seenEntry {
		return r.onSyscallStop(t)
	}
	t.seenEntry = false
	data, err := ptrace.EventMsg(t.tid)
	if err != nil {
		return err
	}
	if uint16(data) != ptrace.FilterData {
		var regs trace.Regs
		if err := ptrace.GetRegs(t.tid, &regs); err != nil {
			return err
		}
		regs[trace.OrigRAX] = ^uint64(0)
		if err := ptrace.SetRegs(t.tid, &regs); err != nil {
			return err
		}
	}
	return ptrace.Syscall(t.tid, 0)
}

// noteOwnFilter marks the threads that now run under a seccomp filter of
// the program's own, after c, t's call, returned.
func (r *Recorder) noteOwnFilter(t *thread, c *syscalls.Call) {
	switch {
	case c.Nr == unix.SYS_SECCOMP && c.Args[0] == unix.SECCOMP_SET_MODE_FILTER:
		// A listener's fd, or 0.
		if c.Ret < 0 || c.Ret > 0 && c.Args[1]&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER == 0 {
			return
		}
	case c.Nr == unix.SYS_PRCTL && c.Args[0] == unix.PR_SET_SECCOMP && c.Args[1] == unix.SECCOMP_MODE_FILTER:
		if c.Ret != 0 {
			return
		}
	default:
		return
	}
	t.ownFilter = true
	if c.Nr == unix.SYS_SECCOMP && c.Args[1]&unix.SECCOMP_FILTER_FLAG_TSYNC != 0 {
		for _, u := range r.threads {
			if u.proc == t.proc {
				u.ownFilter = true
			}
		}
	}
	if r.filtered && t.proc.mem != nil {
		// The sites patched already would make calls the filter judges
		// from the hook, where a killed one leaves no record: from now
		// on the hook has every call made traced.
		hook.SetMode(t.proc.mem, hook.ModeTraced)
	}
}

// hasSeccompFilter tells whether thread t runs under a seccomp filter of
// the program's own. Without the recorder's filter, /proc says (Seccomp:
// 2, SECCOMP_MODE_FILTER).
func (r *Recorder) hasSeccompFilter(t *thread) bool {
	if r.filtered {
		return t.ownFilter
	}
	return procSeccompFilter(t.tid)
}

// procSeccompFilter tells whether thread tid runs under a seccomp filter.
func procSeccompFilter(tid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
			return strings.TrimSpace(v) == "2"
		}
	}
	return false
}

// logUretprobe logs the uretprobe call a SIGILL comes from under the
// recorder's filter: seccomp does not judge that call (the kernel's uprobe
// trampolines make it), so no stop reported it, and outside a trampoline
// it fails with a SIGILL. Replay, which stops at every call, meets it
// before the signal, as a recording without the filter logs it.
func (r *Recorder) logUretprobe(t *thread, sig int, info []byte, regs *trace.Regs) error {
	if !r.filtered || t.ownFilter || sig != int(unix.SIGILL) || regs[trace.OrigRAX] != unix.SYS_URETPROBE || ptrace.SiCode(info) != siKernel {
		return nil
	}
	var code [2]byte
	if _, err := t.proc.mem.ReadAt(code[:], regs[trace.RIP]-2); err != nil || code != [2]byte{0x0f, 0x05} {
		return nil
	}
	entry := *regs
	entry[trace.RAX] = ^uint64(unix.ENOSYS - 1) // -ENOSYS
	return r.log(&trace.Event{Kind: trace.KindSyscall, Tid: int32(t.tid), Syscall: unix.SYS_URETPROBE, Regs: entry, ExitRegs: *regs})
}

// settleDying handles the deaths under way in t's process before t's
// futex call is logged. A thread a seccomp filter kills in a call
// (SECCOMP_RET_KILL_THREAD) clears its tid and wakes its joiner on the way
// out, before its death reaches the recorder: logged after the join's
// return, the death would come too late in replay, where the joiner would
// find the tid still set and wait again. A dying thread is one in a call
// that /proc says is exiting (PF_EXITING).
func (r *Recorder) settleDying(t *thread) error {
	for _, u := range r.threads {
		// Only a thread under a filter of the program's own can be
		// killed by one: the others cost no read of /proc.
		if u == t || u.proc != t.proc || u.state == gone || !u.inSyscall || !u.ownFilter || !exiting(u.tid) {
			continue
		}
		for i := 0; i < 4 && u.state != gone; i++ {
			st, _, err := ptrace.Wait(u.tid, false)
			if err != nil {
				return nil // reaped meanwhile
			}
			if err := r.dispatch(st); err != nil {
				return err
			}
		}
	}
	return nil
}

// pfExiting is the kernel's PF_EXITING task flag.
const pfExiting = 0x4

// exiting tells whether task tid has begun to exit: /proc's stat flags
// (the ninth field) hold PF_EXITING.
func exiting(tid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", tid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 7 {
		return false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	return err == nil && flags&pfExiting != 0
}
