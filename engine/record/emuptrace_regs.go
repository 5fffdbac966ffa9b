package record

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The program's requests that set a tracee's debug registers (POKEUSER
// into u_debugreg: gdb's hardware watchpoints) and its FPU, SSE and AVX
// state (SETFPREGS, SETREGSET: gdb restores them after calling a function
// of the program). The recorder does them on the tracee for real; replay
// redoes them where its tracee stands (replay's emuptrace_regs.go). A
// debug register that fires stops the tracee with a SIGTRAP its own
// instruction raised: a logged stop (emuptrace_step.go), which replay's
// tracee, its debug registers set the same, reaches too.

// Requests and sizes of this file (linux/ptrace.h, asm/user.h).
const (
	ptSetFPRegs = 15
	ptSetRegset = 0x4205

	fxsaveBytes = 512 // struct user_fpregs_struct
)

// pokeDebugReg writes word data at offset off of x's struct user, outside
// the general registers: a debug register, or a field the kernel ignores.
func pokeDebugReg(x *thread, off, data uint64) int64 {
	if off < userDebugRegs {
		return 0 // u_tsize and the like: the kernel ignores the write
	}
	if err := ptrace.SetDebugReg(x.tid, int(off-userDebugRegs)/8, data); err != nil {
		// The kernel refused the value (an address in the kernel's half,
		// a reserved bit, DR4 or DR5): the tracer gets its answer.
		return errno(unix.EIO)
	}
	return 0
}

// setFPRegs does PTRACE_SETFPREGS on x, the FXSAVE area at data of t.
func (r *Recorder) setFPRegs(t, x *thread, data uint64) int64 {
	b := make([]byte, fxsaveBytes)
	if n, err := t.proc.mem.ReadAt(b, data); err != nil || n < len(b) {
		return errno(unix.EFAULT)
	}
	if err := ptrace.SetFPRegs(x.tid, b); err != nil {
		return errno(unix.EIO)
	}
	return 0
}

// setRegset does PTRACE_SETREGSET on x: the iovec at iov of t says where
// the regset's bytes are and how many, and is shortened to what the kernel
// took, as the kernel does.
func (r *Recorder) setRegset(t, x *thread, c *syscalls.Call, kind, iov uint64) int64 {
	switch kind {
	case ntPRStatus, ntPRFPReg, ntXState:
	default:
		return r.notEmulated(c, "PTRACE_SETREGSET of a regset other than NT_PRSTATUS, NT_PRFPREG, NT_X86_XSTATE")
	}
	vec, base, size, ok := readIovec(t, iov)
	if !ok {
		return errno(unix.EFAULT)
	}
	if size == 0 || size > 1<<20 {
		return errno(unix.EINVAL)
	}
	b := make([]byte, size)
	if n, err := t.proc.mem.ReadAt(b, base); err != nil || n < len(b) {
		return errno(unix.EFAULT)
	}
	if kind == ntPRStatus {
		if len(b) < userRegsBytes {
			return errno(unix.EINVAL)
		}
		regs := bytesRegs(b)
		if ptrace.SetRegs(x.tid, &regs) != nil {
			return errno(unix.EIO)
		}
		b = b[:userRegsBytes]
	} else {
		n, err := ptrace.SetRegset(x.tid, int(kind), b)
		if err != nil {
			return errno(unix.EINVAL)
		}
		b = b[:n]
	}
	if uint64(len(b)) != size {
		binary.LittleEndian.PutUint64(vec[8:], uint64(len(b)))
		if w, err := t.proc.mem.WriteAt(vec, iov); err != nil || w < 16 {
			return errno(unix.EFAULT)
		}
	}
	return 0
}

// readIovec reads the struct iovec at iov of t: its bytes, base and length.
func readIovec(t *thread, iov uint64) (vec []byte, base, size uint64, ok bool) {
	vec = make([]byte, 16)
	if n, err := t.proc.mem.ReadAt(vec, iov); err != nil || n < 16 {
		return nil, 0, 0, false
	}
	return vec, binary.LittleEndian.Uint64(vec), binary.LittleEndian.Uint64(vec[8:]), true
}

// bytesRegs is the struct user_regs_struct at the start of b as Regs.
func bytesRegs(b []byte) trace.Regs {
	var regs trace.Regs
	for i := range regs {
		regs[i] = binary.LittleEndian.Uint64(b[i*8:])
	}
	return regs
}
