package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// rproc is one live process of the replay.
type rproc struct {
	rec  int32 // its pid in the recording
	real int   // its pid now
	mem  *ptrace.Mem
	// status is its wait status once it is gone.
	status unix.WaitStatus
	dead   bool
	// forked: created by a fork in the replay, whose replaying parent must
	// not be told of its death (waitFor).
	forked bool
	// killSent: the recording says the process was killed by SIGKILL from
	// outside, and the replay sent it (killIfKilled).
	killSent bool
	// code is the patched code of its address space (engine/patch), as the
	// recorder's process had it.
	code *patch.Space
	// stored are the stored files' memfds open in the process (mapfile.go),
	// by blob.
	stored storedFds
	// hooked: the hook page is mapped in the process (engine/hook).
	hooked bool
	// rebuild is the image its next exec rebuilds from the trace, where
	// it execs the vessel (execimage.go).
	rebuild *trace.Image
	// exe is where the executable of an image rebuilt from the trace is:
	// /proc/PID/exe names the vessel (dataRanges).
	exe *rebuiltExe
	// sharing: a child that shares the memory of a process a focused
	// replay runs (vfork, posix_spawn's clone), run until its exec, the
	// last point where it can write that memory, and dropped there.
	sharing bool
}

// cloneExitSignalMask is the exit-signal byte of clone's flags.
const cloneExitSignalMask = 0xff

// Linux clone flags replay looks at.
const (
	cloneVMFlag    = 0x100
	clonePidfd     = 0x1000
	cloneVforkFlag = 0x4000
)

// followChain works out which processes a replay focused on process focus
// must run: focus and its ancestors, each up to the fork of the next one.
// It returns the chain's pids, the first process first.
func followChain(path string, procs []*trace.Process, focus int32) ([]int32, error) {
	if procs == nil {
		var err error
		if procs, err = trace.ReadProcesses(path); err != nil && len(procs) == 0 {
			return nil, err
		}
	}
	byPid := map[int32]*trace.Process{}
	var target *trace.Process
	for _, p := range procs {
		byPid[p.Pid] = p
		if p.Pid == focus && target == nil {
			target = p
		}
	}
	if target == nil {
		return nil, fmt.Errorf("no process %d in the recording (see `rewind ps`)", focus)
	}
	var chain []int32
	for p := target; p != nil; p = byPid[p.Parent] {
		chain = append([]int32{p.Pid}, chain...)
		if p.Parent == 0 {
			break
		}
	}
	return chain, nil
}

// follows tells whether the replay runs process rec (a recorded pid).
func (s *Session) follows(rec int32) bool {
	if s.chain == nil {
		return true
	}
	return s.procs[rec] != nil
}

// createsFollowed tells whether e, a fork-like call of a followed process,
// creates a process the replay must run; only those are executed again,
// others are emulated (the parent gets the recorded pid, no child exists).
// A focused replay runs the processes of its chain, and a child that
// shares a followed process's memory until the child's exec: what it
// writes there before (posix_spawn's child, a vfork's) the parent reads.
func (s *Session) createsFollowed(e *trace.Event) (int32, bool) {
	ex := e
	if e.Kind == trace.KindSyscallEntry {
		// The child's pid is in the exit event, later in the log.
		if ex = s.peekThreadExit(e.Tid); ex == nil {
			return 0, false
		}
	}
	if ex.Flags&trace.FlagNewProcess == 0 || ex.NewTid <= 0 {
		return 0, false
	}
	if s.chain == nil || s.inChain(ex.NewTid) || sharesMemory(e) {
		return ex.NewTid, true
	}
	return 0, false
}

// inChain tells whether the focused replay runs process rec from its
// birth on: the focus or one of its ancestors.
func (s *Session) inChain(rec int32) bool {
	return slices.Contains(s.chain, rec)
}

// sharesMemory tells whether e, a call that created a process, made the
// child share its parent's memory (vfork, clone with CLONE_VM and without
// CLONE_THREAD, as posix_spawn's).
func sharesMemory(e *trace.Event) bool {
	c := callOf(e, &e.Regs)
	return c.Nr == unix.SYS_VFORK || c.Nr == unix.SYS_CLONE && c.Args[0]&cloneVMFlag != 0
}

// execsAway tells whether e, the next event of t, is the entry of the exec
// after which t's process, a sharing child a focused replay runs only
// that far, no longer shares memory with the followed processes: an execve
// that succeeded (its exec event follows on the thread).
func (s *Session) execsAway(t *rthread, e *trace.Event) bool {
	if t.proc == nil || !t.proc.sharing || e.Kind != trace.KindSyscall && e.Kind != trace.KindSyscallEntry {
		return false
	}
	if c := callOf(e, &e.Regs); c.Nr != unix.SYS_EXECVE && c.Nr != unix.SYS_EXECVEAT {
		return false
	}
	next := s.peekThread(t.rec)
	return next != nil && next.Kind == trace.KindExec
}

// quietExit rewrites a fork-like call about to be executed again into a
// clone whose child sends no signal when it ends: the replaying parent must
// not get a SIGCHLD the recording delivers (or not) by itself, at its own
// point. fork and vfork become the equivalent clone.
func quietExit(regs *trace.Regs) {
	switch regs[trace.OrigRAX] {
	case unix.SYS_FORK:
		regs[trace.OrigRAX] = unix.SYS_CLONE
		regs[trace.RDI], regs[trace.RSI], regs[trace.RDX], regs[trace.R10], regs[trace.R8] = 0, 0, 0, 0, 0
	case unix.SYS_VFORK:
		regs[trace.OrigRAX] = unix.SYS_CLONE
		regs[trace.RDI], regs[trace.RSI], regs[trace.RDX], regs[trace.R10], regs[trace.R8] = cloneVMFlag|cloneVforkFlag, 0, 0, 0, 0
	case unix.SYS_CLONE:
		// No pidfd either: an extra descriptor would take a number the
		// recording gives to something else (the recorded one is written
		// back with the call's outputs).
		regs[trace.RDI] &^= cloneExitSignalMask | clonePidfd | cloneNamespaces // pidns.go
	}
}

// adoptProcess registers the process a re-executed fork created under its
// recorded pid and waits for its first stop.
func (s *Session) adoptProcess(e *trace.Event, rec int32, real int) (*rthread, error) {
	sharing := s.chain != nil && !s.inChain(rec)
	p := &rproc{rec: rec, real: real, forked: s.chain == nil || sharing, sharing: sharing}
	nt := &rthread{rec: rec, real: real, proc: p}
	s.threads[rec] = nt
	s.procs[rec] = p
	st, err := s.waitFor(nt)
	if err != nil {
		return nil, err
	}
	if st.Kind != ptrace.StopEvent {
		return nil, s.diverge(e, "new process %d: expected its first stop, got %s", rec, describe(st))
	}
	if p.mem, err = ptrace.OpenMem(real); err != nil {
		return nil, fmt.Errorf("new process %d: %w", rec, err)
	}
	return nt, nil
}

// handOver makes the child the process the focused replay runs from now
// on: its parent, an ancestor of the focus, has done its part and is killed.
func (s *Session) handOver(parent *rthread, child *rthread) {
	old := parent.proc
	s.dropProcess(old)
	s.setMain(child.proc)
}

// dropProcess kills a process the replay no longer runs and forgets it.
func (s *Session) dropProcess(p *rproc) {
	unix.Kill(p.real, unix.SIGKILL)
	for rec, t := range s.threads {
		if t.proc != p {
			continue
		}
		if !t.dead && t.real != p.real {
			reap(t.real)
		}
		delete(s.threads, rec)
	}
	reap(p.real)
	if p.mem != nil {
		p.mem.Close()
		p.mem = nil
	}
	p.dead = true
	delete(s.procs, p.rec)
}

// setMain makes p the process the debugger sees (memory, mappings,
// checkpoints).
func (s *Session) setMain(p *rproc) {
	s.main = p
	s.pid, s.mem = p.real, p.mem
}

// skip passes over an event of a process the replay does not run.
func (s *Session) skip(e *trace.Event) {
	s.queue[0] = nil
	s.queue = s.queue[1:]
	s.next++
	_ = e
}

// toFocus replays the beginning of the recording up to the birth of the
// focused process (its parent's fork), running only its ancestors.
func (s *Session) toFocus() error {
	if s.chain == nil || len(s.chain) == 1 {
		return nil
	}
	for s.main.rec != s.chain[len(s.chain)-1] {
		if _, err := s.step(); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("replay: the recording ends before process %d starts", s.chain[len(s.chain)-1])
			}
			return err
		}
		s.stop = nil
	}
	s.start = s.next
	return nil
}

// forked completes the re-execution of a fork-like call at its event stop:
// the child (recorded pid rec, real pid real) is adopted, then the parent
// goes on to the call's exit, or is left in the kernel for a vfork (it
// sleeps until the child execs or exits, which later events do). A focused
// replay then hands over to the child, unless the child only shares the
// parent's memory up to its exec (createsFollowed).
func (s *Session) forked(t *rthread, e *trace.Event, c syscalls.Call, rec int32, real int) error {
	nt, err := s.adoptProcess(e, rec, real)
	if err != nil {
		return err
	}
	nt.proc.code = inheritCode(t.proc, real)
	nt.proc.hooked = t.proc.hooked
	nt.proc.exe = t.proc.exe // the same image: a rebuilt one's too
	if c.Nr != unix.SYS_CLONE || c.Args[0]&unix.CLONE_FILES == 0 {
		// The child has a copy of the parent's descriptors. (One that
		// shares them starts with none of its own to close.)
		nt.proc.stored = t.proc.stored.clone()
	}
	// The child starts with the registers of the call as executed:
	// quietExit changed argument registers that code after a fork may rely on
	// (glibc's vfork keeps its return address in rdi).
	var regs trace.Regs
	if err := ptrace.GetRegs(real, &regs); err != nil {
		return err
	}
	for _, r := range []int{trace.RDI, trace.RSI, trace.RDX, trace.R10, trace.R8} {
		regs[r] = e.Regs[r]
	}
	if err := ptrace.SetRegs(real, &regs); err != nil {
		return fmt.Errorf("new process %d: %w", rec, err)
	}
	if c.Nr == unix.SYS_CLONE {
		if err := setChildTid(nt, e, c); err != nil {
			return err
		}
	}
	if s.chain != nil && !nt.proc.sharing {
		s.handOver(t, nt)
		return nil
	}
	if err := ptrace.Syscall(t.real, 0); err != nil {
		return err
	}
	vfork := c.Nr == unix.SYS_VFORK || (c.Nr == unix.SYS_CLONE && c.Args[0]&cloneVforkFlag != 0)
	if vfork {
		t.inKernel = true
		return nil
	}
	st, err := s.waitFor(t)
	if err != nil {
		return err
	}
	if st.Kind != ptrace.StopSyscall {
		return s.diverge(e, "re-executing %s: got %s", syscalls.Name(c.Nr), describe(st))
	}
	return s.putOutputs(t, e)
}

// provideExe makes sure the executable an execve is about to run is there
// as recorded: a build output that was deleted after the recording (go
// test's binary) is written back from the trace at its path, and removed
// again once exec'd. A file that is there but differs is a clear error.
func (s *Session) provideExe(t *rthread) error {
	next := s.peekThread(t.rec)
	if next == nil || next.Kind != trace.KindExec || next.Map == nil || next.Map.Path == "" {
		return nil
	}
	path := next.Map.Path
	data, err := s.blob(next.Map.Blob)
	if err != nil {
		return err
	}
	if have, err := os.ReadFile(path); err == nil {
		if !bytes.Equal(have, data) {
			return fmt.Errorf("%s changed since it was recorded; replay needs the executable the recording ran (move it away and replay writes the recorded one back)", path)
		}
		return nil
	}
	dir := filepath.Dir(path)
	var made []string
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write back %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o700); err != nil {
		return fmt.Errorf("write back %s: %w", path, err)
	}
	s.provided = append(append(s.provided, path), made...)
	return nil
}

// removeProvided deletes what provideExe wrote, once exec'd.
func (s *Session) removeProvided() {
	for _, p := range s.provided {
		os.Remove(p)
		if s.removed == nil {
			s.removed = map[string]bool{}
		}
		s.removed[p] = true
	}
	s.provided = nil
}

// RecordedFile returns the contents of an executable the recording stored
// (one that is not a system file), for the debugger's symbols when the file
// is gone or changed since. It reads the trace only, so it may be called from
// the OnMapping callback.
func (s *Session) RecordedFile(path string) ([]byte, error) {
	id, ok := s.exeBlobs[path]
	if !ok {
		return nil, fmt.Errorf("%s is not stored in the recording", path)
	}
	data, err := s.blob(id)
	return bytes.Clone(data), err // the cache's copy stays untouched
}

// peekThreadExit returns the exit event of the split system call thread tid
// is in, skipping what was logged on the thread meanwhile (the shared memory
// it saw change when it was scheduled again).
func (s *Session) peekThreadExit(tid int32) *trace.Event {
	for i := 1; i < lookahead; i++ {
		e, err := s.peek(i)
		if err != nil || e == nil {
			return nil
		}
		if e.Tid != tid {
			continue
		}
		switch e.Kind {
		case trace.KindSyscallExit:
			return e
		case trace.KindSharedMem:
			continue
		}
		return nil
	}
	return nil
}
