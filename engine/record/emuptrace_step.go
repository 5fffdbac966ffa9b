package record

import (
	"encoding/binary"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The program's PTRACE_SINGLESTEP, emulated (see emuptrace.go). A debugger
// steps its tracee over a breakpoint it took out, or one instruction at a
// time (gdb's stepi, and its displaced stepping): the recorder, the real
// tracer, steps the tracee for real, at once, and the stop the step ends in
// becomes the emulated stop the tracer's wait reports. Replay's tracee
// stands at its last event, so every stop a tracer may change the tracee at
// (SETREGS, POKE) must be an event replay reaches: the step is logged as a
// signal event flagged FlagPtraceStop|FlagSingleStep, which replay redoes
// with its own single step, and so is the stop of a signal the tracee's own
// instruction raised (an int3: FlagPtraceStop|FlagSyncSignal), which replay
// reaches by running the tracee until the instruction raises it again.

// ptSingleStep is PTRACE_SINGLESTEP.
const ptSingleStep = 9

// singleStep does the tracer's PTRACE_SINGLESTEP of x, stopped, with sig
// the signal to deliver (data): with a handler, the step stops at its
// first instruction, as the kernel reports it.
func (r *Recorder) singleStep(x *thread, c *syscalls.Call, sig uint64) int64 {
	if sig >= 65 {
		return errno(unix.EIO)
	}
	if x.pt.syscallStop || x.pt.status>>16 == unix.PTRACE_EVENT_EXIT {
		// The real thread is at a system call's entry, not where
		// replay's thread stands.
		return r.notEmulated(c, "PTRACE_SINGLESTEP from a syscall or event stop")
	}
	var regs trace.Regs
	if ptrace.GetRegs(x.tid, &regs) != nil {
		return errno(unix.ESRCH)
	}
	switch insnKind(x, regs[trace.RIP], r.cpuidFaulting) {
	case insnSyscall:
		return r.stepSyscall(x, c, &regs, int(sig))
	case insnTrapped:
		// Its fault is the recorder's, which emulates the instruction:
		// not a stop for the tracer.
		return r.notEmulated(c, "PTRACE_SINGLESTEP over rdtsc, rdtscp or cpuid")
	}
	x.pt.regs = regs
	if x.pt.event {
		sig = 0 // an event stop delivers nothing, as for PTRACE_CONT
	}
	// A signal given is delivered first, as the step starts: logged
	// where x stopped, replay delivers it there and steps with it too.
	if ret := r.logResumeSignal(x, int(sig)); ret != 0 {
		return ret
	}
	st, info, err := r.stepOnce(x, int(sig))
	if err != nil {
		r.warnOnce("ptrace step", "rewind: warning: single-stepping tid %d for the program's ptrace: %v\n", x.tid, err)
		return errno(unix.ESRCH)
	}
	if st.Kind != ptrace.StopSignal {
		// The tracee died (or stopped for the recorder's own reasons)
		// during its instruction: the recorder handles that stop as any.
		tracer := x.pt.tracer
		x.pt = ptraceState{tracer: tracer, options: x.pt.options}
		x.state, x.haveRegs = running, false
		if err := r.dispatch(st); err != nil {
			r.warnOnce("ptrace step", "rewind: warning: single-stepping tid %d for the program's ptrace: %v\n", x.tid, err)
		}
		return 0
	}
	if ptrace.GetRegs(x.tid, &regs) != nil {
		return errno(unix.ESRCH)
	}
	// The step's trap, or the fault or trap of its instruction: both come
	// back in replay's own step.
	e := &trace.Event{Kind: trace.KindSignal, Flags: trace.FlagPtraceStop | trace.FlagSingleStep,
		Tid: int32(x.tid), Regs: regs, Signo: int32(st.Sig), Siginfo: info}
	if err := r.log(e); err != nil {
		r.warnOnce("ptrace log", "rewind: warning: %v\n", err)
		return errno(unix.EIO)
	}
	tracer := x.pt.tracer
	x.pt = ptraceState{tracer: tracer, options: x.pt.options, sig: st.Sig, sync: true, info: info, logged: true}
	if err := r.enterPtraceStop(x, st.Sig<<8|stoppedStatus, &regs); err != nil {
		r.warnOnce("ptrace step", "rewind: warning: single-stepping tid %d for the program's ptrace: %v\n", x.tid, err)
	}
	return 0
}

// stepSyscall steps x over the system call instruction it stands at: x
// runs as for PTRACE_CONT, its call is recorded as any, and its exit,
// logged, is the step's stop (ptraceStepExit), where replay's tracee then
// stands. A signal delivered before the call stops x first, as the kernel
// does, and ends the step.
func (r *Recorder) stepSyscall(x *thread, c *syscalls.Call, regs *trace.Regs, sig int) int64 {
	execs := []uint64{unix.SYS_EXECVE, unix.SYS_EXECVEAT}
	var insn [2]byte
	if n, _ := x.proc.mem.ReadAt(insn[:], regs[trace.RIP]); n == 2 && insn == [2]byte{0xcd, 0x80} {
		execs = []uint64{i386Execve, i386Execveat}
	}
	if slices.Contains(execs, regs[trace.RAX]) {
		// Its stop would be the exec's, whose SIGTRAP the emulation
		// sends by itself.
		return r.notEmulated(c, "PTRACE_SINGLESTEP over execve")
	}
	if ret := r.resumeTracee(x, sig, false); ret != 0 {
		return ret
	}
	x.pt.stepSyscall = true
	return 0
}

// ptraceStepExit ends the step of a tracee stepped over a system call
// instruction (stepSyscall) at the call's exit, logged already: as the
// kernel reports such a step, with a SIGTRAP (TRAP_BRKPT). The SIGTRAP is
// real, so that the tracee's stop is a signal-delivery stop, from which
// the tracer may go on with a signal as from any; its delivery, before any
// instruction runs, becomes the emulated stop (stepTrapStop).
func (r *Recorder) ptraceStepExit(t *thread) error {
	if !t.pt.stepSyscall || t.pt.tracer == 0 {
		return nil
	}
	t.pt.stepSyscall, t.pt.stepTrap = false, true
	if err := ptrace.Tgkill(t.proc.pid, t.tid, int(unix.SIGTRAP)); err != nil {
		return fmt.Errorf("the SIGTRAP ending a step over a system call: %w", err)
	}
	return nil
}

// stepTrapStop gives the stop of the SIGTRAP that ptraceStepExit sent the
// siginfo of the kernel's. It reports whether sig was that SIGTRAP.
func (t *thread) stepTrapStop(sig int) bool {
	if sig != int(unix.SIGTRAP) || !t.pt.stepTrap {
		return false
	}
	t.pt.stepTrap = false
	info := make([]byte, ptrace.SiginfoSize)
	binary.LittleEndian.PutUint32(info[0:], uint32(sig))
	binary.LittleEndian.PutUint32(info[8:], trapBrkpt)
	t.pt.info = info
	return true
}

// i386Execve and i386Execveat are execve's and execveat's numbers for
// int $0x80.
const i386Execve, i386Execveat = 11, 358

// trapBrkpt is TRAP_BRKPT, the si_code of the SIGTRAP ending a step over
// a system call (or a step whose DR6 a virtual machine lost, or an icebp).
const trapBrkpt = 1

// stepOnce executes one instruction of x, delivering sig first, and
// returns the stop it ends in, with the stop's siginfo for a signal stop.
// A signal sent to x meanwhile (its delivery comes before the instruction)
// is held, as any signal arriving in user code, and the step done again.
func (r *Recorder) stepOnce(x *thread, sig int) (ptrace.Status, []byte, error) {
	for {
		if err := ptrace.Step(x.tid, sig); err != nil {
			return ptrace.Status{}, nil, err
		}
		sig = 0
		st, _, err := ptrace.Wait(x.tid, false)
		if err != nil || st.Kind != ptrace.StopSignal {
			return st, nil, err
		}
		info, err := ptrace.GetSiginfo(x.tid)
		if err != nil {
			return st, nil, err
		}
		if st.Sig == int(unix.SIGTRAP) || isSyncSignal(st.Sig, info) {
			return st, info, nil
		}
		r.hold(x, st.Sig, info)
	}
}

// Instructions a step of the tracee cannot simply run.
const (
	insnPlain   = iota
	insnSyscall // syscall, sysenter, int $0x80: enters the kernel
	insnTrapped // rdtsc, rdtscp, cpuid: made to fault for the recorder
)

// insnKind tells what the instruction at pc of x is for a step; cpuid
// says whether cpuid faults (CPUID faulting is on).
func insnKind(x *thread, pc uint64, cpuid bool) int {
	var b [3]byte
	if n, _ := x.proc.mem.ReadAt(b[:], pc); n < 2 {
		return insnPlain
	}
	switch {
	case b[0] == 0x0f && (b[1] == 0x05 || b[1] == 0x34), b[0] == 0xcd && b[1] == 0x80:
		return insnSyscall
	case b[0] == 0x0f && b[1] == 0x31, b == [3]byte{0x0f, 0x01, 0xf9}, cpuid && b[0] == 0x0f && b[1] == 0xa2:
		return insnTrapped
	}
	return insnPlain
}

// logPtraceStop logs the stop of x for the signal its own instruction
// raised, at regs: replay's tracee must stand there for what its tracer
// changes next.
func (r *Recorder) logPtraceStop(x *thread, sig int, info []byte, regs *trace.Regs) error {
	e := &trace.Event{Kind: trace.KindSignal, Flags: trace.FlagPtraceStop | trace.FlagSyncSignal,
		Tid: int32(x.tid), Regs: *regs, Signo: int32(sig), Siginfo: info}
	if err := r.log(e); err != nil {
		return fmt.Errorf("the stop of tid %d for its tracer: %w", x.tid, err)
	}
	x.pt.logged = true
	return nil
}
