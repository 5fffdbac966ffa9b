package ptrace

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PickCPU returns the CPU a program is bound to: want if this process may
// run there, else (want < 0, or not allowed here) the CPU this thread runs
// on now, so that recordings made in parallel spread over the machine.
// Replay asks for the recorded CPU again: on the same machine it gets it.
// (The recorder may then move a program that runs alone to DeviceCPU's.)
func PickCPU(want int) (int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0, fmt.Errorf("CPU affinity: %w", err)
	}
	if want >= 0 && set.IsSet(want) {
		return want, nil
	}
	var cpu uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e == 0 && set.IsSet(int(cpu)) {
		return int(cpu), nil
	}
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			return c, nil
		}
	}
	return 0, errors.New("CPU affinity: no CPU allowed")
}

// A program that waits for a device (sqlite's fdatasync after each
// insert) is woken by the device's interrupt, on the CPU that takes it.
// Bound elsewhere, each wake-up is sent to its CPU, which sleeps while it
// waits: on a VM, waking a halted virtual CPU costs tens of microseconds
// (300 sqlite inserts recorded 1.4× slower bound to the other CPU of a
// 2-vCPU VM whose disk interrupts all go to one, and as fast as natively
// on that one). Where the interrupts are spread over the CPUs (a device
// queue per CPU), none is preferred.

// DeviceCPU returns the CPU of set that has taken more than half of the
// device interrupts the CPUs of set have taken since boot
// (/proc/interrupts' numbered lines: not the timer's, nor those CPUs send
// one another), if one has. Reading /proc/interrupts takes ~0.2 ms.
func DeviceCPU(set *unix.CPUSet) (int, bool) {
	f, err := os.Open("/proc/interrupts")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	counts, ok := deviceInterrupts(bufio.NewScanner(f))
	if !ok {
		return 0, false
	}
	return busiest(counts, set)
}

// busiest returns the CPU of set with more than half of the counts of
// the CPUs of set, if one has.
func busiest(counts map[int]uint64, set *unix.CPUSet) (int, bool) {
	best, total := -1, uint64(0)
	for c, n := range counts {
		if !set.IsSet(c) {
			continue
		}
		total += n
		if best < 0 || n > counts[best] {
			best = c
		}
	}
	if best < 0 || counts[best]*2 <= total {
		return 0, false
	}
	return best, true
}

// deviceInterrupts sums, for each CPU column of /proc/interrupts, the
// counts of the lines of numbered interrupts (devices'): the header names
// the CPUs (CPU0 CPU3… where some are offline).
func deviceInterrupts(sc *bufio.Scanner) (map[int]uint64, bool) {
	if !sc.Scan() {
		return nil, false
	}
	var cpus []int
	for _, name := range strings.Fields(sc.Text()) {
		n, err := strconv.Atoi(strings.TrimPrefix(name, "CPU"))
		if err != nil || !strings.HasPrefix(name, "CPU") {
			return nil, false
		}
		cpus = append(cpus, n)
	}
	counts := make(map[int]uint64, len(cpus))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 1+len(cpus) {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimSuffix(fields[0], ":")); err != nil {
			continue // LOC, RES, CAL, TLB…: the CPUs' own
		}
		for i, c := range cpus {
			n, err := strconv.ParseUint(fields[1+i], 10, 64)
			if err != nil {
				break
			}
			counts[c] += n
		}
	}
	return counts, len(counts) > 0
}

// ClaimCPU claims cpu for a recording, unless another recording holds it,
// in this process or another: so that recordings made in parallel do not
// all go to the device's CPU. The claim is an abstract Unix socket's
// name, which the kernel frees when release closes the socket or the
// process ends, however it ends.
func ClaimCPU(cpu int) (release func(), ok bool) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	// A leading NUL names a socket in the abstract namespace.
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: "\x00rewind-cpu-" + strconv.Itoa(cpu)}); err != nil {
		unix.Close(fd)
		return nil, false
	}
	return func() { unix.Close(fd) }, true
}
