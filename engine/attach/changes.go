package attach

import (
	"errors"
	"fmt"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Changes are what a recorder changed in the processes it attached to (and
// in those they forked since), so that they can be put back: at the detach,
// or by the guard when the recorder died (guard.go). They are plain data,
// sent to the guard as JSON.
type Changes struct {
	// Code holds, by process, the original bytes of the code patched in
	// it: the vDSO, rdrand and rdseed sites, by address.
	Code map[int][]Patch `json:"code"`
	// Starts are the start times of the processes (field 22 of
	// /proc/PID/stat): the guard must not touch another process that got
	// the pid of one that ended.
	Starts map[int]uint64 `json:"starts"`
	// Threads are what was changed in each thread seized at the attach,
	// and its own settings before. A thread created since inherited every
	// change: it gets rdtsc back, no rseq area, Affinity and Personality.
	Threads map[int]ThreadSettings `json:"threads"`
	// Affinity is the CPU set the process ran on before the attach.
	Affinity unix.CPUSet `json:"affinity"`
	// CPUID: CPUID faulting was turned on with rdtsc trapping.
	CPUID bool `json:"cpuid,omitempty"`
	// Personality is the process's personality before the recorder
	// added ADDR_NO_RANDOMIZE (what it execs is laid out as in replay).
	Personality uint64 `json:"personality"`
}

// Patch is code the recorder overwrote: Orig were the bytes at Addr. Whole
// says the code was rewritten as a whole (the vDSO's functions), so that a
// thread anywhere in it must leave first; a site's traps replace single
// instructions.
type Patch struct {
	Addr  uint64 `json:"addr"`
	Orig  []byte `json:"orig"`
	Whole bool   `json:"whole,omitempty"`
}

// ThreadSettings say what the recorder changed in a seized thread, each
// with what the thread had before: a change not made (the attach failed
// first) is not undone.
type ThreadSettings struct {
	Affinity *unix.CPUSet `json:"affinity,omitempty"`
	// Personality was added ADDR_NO_RANDOMIZE.
	Personality bool `json:"personality,omitempty"`
	// Rseq was unregistered.
	Rseq *ptrace.RseqConfig `json:"rseq,omitempty"`
	// Trapped: rdtsc (and cpuid with CPUID) made to fault; TSCSigsegv
	// says the program itself had made its rdtsc fault.
	Trapped    bool `json:"trapped,omitempty"`
	TSCSigsegv bool `json:"tsc_sigsegv,omitempty"`
}

// inherited are the changes of a thread created since the attach.
var inherited = ThreadSettings{Personality: true, Trapped: true}

// archSetCPUID is ARCH_SET_CPUID for arch_prctl.
const archSetCPUID = 0x1012

// UndoCode writes back the original code of process pid, after stepping
// its stopped threads tids out of code about to change under them: out of
// the vDSO, or past the start of a site they are in the middle of. The
// signals that stop a thread meanwhile are added to held.
func (c *Changes) UndoCode(pid int, tids []int, m *ptrace.Mem, held map[int][][]byte) error {
	var errs []error
	code := c.Code[pid]
	for _, tid := range tids {
		var regs trace.Regs
		if err := ptrace.GetRegs(tid, &regs); err != nil {
			continue // gone
		}
		pc := regs[trace.RIP]
		i := sort.Search(len(code), func(i int) bool { return code[i].Addr+uint64(len(code[i].Orig)) > pc })
		if i == len(code) || pc < code[i].Addr || (pc == code[i].Addr && !code[i].Whole) {
			continue
		}
		p := code[i]
		if err := StepOut(tid, p.Addr, p.Addr+uint64(len(p.Orig)), held); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range code {
		if _, err := m.WriteAt(p.Orig, p.Addr); err != nil {
			errs = append(errs, fmt.Errorf("process %d: restore the code at %#x: %w", pid, p.Addr, err))
		}
	}
	return errors.Join(errs...)
}

// UndoThread gives stopped thread tid back what the recorder changed in it.
func (c *Changes) UndoThread(tid int, m *ptrace.Mem) error {
	var errs []error
	s, ok := c.Threads[tid]
	if !ok {
		s = inherited
	}
	if s.Trapped {
		tsc := uint64(unix.PR_TSC_ENABLE)
		if s.TSCSigsegv {
			tsc = unix.PR_TSC_SIGSEGV
		}
		if ret, err := ptrace.InjectSyscall(tid, m, unix.SYS_PRCTL, unix.PR_SET_TSC, tsc); err != nil || ret < 0 {
			errs = append(errs, fmt.Errorf("thread %d: let rdtsc run again: %w", tid, callError(err, ret)))
		}
		if c.CPUID {
			if ret, err := ptrace.InjectSyscall(tid, m, unix.SYS_ARCH_PRCTL, archSetCPUID, 1); err != nil || ret < 0 {
				errs = append(errs, fmt.Errorf("thread %d: let cpuid run again: %w", tid, callError(err, ret)))
			}
		}
	}
	if s.Personality {
		if ret, err := ptrace.InjectSyscall(tid, m, unix.SYS_PERSONALITY, c.Personality); err != nil || ret < 0 {
			errs = append(errs, fmt.Errorf("thread %d: give its personality back: %w", tid, callError(err, ret)))
		}
	}
	if rs := s.Rseq; rs != nil {
		if ret, err := ptrace.InjectSyscall(tid, m, unix.SYS_RSEQ, rs.Addr, uint64(rs.Len), 0, uint64(rs.Sig)); err != nil || ret < 0 {
			errs = append(errs, fmt.Errorf("thread %d: register its rseq area again: %w", tid, callError(err, ret)))
		}
	}
	set := c.Affinity
	if s.Affinity != nil {
		set = *s.Affinity
	} else if ok {
		set = unix.CPUSet{} // not changed
	}
	if set.Count() > 0 {
		if err := unix.SchedSetaffinity(tid, &set); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("thread %d: give its CPUs back: %w", tid, err))
		}
	}
	return errors.Join(errs...)
}

// callError describes a failed injected call.
func callError(err error, ret int64) error {
	if err != nil {
		return err
	}
	return unix.Errno(-ret)
}

// maxStepOut bounds the instructions StepOut runs: a vDSO function is a
// few dozen, a stub three.
const maxStepOut = 10000

// StepOut single-steps a stopped thread until its rip leaves [lo, hi): the
// code there is about to change under it (the vDSO patched at the attach,
// or put back at the detach). A signal sent to it meanwhile is added to
// held, to be queued again.
func StepOut(tid int, lo, hi uint64, held map[int][][]byte) error {
	var regs trace.Regs
	for i := 0; ; i++ {
		if err := ptrace.GetRegs(tid, &regs); err != nil {
			if errors.Is(err, unix.ESRCH) {
				return nil
			}
			return err
		}
		if pc := regs[trace.RIP]; pc < lo || pc >= hi {
			return nil
		}
		if i == maxStepOut {
			return fmt.Errorf("thread %d: still at %#x after %d instructions", tid, regs[trace.RIP], i)
		}
		if err := ptrace.Step(tid, 0); err != nil {
			return err
		}
		st, _, err := ptrace.Wait(tid, false)
		if err != nil {
			return err
		}
		switch st.Kind {
		case ptrace.StopSignal:
			if st.Sig == int(unix.SIGTRAP) {
				continue
			}
			if info, err := ptrace.GetSiginfo(tid); err == nil && ptrace.Sent(st.Sig, info) {
				held[tid] = append(held[tid], info)
			}
		case ptrace.Exited, ptrace.Killed:
			return nil
		}
	}
}
