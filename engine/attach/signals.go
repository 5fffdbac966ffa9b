package attach

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// kernelSigactionSize is the size of the kernel's struct sigaction on
// x86-64: handler, flags, restorer, then a 64-bit mask.
const kernelSigactionSize = 32

// sigIgn is SIG_IGN.
const sigIgn = 1

// numSignals is the number of signals of Linux (_NSIG).
const numSignals = 64

// handlers reads the action of every signal: SIG_DFL or SIG_IGN from
// /proc (SigCgt, SigIgn), and a handler's whole sigaction through
// rt_sigaction with a NULL new action, injected in the first thread
// (handlers are shared by the threads of a process): one injected call per
// caught signal instead of 64 while the process is stopped.
func (p *Process) handlers() ([]trace.SigAction, error) {
	tid := p.tids[0]
	f := ptrace.StatusFields(fmt.Sprintf("/proc/%d/status", p.Pid), "SigCgt", "SigIgn")
	caught, err1 := strconv.ParseUint(f[0], 16, 64)
	ignored, err2 := strconv.ParseUint(f[1], 16, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("read the signal actions of %d: no SigCgt/SigIgn in its status", p.Pid)
	}
	out := make([]trace.SigAction, numSignals)
	for sig := 1; sig <= numSignals; sig++ {
		out[sig-1].Sig = sig
		if ignored&(1<<(sig-1)) != 0 {
			out[sig-1].Handler = sigIgn
		}
	}
	err := ptrace.WithScratch(tid, p.mem, kernelSigactionSize, func(addr uint64) error {
		var b [kernelSigactionSize]byte
		for sig := 1; sig <= numSignals; sig++ {
			if caught&(1<<(sig-1)) == 0 {
				continue
			}
			ret, err := ptrace.InjectSyscall(tid, p.mem, unix.SYS_RT_SIGACTION, uint64(sig), 0, addr, 8)
			if err != nil {
				return fmt.Errorf("read the action of signal %d: %w", sig, err)
			}
			if ret < 0 {
				return fmt.Errorf("read the action of signal %d: %w", sig, unix.Errno(-ret))
			}
			if _, err := p.mem.ReadAt(b[:], addr); err != nil {
				return err
			}
			out[sig-1] = trace.SigAction{Sig: sig, Handler: le64(b[0:]), Flags: le64(b[8:]), Restorer: le64(b[16:]), Mask: le64(b[24:])}
		}
		return nil
	})
	return out, err
}

// le64 decodes a little-endian 64-bit word.
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
