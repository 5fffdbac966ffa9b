package replay

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The program's requests that set a tracee's debug registers and FPU,
// SSE and AVX state, done by the recorder (record's emuptrace_regs.go),
// redone on replay's tracee, which stands where the recorded one did.

// Requests and offsets of this file (linux/ptrace.h, sys/user.h).
const (
	ptSetFPRegs = 15
	ptSetRegset = 0x4205

	ntPRStatus    = 1   // NT_PRSTATUS
	userDebugRegs = 848 // offsetof(struct user, u_debugreg)
	fxsaveBytes   = 512 // struct user_fpregs_struct
)

// redoPokeDebugReg redoes a POKEUSER outside the general registers on x: a
// debug register (the kernel ignores the other fields).
func redoPokeDebugReg(x *rthread, off, data uint64) error {
	if off < userDebugRegs {
		return nil
	}
	return ptrace.SetDebugReg(x.real, int(off-userDebugRegs)/8, data)
}

// redoSetFPRegs redoes PTRACE_SETFPREGS on x from the FXSAVE area at data
// in t's memory.
func redoSetFPRegs(t, x *rthread, data uint64) error {
	b := make([]byte, fxsaveBytes)
	if _, err := t.proc.mem.ReadAt(b, data); err != nil {
		return err
	}
	return ptrace.SetFPRegs(x.real, b)
}

// redoSetRegset redoes PTRACE_SETREGSET of regset kind on x: the iovec at
// iov in t's memory says where its bytes are. The iovec's length is the
// one the kernel shortened already (the recorded call's output): the bytes
// the kernel took.
func redoSetRegset(t, x *rthread, kind, iov uint64) error {
	vec := make([]byte, 16)
	if _, err := t.proc.mem.ReadAt(vec, iov); err != nil {
		return err
	}
	base, size := binary.LittleEndian.Uint64(vec), binary.LittleEndian.Uint64(vec[8:])
	if size == 0 || size > 1<<20 {
		return unix.EINVAL
	}
	b := make([]byte, size)
	if _, err := t.proc.mem.ReadAt(b, base); err != nil {
		return err
	}
	if kind != ntPRStatus {
		_, err := ptrace.SetRegset(x.real, int(kind), b)
		return err
	}
	if len(b) < userRegsBytes {
		return unix.EINVAL
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(x.real, &regs); err != nil {
		return err
	}
	orig := regs[trace.OrigRAX]
	for i := range regs {
		regs[i] = binary.LittleEndian.Uint64(b[i*8:])
	}
	// As for SETREGS: the thread's skipped call number stays.
	regs[trace.OrigRAX] = orig
	return ptrace.SetRegs(x.real, &regs)
}
