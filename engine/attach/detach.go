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
	p.th.Do(func() {
		for _, tid := range p.tids {
			for _, info := range p.held[tid] {
				if err := p.requeue(tid, info); err != nil {
					errs = append(errs, err)
				}
			}
		}
		errs = append(errs, p.detachAll()...)
	})
	p.th.Close()
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

// requeue makes thread tid send itself the signal of siginfo info with
// rt_tgsigqueueinfo: only a process may queue to itself a siginfo that says
// it came from kill or from the kernel, so the signal is delivered with
// its sender and code as if it had never been taken out of the queue.
func (p *Process) requeue(tid int, info []byte) error {
	sig := uint64(binary.LittleEndian.Uint32(info[:4]))
	return ptrace.WithScratch(tid, p.mem, len(info), func(addr uint64) error {
		if _, err := p.mem.WriteAt(info, addr); err != nil {
			return err
		}
		ret, err := ptrace.InjectSyscall(tid, p.mem, unix.SYS_RT_TGSIGQUEUEINFO, uint64(p.Pid), uint64(tid), sig, addr)
		if err != nil {
			return fmt.Errorf("queue signal %d again in thread %d: %w", sig, tid, err)
		}
		if ret < 0 {
			return fmt.Errorf("queue signal %d again in thread %d: %w", sig, tid, unix.Errno(-ret))
		}
		return nil
	})
}
