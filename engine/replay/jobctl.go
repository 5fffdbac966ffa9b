package replay

import (
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// Job control in replay. The stops themselves are not replayed (see
// applySignal): the kill calls that sent the stop signals and SIGCONTs are
// emulated, and a thread the recording had stopped only waits for its next
// event. A SIGCONT the recording delivered must still reach the thread (a
// handler may run), but sending one for real has a side effect: the kernel
// makes every thread of a seized process report a PTRACE_EVENT_STOP on its
// way back to user code, which replay would take for a divergence. So it
// travels as a SIGSTOP, which has no such effect and cannot be blocked, and
// becomes a SIGCONT at its delivery stop.

// carrier is the signal sent to a thread for the delivery of sig.
func carrier(sig int) int {
	if sig == int(unix.SIGCONT) {
		return int(unix.SIGSTOP)
	}
	return sig
}

// sendSignal queues, for t, the signal whose delivery (sig) is its next
// event.
func (s *Session) sendSignal(t *rthread, sig int) error {
	if err := ptrace.Tgkill(t.proc.real, t.real, carrier(sig)); err != nil {
		return err
	}
	t.injected = sig
	return nil
}
