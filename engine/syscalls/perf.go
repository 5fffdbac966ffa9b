package syscalls

import (
	"strings"
	"syscall"
)

// perf_event_open: the counters of software events (task clock, page
// faults, context switches) are read with read(2), which the recorder
// logs like any read, and driven with ioctls whose outputs ioctlOut knows.
// Their ring buffers are another matter: the kernel fills them while the
// program runs, outside any system call, so mapping one is refused.

// perfAttrSizeOff is the offset of size in struct perf_event_attr.
const perfAttrSizeOff = 4

// perfEventOpenOut: when the caller's struct perf_event_attr is larger than
// the kernel's and its tail is not zero, the call fails with E2BIG and the
// kernel writes the size it supports into attr.size, which is how callers
// probe.
func perfEventOpenOut(c *Call, _ Memory) ([]Range, error) {
	if c.Ret != -int64(syscall.E2BIG) || c.Args[0] == 0 {
		return nil, nil
	}
	return span(c.Args[0]+perfAttrSizeOff, 4), nil
}

// perfMapTarget is how /proc/PID/fd names a perf_event descriptor.
const perfMapTarget = "anon_inode:[perf_event]"

// mmapRefuse refuses to map a perf_event descriptor (its ring buffer) with
// ENODEV, what mmap answers for a file that cannot be mapped. The kernel
// maps a ring buffer shared only, so a private mapping (a library's code,
// the many of a process's start) needs no look at its descriptor.
func mmapRefuse(c *Call, m Memory) (syscall.Errno, string) {
	const mapAnonymous, mapShared = 0x20, 0x01 // (MAP_SHARED_VALIDATE has it too)
	if c.Args[3]&mapAnonymous != 0 || c.Args[3]&mapShared == 0 || int32(c.Args[4]) < 0 {
		return 0, ""
	}
	p, ok := m.(Prober)
	if !ok {
		return 0, ""
	}
	target, err := p.FdTarget(int(int32(c.Args[4])))
	if err != nil || !strings.HasPrefix(target, perfMapTarget) {
		return 0, ""
	}
	return syscall.ENODEV, "mapping a perf_event ring buffer is refused: the kernel fills it outside system calls, where rewind cannot record it"
}
