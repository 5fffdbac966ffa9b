package attach

import "fmt"

// Snapshot is the state of a stopped process that a replay needs to
// rebuild it.
type Snapshot struct {
	Pid      int
	Mappings []Mapping
	Threads  []Thread
	Handlers []Handler // signals 1 to 64, SIGKILL and SIGSTOP included
	Files    []File
	Brk      uint64 // the program break
	Cwd      string
	Rlimits  []Rlimit
	Auxv     []AuxEntry
	Cmdline  []string
}

// Snapshot reads the state of the seized process.
func (p *Process) Snapshot() (*Snapshot, error) {
	s := &Snapshot{Pid: p.Pid}
	var err error
	p.th.Do(func() { err = p.snapshot(s) })
	if err != nil {
		return nil, fmt.Errorf("snapshot of %d: %w", p.Pid, err)
	}
	return s, nil
}

// snapshot fills s on the ptrace thread. The memory is read last, so that
// it holds what it was once the injected calls had put their scratch back.
func (p *Process) snapshot(s *Snapshot) error {
	var err error
	if s.Threads, err = p.threads(); err != nil {
		return err
	}
	if s.Handlers, err = p.handlers(); err != nil {
		return err
	}
	if s.Brk, err = p.brk(); err != nil {
		return err
	}
	if err := p.process(s); err != nil {
		return err
	}
	s.Mappings, err = p.mappings()
	return err
}
