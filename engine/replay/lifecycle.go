package replay

// Applying the events that change the program's shape: an exec (the new
// image), a thread's exit, the program's exit or its death by a signal.

import (
	"errors"
	"fmt"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
	"golang.org/x/sys/unix"
)

func (s *Session) applyExec(t *rthread, e *trace.Event) error {
	if !t.atExec {
		return s.diverge(e, "expected an exec")
	}
	if s.next > 0 {
		// A new image: the old memory file refers to the old address space.
		p := t.proc
		p.mem.Close()
		var err error
		if p.mem, err = ptrace.OpenMem(p.real); err != nil {
			return err
		}
		if p == s.main {
			s.setMain(p)
			s.fileMaps = nil
		}
		p.stored = storedFds{} // close-on-exec
		p.exe = nil
		p.hooked = false // until the exec's exit maps it again
		s.execShared(p)
	}
	if im := t.proc.rebuild; im != nil {
		t.proc.rebuild = nil
		if err := s.rebuildExec(t, e, im); err != nil {
			return err
		}
	}
	regs, err := s.checkRegs(t, e, "exec", &e.Regs)
	if err != nil {
		return err
	}
	if e.Map != nil && e.Map.Path != "" {
		if s.exeBlobs == nil {
			s.exeBlobs = map[string]uint32{}
		}
		s.exeBlobs[e.Map.Path] = e.Map.Blob
	}
	if _, err := s.startImage(t, e, regs[trace.RSP]); err != nil {
		return err
	}
	if t.proc == s.main && s.next > 0 && s.onMapping != nil {
		s.onMapping() // a new program: breakpoints on its symbols resolve now
	}
	return s.writeMem(t, e.Mem)
}

func (s *Session) applyThreadExit(t *rthread, e *trace.Event) error {
	if err := s.killIfKilled(t); err != nil {
		return err
	}
	if err := s.deliverFatal(t); err != nil {
		return err
	}
	for !t.dead {
		st, err := s.waitFor(t)
		if err != nil {
			return err
		}
		if !t.dead {
			// Stopped on its way out (a signal the kernel reports): let it go.
			if err := ptrace.Cont(t.real, 0); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("thread exit: %v: %w", st, err)
			}
		}
	}
	delete(s.threads, e.Tid)
	// The kernel's writes to the dead thread's robust futexes (record's
	// robust.go): the replaying kernel skipped them, the tids differ.
	return s.writeMem(t, e.Mem)
}

func (s *Session) applyExit(t *rthread, e *trace.Event) error {
	if err := s.killIfKilled(t); err != nil {
		return err
	}
	for !t.dead {
		if t.resumeSig != 0 {
			// A fatal signal waits at its delivery stop.
			sig := t.resumeSig
			t.resumeSig = 0
			if err := ptrace.Cont(t.real, sig); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
		}
		st, err := s.waitFor(t)
		if err != nil {
			return err
		}
		if !t.dead && st.Kind == ptrace.StopEvent {
			ptrace.Cont(t.real, 0)
		}
	}
	p := t.proc
	status := p.status
	delete(s.threads, e.Tid)
	delete(s.procs, p.rec)
	p.dead = true
	if p != s.main {
		p.mem.Close()
		p.mem = nil
	}
	if p == s.main || len(s.procs) == 0 {
		// The debugged process is gone: its memory file stays open (reads
		// fail) until the session closes.
		s.done = true
	}
	if int32(status) != e.Status {
		return s.diverge(e, "process %d ended with status %#x, recorded %#x", p.rec, uint32(status), uint32(e.Status))
	}
	return nil
}

// killIfKilled sends SIGKILL to the replaying process when the recording
// shows it killed by SIGKILL from here on (the deaths of its threads, then
// its own): SIGKILL came from outside (kill -9, the OOM killer, rewind
// ending a recording of an older version) and nothing in the replay would
// send it, so the replaying process would wait forever for its end. It
// lands after the thread's last event, as it did.
func (s *Session) killIfKilled(t *rthread) error {
	p := t.proc
	if p.killSent {
		return nil
	}
	for i := 0; i < lookahead; i++ {
		e, err := s.peek(i)
		if err != nil || e == nil {
			return err
		}
		if o := s.threads[e.Tid]; o == nil || o.proc != p {
			continue // another process's event
		}
		switch e.Kind {
		case trace.KindThreadExit:
			continue
		case trace.KindExit:
			if ws := unix.WaitStatus(e.Status); ws.Signaled() && ws.Signal() == unix.SIGKILL {
				p.killSent = true
				if err := unix.Kill(p.real, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
					return fmt.Errorf("kill: %w", err)
				}
			}
		}
		return nil
	}
	return nil
}
