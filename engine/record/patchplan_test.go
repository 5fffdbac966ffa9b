package record

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestPlanKeyRefuses: a patch plan serves a fresh mapping of a file with
// an identity, and only where patchKnown's work depends on nothing the key
// leaves out: not when a patch must avoid the
// thread's rip, another thread of the address space could stand in a
// site, sites there are patched already, the process has no memory yet,
// or a file mapped there has no identity.
func TestPlanKeyRefuses(t *testing.T) {
	const lo, hi = 0x7000_0000_0000, 0x7000_0010_0000
	noFile := func() ([]byte, error) { return nil, errors.New("no file here") }
	for _, tt := range []struct {
		name  string
		setup func(r *Recorder, th *thread)
		avoid uint64
		want  bool
	}{
		{"a fresh mapping of a known file", nil, 0, true},
		{"a rip to avoid", nil, lo + 0x10, false},
		{"no memory", func(_ *Recorder, th *thread) { th.proc.mem = nil }, 0, false},
		{"another thread", func(r *Recorder, th *thread) {
			r.threads[2] = &thread{tid: 2, proc: &process{code: th.proc.code}}
		}, 0, false},
		{"sites patched there", func(_ *Recorder, th *thread) {
			th.proc.hooks = &hookSpace{sites: map[uint64]bool{lo + 0x100: true}}
		}, 0, false},
		{"a file without identity", func(r *Recorder, _ *thread) { clear(r.code.keys) }, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code := &patch.Space{}
			im := patch.NewImage(noFile)
			code.Map(nil, patch.Mapping{Addr: lo, Len: hi - lo, Prot: unix.PROT_READ, Image: im, Fresh: true})
			th := &thread{tid: 1, proc: &process{code: code, mem: &ptrace.Mem{}}}
			r := &Recorder{threads: map[int]*thread{1: th}}
			r.code.keys = map[*patch.Image]trace.FileKey{im: {Dev: 1, Ino: 2, Size: 3}}
			if tt.setup != nil {
				tt.setup(r, th)
			}
			if _, ok := r.planKey(th, lo, hi, tt.avoid); ok != tt.want {
				t.Errorf("planKey says %v, want %v", ok, tt.want)
			}
		})
	}
}
