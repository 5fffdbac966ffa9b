package attach

import (
	"fmt"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// Snapshot reads the state of the seized process. Its regions hold their
// bytes in Data; the recorder stores them as blobs.
func (p *Process) Snapshot() (*trace.Snapshot, error) {
	s := &trace.Snapshot{Pid: p.Pid}
	var err error
	p.do(func() { err = p.snapshot(s) })
	if err != nil {
		return nil, fmt.Errorf("snapshot of %d: %w", p.Pid, err)
	}
	return s, nil
}

// snapshot fills s on the ptrace thread. The memory is read last, so that
// it holds what it was once the injected calls had put their scratch back.
func (p *Process) snapshot(s *trace.Snapshot) error {
	var err error
	if s.Threads, err = p.threads(); err != nil {
		return err
	}
	if s.Handlers, err = p.handlers(); err != nil {
		return err
	}
	if s.Layout, err = p.layout(); err != nil {
		return err
	}
	if err := p.process(s); err != nil {
		return err
	}
	s.Regions, err = p.regions()
	return err
}
