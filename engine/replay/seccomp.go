package replay

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The program's own seccomp filters are not installed in replay: installing
// one is an emulated call, and every verdict is in the recording (ERRNO and
// TRACE without a seccomp tracer as the call's failure, TRAP as the call
// rolled back followed by its SIGSYS, LOG and ALLOW as the call itself).
// What the recording cannot replay by emulation is a KILL verdict: the
// thread or process dies inside the call, of a SIGSYS no handler, mask or
// tracer can stop, with a core dump as the kernel decides. Replay has the
// kernel do it again, with a filter of its own that kills that call.

// Seccomp constants (linux/seccomp.h, linux/filter.h).
const (
	seccompSetModeFilter  = 1
	seccompRetKillProcess = 0x80000000
	seccompRetKillThread  = 0x00000000
	seccompRetAllow       = 0x7fff0000
	bpfLdWAbs             = 0x20 // BPF_LD|BPF_W|BPF_ABS
	bpfJeqK               = 0x15 // BPF_JMP|BPF_JEQ|BPF_K
	bpfRetK               = 0x06 // BPF_RET|BPF_K
	sigsysSyscode         = 1    // SYS_SECCOMP, the si_code of a seccomp SIGSYS
)

// seccompKill tells whether the recorded call that e completes (entered
// with registers entry) is one a seccomp filter killed, and with which
// verdict. The kernel rolls the call back (its
// result register holds its number again) and the thread dies without
// another event: the process with it, of SIGSYS (KILL_PROCESS, or
// KILL_THREAD of its last thread), or the thread alone, right after the
// call (KILL_THREAD while others live).
func (s *Session) seccompKill(t *rthread, e *trace.Event, entry *trace.Regs) (uint32, bool) {
	if e.Kind != trace.KindSyscall && e.Kind != trace.KindSyscallExit || e.Flags&trace.FlagNoReturn != 0 || e.ExitRegs[trace.RAX] != entry[trace.OrigRAX] {
		return 0, false
	}
	for i := 1; i < lookahead; i++ {
		n, err := s.peek(i)
		if err != nil || n == nil {
			return 0, false
		}
		o := s.threads[n.Tid]
		if o == nil || o.proc != t.proc {
			return 0, false // something else happened in between
		}
		switch n.Kind {
		case trace.KindThreadExit:
			if n.Tid == t.rec && i == 1 && s.processGoesOn(t, i+1) {
				return seccompRetKillThread, true
			}
			continue // the process's threads die one by one
		case trace.KindExit:
			if ws := unix.WaitStatus(n.Status); ws.Signaled() && ws.Signal() == unix.SIGSYS {
				return seccompRetKillProcess, true
			}
		}
		return 0, false
	}
	return 0, false
}

// processGoesOn tells whether t's process has an event from the i-th ahead
// on that is not its death: the thread died alone.
func (s *Session) processGoesOn(t *rthread, i int) bool {
	for ; i < lookahead; i++ {
		n, err := s.peek(i)
		if err != nil || n == nil {
			return false
		}
		if o := s.threads[n.Tid]; o == nil || o.proc != t.proc {
			continue
		}
		return n.Kind != trace.KindThreadExit && n.Kind != trace.KindExit
	}
	return false
}

// replaySeccompKill has the kernel kill t at its call, at its (skipped)
// entry with registers entry: a filter that gives verdict to this call number is installed in
// t, and the call is made again. The thread is left running to its death,
// which the next events collect.
func (s *Session) replaySeccompKill(t *rthread, entry *trace.Regs, verdict uint32) error {
	nr := uint32(entry[trace.OrigRAX])
	// A filter may only be installed without privileges under
	// no_new_privs; the program had it (or the privilege) when recorded,
	// but installing it was emulated.
	if ret, err := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil || ret < 0 {
		return fmt.Errorf("replay a seccomp kill: no_new_privs: %d, %w", ret, err)
	}
	const progSize, insnSize = 16, 8
	insns := [][4]uint32{
		{bpfLdWAbs, 0, 0, 0}, // seccomp_data.nr
		{bpfJeqK, 0, 1, nr},
		{bpfRetK, 0, 0, verdict},
		{bpfRetK, 0, 0, seccompRetAllow},
	}
	buf := make([]byte, progSize+insnSize*len(insns))
	ret, err := s.injectWithString(t, buf, func(addr uint64) (int64, error) {
		binary.LittleEndian.PutUint16(buf[0:], uint16(len(insns)))
		binary.LittleEndian.PutUint64(buf[8:], addr+progSize)
		for i, in := range insns {
			b := buf[progSize+insnSize*i:]
			binary.LittleEndian.PutUint16(b[0:], uint16(in[0]))
			b[2], b[3] = byte(in[1]), byte(in[2])
			binary.LittleEndian.PutUint32(b[4:], in[3])
		}
		if _, err := t.proc.mem.WriteAt(buf, addr); err != nil {
			return 0, err
		}
		return ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_SECCOMP, seccompSetModeFilter, 0, addr)
	})
	if err != nil || ret < 0 {
		return fmt.Errorf("replay a seccomp kill: install a filter: %d, %w", ret, err)
	}
	regs := *entry
	regs[trace.RIP] -= 2 // back onto the syscall instruction, to make it again
	regs[trace.RAX] = regs[trace.OrigRAX]
	if err := ptrace.SetRegs(t.real, &regs); err != nil {
		return fmt.Errorf("replay a seccomp kill: %w", err)
	}
	return ptrace.Cont(t.real, 0)
}

// seccompTrapped tells whether the recorded call e was answered by a
// seccomp TRAP verdict: rolled back, its thread's next event the SIGSYS the
// filter raised. Such a call was never executed, whatever its policy.
func (s *Session) seccompTrapped(t *rthread, e *trace.Event) bool {
	if e.Kind != trace.KindSyscall || e.ExitRegs[trace.RAX] != e.Regs[trace.OrigRAX] {
		return false
	}
	n := s.peekThread(t.rec)
	if n == nil || n.Kind != trace.KindSignal || n.Signo != int32(unix.SIGSYS) || len(n.Siginfo) < 12 {
		return false
	}
	return int32(binary.LittleEndian.Uint32(n.Siginfo[8:])) == sigsysSyscode
}
