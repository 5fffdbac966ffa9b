// Package trace defines the Rewind trace file: a versioned header followed by
// zstd-compressed frames of events and file blobs. The recorder writes it, the
// replayer and every inspection command read it.
package trace

import (
	"bytes"
	"slices"
)

// Kind says what an event is. The numeric values are part of the file format.
type Kind uint8

// Event kinds. Each event belongs to one thread (Tid) and carries the
// registers of that thread at the point where it happened, so that replay can
// check it is at the same place (divergence detection).
const (
	// KindExec: a program image starts (the first exec, or an execve in a
	// recorded process). Regs are those at the exec stop; Mem holds the
	// AT_RANDOM bytes and the rewritten auxv entries as they must be written
	// back; Data the executable's path and argv, NUL-separated (ExecInfo).
	KindExec Kind = 1
	// KindSyscall: a complete system call. Regs at entry, ExitRegs at exit,
	// Mem the memory the kernel wrote.
	KindSyscall Kind = 2
	// KindSyscallEntry: a system call that was left blocking in the kernel
	// while other threads ran; its KindSyscallExit comes later in the log.
	KindSyscallEntry Kind = 3
	// KindSyscallExit: the end of a blocking system call, logged when the
	// thread was next scheduled. ExitRegs and Mem as for KindSyscall.
	KindSyscallExit Kind = 4
	// KindSignal: a signal delivered to the thread. Synchronous signals (a
	// fault at Regs.Rip) recur by themselves in replay; asynchronous ones are
	// injected at the same point: right after the previous event of the thread.
	// For a signal the program handles, Mem holds the frame the kernel
	// built for the handler, which replay writes over its own (traces made
	// before session 30 have none).
	KindSignal Kind = 5
	// KindRdtsc: an rdtsc or rdtscp instruction trapped and emulated; Value
	// is the counter, Aux the rdtscp TSC_AUX.
	KindRdtsc Kind = 6
	// KindPreempt: the thread was stopped in user code (a spin, a long run
	// while others waited, a signal to deliver, chaos mode). Replay stops it
	// at the first time it reaches Regs.Rip with identical registers and
	// StackHash, and, when they are not 0, the same hash of its FPU/SSE
	// registers (Value) and of its global data (Aux: the executable's
	// writable segments and the brk heap), see ptrace.FPHash and
	// ptrace.DataHash. In holds memory words that must have the same bytes
	// too: first the 8-byte word that alone told two passes of the point
	// apart when the recorder saw one (a loop counter kept on the stack or
	// in the heap), then, in an approximate preemption (FlagApprox), 16
	// bytes at each address a general register held in private writable
	// memory (record/approx.go), then the stack from rsp up to 4 KiB past
	// the window, the callers' frames (ptrace.DeepStack; traces made
	// before session 31 have none). Hash, when not 0, sums the stack above
	// those words up to 64 KiB from rsp (ptrace.WideStack, ptrace.WideSum;
	// traces made before session 33 have none, and an older replay
	// ignores it).
	KindPreempt Kind = 7
	// KindThreadExit: the thread ended (its exit or the process's).
	KindThreadExit Kind = 8
	// KindExit: the process ended with Status (a wait status).
	KindExit Kind = 9
	// KindCpuid: a cpuid instruction trapped (CPUID faulting) and emulated:
	// Value is eax | ebx<<32 and Aux is ecx | edx<<32 of the answer.
	KindCpuid Kind = 10
	// KindEnd: the recording stopped while the program still ran (rewind
	// was told to stop: a second Ctrl-C, SIGTERM, SIGHUP). Data says why.
	// It is the last event; replay stops there with the program alive, as
	// it was at the thread's previous event. It has no registers: what the
	// threads did after their last event is not in the recording.
	KindEnd Kind = 11
	// KindSharedMem: memory the program shares with something outside the
	// recording (a file, a memfd, a SysV segment, anonymous shared memory a
	// child writes) changed under it, or was mapped with contents replay
	// cannot know. Shared names the object and its size; each Mem's Addr is
	// an offset in the object, not an address. Replay writes the bytes into
	// its copy of the object where the thread of Tid stands, before it runs
	// again. It has no registers. Without Shared, another process of the
	// recording wrote the memory of Tid's process (/proc/PID/mem,
	// process_vm_writev): each Mem is at its address there.
	KindSharedMem Kind = 12
	// KindRdrand: an rdrand or rdseed instruction, replaced by a trap
	// (engine/patch), emulated: Value is what its destination register got
	// (within its operand size), Aux is 1 when it succeeded (CF set).
	// FlagRdseed marks rdseed.
	KindRdrand Kind = 13
	// KindSnapshot: the recording starts from a process that was already
	// running (rewind record -p), not from an exec. It is the first event:
	// Data is the JSON of a Snapshot (DecodeSnapshot), whose regions' bytes
	// are blobs; Tid and Regs are its first thread's. Replay rebuilds the
	// process from it, and reverse execution stops there.
	KindSnapshot Kind = 14
)

// Event flags.
const (
	// FlagApprox marks a preemption that was not a proven spin: the match in
	// replay is by fingerprint only (the first pass with that state, which
	// may come before the recorded one if the state recurs with a
	// different heap or kernel state).
	FlagApprox uint32 = 1 << iota
	// FlagSyncSignal marks a signal caused by the instruction at Regs.Rip.
	FlagSyncSignal
	// FlagUnsupported marks a system call that succeeded in a way replay
	// cannot reproduce (a number the table does not know, a call or form
	// marked unsupported, outputs the recorder could not tell); replay
	// stops there with a clear message. Failed calls never carry it.
	FlagUnsupported
	// FlagRdtscp marks an rdtscp (as opposed to rdtsc).
	FlagRdtscp
	// FlagStdout and FlagStderr mark writes to the program's standard output
	// or error; Data holds the bytes written.
	FlagStdout
	FlagStderr
	// FlagNoReturn marks a system call that never returned to this thread
	// (exit, a successful execve, exit_group): ExitRegs are meaningless.
	FlagNoReturn
	// FlagNewProcess marks a fork, vfork or clone that created a process
	// (NewTid is its pid), not a thread.
	FlagNewProcess
	// FlagRdseed marks a KindRdrand event of an rdseed (as opposed to rdrand).
	FlagRdseed
	// FlagI386 marks a system call made with int $0x80 from 64-bit code:
	// Regs[OrigRAX] is its i386 number and its arguments are in ebx, ecx,
	// edx, esi, edi, ebp; Syscall is the x86-64 call that does the same, or
	// -1 when none does (syscalls.FromRegs).
	FlagI386
	// FlagSkipped marks a system call the program's own tracer kept the
	// kernel from running (PTRACE_SYSEMU): ExitRegs are the registers the
	// tracer left, which replay gives the thread without running the call.
	FlagSkipped
	// FlagNoRedo marks a ptrace request of the program whose change to the
	// tracee (registers set at a PTRACE_SYSEMU stop) is carried by the
	// tracee's own next event: replay does not redo it.
	FlagNoRedo
	// FlagPtraceStop marks a KindSignal event that is not a delivery: the
	// signal stopped the thread for its tracer, a task of the recording
	// (the program's own ptrace, emulated). Replay brings the thread to
	// that stop (with FlagSyncSignal its instruction raises the signal
	// again) and leaves the signal undelivered: the tracer decides, and a
	// delivery it asks for is an event of its own.
	FlagPtraceStop
	// FlagSingleStep marks a FlagPtraceStop event that ended a
	// PTRACE_SINGLESTEP of the tracer: replay single-steps the thread, which
	// stops with Signo (SIGTRAP, or the fault of the instruction) at Regs.
	FlagSingleStep
	// FlagBuffered marks a system call the hook page made and recorded in
	// the program (engine/hook), with no stop (or, on a KindRdtsc event, an
	// rdtsc it read at a patched site, whose address is Regs' rip, all
	// Regs has): Regs are those replay sees
	// when the hook makes it traced (rip after the hook's traced syscall
	// instruction, the call's number and arguments; the other registers are
	// the hook's own), ExitRegs the same with the result.
	FlagBuffered
	// FlagHookSite marks a system call after which the recorder patched its
	// site to go through the hook page: Aux is the stub's address, Value the
	// page mapped for it first (0: a page mapped before).
	FlagHookSite
	// FlagXgetbv marks a KindCpuid event of an xgetbv (patch.Xgetbv): the
	// question in ecx, the answer (edx:eax) in Value.
	FlagXgetbv
)

// Regs is the x86-64 user_regs_struct in kernel order (27 words).
type Regs [27]uint64

// Register indexes into Regs, in struct user_regs_struct order.
const (
	R15 = iota
	R14
	R13
	R12
	RBP
	RBX
	R11
	R10
	R9
	R8
	RAX
	RCX
	RDX
	RSI
	RDI
	OrigRAX
	RIP
	CS
	EFLAGS
	RSP
	SS
	FSBase
	GSBase
	DS
	ES
	FS
	GS
)

// RegNames are the lower-case register names, indexed like Regs.
var RegNames = [27]string{"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
	"rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss",
	"fs_base", "gs_base", "ds", "es", "fs", "gs"}

// ByX86Number gives the Regs index of the general registers by their x86
// number (rax=0 … r15=15, as ModRM and REX encode them).
var ByX86Number = [16]int{RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15}

// Mem is a range of memory and its contents.
type Mem struct {
	Addr uint64
	Data []byte
}

// MapFile says that a successful mmap of a file must be filled, in replay,
// with bytes of a blob stored in the trace: Length bytes of blob Blob from
// Offset (fewer if the file was shorter).
type MapFile struct {
	Blob   uint32 `json:"blob"`
	Offset uint64 `json:"offset,omitempty"`
	Length uint64 `json:"length"`
	// Path is the file's path when it was mapped, for symbol lookup.
	Path string `json:"path,omitempty"`
}

// SharedMap names a shared memory object: a file or memfd mapped MAP_SHARED,
// a SysV segment, an anonymous shared mapping. Replay backs each object with
// one memfd of its own and maps that wherever the recording mapped the
// object, so that two mappings of it stay one memory.
type SharedMap struct {
	// Object numbers the object, from 1, in the order the recording met them.
	Object uint32
	// Offset is where the mapping starts in the object (mmap, shmat).
	Offset uint64
	// Size is the object's size in bytes at the event: accesses past its
	// last page fault (SIGBUS) in replay as they did when recorded.
	Size uint64
	// Path is the object's name in /proc/PID/maps, for display.
	Path string
}

// Event is one entry of the recording. Fields not meaningful for a Kind are
// zero and not stored.
type Event struct {
	Kind  Kind
	Flags uint32
	Tid   int32
	// Time is nanoseconds since the recording started.
	Time int64
	// Regs are the thread's registers at the event (syscall entry, signal
	// stop, trap, preemption point, exec stop).
	Regs Regs
	// ExitRegs are the registers at system call exit.
	ExitRegs Regs
	// Syscall is the system call number (KindSyscall, Entry, Exit).
	Syscall int32
	// Mem is memory written by the kernel (syscall outputs, AT_RANDOM).
	Mem []Mem
	// In is memory the call read, captured for display and checks: path
	// strings, socket addresses, the first bytes of a write.
	In []Mem
	// Map is set for an mmap of a file.
	Map *MapFile
	// Shared is set for a system call that maps or unmaps a shared memory
	// object (mmap MAP_SHARED, shmat, shmdt) and for KindSharedMem.
	Shared *SharedMap
	// Data holds the bytes a write to stdout/stderr wrote; Hash a 64-bit
	// hash of the bytes any write-like call wrote (0 if none), or, in a
	// KindPreempt, the sum of the stack further up.
	Data []byte
	Hash uint64
	// Signal number and the 128-byte siginfo (KindSignal).
	Signo   int32
	Siginfo []byte
	// Value and Aux: rdtsc and rdrand results; for KindExec, Value is the
	// address of the vDSO rewind patched (0: none, or hidden); StackHash: preemption fingerprint;
	// Status: exit wait status; NewTid: the thread a clone created, by
	// the recorder's id for it (the Tid of its events), which differs from
	// the clone's result in a pid namespace; for such a clone, Aux is the
	// new thread's id as it sees itself (in its own pid namespace) when
	// that is not NewTid.
	Value     uint64
	Aux       uint64
	StackHash uint64
	Status    int32
	NewTid    int32
	// Hooks are the system call sites the recorder patched to go through
	// the hook page at this event, where code it had seen making calls was
	// mapped again (an exec, an mmap of a library): replay patches them
	// here too.
	Hooks []HookPatch
	// Image is the JSON of the Image a KindExec left (DecodeImage): what
	// replay rebuilds the process from where the files differ.
	Image []byte
}

// HookPatch is a system call site patched to jump to a stub of the hook
// page (engine/hook): the address after its syscall instruction, the
// call's number (hook.NrCpuid: a cpuid's address, patched with the code
// around it), the stub's address and the page mapped for it first (0:
// a page mapped before).
type HookPatch struct {
	Site, Stub, Page uint64
	Nr               uint32
}

// CpuidAnswer is what cpuid answered (masked as the recorder masks it) for
// a leaf and subleaf, or for every subleaf of the leaf (AnySub).
type CpuidAnswer struct {
	Leaf   uint32 `json:"leaf"`
	Sub    uint32 `json:"sub,omitempty"`
	AnySub bool   `json:"any_sub,omitempty"`
	Eax    uint32 `json:"eax"`
	Ebx    uint32 `json:"ebx"`
	Ecx    uint32 `json:"ecx"`
	Edx    uint32 `json:"edx"`
}

// maxHooks bounds the sites of one event a reader accepts.
const maxHooks = 1 << 16

// Clone returns a deep copy of e in the form the reader returns (empty
// slices are nil): what outlives a caller that reuses e's buffers.
func (e *Event) Clone() *Event {
	c := *e
	c.Mem, c.In = cloneMems(e.Mem), cloneMems(e.In)
	c.Data, c.Siginfo, c.Image = cloneBytes(e.Data), cloneBytes(e.Siginfo), cloneBytes(e.Image)
	if len(e.Hooks) == 0 {
		c.Hooks = nil
	} else {
		c.Hooks = slices.Clone(e.Hooks)
	}
	if e.Map != nil {
		m := *e.Map
		c.Map = &m
	}
	if e.Shared != nil {
		sh := *e.Shared
		c.Shared = &sh
	}
	return &c
}

// bulk is how many bytes of data e carries (what its encoding is mostly
// made of when it is big).
func (e *Event) bulk() int {
	n := len(e.Data) + len(e.Siginfo) + len(e.Image)
	for _, m := range e.Mem {
		n += len(m.Data)
	}
	for _, m := range e.In {
		n += len(m.Data)
	}
	return n
}

func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

func cloneMems(ms []Mem) []Mem {
	if len(ms) == 0 {
		return nil
	}
	out := make([]Mem, len(ms))
	for i, m := range ms {
		out[i] = Mem{Addr: m.Addr, Data: cloneBytes(m.Data)}
	}
	return out
}
