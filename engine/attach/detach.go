package attach

import (
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
				if err := ptrace.Requeue(p.Pid, tid, p.mem, info); err != nil {
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
