package attach

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// Detach queues again the signals held while seizing, resumes every thread
// and releases the process. It is safe to call once; the Process is not
// usable afterwards.
func (p *Process) Detach() error {
	var errs []error
	p.do(func() {
		for _, tid := range p.tids {
			for _, info := range p.held[tid] {
				if err := Requeue(p.Pid, tid, p.mem, info); err != nil {
					errs = append(errs, err)
				}
			}
		}
		errs = append(errs, p.detachAll()...)
	})
	if p.th != nil {
		p.th.Close()
	}
	if p.mem != nil {
		p.mem.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("detach from %d: %w", p.Pid, err)
	}
	return nil
}

// detachAll resumes and releases every seized thread.
func (p *Process) detachAll() []error {
	var errs []error
	for _, tid := range p.tids {
		if err := ptrace.Detach(tid, 0); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, err)
		}
	}
	p.tids = nil
	return errs
}

// Requeue makes thread tid of process pid, stopped, send itself the signal
// of siginfo info with rt_tgsigqueueinfo: only a process may queue to
// itself a siginfo that says it came from kill or from the kernel, so the
// signal is delivered with its sender and code as if it had never been
// taken out of the queue.
func Requeue(pid, tid int, m *ptrace.Mem, info []byte) error {
	sig := uint64(binary.LittleEndian.Uint32(info[:4]))
	return ptrace.WithScratch(tid, m, len(info), func(addr uint64) error {
		if _, err := m.WriteAt(info, addr); err != nil {
			return err
		}
		ret, err := ptrace.InjectSyscall(tid, m, unix.SYS_RT_TGSIGQUEUEINFO, uint64(pid), uint64(tid), sig, addr)
		if err != nil {
			return fmt.Errorf("queue signal %d again in thread %d: %w", sig, tid, err)
		}
		if ret < 0 {
			return fmt.Errorf("queue signal %d again in thread %d: %w", sig, tid, unix.Errno(-ret))
		}
		return nil
	})
}
