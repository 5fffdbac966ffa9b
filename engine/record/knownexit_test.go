package record

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestKnownExit: the loader's arch_prctl(ARCH_SET_FS) and set_robust_list
// have their exits known at their entry (rax 0, and fs_base the address
// for ARCH_SET_FS); a call that may fail, another call, or a thread that
// something else watches (a filter of the program's own, a tracer of the
// recording, a site to patch at the exit, an entry seen at a syscall-entry
// stop, a ring buffer whose snapshot may take the thread's registers
// between, sites to patch in the process at the exit, which may inject a
// call) has none.
func TestKnownExit(t *testing.T) {
	const fs, head = 0x7ffff7dd1740, 0x7ffff7dd1a20
	tests := []struct {
		name  string
		nr    int
		args  [6]uint64
		setup func(*Recorder, *thread)
		want  bool
	}{
		{"ARCH_SET_FS", unix.SYS_ARCH_PRCTL, [6]uint64{archSetFS, fs}, nil, true},
		{"ARCH_SET_FS of a non-canonical address (EPERM)", unix.SYS_ARCH_PRCTL, [6]uint64{archSetFS, 1 << 47}, nil, false},
		{"ARCH_SET_GS", unix.SYS_ARCH_PRCTL, [6]uint64{0x1001, fs}, nil, false},
		{"set_robust_list", unix.SYS_SET_ROBUST_LIST, [6]uint64{head, robustListHeadSize}, nil, true},
		{"set_robust_list of another size (EINVAL)", unix.SYS_SET_ROBUST_LIST, [6]uint64{head, 23}, nil, false},
		{"getpid", unix.SYS_GETPID, [6]uint64{}, nil, false},
		{"under a filter of the program's own", unix.SYS_SET_ROBUST_LIST, [6]uint64{head, robustListHeadSize}, func(_ *Recorder, t *thread) { t.ownFilter = true }, false},
		{"traced by a process of the recording", unix.SYS_SET_ROBUST_LIST, [6]uint64{head, robustListHeadSize}, func(_ *Recorder, t *thread) { t.pt.tracer = 1 }, false},
		{"at a site patched at the exit", unix.SYS_SET_ROBUST_LIST, [6]uint64{head, robustListHeadSize}, func(_ *Recorder, t *thread) { t.hookSite = hook.Site{Shape: hook.ShapeMov} }, false},
		{"entered at a syscall-entry stop", unix.SYS_SET_ROBUST_LIST, [6]uint64{head, robustListHeadSize}, func(_ *Recorder, t *thread) { t.seenEntry = true }, false},
		{"sites learned since the process last patched (an exit that may inject a call)", unix.SYS_SET_ROBUST_LIST, [6]uint64{head, robustListHeadSize}, func(r *Recorder, _ *thread) { r.knownGen = 1 }, false},
		{"with a ring buffer (--keep-last)", unix.SYS_SET_ROBUST_LIST, [6]uint64{head, robustListHeadSize}, func(r *Recorder, _ *thread) { r.opts.KeepLast = 1 << 20 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Recorder{filtered: true}
			th := &thread{proc: &process{}}
			th.entry[trace.RAX] = ^uint64(unix.ENOSYS) + 1
			th.entry[trace.OrigRAX] = uint64(tt.nr)
			th.entry[trace.RDI], th.entry[trace.RSI] = tt.args[0], tt.args[1]
			th.entry[trace.FSBase] = 0x1234
			if tt.setup != nil {
				tt.setup(r, th)
			}
			c := syscalls.Call{Nr: tt.nr, Args: tt.args}
			exit, ok := r.knownExit(th, &c)
			if ok != tt.want {
				t.Fatalf("known %v, want %v", ok, tt.want)
			}
			if !ok {
				return
			}
			want := th.entry
			want[trace.RAX] = 0
			if tt.nr == unix.SYS_ARCH_PRCTL {
				want[trace.FSBase] = fs
			}
			if exit != want {
				t.Errorf("exit registers %v, want %v", exit, want)
			}
		})
	}
}
