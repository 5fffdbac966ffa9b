package record

import (
	"fmt"
	"os"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// redZone is the part of the stack below rsp that x86-64 code may use
// without moving rsp (leaf functions, signal handlers do not touch it).
const redZone = 128

// tracee is the memory of the thread being handled, as the syscall table's
// rules read it, with what they may ask the kernel (syscalls.Prober): the
// thread is stopped at a system call of its own.
type tracee struct {
	*ptrace.Mem
	tid int
}

// tracee returns t's view for the table's rules.
func (r *Recorder) tracee(t *thread) *tracee { return &tracee{Mem: t.proc.mem, tid: t.tid} }

// Probe makes a system call in the thread, with scratch memory taken below
// its stack's red zone and given back afterwards.
func (p *tracee) Probe(nr int, size int, build func(scratch uint64) ([6]uint64, []byte)) (int64, []byte, error) {
	var regs trace.Regs
	if err := ptrace.GetRegs(p.tid, &regs); err != nil {
		return 0, nil, err
	}
	scratch := (regs[trace.RSP] - redZone - uint64(size)) &^ 15
	saved := make([]byte, size)
	if _, err := p.ReadAt(saved, scratch); err != nil {
		return 0, nil, fmt.Errorf("probe: scratch memory below the stack: %w", err)
	}
	args, init := build(scratch)
	buf := make([]byte, size)
	copy(buf, init)
	if _, err := p.WriteAt(buf, scratch); err != nil {
		return 0, nil, fmt.Errorf("probe: scratch memory below the stack: %w", err)
	}
	ret, err := ptrace.InjectSyscall(p.tid, p.Mem, uint64(nr), args[:]...)
	if err == nil {
		_, err = p.ReadAt(buf, scratch)
	}
	if _, werr := p.WriteAt(saved, scratch); werr != nil && err == nil {
		err = fmt.Errorf("probe: restore the memory below the stack: %w", werr)
	}
	return ret, buf, err
}

// FdTarget reads what the thread's descriptor fd is from /proc.
func (p *tracee) FdTarget(fd int) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", p.tid, fd))
}
