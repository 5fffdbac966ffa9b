package record

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/syscalls"
)

// The program's own PR_SET_TSC. Rewind keeps every thread in
// PR_TSC_SIGSEGV to record rdtsc, so the kernel never sees the program's
// choice: the recorder keeps it per thread (inherited by new threads, kept
// across execve as the kernel keeps it) and answers PR_SET_TSC and
// PR_GET_TSC itself. A thread that chose PR_TSC_SIGSEGV gets the SIGSEGV of
// its rdtsc, as natively; one that chose PR_TSC_ENABLE has its rdtsc
// recorded as before. Replay emulates both calls with the recorded results.

// tscEntry answers a valid prctl(PR_SET_TSC) at its entry: it returns the
// result (0) and true when the call is to be skipped. An invalid mode is
// left to the kernel, which fails with EINVAL without changing anything.
func (r *Recorder) tscEntry(t *thread, c *syscalls.Call) (int64, bool) {
	if c.Nr != unix.SYS_PRCTL || uint32(c.Args[0]) != syscalls.PrctlSetTSC {
		return 0, false
	}
	switch c.Args[1] {
	case unix.PR_TSC_ENABLE:
		t.tscSigsegv = false
	case unix.PR_TSC_SIGSEGV:
		t.tscSigsegv = true
		if r.filtered && t.proc.mem != nil {
			// Patched rdtsc sites must trap for it too. (A process
			// before its first exec has no hook page: installHook
			// tells the next one.)
			hook.MarkTscTrap(t.proc.mem)
		}
	default:
		return 0, false
	}
	return 0, true
}

// tscExit makes a successful prctl(PR_GET_TSC) answer the mode the thread
// chose instead of rewind's, before its output is captured.
func (r *Recorder) tscExit(t *thread, c *syscalls.Call) error {
	if c.Nr != unix.SYS_PRCTL || uint32(c.Args[0]) != syscalls.PrctlGetTSC || c.Ret != 0 {
		return nil
	}
	var mode [4]byte
	binary.LittleEndian.PutUint32(mode[:], unix.PR_TSC_ENABLE)
	if t.tscSigsegv {
		binary.LittleEndian.PutUint32(mode[:], unix.PR_TSC_SIGSEGV)
	}
	if _, err := r.tracee(t).WriteAt(mode[:], c.Args[1]); err != nil {
		return fmt.Errorf("prctl(PR_GET_TSC): answer the program's mode: %w", err)
	}
	return nil
}

// programTrapsTSC reports whether the instruction a SIGSEGV stopped t at is
// an rdtsc or rdtscp the program itself asked to fault.
func programTrapsTSC(t *thread, insn []byte) bool {
	if !t.tscSigsegv || len(insn) < 2 || insn[0] != 0x0f {
		return false
	}
	return insn[1] == 0x31 || (len(insn) >= 3 && insn[1] == 0x01 && insn[2] == 0xf9)
}
