package attach

import (
	"fmt"
	"strconv"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// threads reads every thread's state.
func (p *Process) threads() ([]trace.ThreadState, error) {
	var out []trace.ThreadState
	for _, tid := range p.tids {
		st, err := ptrace.SaveThread(p.Pid, tid, p.mem)
		if err != nil {
			return nil, fmt.Errorf("thread %d: %w", tid, err)
		}
		path := fmt.Sprintf("/proc/%d/task/%d/status", p.Pid, tid)
		f := ptrace.StatusFields(path, "SigPnd", "ShdPnd")
		st.Pending, _ = strconv.ParseUint(f[0], 16, 64)
		st.Shared, _ = strconv.ParseUint(f[1], 16, 64)
		out = append(out, *st)
	}
	return out, nil
}
