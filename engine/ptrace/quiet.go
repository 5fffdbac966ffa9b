package ptrace

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Each stop of a tracee sends SIGCHLD to its tracer's process. The Go
// runtime handles every signal on some thread of ours, often one asleep
// that must be woken for it: a wake-up and two context switches at every
// ptrace stop, which a tracer sleeping in wait4 does not need (wait4 is
// woken anyway). SA_NOCLDSTOP on the SIGCHLD handler stops the kernel from
// sending it for stops (a child's exit still sends it). It is set while a
// session asks for it (QuietStops) and none needs stop signals
// (LoudStops: a recorder that waits for stops in a select).

// kernelSigaction is struct sigaction as rt_sigaction takes it on x86-64.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// saNoCldStop is SA_NOCLDSTOP.
const saNoCldStop = 1

var stopSignals struct {
	sync.Mutex
	quiet, loud int
}

// QuietStops asks that the stops of tracees send no SIGCHLD to this
// process, and returns the function that withdraws the request.
func QuietStops() (undo func()) { return adjustStops(&stopSignals.quiet) }

// LoudStops asks that they do, over any QuietStops, and returns the
// function that withdraws the request.
func LoudStops() (undo func()) { return adjustStops(&stopSignals.loud) }

func adjustStops(n *int) func() {
	stopSignals.Lock()
	*n++
	applyStops()
	stopSignals.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			stopSignals.Lock()
			*n--
			applyStops()
			stopSignals.Unlock()
		})
	}
}

// applyStops sets or clears SA_NOCLDSTOP on the SIGCHLD handler the Go
// runtime installed, keeping the handler and its other flags. The runtime
// does not install it again once started, so the flag stays.
func applyStops() {
	on := stopSignals.quiet > 0 && stopSignals.loud == 0
	var act kernelSigaction
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), 0, uintptr(unsafe.Pointer(&act)), 8, 0, 0); e != 0 {
		return
	}
	if (act.flags&saNoCldStop != 0) == on {
		return
	}
	act.flags ^= saNoCldStop
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
}

// IgnoreSignals has the kernel drop sigs sent to this process, and returns
// the function that puts back the actions they had: the runtime's, which it
// keeps no copy of and never installs again on its own. signal.Ignore and
// signal.Notify would do it through the runtime, and undoing that
// (signal.Reset, signal.Stop) costs a round trip with its signal thread
// for each signal. Requests overlap (two recordings in one process): the
// first one's ignores, the last one's restore puts back.
func IgnoreSignals(sigs []unix.Signal) (restore func()) {
	ignored.Lock()
	defer ignored.Unlock()
	if ignored.saved == nil {
		ignored.saved = map[unix.Signal]*kernelSigaction{}
	}
	ignore := kernelSigaction{handler: 1} // SIG_IGN
	for _, sig := range sigs {
		if ignored.n[sig]++; ignored.n[sig] == 1 {
			old := new(kernelSigaction)
			unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&ignore)), uintptr(unsafe.Pointer(old)), 8, 0, 0)
			ignored.saved[sig] = old
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ignored.Lock()
			defer ignored.Unlock()
			for _, sig := range sigs {
				if ignored.n[sig]--; ignored.n[sig] == 0 {
					unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(ignored.saved[sig])), 0, 8, 0, 0)
					delete(ignored.saved, sig)
				}
			}
		})
	}
}

// ignored is what IgnoreSignals holds: per signal, the requests in force
// and the action to put back.
var ignored struct {
	sync.Mutex
	n     [65]int
	saved map[unix.Signal]*kernelSigaction
}
