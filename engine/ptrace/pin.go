package ptrace

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// PinThread binds the calling OS thread (a Thread's, which stays locked to
// it) to cpu. A tracer on the CPU its tracees are bound to hands each stop
// over on that CPU: the stopping tracee wakes the tracer where it ran, with
// no wake-up sent to another CPU and back at every ptrace stop.
func PinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("bind the tracer to CPU %d: %w", cpu, err)
	}
	return nil
}
