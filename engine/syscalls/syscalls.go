// Package syscalls is the x86-64 Linux system call table of Rewind: names,
// argument decoding, the memory each call writes (what the recorder saves and
// the replayer injects), the memory worth capturing from its inputs, and the
// replay policy (emulate or re-execute).
package syscalls

import "syscall"

// Policy says how replay treats a system call.
type Policy uint8

const (
	// Emulate: replay skips the kernel call and injects the recorded result
	// registers and output memory.
	Emulate Policy = iota
	// Reexec: replay lets the kernel execute it again because it shapes the
	// address space, the threads or the signal state (mmap, clone, rt_sigaction…).
	Reexec
	// Refuse: the call answers ENOSYS in recording and replay, so libraries
	// fall back to something recordable (io_uring, rseq, clone3).
	Refuse
	// Unsupported: the call is named and decoded but rewind cannot reproduce
	// it once it succeeded (Spec.Why says why). The recorder warns and
	// replay stops there; a failure is emulated like any other.
	Unsupported
)

// ArgType says how to decode an argument for display.
type ArgType uint8

// Argument types.
const (
	Int       ArgType = iota // signed decimal
	Uint                     // unsigned decimal
	Hex                      // hexadecimal
	Ptr                      // pointer (hex, NULL for 0)
	Fd                       // file descriptor (AT_FDCWD for dirfd -100)
	Path                     // NUL-terminated string
	Buf                      // buffer whose length is the next argument (shown as a quoted prefix)
	OpenFlags                // O_RDONLY|O_CLOEXEC…
	Mode                     // octal
	Prot                     // PROT_READ|…
	MapFlags                 // MAP_PRIVATE|…
	Signal                   // SIGSEGV…
	FutexOp                  // FUTEX_WAIT_PRIVATE…
	Sockaddr                 // struct sockaddr, length is the next argument
	ClockID                  // CLOCK_MONOTONIC…
	AtFlags                  // AT_SYMLINK_NOFOLLOW|…
)

// Arg names and types one argument.
type Arg struct {
	Name string
	Type ArgType
}

// Range is a span of tracee memory. CString ranges are NUL-terminated strings
// of at most Len bytes (the NUL excluded).
type Range struct {
	Addr    uint64
	Len     int
	CString bool
}

// Memory reads the tracee's memory (live during recording, or rebuilt from
// the recorded inputs and outputs when listing events).
type Memory interface {
	ReadAt(p []byte, addr uint64) (int, error)
}

// Call is one system call: number, the six argument registers (rdi, rsi,
// rdx, r10, r8, r9) and, after it returned, the raw return value (negative
// errno on failure).
type Call struct {
	Nr   int
	Args [6]uint64
	Ret  int64
	// I386 marks a call made with int $0x80; I386Nr is its i386 number
	// and Nr the x86-64 call that does the same (i386.go).
	I386   bool
	I386Nr int
}

// Spec describes one system call.
type Spec struct {
	Nr     int
	Name   string
	Args   []Arg
	Policy Policy
	// Blocks reports whether the call may wait in the kernel for another
	// thread or the outside world (futex wait, read on a pipe, nanosleep…),
	// so the recorder lets other threads run meanwhile. Nil means never.
	Blocks func(c *Call) bool
	// Outputs lists the memory the call wrote, given its arguments and
	// result; it may read the tracee's memory (iovecs, msghdr). Nil: none.
	Outputs func(c *Call, m Memory) ([]Range, error)
	// Inputs lists memory worth capturing at entry (paths, socket
	// addresses, the first bytes written). Nil: none.
	Inputs func(c *Call, m Memory) ([]Range, error)
	// NoFailure marks calls whose negative result is not a failure that
	// left nothing to replay: rt_sigreturn "returns" the restored rax and
	// rt_sigsuspend always returns EINTR after running a handler.
	NoFailure bool
	// PolicyOf refines Policy by the arguments (a clone that makes a
	// thread, a prctl that names a mapping). Nil: Policy.
	PolicyOf func(c *Call) Policy
	// Why says why an Unsupported call cannot be replayed.
	Why string
	// UnsupportedForm, when set, names the successful forms of an otherwise
	// supported call that rewind cannot replay (a bpf command without an
	// output rule): it returns why, or "" for a supported form.
	UnsupportedForm func(c *Call) string
	// RefuseForm, when set, names the forms the recorder must not let the
	// kernel execute (an attach of another process, a mapping of a perf
	// ring buffer): it returns the error the call then fails with, in
	// recording and replay, and why; zero for a form that may run. m may be
	// a Prober.
	RefuseForm func(c *Call, m Memory) (syscall.Errno, string)
}

// Prober is what an output rule may ask of the recorder when a call's
// arguments and memory do not say what it wrote: the size of a semaphore
// set for semctl(GETALL), the sizes of a BPF map's keys and values, what a
// descriptor is. Only the recorder provides it, with the tracee stopped at
// the call's exit; rules that need it fail without it.
type Prober interface {
	// Probe makes system call nr in the tracee with size bytes of scratch
	// memory of the tracee: build receives its address and returns the
	// arguments and the scratch's first bytes (the rest is zero). Probe
	// returns the call's result and the scratch memory afterwards, and
	// leaves the tracee as it was.
	Probe(nr int, size int, build func(scratch uint64) (args [6]uint64, init []byte)) (int64, []byte, error)
	// FdTarget returns what the tracee's descriptor fd is, as
	// /proc/PID/fd shows it ("anon_inode:bpf-map", "/etc/passwd").
	FdTarget(fd int) (string, error)
}
