package attach

import (
	"fmt"
	"strconv"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Thread is the state of one thread. State holds what ptrace.AddThread
// needs to re-create it: general registers (fs and gs bases included),
// XSAVE area (x87, SSE, AVX…), blocked mask, alternate signal stack,
// clear_child_tid and robust futex list.
type Thread struct {
	Tid   int
	State ptrace.ThreadState
	// Pending are the signals queued for this thread only, and Shared those
	// queued for the process (bit N-1 for signal N); both stay queued in
	// the kernel and are delivered after the detach.
	Pending, Shared uint64
}

// RIP returns the thread's instruction pointer.
func (t *Thread) RIP() uint64 { return t.State.Regs[trace.RIP] }

// AltStack decodes the thread's stack_t: base, flags and size.
func (t *Thread) AltStack() (sp uint64, flags int32, size uint64) {
	b := t.State.AltStack[:]
	return le64(b[0:8]), int32(le64(b[8:16])), le64(b[16:24])
}

// threads reads every thread's state.
func (p *Process) threads() ([]Thread, error) {
	var out []Thread
	for _, tid := range p.tids {
		st, err := ptrace.SaveThread(p.Pid, tid, p.mem)
		if err != nil {
			return nil, fmt.Errorf("thread %d: %w", tid, err)
		}
		path := fmt.Sprintf("/proc/%d/task/%d/status", p.Pid, tid)
		f := ptrace.StatusFields(path, "SigPnd", "ShdPnd")
		t := Thread{Tid: tid, State: *st}
		t.Pending, _ = strconv.ParseUint(f[0], 16, 64)
		t.Shared, _ = strconv.ParseUint(f[1], 16, 64)
		out = append(out, t)
	}
	return out, nil
}
