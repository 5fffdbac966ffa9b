package replay

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Calls that wait with a temporary signal mask (ppoll, pselect6,
// epoll_pwait, epoll_pwait2) unblock a signal only while they wait. When a
// signal blocked in the thread's own mask ended such a call when recorded,
// the kernel delivered it under the temporary mask and saved the thread's
// mask in the signal frame. An emulated call installs no mask, so the
// signal would stay pending (make -j's pselect6 and SIGCHLD diverged so).
// Replay then waits for the signal as the kernel did: the call is
// re-executed as ppoll(NULL, 0, NULL, mask, size), with the signal already
// queued, which returns at once with the kernel's own restart code and mask
// bookkeeping; its recorded result and outputs are put in place after.

// signalUnderTempMask returns the asynchronous signal that ended t's call
// e, when only the call's temporary mask let it through; else nil.
func (s *Session) signalUnderTempMask(t *rthread, e *trace.Event, c *syscalls.Call) *trace.Event {
	addr, size := syscalls.TempMask(c, t.proc.mem)
	if addr == 0 || size != 8 {
		return nil
	}
	next := s.signalAfterCall(t, e)
	if next == nil || next.Flags&trace.FlagSyncSignal != 0 {
		return nil
	}
	bit := uint64(1) << (next.Signo - 1)
	mask, err := ptrace.SigMask(t.real)
	if err != nil || mask&bit == 0 {
		return nil // deliverable as it is
	}
	var b [8]byte
	if _, err := t.proc.mem.ReadAt(b[:], addr); err != nil || binary.LittleEndian.Uint64(b[:])&bit != 0 {
		return nil
	}
	return next
}

// waitUnderTempMask turns regs, t's call e at its entry, into the ppoll
// that takes the signal under the call's temporary mask, and queues the
// signal.
func (s *Session) waitUnderTempMask(t *rthread, next *trace.Event, c *syscalls.Call, regs *trace.Regs) error {
	addr, size := syscalls.TempMask(c, t.proc.mem)
	regs[trace.OrigRAX] = unix.SYS_PPOLL
	regs[trace.RDI], regs[trace.RSI], regs[trace.RDX] = 0, 0, 0
	regs[trace.R10], regs[trace.R8] = addr, size
	return s.sendSignal(t, int(next.Signo))
}
