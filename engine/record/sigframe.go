package record

import (
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Signal frames. The kernel builds a frame on the stack of a thread it
// delivers a signal to a handler of: its registers, mask and FPU state, and
// the last fault's trap number, error code and address, which differ from
// one run to the next (replay faults elsewhere: it maps files as anonymous
// memory), as may the XSAVE header. Once the handler returns, the frame is
// stale stack that functions called later leave in their uninitialized
// locals: a program that reads one (a bug, but the kind users debug) would
// diverge in replay, and so did replay's preemption searches, which
// fingerprint the stack around the point (gdb's SIGCHLD handler did, in
// TestRecordGDB/catch under load). So a signal a handler catches is
// delivered with a single step, which stops the thread at the handler's
// first instruction with the frame built: its event is logged there, with
// the frame's bytes in Mem, which replay writes over the frame its own
// kernel built.

// sigTrapNotify is the si_code of the SIGTRAP the kernel reports at a
// handler's first instruction when the delivery was single-stepped
// (ptrace_notify(SIGTRAP)), not a trap of the program's.
const sigTrapNotify = int32(unix.SIGTRAP)

// deliver resumes t, stopped where e (logged by this call, at once or at
// the handler) delivers sig.
func (r *Recorder) deliver(t *thread, e *trace.Event, sig int) error {
	if !ptrace.Catches(t.tid, sig) {
		// No frame (ignored, the default action), or the thread is gone
		// (its death comes next): as before.
		if err := r.log(e); err != nil {
			return err
		}
		return r.resume(t, sig)
	}
	t.frame = e
	t.state = running
	return ptrace.Step(t.tid, sig)
}

// frameStop handles the first stop of t after deliver stepped it into its
// handler: there, the frame goes into the signal's event, which is logged,
// and t goes on. Any other stop (the frame could not be written: a
// SIGSEGV; the thread died) logs the event as it was, and is handled as
// usual (done false).
func (r *Recorder) frameStop(t *thread, st ptrace.Status) (done bool, err error) {
	e := t.frame
	t.frame = nil
	if st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGTRAP) {
		return false, r.log(e)
	}
	info, err := ptrace.GetSiginfo(t.tid)
	if err != nil {
		return true, err
	}
	if ptrace.SiCode(info) != sigTrapNotify {
		return false, r.log(e)
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return true, err
	}
	if b, err := ptrace.SignalFrame(t.proc.mem, regs[trace.RSP]); err == nil {
		e.Mem = append(e.Mem, trace.Mem{Addr: regs[trace.RSP], Data: b})
	}
	if err := r.log(e); err != nil {
		return true, err
	}
	return true, r.resume(t, 0) // (or parked, when the recorder pauses)
}
