package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// Options Rewind sets on every tracee: follow threads, exec and (briefly)
// forked children, distinguish syscall stops, and kill the tracees if the
// tracer dies so that nothing is left running after a crash of rewind.
const (
	OptTraceSysGood = unix.PTRACE_O_TRACESYSGOOD
	OptTraceClone   = unix.PTRACE_O_TRACECLONE
	OptTraceFork    = unix.PTRACE_O_TRACEFORK
	OptTraceVfork   = unix.PTRACE_O_TRACEVFORK
	OptTraceExec    = unix.PTRACE_O_TRACEEXEC
	OptTraceExit    = unix.PTRACE_O_TRACEEXIT
	OptExitKill     = unix.PTRACE_O_EXITKILL
)

// ptrace makes a request whose data is a number (a signal, options, a word
// to poke), never the address of one of our buffers: see ptracePtr.
func ptrace(req int, pid int, addr, data uintptr) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, uintptr(req), uintptr(pid), addr, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// ptracePtr makes a request whose data points to our memory (registers, a
// siginfo, an iovec). The pointer becomes a uintptr only in the Syscall6
// call expression: there alone the compiler keeps the object alive and where
// it is until the kernel is done with it. A uintptr made by a caller and
// passed down is a plain number: the goroutine's stack can move at any
// function entry in between (it grows, or the garbage collector shrinks
// it), and the kernel then reads or writes the stack's old copy. That made
// GETREGS leave a caller's registers zero now and then, and the SETREGS of
// those zeros failed with EIO (cs 0).
func ptracePtr(req int, pid int, addr uintptr, data unsafe.Pointer) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, uintptr(req), uintptr(pid), addr, uintptr(data), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func wrap(op string, tid int, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("ptrace %s tid %d: %w", op, tid, err)
}

// Seize attaches to a running task without stopping it, with options.
func Seize(tid int, opts int) error {
	return wrap("seize", tid, ptrace(unix.PTRACE_SEIZE, tid, 0, uintptr(opts)))
}

// SetOptions changes the ptrace options of a stopped tracee.
func SetOptions(tid int, opts int) error {
	return wrap("setoptions", tid, ptrace(unix.PTRACE_SETOPTIONS, tid, 0, uintptr(opts)))
}

// Interrupt asks a seized tracee to stop (PTRACE_EVENT_STOP).
func Interrupt(tid int) error {
	return wrap("interrupt", tid, ptrace(unix.PTRACE_INTERRUPT, tid, 0, 0))
}

// Listen keeps a seized tracee in its group-stop while letting its tracer
// wait: the tracee stays stopped, and reports a new PTRACE_EVENT_STOP when
// something wakes it (a SIGCONT, another signal, PTRACE_INTERRUPT).
func Listen(tid int) error {
	return wrap("listen", tid, ptrace(unix.PTRACE_LISTEN, tid, 0, 0))
}

// Syscall resumes the tracee until its next system call entry or exit,
// delivering sig (0 for none).
func Syscall(tid, sig int) error {
	return wrap("syscall", tid, ptrace(unix.PTRACE_SYSCALL, tid, 0, uintptr(sig)))
}

// Sysemu resumes the tracee until its next system call entry, which the
// kernel then skips: replay injects the results itself.
func Sysemu(tid, sig int) error {
	return wrap("sysemu", tid, ptrace(unix.PTRACE_SYSEMU, tid, 0, uintptr(sig)))
}

// SysemuStep executes one instruction; a system call instruction stops at
// its entry and is skipped, as with Sysemu.
func SysemuStep(tid, sig int) error {
	return wrap("sysemu_singlestep", tid, ptrace(unix.PTRACE_SYSEMU_SINGLESTEP, tid, 0, uintptr(sig)))
}

// Step executes one instruction (system calls are not reported).
func Step(tid, sig int) error {
	return wrap("singlestep", tid, ptrace(unix.PTRACE_SINGLESTEP, tid, 0, uintptr(sig)))
}

// Cont resumes the tracee without syscall stops.
func Cont(tid, sig int) error {
	return wrap("cont", tid, ptrace(unix.PTRACE_CONT, tid, 0, uintptr(sig)))
}

// Detach lets the tracee go, delivering sig.
func Detach(tid, sig int) error {
	return wrap("detach", tid, ptrace(unix.PTRACE_DETACH, tid, 0, uintptr(sig)))
}

// GetRegs reads the general registers.
func GetRegs(tid int, r *trace.Regs) error {
	return wrap("getregs", tid, ptracePtr(unix.PTRACE_GETREGS, tid, 0, unsafe.Pointer(r)))
}

// SetRIP moves a stopped thread's instruction pointer to rip.
func SetRIP(tid int, rip uint64) error {
	var regs trace.Regs
	if err := GetRegs(tid, &regs); err != nil {
		return err
	}
	regs[trace.RIP] = rip
	return SetRegs(tid, &regs)
}

// SetRegs writes the general registers. When the kernel refuses them, the
// error names the register it cannot take.
func SetRegs(tid int, r *trace.Regs) error {
	err := ptracePtr(unix.PTRACE_SETREGS, tid, 0, unsafe.Pointer(r))
	if errors.Is(err, unix.EIO) {
		if what := refusedReg(r); what != "" {
			return fmt.Errorf("ptrace setregs tid %d: %s refused: %w", tid, what, err)
		}
	}
	return wrap("setregs", tid, err)
}

// userRPL is the privilege level in the low bits of a user segment selector.
const userRPL = 3

// taskSizeMax is the kernel's TASK_SIZE_MAX with 4-level page tables: the
// first address a user fs or gs base may not have.
const taskSizeMax = 1<<47 - 4096

// refusedReg names a register of r that PTRACE_SETREGS rejects with EIO on
// x86-64 (the checks of the kernel's putreg), as "cs=0x0", or returns "".
// User registers read from a stopped thread always pass: a refused one was
// never read from a thread (zeros, or another buffer's bytes).
func refusedReg(r *trace.Regs) string {
	for _, i := range []int{trace.CS, trace.SS} {
		if r[i]&0xffff == 0 || r[i]&3 != userRPL {
			return fmt.Sprintf("%s=%#x", trace.RegNames[i], r[i])
		}
	}
	for _, i := range []int{trace.DS, trace.ES, trace.FS, trace.GS} {
		if sel := r[i] & 0xffff; sel != 0 && sel&3 != userRPL {
			return fmt.Sprintf("%s=%#x", trace.RegNames[i], r[i])
		}
	}
	for _, i := range []int{trace.FSBase, trace.GSBase} {
		if r[i] >= taskSizeMax {
			return fmt.Sprintf("%s=%#x", trace.RegNames[i], r[i])
		}
	}
	return ""
}

// SiginfoSize is the size of the kernel's siginfo_t.
const SiginfoSize = 128

// SiCode extracts si_code from a raw siginfo.
func SiCode(info []byte) int32 { return int32(binary.LittleEndian.Uint32(info[8:12])) }

// GetSiginfo reads the siginfo of the signal the tracee is stopped for.
func GetSiginfo(tid int) ([]byte, error) {
	buf := make([]byte, SiginfoSize)
	err := ptracePtr(unix.PTRACE_GETSIGINFO, tid, 0, unsafe.Pointer(&buf[0]))
	return buf, wrap("getsiginfo", tid, err)
}

// SetSiginfo replaces the siginfo that will be delivered.
func SetSiginfo(tid int, info []byte) error {
	if len(info) < SiginfoSize {
		return fmt.Errorf("ptrace setsiginfo tid %d: siginfo of %d bytes", tid, len(info))
	}
	return wrap("setsiginfo", tid, ptracePtr(unix.PTRACE_SETSIGINFO, tid, 0, unsafe.Pointer(&info[0])))
}

// EventMsg returns the message of a PTRACE_EVENT stop (a new tid, an exit status).
func EventMsg(tid int) (uint64, error) {
	var msg uint64
	err := ptracePtr(unix.PTRACE_GETEVENTMSG, tid, 0, unsafe.Pointer(&msg))
	return msg, wrap("geteventmsg", tid, err)
}

// GetFPRegs reads the 512-byte FXSAVE area (x87, MMX, SSE registers).
func GetFPRegs(tid int) ([]byte, error) {
	buf := make([]byte, 512)
	err := ptracePtr(unix.PTRACE_GETFPREGS, tid, 0, unsafe.Pointer(&buf[0]))
	return buf, wrap("getfpregs", tid, err)
}

// ntX86XState is NT_X86_XSTATE, the XSAVE area regset (AVX and later).
const ntX86XState = 0x202

// GetXState reads the XSAVE area of the thread: the legacy FXSAVE part,
// the XSAVE header, then the extended components (AVX's upper halves of
// ymm0-15 at offset 576).
func GetXState(tid int) ([]byte, error) {
	// Large enough for AVX-512 and AMX tile data; the kernel says how much
	// it wrote, and setting it back needs exactly that size.
	buf := make([]byte, 32<<10)
	iov := unix.Iovec{Base: &buf[0], Len: uint64(len(buf))}
	err := ptracePtr(unix.PTRACE_GETREGSET, tid, ntX86XState, unsafe.Pointer(&iov))
	if err != nil {
		return nil, wrap("getregset xstate", tid, err)
	}
	return buf[:iov.Len], nil
}

// debugRegOffset is offsetof(struct user, u_debugreg) on x86-64.
const debugRegOffset = 848

// GetDebugReg reads debug register n (0-7).
func GetDebugReg(tid, n int) (uint64, error) {
	var v uint64
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_PEEKUSR, uintptr(tid), uintptr(debugRegOffset+8*n), uintptr(unsafe.Pointer(&v)), 0, 0)
	if e != 0 {
		return 0, wrap("peekuser", tid, e)
	}
	return v, nil
}

// SetDebugReg writes debug register n (0-7).
func SetDebugReg(tid, n int, v uint64) error {
	return wrap("pokeuser", tid, ptrace(unix.PTRACE_POKEUSR, tid, uintptr(debugRegOffset+8*n), uintptr(v)))
}

// ptraceGetRseqConfiguration is PTRACE_GET_RSEQ_CONFIGURATION (Linux 5.13).
const ptraceGetRseqConfiguration = 0x420f

// RseqConfig is struct ptrace_rseq_configuration: a thread's registered
// rseq area (Addr 0: none).
type RseqConfig struct {
	Addr  uint64
	Len   uint32
	Sig   uint32
	Flags uint32
	_     uint32
}

// GetRseqConfig reads the rseq area thread tid registered; an error on a
// kernel too old to say.
func GetRseqConfig(tid int) (RseqConfig, error) {
	var c RseqConfig
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, ptraceGetRseqConfiguration, uintptr(tid), unsafe.Sizeof(c), uintptr(unsafe.Pointer(&c)), 0, 0)
	if e != 0 {
		return c, wrap("get_rseq_configuration", tid, e)
	}
	return c, nil
}
