package replay

import (
	"bufio"
	"errors"
	"fmt"

	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Checkpoint is a saved replay position: a stopped copy of the replaying
// process (made by a fork injected into it, so its memory is shared
// copy-on-write) and the session's bookkeeping at that point. The copy never
// runs: restoring forks it again.
type Checkpoint struct {
	pid      int
	next     int64
	thread   rthread
	fileMaps []Mapping
}

// Event is the index of the next event at the checkpoint.
func (cp *Checkpoint) Event() int64 { return cp.next }

// ErrNotCheckpointable says the position cannot be saved by a fork: more
// than one thread (a fork copies only the calling one), or a thread in the
// middle of a system call or signal delivery.
var ErrNotCheckpointable = errors.New("this position cannot be checkpointed")

// Checkpoint saves the current position.
func (s *Session) Checkpoint() (*Checkpoint, error) {
	var cp *Checkpoint
	var err error
	s.th.Do(func() { cp, err = s.checkpoint() })
	return cp, err
}

func (s *Session) checkpoint() (*Checkpoint, error) {
	if s.done {
		return nil, ErrNotCheckpointable
	}
	var only *rthread
	for _, t := range s.threads {
		if t.dead {
			continue
		}
		if only != nil {
			return nil, ErrNotCheckpointable
		}
		only = t
	}
	if only == nil || only.resumeSig != 0 || only.atEntry || only.atExec || only.pending != nil || only.injected != 0 {
		return nil, ErrNotCheckpointable
	}
	pid, err := ptrace.ForkCopy(only.real, s.mem)
	if err != nil {
		return nil, fmt.Errorf("checkpoint at event %d: %w", s.next, err)
	}
	cp := &Checkpoint{pid: pid, next: s.next, thread: *only, fileMaps: append([]Mapping(nil), s.fileMaps...)}
	cp.thread.real = pid
	return cp, nil
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
	pid, err := ptrace.ForkCopy(cp.pid, cm)
	cm.Close()
	if err != nil {
		return fmt.Errorf("restore checkpoint at event %d: %w", cp.next, err)
	}
	s.killLive()
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
	s.pid, s.next, s.done, s.status, s.stop = pid, cp.next, false, 0, nil
	if s.mem, err = ptrace.OpenMem(pid); err != nil {
		return err
	}
	t := cp.thread
	t.real, t.watchGen = pid, -1
	s.threads = map[int32]*rthread{t.rec: &t}
	s.fileMaps = append([]Mapping(nil), cp.fileMaps...)
	return nil
}

// killLive ends the replaying process (not the checkpoints).
func (s *Session) killLive() {
	if s.mem != nil {
		s.mem.Close()
		s.mem = nil
	}
	if s.pid == 0 {
		return
	}
	unix.Kill(s.pid, unix.SIGKILL)
	reap := func(tid int) {
		for {
			st, _, err := ptrace.Wait(tid, false)
			if err != nil || st.Kind == ptrace.Exited || st.Kind == ptrace.Killed {
				return
			}
		}
	}
	// The leader's death is reported only once the other threads are reaped.
	for _, t := range s.threads {
		if !t.dead && t.real != s.pid {
			reap(t.real)
		}
	}
	reap(s.pid)
	s.pid = 0
}

// Release frees a checkpoint's process.
func (s *Session) Release(cp *Checkpoint) {
	s.th.Do(func() {
		unix.Kill(cp.pid, unix.SIGKILL)
		for {
			st, _, err := ptrace.Wait(cp.pid, false)
			if err != nil || st.Kind == ptrace.Exited || st.Kind == ptrace.Killed {
				return
			}
		}
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
			return kb << 10
		}
	}
	return 0
}
