package ptrace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// SetRegset writes regset kind (NT_PRSTATUS, NT_PRFPREG, NT_X86_XSTATE…)
// of the thread from b, as PTRACE_SETREGSET does, and returns how many
// bytes the kernel took.
func SetRegset(tid, kind int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, wrap("setregset", tid, unix.EINVAL)
	}
	iov := unix.Iovec{Base: &b[0], Len: uint64(len(b))}
	err := ptracePtr(unix.PTRACE_SETREGSET, tid, uintptr(kind), unsafe.Pointer(&iov))
	return int(iov.Len), wrap("setregset", tid, err)
}

// SetFPRegs writes the 512-byte FXSAVE area (x87, MMX, SSE registers).
func SetFPRegs(tid int, b []byte) error {
	if len(b) < 512 {
		return wrap("setfpregs", tid, unix.EINVAL)
	}
	return wrap("setfpregs", tid, ptracePtr(unix.PTRACE_SETFPREGS, tid, 0, unsafe.Pointer(&b[0])))
}
