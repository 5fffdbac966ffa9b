package record

import (
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// markUnsupported flags e, a call that succeeded in a way replay cannot
// reproduce, so that replay stops there with a clear message, and warns the
// user once per call number: the recording goes on, and everything before
// the call can be replayed and debugged.
func (r *Recorder) markUnsupported(c *syscalls.Call, e *trace.Event, why string) {
	e.Flags |= trace.FlagUnsupported
	r.warnOnce("unsupported "+syscalls.Label(c), "rewind: warning: system call %s is not supported: %s; replay will stop at event %d\n",
		syscalls.Label(c), why, r.events())
}
