package replay

import (
	"bufio"
	"errors"
	"fmt"

	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Checkpoint is a saved replay position: a stopped copy of the replaying
// process (made by a clone injected into it, so its memory is shared
// copy-on-write; its other threads re-created in it) and the session's
// bookkeeping at that point. The copy never runs: restoring copies it again.
type Checkpoint struct {
	pid      int
	proc     int32 // the recorded pid of the process copied
	next     int64
	threads  map[int32]rthread
	fileMaps []Mapping
	stored   storedFds
	// shared is the shared memory's contents, which the copy shares with
	// the live process; sharedBytes what saving them copied.
	shared      []sharedSave
	sharedBytes int64
	code        *patch.Space
	hooked      bool // the process maps the hook page
	// exe is the executable of an image rebuilt from the trace (the
	// process's /proc/PID/exe is the vessel's): copies of the process
	// hash its data from it too.
	exe *rebuiltExe
}

// Event is the index of the next event at the checkpoint.
func (cp *Checkpoint) Event() int64 { return cp.next }

// ErrNotCheckpointable says the position cannot be saved: a thread is in
// the middle of a signal delivery or an exec, or the main thread is gone.
var ErrNotCheckpointable = errors.New("this position cannot be checkpointed")

// Checkpoint saves the current position.
func (s *Session) Checkpoint() (*Checkpoint, error) {
	return ptrace.DoValue(s.th, s.checkpoint)
}

func (s *Session) checkpoint() (*Checkpoint, error) {
	if s.countersOpen(s.counterThread) {
		return nil, fmt.Errorf("%w: arrival counters are open", ErrNotCheckpointable)
	}
	if s.done || len(s.procs) > 1 {
		// Several live processes are replayed by --check, which takes
		// no checkpoints, and by a focused replay only while a child
		// sharing the focus's memory runs up to its exec.
		return nil, ErrNotCheckpointable
	}
	saved, copied, err := s.saveShared()
	if err != nil {
		return nil, err
	}
	pid, threads, err := copyProcess(s.pid, s.mem, s.threads, s.sh.forkAdvice)
	if err != nil {
		return nil, err
	}
	cp := &Checkpoint{pid: pid, proc: s.main.rec, next: s.next, threads: map[int32]rthread{}, fileMaps: append([]Mapping(nil), s.fileMaps...),
		stored: s.main.stored.clone(), shared: saved, sharedBytes: copied, code: s.main.code.Clone(), hooked: s.main.hooked, exe: s.main.exe}
	for rec, t := range threads {
		cp.threads[rec] = *t
	}
	return cp, nil
}

// copyProcess makes a stopped copy of process pid and its live threads: a
// clone of the main thread, then each other thread re-created in the copy
// with its registers, extended state, signal mask, alternate stack,
// clear_child_tid and robust list.
func copyProcess(pid int, m *ptrace.Mem, threads map[int32]*rthread, forkAdvice bool) (int, map[int32]*rthread, error) {
	var leader *rthread
	for _, t := range threads {
		if t.dead {
			continue
		}
		// A thread left inside a re-executed call (a vfork's parent,
		// whose child a focused replay dropped at its exec) would not be
		// inside it in the copy, whose exit then never comes.
		if t.resumeSig != 0 || t.atExec || t.pending != nil || t.injected != 0 || t.inKernel {
			return 0, nil, ErrNotCheckpointable
		}
		if t.real == pid {
			leader = t
		}
	}
	if leader == nil {
		return 0, nil, ErrNotCheckpointable
	}
	states := map[int32]*trace.ThreadState{}
	for rec, t := range threads {
		if t.dead || t == leader {
			continue
		}
		st, err := ptrace.SaveThread(pid, t.real, m)
		if err != nil {
			return 0, nil, fmt.Errorf("save thread %d: %w", rec, err)
		}
		states[rec] = st
	}
	copyPid, err := forkCopy(pid, leader.real, m, forkAdvice)
	if err != nil {
		return 0, nil, err
	}
	out := map[int32]*rthread{}
	lt := *leader
	lt.real, lt.watchGen = copyPid, -1
	out[leader.rec] = &lt
	if len(states) == 0 {
		return copyPid, out, nil
	}
	cm, err := ptrace.OpenMem(copyPid)
	if err != nil {
		return 0, nil, err
	}
	defer cm.Close()
	for rec, st := range states {
		tid, err := ptrace.AddThread(copyPid, cm, st)
		if err != nil {
			unix.Kill(copyPid, unix.SIGKILL)
			return 0, nil, fmt.Errorf("re-create thread %d: %w", rec, err)
		}
		nt := *threads[rec]
		nt.real, nt.watchGen = tid, -1
		out[rec] = &nt
	}
	return copyPid, out, nil
}

// Restore puts the session back at checkpoint cp (which stays usable).
func (s *Session) Restore(cp *Checkpoint) error {
	var err error
	s.th.Do(func() { err = s.restore(cp) })
	return err
}

func (s *Session) restore(cp *Checkpoint) error {
	cm, err := ptrace.OpenMem(cp.pid)
	if err != nil {
		return err
	}
	src := map[int32]*rthread{}
	for rec, t := range cp.threads {
		tt := t
		src[rec] = &tt
	}
	pid, threads, err := copyProcess(cp.pid, cm, src, s.sh.forkAdvice)
	cm.Close()
	if err != nil {
		return fmt.Errorf("restore checkpoint at event %d: %w", cp.next, err)
	}
	s.killLive()
	s.dropCounters()
	rd, err := trace.Open(s.rd.Path())
	if err != nil {
		return err
	}
	for i := int64(0); i < cp.next; i++ {
		if _, err := rd.Next(); err != nil {
			rd.Close()
			return fmt.Errorf("restore checkpoint: reread event %d: %w", i, err)
		}
	}
	s.rd.Close()
	s.rd, s.queue, s.eof = rd, nil, false
	s.next, s.done, s.status, s.stop = cp.next, false, 0, nil
	p := &rproc{rec: cp.proc, real: pid, code: cp.code.Clone(), stored: cp.stored.clone(), hooked: cp.hooked, exe: cp.exe}
	if p.mem, err = ptrace.OpenMem(pid); err != nil {
		return err
	}
	s.procs = map[int32]*rproc{p.rec: p}
	s.setMain(p)
	for _, t := range threads {
		t.proc = p
	}
	s.threads = threads
	s.fileMaps = append([]Mapping(nil), cp.fileMaps...)
	return s.restoreShared(cp.shared, pid)
}

// killLive ends the replaying processes (not the checkpoints).
func (s *Session) killLive() {
	for _, p := range s.procs {
		s.dropProcess(p)
	}
	if s.main != nil && s.main.mem != nil {
		s.main.mem.Close()
		s.main.mem = nil
	}
	s.mem, s.pid = nil, 0
}

// reap waits until a killed task is gone.
func reap(tid int) {
	for {
		st, _, err := ptrace.Wait(tid, false)
		if err != nil || st.Kind == ptrace.Exited || st.Kind == ptrace.Killed {
			return
		}
	}
}

// Release frees a checkpoint's process.
func (s *Session) Release(cp *Checkpoint) {
	s.th.Do(func() {
		unix.Kill(cp.pid, unix.SIGKILL)
		// The leader's death is reported only once the other threads are reaped.
		for _, t := range cp.threads {
			if t.real != cp.pid {
				reap(t.real)
			}
		}
		reap(cp.pid)
	})
}

// Memory estimates what the checkpoint costs: its proportional share of
// the pages it holds (shared pages count in part, copied ones in full).
func (cp *Checkpoint) Memory() int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", cp.pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb<<10 + cp.sharedBytes
		}
	}
	return 0
}
