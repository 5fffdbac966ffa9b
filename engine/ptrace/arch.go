package ptrace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// SyscallArch returns the audit architecture of the system call tid is
// stopped at the entry of: AUDIT_ARCH_X86_64 for a syscall instruction,
// AUDIT_ARCH_I386 for int $0x80 (or sysenter), whose numbers and
// arguments follow the i386 convention. Registers cannot tell them apart:
// the kernel knows by how the thread entered it.
func SyscallArch(tid int) (uint32, error) {
	var info syscallInfo
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GET_SYSCALL_INFO, uintptr(tid), unsafe.Sizeof(info), uintptr(unsafe.Pointer(&info)), 0, 0)
	if e != 0 {
		return 0, wrap("get_syscall_info", tid, e)
	}
	return info.Arch, nil
}
