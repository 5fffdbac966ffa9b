package ptrace

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OptTraceSeccomp reports the system calls a tracee's seccomp filter
// returns SECCOMP_RET_TRACE for as PTRACE_EVENT_SECCOMP stops.
const OptTraceSeccomp = unix.PTRACE_O_TRACESECCOMP

// UntracedIP is the address a system call of a recorded program made with
// the filter of TraceFilter runs from untraced (the instruction pointer the
// kernel sees, after the syscall instruction): the hook page's own call.
// Every other call stops its thread in the recorder, which then resumes
// threads with PTRACE_CONT instead of stopping them at every entry and
// exit (docs/design.md, §6 "System call buffering").
const UntracedIP = 0x70000000 + 2

// ReexecIP is the hook page's other call the filter lets through, which
// only replay runs: a call made again there stops once, at the int3 after
// it, where made at its own instruction it would stop at the filter too.
const ReexecIP = 0x70000008 + 2

// FilterData is the SECCOMP_RET_DATA of the filter's trace verdict: a
// PTRACE_EVENT_SECCOMP stop with other data comes from a filter of the
// program's own.
const FilterData = 0x7e77

// seccompData offsets (struct seccomp_data).
const (
	seccompArch   = 4
	seccompIPLow  = 8
	seccompIPHigh = 12
)

// traceFilter returns the BPF program: allow a call from UntracedIP or
// ReexecIP in a 64-bit task, trace every other one (32-bit ones included).
func traceFilter() []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	const ld = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	return []unix.SockFilter{
		stmt(ld, seccompArch),
		jeq(unix.AUDIT_ARCH_X86_64, 0, 5),
		stmt(ld, seccompIPHigh),
		jeq(uint32(uint64(UntracedIP)>>32), 0, 3), // (ReexecIP's too)
		stmt(ld, seccompIPLow),
		jeq(uint32(UntracedIP), 2, 0),
		jeq(uint32(ReexecIP), 1, 0),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_TRACE|FilterData),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
	}
}

// ErrNoFilter reports that the seccomp filter could not be installed (a
// kernel without seccomp filters, a sandbox that forbids them): Start
// fails with it before the program runs, and the recorder starts the
// program again without the filter, with no system call buffering.
var ErrNoFilter = errors.New("the seccomp filter could not be installed")

// helperNoFilter is the exec helper's exit status for ErrNoFilter.
const helperNoFilter = 124

// installTraceFilter gives the calling thread the filter of traceFilter.
// PR_SET_NO_NEW_PRIVS is set only when the kernel asks for it (without
// CAP_SYS_ADMIN): as root, a traced setuid program keeps its privileges,
// as it does without the filter. Its tracer must already trace seccomp
// stops: a traced call with no tracer fails with ENOSYS.
func installTraceFilter() error {
	f := traceFilter()
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	set := func() unix.Errno {
		_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
		return e
	}
	e := set()
	if e == unix.EACCES {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
		}
		e = set()
	}
	if e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", e)
	}
	return nil
}
