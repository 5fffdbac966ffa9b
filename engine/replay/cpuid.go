package replay

import (
	"bytes"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// A recording made with CPUID faulting has every cpuid the program ran as
// an event (or, at a site the recorder patched, answered from the hook
// page's table, which replay patches the same). Where this CPU cannot
// fault on cpuid (another vendor, a hypervisor without the feature), replay
// does not let the instruction run, which would answer this CPU's values:
// it stops the thread on it with a breakpoint and gives it the recorded
// answer. What the trace does not hold cannot run there: every cpuid of
// the recording trapped or went through the hook.

// NoCPUIDFaultingEnv, set to 1, makes replay act as on a CPU without CPUID
// faulting (tests, and a check of what another machine does).
const NoCPUIDFaultingEnv = "REWIND_REPLAY_NO_CPUID_FAULTING"

// localCPUIDFaulting says whether this machine's CPU can trap cpuid.
func localCPUIDFaulting() bool {
	if os.Getenv(NoCPUIDFaultingEnv) == "1" {
		return false
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	return err == nil && bytes.Contains(b, []byte(" cpuid_fault"))
}

// trapsCpuid says whether replayed processes trap cpuid as the recording's
// did (the trace's recording and this CPU both can).
func (s *Session) trapsCpuid() bool {
	s.cpuidOnce.Do(func() { s.cpuidFault = s.hdr.CPUIDFaulting && localCPUIDFaulting() })
	return s.cpuidFault
}

// emulatesCpuid says whether the recording's cpuid events are reached with
// breakpoints here (trapsCpuid's other side).
func (s *Session) emulatesCpuid() bool { return s.hdr.CPUIDFaulting && !s.trapsCpuid() }

// runToCpuid runs t to the cpuid of event e with a breakpoint on it, and
// reads its registers there, checked against the recording's. The
// breakpoint is a debug register's where one is free: code written at run
// time (a JIT's: the JVM asks cpuid from a stub it generates) is written
// after the breakpoint is set, over an int3, which would then be put back
// over it.
func (s *Session) runToCpuid(t *rthread, e *trace.Event, regs *trace.Regs) error {
	pc := e.Regs[trace.RIP]
	_, user := s.bps[pc] // the user's stops there first: the int3 tells
	if slot := len(s.watches); slot < MaxWatchpoints && !user {
		if err := s.syncWatch(t); err != nil {
			return err
		}
		dr7v, err := ptrace.GetDebugReg(t.real, dr7)
		if err != nil {
			return err
		}
		if err := ptrace.SetDebugReg(t.real, slot, pc); err != nil {
			return err
		}
		// Local enable, execution (RW 00), one byte (LEN 00).
		if err := ptrace.SetDebugReg(t.real, dr7, dr7v|1<<(2*slot)); err != nil {
			return err
		}
		defer ptrace.SetDebugReg(t.real, dr7, dr7v)
	} else {
		s.preemptPC, s.cpuidAt = pc, true
		defer func() { s.preemptPC, s.cpuidAt = 0, false }()
	}
	st, err := s.run(t)
	if err != nil {
		return err
	}
	if st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGTRAP) {
		return s.diverge(e, "expected the cpuid at %#x, got %s", pc, describe(st))
	}
	if err := ptrace.GetRegs(t.real, regs); err != nil {
		return err
	}
	if regs[trace.RIP] != pc {
		return s.diverge(e, "expected the cpuid at %#x, got a trap at %#x", pc, regs[trace.RIP])
	}
	return s.compareTrapRegs(e, regs)
}

// eflagsRF is the resume flag, eflagsFixed the bit that is always 1,
// eflagsStatus the arithmetic flags.
const (
	eflagsRF     = 0x10000
	eflagsFixed  = 0x2
	eflagsStatus = 0x8d5 // CF PF AF ZF SF OF
)

// withRecordedFlags is got with the resume flag and the fixed bit of want,
// recorded, and its flags of loose too. The resume flag is the kernel's
// and the CPU's (a fault's stop has it set, a breakpoint's not, the
// recorder's stop and replay's may differ so, and QEMU's emulated CPUs
// never set it); the fixed bit is 1 on every CPU, but older kernels
// (Debian 12's 6.1) leave it out of a new program's registers; the
// program sees neither. loose is what Session.looseFlags says. A trap
// flag the recording did not have is replay's own single-step's (stepi
// onto a call a patched site's stub makes traced, whose entry is checked):
// it is left out too, as from r11 (stepRaw).
func withRecordedFlags(got, want *trace.Regs, loose uint64) trace.Regs {
	kernels := eflagsRF | eflagsFixed | loose
	if want[trace.EFLAGS]&eflagsTF == 0 {
		kernels |= eflagsTF
	}
	g := *got
	g[trace.EFLAGS] = g[trace.EFLAGS]&^kernels | want[trace.EFLAGS]&kernels
	return g
}

// atEmulatedCpuid says whether t stands on the cpuid of the next event,
// which it must not execute here (stepRaw): the event answers it.
func (s *Session) atEmulatedCpuid(t *rthread) bool {
	if !s.emulatesCpuid() {
		return false
	}
	e, err := s.peek(0)
	if err != nil || e == nil || e.Kind != trace.KindCpuid || e.Flags&trace.FlagXgetbv != 0 || e.Tid != t.rec || e.Flags&trace.FlagBuffered != 0 {
		return false
	}
	var regs trace.Regs
	return ptrace.GetRegs(t.real, &regs) == nil && regs[trace.RIP] == e.Regs[trace.RIP]
}
