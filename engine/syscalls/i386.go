package syscalls

import (
	"strconv"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// System calls made with int $0x80 from a 64-bit program use the i386
// numbers and calling convention: the number in eax, the arguments in ebx,
// ecx, edx, esi, edi and ebp, 32 bits each (pointers must lie below 4 GiB),
// and the 32-bit layouts of every structure they pass. The kernel tells
// them apart from syscall instructions by how they entered it, which
// PTRACE_GET_SYSCALL_INFO reports as the call's audit architecture.
//
// Each such call is described by the x86-64 call that does the same with
// the same arguments and memory layouts, so that the table's outputs and
// replay policy apply unchanged. Calls whose 32-bit layouts differ (stat,
// iovecs, timespecs, sigaction, socketcall, mmap…) have no equivalent here:
// the recorder flags them as unsupported and replay stops there.

// AuditArchI386 is AUDIT_ARCH_I386, the architecture PTRACE_GET_SYSCALL_INFO
// reports for a call made with int $0x80 (or sysenter).
const AuditArchI386 = 0x40000003

// NoEquivalent is the Nr of an i386 call that has no x86-64 equivalent.
const NoEquivalent = -1

// i386Same maps an i386 number to the x86-64 call that takes the same
// arguments with the same layouts (the …32 calls that take 32-bit ids map
// to the plain x86-64 ones).
var i386Same = map[int]string{
	0:   "restart_syscall",
	1:   "exit",
	3:   "read",
	4:   "write",
	5:   "open",
	6:   "close",
	8:   "creat",
	9:   "link",
	10:  "unlink",
	12:  "chdir",
	14:  "mknod",
	15:  "chmod",
	19:  "lseek",
	20:  "getpid",
	27:  "alarm",
	29:  "pause",
	33:  "access",
	36:  "sync",
	37:  "kill",
	38:  "rename",
	39:  "mkdir",
	40:  "rmdir",
	41:  "dup",
	42:  "pipe",
	45:  "brk",
	57:  "setpgid",
	60:  "umask",
	61:  "chroot",
	63:  "dup2",
	64:  "getppid",
	65:  "getpgrp",
	66:  "setsid",
	83:  "symlink",
	85:  "readlink",
	91:  "munmap",
	94:  "fchmod",
	96:  "getpriority",
	97:  "setpriority",
	118: "fsync",
	122: "uname",
	125: "mprotect",
	132: "getpgid",
	133: "fchdir",
	136: "personality",
	143: "flock",
	147: "getsid",
	148: "fdatasync",
	150: "mlock",
	151: "munlock",
	152: "mlockall",
	153: "munlockall",
	158: "sched_yield",
	159: "sched_get_priority_max",
	160: "sched_get_priority_min",
	168: "poll",
	175: "rt_sigprocmask",
	183: "getcwd",
	198: "lchown",   // lchown32
	199: "getuid",   // getuid32
	200: "getgid",   // getgid32
	201: "geteuid",  // geteuid32
	202: "getegid",  // getegid32
	203: "setreuid", // setreuid32
	204: "setregid", // setregid32
	207: "fchown",   // fchown32
	212: "chown",    // chown32
	213: "setuid",   // setuid32
	214: "setgid",   // setgid32
	215: "setfsuid", // setfsuid32
	216: "setfsgid", // setfsgid32
	219: "madvise",
	220: "getdents64",
	224: "gettid",
	238: "tkill",
	239: "sendfile", // sendfile64
	252: "exit_group",
	254: "epoll_create",
	258: "set_tid_address",
	270: "tgkill",
	291: "inotify_init",
	292: "inotify_add_watch",
	293: "inotify_rm_watch",
	295: "openat",
	296: "mkdirat",
	297: "mknodat",
	298: "fchownat",
	301: "unlinkat",
	302: "renameat",
	303: "linkat",
	304: "symlinkat",
	305: "readlinkat",
	306: "fchmodat",
	307: "faccessat",
	310: "unshare",
	323: "eventfd",
	328: "eventfd2",
	329: "epoll_create1",
	330: "dup3",
	331: "pipe2",
	332: "inotify_init1",
	344: "syncfs",
	346: "setns",
	353: "renameat2",
	355: "getrandom",
	356: "memfd_create",
	434: "pidfd_open",
	436: "close_range",
	439: "faccessat2",
}

// i386To64 is i386Same by x86-64 number, filled by init.
var i386To64 = map[int]int{}

func init() {
	for n, name := range i386Same {
		nr, ok := numberOf[name]
		if !ok {
			panic("syscalls: unknown x86-64 call " + name + " in i386Same")
		}
		i386To64[n] = nr
	}
}

// NameI386 returns the Linux name of an i386 system call number, or
// "syscall_N" for numbers no kernel assigns.
func NameI386(nr int) string {
	switch {
	case nr >= 0 && nr < len(namesI386) && namesI386[nr] != "":
		return namesI386[nr]
	case nr >= len(namesI386) && nr != 453 && nr < len(names) && names[nr] != "":
		// Numbers from 424 on are common to all architectures;
		// map_shadow_stack (453) exists on x86-64 only.
		return names[nr]
	}
	return "syscall_" + strconv.Itoa(nr)
}

// CallName is the name of the call as made: "[i386] name" for int $0x80.
func CallName(c *Call) string {
	if c.I386 {
		return "[i386] " + NameI386(c.I386Nr)
	}
	return Name(c.Nr)
}

// Label names a call in messages: "13 (time)", or for int $0x80
// "i386 13 (time) made with int $0x80".
func Label(c *Call) string {
	if c.I386 {
		return "i386 " + strconv.Itoa(c.I386Nr) + " (" + NameI386(c.I386Nr) + ") made with int $0x80"
	}
	return strconv.Itoa(c.Nr) + " (" + Name(c.Nr) + ")"
}

// FromRegs builds the call a thread entered from its registers at the
// entry stop; i386 says it entered with int $0x80. Nr is then the x86-64
// equivalent (NoEquivalent if none).
func FromRegs(regs *trace.Regs, i386 bool) Call {
	if !i386 {
		return Call{
			Nr:   int(int64(regs[trace.OrigRAX])),
			Args: [6]uint64{regs[trace.RDI], regs[trace.RSI], regs[trace.RDX], regs[trace.R10], regs[trace.R8], regs[trace.R9]},
		}
	}
	raw := int(int32(regs[trace.OrigRAX]))
	c := Call{Nr: NoEquivalent, I386: true, I386Nr: raw}
	if nr, ok := i386To64[raw]; ok {
		c.Nr = nr
	}
	for i, r := range [6]int{trace.RBX, trace.RCX, trace.RDX, trace.RSI, trace.RDI, trace.RBP} {
		c.Args[i] = uint64(uint32(regs[r]))
	}
	return c
}

// EventCall builds the call of a recorded event: nr is its Syscall field,
// regs its entry registers, i386 its FlagI386.
func EventCall(nr int32, regs *trace.Regs, i386 bool) Call {
	c := FromRegs(regs, i386)
	if !i386 {
		c.Nr = int(nr)
	}
	return c
}
