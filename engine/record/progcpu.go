package record

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// The program's CPU. It starts on the CPU rewind starts on (or
// --bind-to-cpu's), so that recordings made in parallel spread over the
// machine. A program that waits for a device (sqlite's fdatasync after
// each insert) is woken on the CPU that takes the device's interrupts,
// and each wake-up sent from there to a CPU that sleeps costs tens of
// microseconds on a VM: 300 sqlite inserts recorded 1.4× slower than
// natively on the wrong CPU of a 2-vCPU VM, 1.25× on the right one. So
// where one CPU takes most of the machine's device interrupts
// (ptrace.DeviceCPU) and no other recording has claimed it, the program
// moves there with the tracer at its exec stop, before it runs. The
// search runs while the program starts (it reads /proc/interrupts: ~0.2
// ms).

// deviceWait bounds the wait for the search once the program has started
// (it has had the program's start, ~1 ms, already): a machine whose
// /proc/interrupts takes longer to read, of hundreds of CPUs, spreads its
// interrupts over queues of each CPU anyway.
const deviceWait = 2 * time.Millisecond

// seekDeviceCPU starts looking for the CPU that takes the device
// interrupts among the CPUs rewind may use: the channel gets it, or -1.
func (r *Recorder) seekDeviceCPU() <-chan int {
	ch := make(chan int, 1)
	set := r.allowed
	go func() {
		c, ok := ptrace.DeviceCPU(&set)
		if !ok {
			c = -1
		}
		ch <- c
	}()
	return ch
}

// toDeviceCPU moves the program, stopped at its exec, and the tracer
// thread from cpu to the device CPU dev brings, if there is one and no
// other recording claimed it, and returns the program's CPU. The claim
// is r.unclaim's to release at the recording's end.
func (r *Recorder) toDeviceCPU(cpu int, dev <-chan int) int {
	var c int
	select {
	case c = <-dev:
	case <-time.After(deviceWait):
		return cpu
	}
	if c < 0 {
		return cpu
	}
	release, ok := ptrace.ClaimCPU(c)
	if !ok {
		return cpu
	}
	if c != cpu {
		var set unix.CPUSet
		set.Set(c)
		if unix.SchedSetaffinity(r.pid, &set) != nil {
			release()
			return cpu
		}
		ptrace.PinThread(r.tracerCPU(c))
	}
	r.unclaim = release
	return c
}
