package record

import (
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// A program in a pid namespace (unshare or clone with CLONE_NEWPID,
// `unshare -fp`, sandboxes) sees other ids than the recorder: the recorder
// names every thread by its id in rewind's namespace (what ptrace and wait
// report), which is what events carry, while the program's calls return the
// ids of its own namespace, which are what the trace replays. A new task
// therefore has up to three ids: the one its creator's clone returned (in
// the creator's namespace, in the call's registers), the recorder's
// (NewTid: the thread later events belong to) and its own (Aux, when it
// differs from NewTid: what the kernel wrote at CLONE_CHILD_SETTID, which
// replay writes back). Replay runs no namespace: every call that tells an
// id is emulated with the recorded answer.

// noteNewTask fills in the ids of the task t's successful clone, fork or
// vfork c created.
func noteNewTask(t *thread, c *syscalls.Call, e *trace.Event) {
	if t.child == 0 {
		// No clone event came: the recorder has no other name for it.
		e.NewTid = int32(c.Ret)
		return
	}
	e.NewTid = int32(t.child)
	// The child is alive or a zombie (the recorder, its tracer, has not
	// reaped it): its status is there. Were it not, the child would never
	// run the code that reads its own id.
	if own, err := ptrace.OwnTid(t.child); err == nil && own != t.child {
		e.Aux = uint64(own)
	}
}
