package record

// A recorded thread: where it is (running, parked at a stop, in a
// blocking call, gone), what it does when resumed, and the signals held
// for it. The recorder serializes them per run queue (scheduler.go).

import (
	"time"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// threadState is where a recorded thread is.
type threadState int

const (
	// parked: stopped by ptrace and waiting for the CPU; park says at what.
	parked threadState = iota
	// running: resumed in user code or in a short system call.
	running
	// inKernel: resumed into a system call that may block; its exit stop
	// will park it (parkBlockedExit).
	inKernel
	// gone: exited.
	gone
	// stopped: in a job control stop, until a SIGCONT (jobctl.go).
	stopped
)

// parkKind says what a parked thread will do when resumed.
type parkKind int

const (
	parkResume      parkKind = iota // resume as is (after a logged event, a new thread, a preemption)
	parkBlockedExit                 // at the exit stop of a blocking call whose exit is not logged yet
	parkHeldEntry                   // at the entry of a write held behind another (order.go)
	parkSaved                       // at a stop handled when it gets its turn (saved; sidebyside.go)
	parkEntry                       // at a call's entry, handled when it gets its turn (sidebyside.go)
)

type thread struct {
	tid   int
	proc  *process
	state threadState
	park  parkKind
	// groupSig is the signal of its last group-stop (jobctl.go).
	groupSig int

	// System call in progress (between entry and exit stops).
	inSyscall bool
	split     bool // its entry was logged as KindSyscallEntry
	nr        int
	entry     trace.Regs
	// peeked holds the registers read at this stop (havePeek: by
	// takeRecords or hookCallEntry), which hookCallEntry and
	// onSyscallEntry take instead of reading them again; dispatch
	// forgets them at each stop.
	peeked   trace.Regs
	havePeek bool
	in       []trace.Mem
	refused  bool
	// execFile: the program an exec in progress runs through a descriptor.
	execFile  *trace.MapFile
	birth     bool   // new thread: its clone's exit stop is still to come
	restartNr int    // the call restart_syscall would resume
	vfork     bool   // a process clone sharing memory: capture the parent's stack
	forked    int    // the child process the current call created (0: none)
	child     int    // the task (thread or process) the current call created (0: none)
	stream    int    // the standard stream (1, 2) the call writes to, 0 if none
	i386      bool   // the call was made with int $0x80 (i386.go)
	robust    uint64 // the head given to set_robust_list (robust.go)

	// refusedRet is the result of a call refused at its entry.
	refusedRet int64
	// tscSigsegv: the program asked for PR_TSC_SIGSEGV (see tsc.go).
	tscSigsegv bool
	// tscTrapped: the kernel makes its rdtsc fault already (the recorder
	// set PR_TSC_SIGSEGV for it or the thread it was cloned from, and
	// execve keeps it): its next exec need not set it again.
	tscTrapped bool
	// ownFilter: the thread runs under a seccomp filter of the program's
	// own (seccomp.go), inherited by the threads and children it makes.
	ownFilter bool
	// seenEntry: its last stop was a syscall-entry stop, so that a
	// seccomp stop next is the same call's (onSeccompStop).
	seenEntry bool
	// hookSite: the site of its current call, patched to go through the
	// hook page when the call returns (hook.go); Shape 0: none.
	hookSite hook.Site
	// knownExit, when haveKnownExit: the registers its current call
	// leaves, known at its entry (knownexit.go), logged with no exit stop.
	knownExit     trace.Regs
	haveKnownExit bool

	// resumeRegs are the registers the thread had when last resumed: an
	// asynchronous signal that stops it with these registers arrived before it
	// ran any instruction, so it is delivered there and logged.
	resumeRegs trace.Regs
	haveRegs   bool

	// Signals held back to be delivered at a deterministic point.
	held      []heldSignal
	injecting *heldSignal
	// frame is the event of a signal t is being single-stepped into its
	// handler with, logged with the frame once t stands there (sigframe.go).
	frame *trace.Event

	sliceStart time.Time
	spin       spinState
	// pt is the thread's part in the program's own ptrace (emuptrace.go).
	pt ptraceState
	// merging: it runs on a queue collapse dissolved, and waits on the
	// serial one from its next stop; saved is a stop that waits for its
	// turn there (sidebyside.go).
	merging bool
	saved   ptrace.Status
	// mergeKick: collapse interrupted it, and that stop is still to come.
	mergeKick bool
	// droppedShared: the call being logged dropped shared mappings of
	// its process (sharedSyscall), which sharedDropped follows after it.
	droppedShared bool
}

type heldSignal struct {
	sig  int
	info []byte
}
