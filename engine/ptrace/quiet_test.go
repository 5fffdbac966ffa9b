package ptrace

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestIgnoreSignals ignores a real-time signal twice over (two recordings
// at once): it stays ignored until the last request ends, then has its
// action back.
func TestIgnoreSignals(t *testing.T) {
	sig := unix.Signal(50)
	action := func() uintptr {
		var act kernelSigaction
		unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), 0, uintptr(unsafe.Pointer(&act)), 8, 0, 0)
		return act.handler
	}
	before := action()
	if before == 1 {
		t.Skipf("signal %d is ignored already", sig)
	}
	first := IgnoreSignals([]unix.Signal{sig})
	second := IgnoreSignals([]unix.Signal{sig})
	first()
	first() // twice: no effect
	if got := action(); got != 1 {
		t.Errorf("after the first request ended: handler %#x, want SIG_IGN", got)
	}
	second()
	if got := action(); got != before {
		t.Errorf("after both ended: handler %#x, want %#x", got, before)
	}
}
