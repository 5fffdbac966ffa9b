package replay

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The program's own ptrace was emulated by the recorder (see record's
// emuptrace.go): the tracer's calls are replayed from the trace like any
// emulated call, but the requests that changed the tracee did so through
// the recorder, which is not here. Replay redoes them on the tracee's
// replaying thread, which stands where the recorded tracee stood: at its
// emulated stop, nothing run since its last event.

// ptrace requests that change the tracee (linux/ptrace.h).
const (
	ptPokeText = 4
	ptPokeData = 5
	ptPokeUser = 6
	ptSetRegs  = 13

	userRegsBytes = 27 * 8 // struct user_regs_struct

	cloneUntraced = 0x800000 // CLONE_UNTRACED
)

// ptraceEffects redoes on the tracee what the program's successful ptrace
// call of e changed in it.
func (s *Session) ptraceEffects(t *rthread, e *trace.Event) error {
	if e.Syscall != unix.SYS_PTRACE || e.Kind == trace.KindSyscallEntry || e.ExitRegs[trace.RAX] != 0 || e.Flags&trace.FlagNoRedo != 0 {
		return nil
	}
	// The argument registers are the same at the exit (a split call's
	// exit event has no entry registers).
	c := callOf(e, &e.ExitRegs)
	req, addr, data := c.Args[0], c.Args[2], c.Args[3]
	x := s.threads[int32(c.Args[1])]
	if x == nil || x.dead {
		return nil // a process this replay does not run, or gone
	}
	err := func() error {
		switch req {
		case ptPokeText, ptPokeData:
			_, err := x.proc.mem.WriteAt(binary.LittleEndian.AppendUint64(nil, data), addr)
			return err
		case ptPokeUser, ptSetRegs:
			if req == ptPokeUser && addr >= userRegsBytes {
				return redoPokeDebugReg(x, addr, data) // emuptrace_regs.go
			}
			var regs trace.Regs
			if err := ptrace.GetRegs(x.real, &regs); err != nil {
				return err
			}
			orig := regs[trace.OrigRAX]
			if req == ptPokeUser {
				regs[addr/8] = data
			} else {
				b := make([]byte, userRegsBytes)
				if _, err := t.proc.mem.ReadAt(b, data); err != nil {
					return err
				}
				for i := range regs {
					regs[i] = binary.LittleEndian.Uint64(b[i*8:])
				}
			}
			// The replaying thread stands at a call replay skips: its
			// call number must stay the skipped one.
			regs[trace.OrigRAX] = orig
			return ptrace.SetRegs(x.real, &regs)
		case ptSetFPRegs:
			return redoSetFPRegs(t, x, data)
		case ptSetRegset:
			return redoSetRegset(t, x, addr, data)
		}
		return nil
	}()
	if err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("redo ptrace request %#x on tid %d: %w", req, x.rec, err)
	}
	return nil
}
