package replay

import (
	"bytes"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Kernel-internal restart codes a tracer sees at syscall exit when a signal
// interrupted the call.
const (
	mapFixedNoReplace = 0x100000
	mapTypeMask       = 0x3 // MAP_SHARED, MAP_PRIVATE or MAP_SHARED_VALIDATE
	mremapMayMove     = 1
	mremapFixed       = 2
	cloneChildSetTid  = 0x1000000
)

// callOf decodes the call of event e from the registers at its entry
// (int $0x80 calls follow the i386 convention).
func callOf(e *trace.Event, regs *trace.Regs) syscalls.Call {
	return syscalls.EventCall(e.Syscall, regs, e.Flags&trace.FlagI386 != 0)
}

func isErr(ret uint64) bool { return int64(ret) < 0 && int64(ret) >= -4095 }

// toEntry runs t to the entry of its next system call and checks it is the
// recorded one.
func (s *Session) toEntry(t *rthread, e *trace.Event) error {
	var st ptrace.Status
	var err error
	if t.atFilter && t.pending != nil {
		// A batch ended at the call, stopped by the filter: applySyscall
		// decides what that stop must become.
		st, t.pending = *t.pending, nil
	} else if st, err = s.run(t); err != nil {
		return err
	}
	if st.Kind != ptrace.StopSyscall {
		return s.diverge(e, "expected system call %s, got %s%s", syscalls.Name(int(e.Syscall)), describe(st), s.where(t, st))
	}
	if s.countersOpen(t) {
		// The segment is over: the event meets the recorded address space.
		if err := s.leaveFilterStop(t); err != nil {
			return err
		}
		if err := s.closeCounters(); err != nil {
			return err
		}
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.real, &regs); err != nil {
		return err
	}
	if s.fromHook(e) {
		// Made by the hook page: the number, the arguments and where
		// (the hook's traced call) are what the record says; the other
		// registers are the hook's, which differ between its modes.
		return s.compareBuffered(t, e, &regs)
	}
	return s.compareRegs(e, "at "+syscalls.Name(int(e.Syscall)), &e.Regs, &regs)
}

// applySyscall replays a complete system call or the entry of a split one.
func (s *Session) applySyscall(t *rthread, e *trace.Event) error {
	if err := s.toEntry(t, e); err != nil {
		return err
	}
	c := callOf(e, &e.Regs)
	if e.Flags&trace.FlagUnsupported != 0 {
		return unsupported(e, &e.Regs)
	}
	if e.Flags&trace.FlagSkipped != 0 {
		// The program's tracer skipped it (PTRACE_SYSEMU): nothing ran,
		// the thread goes on with the registers the tracer left.
		if err := s.leaveFilterStop(t); err != nil {
			return err
		}
		return s.setResult(t, e)
	}
	policy, noFailure := syscalls.Emulate, false
	if spec, ok := syscalls.Lookup(c.Nr); ok && (e.Flags&trace.FlagBuffered == 0 || hook.ReplayTraced(uint64(c.Nr))) {
		policy, noFailure = spec.PolicyFor(&c), spec.NoFailure
	}
	if verdict, ok := s.seccompKill(t, e, &e.Regs); ok {
		if err := s.leaveFilterStop(t); err != nil {
			return err
		}
		return s.replaySeccompKill(t, &e.Regs, verdict) // seccomp.go
	}
	if s.seccompTrapped(t, e) || s.execFailed(t, e, &c) {
		policy = syscalls.Emulate
	}
	split := e.Kind == trace.KindSyscallEntry
	if policy == syscalls.Reexec && !split && isErr(e.ExitRegs[trace.RAX]) && e.Flags&trace.FlagNoReturn == 0 && !noFailure {
		// It failed when recorded: the failure is all there is to replay.
		policy = syscalls.Emulate
	}
	if _, ok := s.createsFollowed(e); ok {
		// A child this replay runs: fork it for real.
		policy = syscalls.Reexec
	}
	if policy != syscalls.Reexec && s.signalUnderTempMask(t, e, &c) != nil {
		policy = syscalls.Reexec // tempmask.go
	}
	if policy != syscalls.Reexec {
		if err := s.leaveFilterStop(t); err != nil {
			return err
		}
		if split {
			t.atEntry = true
			return nil
		}
		return s.finishEmulated(t, e, &e.Regs)
	}
	return s.reexec(t, e, c)
}

// applySyscallExit replays the exit of a split system call.
func (s *Session) applySyscallExit(t *rthread, e *trace.Event) error {
	switch {
	case t.atExec:
		// The exit of an execve (or of the initial exec).
		t.atExec = false
		if t.atExecExit {
			// Rebuilt from the trace (execimage.go): there already, with
			// the registers the recorded exec left.
			t.atExecExit = false
			if err := ptrace.SetRegs(t.real, &e.ExitRegs); err != nil {
				return err
			}
		} else if err := s.syscallStop(t, e, "expected the end of execve"); err != nil {
			return err
		}
		regs, err := s.checkRegs(t, e, "after execve", &e.ExitRegs)
		if err != nil {
			return err
		}
		if isErr(regs[trace.RAX]) {
			return nil
		}
		if err := ptrace.TrapInstructions(t.real, t.proc.mem, true, s.trapsCpuid()); err != nil {
			return err
		}
		if s.hdr.Hook != "" {
			// Where the recorder mapped it.
			if err := hook.Install(t.real, t.proc.mem, hook.ModeReplay, s.hookImage); err != nil {
				return err
			}
			t.proc.hooked = true
			if s.hdr.XCR0 != 0 {
				if err := hook.SetXCR0(t.proc.mem, s.hdr.XCR0); err != nil {
					return err
				}
			}
			return hook.SetCpuid(t.proc.mem, s.hdr.Cpuid)
		}
		return nil
	case t.inKernel:
		// A re-executed call that blocked (vfork): collect its end.
		t.inKernel = false
		st, err := s.waitFor(t)
		if err != nil {
			return err
		}
		if st.Kind != ptrace.StopSyscall {
			return s.diverge(e, "expected the end of %s, got %s", syscalls.Name(int(e.Syscall)), describe(st))
		}
		if err := s.writeMem(t, e.Mem); err != nil {
			return err
		}
		return s.setResult(t, e)
	case t.atEntry:
		t.atEntry = false
		var entry trace.Regs
		if err := ptrace.GetRegs(t.real, &entry); err != nil {
			return err
		}
		if e.Flags&trace.FlagUnsupported != 0 {
			t.atEntry = true
			return unsupported(e, &entry)
		}
		if verdict, ok := s.seccompKill(t, e, &entry); ok {
			return s.replaySeccompKill(t, &entry, verdict) // seccomp.go
		}
		return s.finishEmulated(t, e, &entry)
	}
	return s.diverge(e, "exit of %s without its entry", syscalls.Name(int(e.Syscall)))
}

// finishEmulated completes an emulated call: t is at its entry, skipped by
// the kernel; the recorded outputs and result registers are put in place.
func (s *Session) finishEmulated(t *rthread, e *trace.Event, entry *trace.Regs) error {
	c := callOf(e, entry)
	c.Ret = int64(e.ExitRegs[trace.RAX])
	if err := s.checkWrite(t, e, &c); err != nil {
		return err
	}
	if err := s.writeMem(t, e.Mem); err != nil {
		return err
	}
	return s.setResult(t, e)
}

// setResult gives t the registers its call returned with when recorded.
func (s *Session) setResult(t *rthread, e *trace.Event) error {
	regs := e.ExitRegs
	if s.fromHook(e) {
		// Only the result is known (and all that differs): the rest
		// are the hook's registers, as they are.
		if err := ptrace.GetRegs(t.real, &regs); err != nil {
			return err
		}
		regs[trace.RAX] = e.ExitRegs[trace.RAX]
	}
	s.restartIfNoSignal(t, &regs, e.Flags&trace.FlagI386 != 0)
	if err := ptrace.SetRegs(t.real, &regs); err != nil {
		return fmt.Errorf("set the result of %s: %w", syscalls.Name(int(e.Syscall)), err)
	}
	return nil
}

// restartIfNoSignal handles a call interrupted for the recorder's own
// purposes: the kernel restarted it because no handler ran. An emulated call
// sees no pending signal, so replay does the restart itself, unless the
// thread's next event is the signal whose delivery decides.
func (s *Session) restartIfNoSignal(t *rthread, regs *trace.Regs, i386 bool) {
	if !ptrace.IsRestart(regs[trace.RAX]) {
		return
	}
	if next := s.peekThread(t.rec); next != nil && next.Kind == trace.KindSignal && next.Flags&trace.FlagSyncSignal == 0 {
		return
	}
	ptrace.RestartCall(regs, i386)
}

// checkWrite re-emits what the program writes to its standard output and
// error, read from the replaying process, and checks any write's bytes
// against the recording.
func (s *Session) checkWrite(t *rthread, e *trace.Event, c *syscalls.Call) error {
	if c.Ret <= 0 {
		return nil
	}
	// Bytes a sendfile or splice took from a file are only in the
	// recording: re-emit those.
	data := e.Data
	if e.Hash != 0 {
		data = syscalls.Written(c, t.proc.mem, int(min(c.Ret, trace.MaxEventMem)))
		if trace.WriteSum(s.hdr.WriteHash, data) != e.Hash {
			return s.diverge(e, "%s wrote different bytes than recorded", syscalls.Name(c.Nr))
		}
		if e.Flags&(trace.FlagStdout|trace.FlagStderr) != 0 && !bytes.Equal(data, e.Data) {
			return s.diverge(e, "output bytes differ from the recording")
		}
	}
	return s.emit(t, e, data)
}

// emit re-emits data, what event e of t wrote to a standard stream (none
// unless e is flagged so).
func (s *Session) emit(t *rthread, e *trace.Event, data []byte) error {
	w := s.opts.Stdout
	if e.Flags&trace.FlagStderr != 0 {
		w = s.opts.Stderr
	}
	if s.chain != nil && t.proc.rec != s.chain[len(s.chain)-1] {
		w = nil // an ancestor's output, before the debugged process was born
	}
	if w != nil && e.Flags&(trace.FlagStdout|trace.FlagStderr) != 0 {
		if _, err := w.Write(data); err != nil {
			return fmt.Errorf("re-emit output: %w", err)
		}
	}
	return nil
}

// reexec executes t's current system call again in the kernel. t is at the
// (skipped) entry; it is moved back onto the syscall instruction and run
// with PTRACE_SYSCALL, with the arguments adjusted so that the kernel's
// answer is the recorded one (mappings at the recorded addresses, file
// mappings made anonymous and filled from the trace).
func (s *Session) reexec(t *rthread, e *trace.Event, c syscalls.Call) error {
	if c.Nr == unix.SYS_RT_SIGRETURN && s.fpFull > 0 {
		// A frame fitFrame gave this CPU's FPU state, near the top of
		// the stack: the kernel wants room for all of it.
		if err := ptrace.LowerFPState(t.proc.mem, e.Regs[trace.RSP]-8, s.fpFull); err != nil {
			return s.diverge(e, "at rt_sigreturn: %v", err)
		}
	}
	_, forking := s.createsFollowed(e)
	quick := quickReexec(c.Nr) && !forking && e.Kind == trace.KindSyscall && e.Flags&trace.FlagNoReturn == 0 && t.resumeSig == 0
	atHook := quick && s.filtered && t.proc.hooked
	// onFilter: t stands at the filter's stop of this very call (a run of
	// buffered calls ended there), from which the call goes on to its
	// exit when nothing is injected into t before it.
	onFilter := !quick && t.atFilter && e.Kind == trace.KindSyscall && !injectsBefore(c.Nr)
	if (!atHook || e.Shared != nil) && !onFilter {
		// (Made at the hook page, the call stopped by the filter needs
		// only its number taken out; mapShared's injections need
		// PTRACE_SYSEMU's stop.)
		if err := s.leaveFilterStop(t); err != nil {
			return err
		}
	}
	regs := e.Regs
	closeFd := -1   // a stored file's memfd to close after an mmap (mapfile.go)
	stored := false // the mmap maps a stored file's memfd
	var hookRegs *trace.Regs
	if s.fromHook(e) {
		// A call the hook recorded (hook.ReplayTraced): the trace holds
		// only its number and arguments, which compareBuffered found in
		// the registers the hook's traced call stopped with. Those are
		// the program's too: what is changed below to make the call is
		// put back after it.
		if err := ptrace.GetRegs(t.real, &regs); err != nil {
			return err
		}
		orig := regs
		hookRegs = &orig
	}
	var fill *trace.MapFile
	switch c.Nr {
	case unix.SYS_MMAP:
		if e.Shared != nil {
			if err := s.mapShared(t, e, &regs); err != nil {
				return err
			}
			break
		}
		want := e.ExitRegs[trace.RAX]
		flags := c.Args[3]
		if flags&unix.MAP_FIXED == 0 {
			flags |= mapFixedNoReplace
			regs[trace.RDI] = want
		}
		if flags&unix.MAP_ANONYMOUS == 0 {
			// The file may be gone or changed: map the trace's copy
			// (mapfile.go), or memory filled with it. Shared stays
			// shared: processes forked after the mapping share its
			// pages in replay as they did when recorded. (A read-only
			// one cannot be filled through /proc/PID/mem, and nothing
			// writes it: private does.)
			shared := flags&mapTypeMask != unix.MAP_PRIVATE && c.Args[2]&unix.PROT_WRITE != 0
			flags &^= mapTypeMask
			if !shared && e.Map != nil {
				var err error
				if closeFd, stored, err = s.mapStored(t, e.Map, &regs); err != nil {
					return err
				}
			}
			switch {
			case stored:
				flags |= unix.MAP_PRIVATE
			case shared:
				flags |= unix.MAP_SHARED | unix.MAP_ANONYMOUS
			default:
				flags |= unix.MAP_PRIVATE | unix.MAP_ANONYMOUS
			}
			if !stored {
				regs[trace.R8] = ^uint64(0)
				regs[trace.R9] = 0
				fill = e.Map
			}
		}
		regs[trace.R10] = flags
	case unix.SYS_MREMAP:
		if want := e.ExitRegs[trace.RAX]; c.Args[3]&mremapMayMove != 0 && want != c.Args[0] {
			regs[trace.R10] = c.Args[3] | mremapFixed
			regs[trace.R8] = want
		}
	case unix.SYS_SHMAT, unix.SYS_SHMDT:
		if err := s.sysvShared(t, e, &regs); err != nil {
			return err
		}
	case unix.SYS_CLONE:
		// The recorder took CLONE_UNTRACED out (record's emuptrace.go):
		// the child is traced, and replayed, like any other.
		regs[trace.RDI] &^= cloneUntraced
	case unix.SYS_MADVISE:
		s.noteAdvice(c.Args[2])
	case unix.SYS_RT_SIGSUSPEND:
		// It waits for a signal with a temporary mask: send the signal the
		// recording delivered next, so it returns as it did.
		if next := s.signalAfterCall(t, e); next != nil {
			if err := s.sendSignal(t, int(next.Signo)); err != nil {
				return err
			}
		}
	case unix.SYS_PPOLL, unix.SYS_PSELECT6, unix.SYS_EPOLL_PWAIT, unix.SYS_EPOLL_PWAIT2:
		if next := s.signalUnderTempMask(t, e, &c); next != nil {
			if err := s.waitUnderTempMask(t, next, &c, &regs); err != nil {
				return err
			}
		}
	}
	child, forking := s.createsFollowed(e)
	if forking {
		quietExit(&regs)
	}
	if c.Nr == unix.SYS_EXECVE || c.Nr == unix.SYS_EXECVEAT {
		var im *trace.Image
		if next := s.peekThread(t.rec); next != nil && next.Kind == trace.KindExec {
			img, err := trace.DecodeImage(next)
			if err == nil && img != nil {
				im, err = s.rebuildImage(img, !s.execsImage(t, c, img))
			}
			if err != nil {
				return err
			}
		}
		viaFd := im != nil
		if viaFd {
			if err := s.execVessel(t, &regs, c); err != nil {
				return err
			}
			t.proc.rebuild = im
		} else {
			var err error
			if viaFd, err = s.provideExecFd(t, e, c); err != nil { // execfd.go
				return err
			}
		}
		if !viaFd {
			if err := s.provideExe(t); err != nil {
				return err
			}
			defer s.removeProvided()
		}
	}
	if !onFilter {
		regs[trace.RIP] -= 2
		regs[trace.RAX] = regs[trace.OrigRAX]
	}
	after := regs[trace.RIP] + 2
	if atHook {
		// Made at the hook page's own instruction, which the filter lets
		// through (at the call's own, it would stop there first). The
		// call t stands at is skipped (orig_rax -1), where the filter
		// stopped it too.
		regs[trace.RIP] = hook.Reexec
		regs[trace.OrigRAX] = ^uint64(0)
		t.atFilter = false
	}
	if err := ptrace.SetRegs(t.real, &regs); err != nil {
		return fmt.Errorf("move back onto the instruction of %s: %w", syscalls.Name(c.Nr), err)
	}
	var got trace.Regs
	var newTid int
	if quick {
		if err := s.reexecToTrap(t, e, c, after, atHook, &got); err != nil {
			return err
		}
	} else {
		var early *ptrace.Status
		switch {
		case onFilter:
			t.atFilter = false
			if err := ptrace.Syscall(t.real, 0); err != nil {
				return err
			}
		case s.filtered && filterSees(c.Nr):
			// The call stops at the filter first. PTRACE_CONT runs the
			// instruction again to that stop with nothing reported on the
			// way, where PTRACE_SYSCALL would report the skipped call's
			// exit, then the new entry: two stops fewer.
			if err := ptrace.Cont(t.real, 0); err != nil {
				return err
			}
			var err error
			if early, err = s.passFilterStop(t); err != nil {
				return err
			}
		default:
			// Resuming a PTRACE_SYSEMU stop with PTRACE_SYSCALL first
			// reports the exit of the skipped call (at the rewound rip),
			// then the real entry.
			if err := s.toRealEntry(t, e, c, regs[trace.RIP]); err != nil {
				return err
			}
			if err := ptrace.Syscall(t.real, 0); err != nil {
				return err
			}
		}
		if e.Flags&trace.FlagNoReturn != 0 {
			return nil // exit, exit_group: the thread is going away
		}
		waiter, exec := t, c.Nr == unix.SYS_EXECVE || c.Nr == unix.SYS_EXECVEAT
		if exec {
			waiter = s.waiterForExec(t)
		}
		for {
			var st ptrace.Status
			var err error
			switch {
			case early != nil:
				st, early = *early, nil
			case exec:
				st, err = s.waitExec(t, waiter)
			default:
				st, err = s.waitFor(t)
			}
			if err != nil {
				return err
			}
			switch {
			case st.Kind == ptrace.StopSyscall:
			case st.Kind == ptrace.StopEvent && (st.Event == unix.PTRACE_EVENT_CLONE || st.Event == unix.PTRACE_EVENT_FORK || st.Event == unix.PTRACE_EVENT_VFORK):
				msg, err := ptrace.EventMsg(t.real)
				if err != nil {
					return err
				}
				newTid = int(msg)
				if forking {
					return s.forked(t, e, c, child, newTid)
				}
				if err := ptrace.Syscall(t.real, 0); err != nil {
					return err
				}
				continue
			case st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_EXEC:
				if waiter != t {
					if err := s.takeLeader(t); err != nil {
						return err
					}
				}
				t.atExec = true
				return nil
			default:
				return s.diverge(e, "re-executing %s: got %s", syscalls.Name(c.Nr), describe(st))
			}
			break
		}
		if err := ptrace.GetRegs(t.real, &got); err != nil {
			return err
		}
	}
	if newTid != 0 {
		if err := s.adoptThread(e, c, newTid); err != nil {
			return err
		}
	} else if addressResult(c.Nr) && got[trace.RAX] != e.ExitRegs[trace.RAX] && e.Kind == trace.KindSyscall {
		return s.diverge(e, "%s returned %#x, recorded %#x", syscalls.Name(c.Nr), got[trace.RAX], e.ExitRegs[trace.RAX])
	}
	if closeFd >= 0 {
		if err := s.closeStored(t, closeFd); err != nil {
			return err
		}
	}
	if hookRegs != nil {
		for _, i := range []int{trace.RDI, trace.RSI, trace.RDX, trace.R10, trace.R8, trace.R9} {
			got[i] = hookRegs[i]
		}
		if err := ptrace.SetRegs(t.real, &got); err != nil {
			return fmt.Errorf("after %s: %w", syscalls.Name(c.Nr), err)
		}
	}
	if fill != nil {
		if err := s.fillMapping(e, fill); err != nil {
			return err
		}
		if err := s.faultPastEnd(t, e, fill); err != nil {
			return err
		}
	}
	if t.proc == s.main {
		s.renameMemory(e, c, fill != nil || stored)
	}
	return s.putOutputs(t, e)
}

// putOutputs gives t, after its call ran for real, the memory e recorded
// as the call's outputs and the registers it returned with; the entry of
// a split call leaves the registers to its exit event.
func (s *Session) putOutputs(t *rthread, e *trace.Event) error {
	if err := s.writeMem(t, e.Mem); err != nil {
		return err
	}
	if e.Kind == trace.KindSyscallEntry {
		t.atEntry = true
		return nil
	}
	return s.setResult(t, e)
}

// renameMemory keeps the names of rebuilt file mappings (mapNames) up to
// date after c, re-executed in the main process: rebuilt says whether it
// mapped the trace's copy of a file.
func (s *Session) renameMemory(e *trace.Event, c syscalls.Call, rebuilt bool) {
	ret := e.ExitRegs[trace.RAX]
	if isErr(ret) {
		return
	}
	switch c.Nr {
	case unix.SYS_MUNMAP:
		s.fileMaps.forget(c.Args[0], pageEnd(c.Args[0], c.Args[1]))
	case unix.SYS_MREMAP:
		s.fileMaps.forget(c.Args[0], pageEnd(c.Args[0], c.Args[1]))
		s.fileMaps.forget(ret, pageEnd(ret, c.Args[2]))
	case unix.SYS_MMAP:
		if m := e.Map; m != nil && rebuilt {
			s.fileMaps.add(Mapping{Start: ret, End: pageEnd(ret, c.Args[1]), Offset: m.Offset, Path: m.Path})
			if s.onMapping != nil {
				s.onMapping()
			}
		} else {
			s.fileMaps.forget(ret, pageEnd(ret, c.Args[1]))
		}
	}
}

// quickReexec tells the calls reexec makes by letting the thread run
// through its syscall instruction onto a breakpoint after it (two stops
// with the one at its entry) rather than with PTRACE_SYSCALL (four: the
// skipped call's exit, the real entry and exit): calls that never wait,
// create nothing and let no signal in, whose effect is the process's
// memory, signal dispositions or thread registers.
func quickReexec(nr int) bool {
	switch nr {
	case unix.SYS_MMAP, unix.SYS_MUNMAP, unix.SYS_MPROTECT, unix.SYS_PKEY_MPROTECT, unix.SYS_BRK, unix.SYS_MREMAP,
		unix.SYS_MADVISE, unix.SYS_RT_SIGACTION, unix.SYS_SIGALTSTACK, unix.SYS_ARCH_PRCTL, unix.SYS_SET_TID_ADDRESS,
		unix.SYS_SET_ROBUST_LIST:
		return true
	}
	return false
}

// toRealEntry resumes t, at PTRACE_SYSEMU's stop of c moved back onto its
// instruction at rip, with PTRACE_SYSCALL to the entry of the call made
// again: the exit of the skipped call is reported first, at rip.
func (s *Session) toRealEntry(t *rthread, e *trace.Event, c syscalls.Call, rip uint64) error {
	for {
		if err := s.syscallStop(t, e, "re-executing "+syscalls.Name(c.Nr)); err != nil {
			return err
		}
		var now trace.Regs
		if err := ptrace.GetRegs(t.real, &now); err != nil {
			return err
		}
		if now[trace.RIP] != rip {
			return nil
		}
	}
}

// syscallStop resumes t with PTRACE_SYSCALL to its next stop, which must
// be a system call's: anything else diverges from the recording at e,
// doing what says.
func (s *Session) syscallStop(t *rthread, e *trace.Event, doing string) error {
	if err := ptrace.Syscall(t.real, 0); err != nil {
		return err
	}
	st, err := s.waitFor(t)
	if err != nil {
		return err
	}
	if st.Kind != ptrace.StopSyscall {
		return s.diverge(e, "%s: got %s", doing, describe(st))
	}
	return nil
}

// filterSees says whether the recorder's filter judges call nr, which it
// then stops at: all but uprobe's own (uretprobe, uprobe), which the
// kernel passes by seccomp, 6.11 on.
func filterSees(nr int) bool {
	return nr != unix.SYS_URETPROBE && nr != unix.SYS_UPROBE
}

// injectsBefore says whether reexec may inject calls into the thread, or
// signal it, before it makes call nr again: those need PTRACE_SYSEMU's
// stop, not the filter's.
func injectsBefore(nr int) bool {
	switch nr {
	case unix.SYS_MMAP, unix.SYS_SHMAT, unix.SYS_SHMDT, unix.SYS_RT_SIGSUSPEND, unix.SYS_PPOLL, unix.SYS_PSELECT6,
		unix.SYS_EPOLL_PWAIT, unix.SYS_EPOLL_PWAIT2, unix.SYS_EXECVE, unix.SYS_EXECVEAT:
		return true
	}
	return false
}

// passFilterStop takes the filter's stop of t, resumed from the entry of
// its call with PTRACE_SYSCALL (or onto its instruction with PTRACE_CONT),
// and lets the call run: the call stops
// there before anything it does happens (the exec, the fork, the exit).
// A call the filter never sees (the kernel passes uprobe's own, 6.11 on)
// goes on to its next stop, which it returns for the caller to take.
func (s *Session) passFilterStop(t *rthread) (*ptrace.Status, error) {
	if !s.filtered {
		return nil, nil
	}
	st, err := s.waitFor(t)
	if err != nil || t.dead {
		return &st, err
	}
	if st.Kind != ptrace.StopEvent || st.Event != unix.PTRACE_EVENT_SECCOMP {
		return &st, nil
	}
	return nil, ptrace.Syscall(t.real, 0)
}

// reexecToTrap makes t's call again, t standing on its syscall
// instruction, whose end is after: a breakpoint there, PTRACE_CONT; got is
// what the thread holds after the call, at after. atHook: t stands on the
// hook page's syscall; int3 instead (hook.Reexec), with no breakpoint to
// write; rcx is then made what the call at after would have left.
func (s *Session) reexecToTrap(t *rthread, e *trace.Event, c syscalls.Call, after uint64, atHook bool, got *trace.Regs) error {
	m, trap := t.proc.mem, after
	var orig [1]byte
	if atHook {
		trap = hook.ReexecIP
	} else {
		if _, err := m.ReadAt(orig[:], after); err != nil {
			return fmt.Errorf("re-executing %s: %w", syscalls.Name(c.Nr), err)
		}
		if _, err := m.WriteAt([]byte{0xcc}, after); err != nil {
			return fmt.Errorf("re-executing %s: %w", syscalls.Name(c.Nr), err)
		}
	}
	st, err := s.contWait(t)
	if !atHook {
		if _, werr := m.WriteAt(orig[:], after); err == nil && werr != nil {
			err = fmt.Errorf("re-executing %s: %w", syscalls.Name(c.Nr), werr)
		}
	}
	if err != nil {
		return err
	}
	if err := ptrace.GetRegs(t.real, got); err != nil {
		return err
	}
	if st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGTRAP) || got[trace.RIP] != trap+1 {
		return s.diverge(e, "re-executing %s: got %s%s", syscalls.Name(c.Nr), describe(st), s.where(t, st))
	}
	got[trace.RIP], got[trace.RCX] = after, after
	return ptrace.SetRegs(t.real, got)
}

// contWait resumes t with PTRACE_CONT and waits for its stop.
func (s *Session) contWait(t *rthread) (ptrace.Status, error) {
	if err := ptrace.Cont(t.real, 0); err != nil {
		return ptrace.Status{}, err
	}
	return s.waitFor(t)
}

// addressResult tells the re-executed calls whose result must be what was
// recorded (an address, or success): others return ids (set_tid_address
// returns the tid) that differ in replay and are replaced by the recorded ones.
func addressResult(nr int) bool {
	switch nr {
	case unix.SYS_MMAP, unix.SYS_MREMAP, unix.SYS_BRK, unix.SYS_MUNMAP, unix.SYS_MPROTECT, unix.SYS_SHMAT, unix.SYS_SHMDT:
		return true
	}
	return false
}

// adoptThread registers the thread a re-executed clone created under its
// recorded tid, and gives it the recorded tid where the kernel wrote the new one.
func (s *Session) adoptThread(e *trace.Event, c syscalls.Call, real int) error {
	rec := newTid(e)
	nt := &rthread{rec: rec, real: real, proc: s.threads[e.Tid].proc}
	s.threads[rec] = nt
	st, err := s.waitFor(nt)
	if err != nil {
		return err
	}
	if st.Kind != ptrace.StopEvent {
		return s.diverge(e, "new thread %d: expected its first stop, got %s", rec, describe(st))
	}
	return setChildTid(nt, e, c)
}

// fillMapping writes the recorded file contents into a replayed mapping.
func (s *Session) fillMapping(e *trace.Event, m *trace.MapFile) error {
	data, err := s.blob(m.Blob)
	if err != nil {
		return err
	}
	if m.Offset >= uint64(len(data)) {
		return nil
	}
	end := min(m.Offset+m.Length, uint64(len(data)))
	if _, err := s.threads[e.Tid].proc.mem.WriteAt(data[m.Offset:end], e.ExitRegs[trace.RAX]); err != nil {
		return fmt.Errorf("fill mapping: %w", err)
	}
	return nil
}
