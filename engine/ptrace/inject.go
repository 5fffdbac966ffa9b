package ptrace

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// archSetCPUID is ARCH_SET_CPUID for arch_prctl.
const archSetCPUID = 0x1012

// InjectSyscall makes a thread stopped at a system call exit run one more
// system call of our choosing before it returns to its own code, and leaves
// it as it was (registers and memory) at that exit. A `syscall` instruction is
// written over the code at rip for the time of the call.
func InjectSyscall(tid int, m *Mem, nr uint64, args ...uint64) (int64, error) {
	var saved trace.Regs
	if err := GetRegs(tid, &saved); err != nil {
		return 0, err
	}
	var code [2]byte
	if _, err := m.ReadAt(code[:], saved[trace.RIP]); err != nil {
		return 0, err
	}
	if _, err := m.WriteAt([]byte{0x0f, 0x05}, saved[trace.RIP]); err != nil {
		return 0, err
	}
	defer m.WriteAt(code[:], saved[trace.RIP])
	regs := saved
	regs[trace.RAX], regs[trace.OrigRAX] = nr, nr
	argRegs := []int{trace.RDI, trace.RSI, trace.RDX, trace.R10, trace.R8, trace.R9}
	for i, a := range args {
		regs[argRegs[i]] = a
	}
	if err := SetRegs(tid, &regs); err != nil {
		return 0, err
	}
	for i := 0; i < 2; i++ { // entry, exit
		if err := Syscall(tid, 0); err != nil {
			return 0, err
		}
		st, _, err := Wait(tid, false)
		if err != nil {
			return 0, err
		}
		if st.Kind != StopSyscall {
			return 0, fmt.Errorf("inject syscall %d into %d: got %v", nr, tid, st)
		}
	}
	var out trace.Regs
	if err := GetRegs(tid, &out); err != nil {
		return 0, err
	}
	if err := SetRegs(tid, &saved); err != nil {
		return 0, err
	}
	return int64(out[trace.RAX]), nil
}

// TrapInstructions makes the thread's rdtsc and rdtscp fault (PR_SET_TSC),
// and its cpuid too when withCPUID is set (CPUID faulting): their answers
// differ between runs, cores and machines, so the recorder logs them from
// the SIGSEGV they raise. Both settings are inherited by new threads;
// CPUID faulting is reset by execve, so this runs at every execve exit,
// before the new image executes its first instruction.
func TrapInstructions(tid int, m *Mem, withCPUID bool) error {
	ret, err := InjectSyscall(tid, m, unix.SYS_PRCTL, unix.PR_SET_TSC, unix.PR_TSC_SIGSEGV)
	if err != nil {
		return err
	}
	if ret < 0 {
		return fmt.Errorf("prctl(PR_SET_TSC): %w", unix.Errno(-ret))
	}
	if !withCPUID {
		return nil
	}
	if ret, err = InjectSyscall(tid, m, unix.SYS_ARCH_PRCTL, archSetCPUID, 0); err != nil {
		return err
	}
	if ret < 0 {
		return fmt.Errorf("arch_prctl(ARCH_SET_CPUID): %w", unix.Errno(-ret))
	}
	return nil
}
