package record

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestBornAt: a thread a clone, clone3, fork or vfork just made stands at
// the call's return with 0 in rax, where its first resume takes its
// registers instead of stopping at the call's exit; anything else does not.
func TestBornAt(t *testing.T) {
	for _, tt := range []struct {
		name string
		nr   int
		rax  uint64
		want bool
	}{
		{"clone", unix.SYS_CLONE, 0, true},
		{"clone3", unix.SYS_CLONE3, 0, true},
		{"fork", unix.SYS_FORK, 0, true},
		{"vfork", unix.SYS_VFORK, 0, true},
		{"the parent's side of a fork", unix.SYS_FORK, 1234, false},
		{"another call", unix.SYS_GETPID, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var regs trace.Regs
			regs[trace.OrigRAX], regs[trace.RAX] = uint64(tt.nr), tt.rax
			if got := bornAt(&regs); got != tt.want {
				t.Errorf("bornAt = %v, want %v", got, tt.want)
			}
		})
	}
}
