package replay

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Code patching in replay: the same sites as the recorder's, found by the
// same algorithm (engine/patch) in the same bytes at the same events, and
// the vDSO's functions made system calls as they were when recorded.

// codeFiles are the files sites are found with: the executable file
// mappings' files by blob, read from the trace, and the files the kernel
// mapped at exec. The sites belong to each process (rproc.code).
type codeFiles struct {
	images map[uint32]*patch.Image
	paths  map[string]*patch.Image
}

// patching says whether the trace was recorded with code patching (the
// same algorithm: older traces patched nothing).
func (s *Session) patching() bool { return s.hdr.Patch == patch.Version }

// startImage does at an exec stop what the recorder did there: the vDSO's
// functions become system calls if the recording says it patched them
// (e.Value is its address then), else the vDSO is hidden as it was; then
// the rdrand and rdseed of the executable and its interpreter are patched.
func (s *Session) startImage(t *rthread, e *trace.Event, rsp uint64) (ptrace.StartState, error) {
	p := t.proc
	st, err := ptrace.InitialState(p.mem, rsp)
	if err != nil {
		return st, err
	}
	switch {
	case e.Value != 0 && st.VDSO == 0:
		return st, s.diverge(e, "the recording patched the vDSO at %#x, and this kernel maps none", e.Value)
	case e.Value != 0:
		// This kernel's own vDSO, patched by its own symbols: at the
		// recorded address on the same kernel (machine warns otherwise).
		if _, err := patch.PatchVDSO(p.mem, st.VDSO); err != nil {
			return st, fmt.Errorf("replay: %w", err)
		}
	default:
		if err := ptrace.HideVDSO(p.mem, &st); err != nil {
			return st, err
		}
	}
	if !s.patching() {
		return st, nil
	}
	// A new address space: a new table (a vfork child's was its parent's).
	p.code = &patch.Space{}
	maps, err := patch.ExecMappings(p.real, s.code.pathImage)
	if err != nil {
		return st, err
	}
	for _, mp := range maps {
		p.code.Map(p.mem, mp)
	}
	return st, nil
}

// inheritCode gives a process a re-executed fork made its parent's sites,
// as the recorder did: a copy, or the parent's own table when they share
// memory.
func inheritCode(parent *rproc, real int) *patch.Space {
	if parent.code == nil {
		return nil // a trace without patching
	}
	if same, err := patch.SharedMemory(parent.real, real); err == nil && same {
		return parent.code
	}
	return parent.code.Clone()
}

// pathImage is the file at path, read when its layout is first needed.
func (c *codeFiles) pathImage(path string) *patch.Image {
	if im, ok := c.paths[path]; ok {
		return im
	}
	if c.paths == nil {
		c.paths = map[string]*patch.Image{}
	}
	im := patch.NewImage(func() ([]byte, error) { return os.ReadFile(path) })
	c.paths[path] = im
	return im
}

// patchAfterSyscall follows a replayed system call that changed the address
// space, as the recorder did after it (whether replay emulated the call or
// executed it again: the decision uses only the recorded call).
func (s *Session) patchAfterSyscall(t *rthread, e *trace.Event) {
	p := t.proc
	if !s.patching() || p == nil || p.code == nil || p.dead || e.Kind != trace.KindSyscall || e.Flags&trace.FlagNoReturn != 0 {
		return
	}
	c := callOf(e, &e.Regs)
	switch c.Nr {
	case unix.SYS_MMAP, unix.SYS_MPROTECT, unix.SYS_PKEY_MPROTECT, unix.SYS_MUNMAP, unix.SYS_MREMAP:
	default:
		return
	}
	image := func() *patch.Image {
		if e.Map == nil {
			return nil
		}
		if im, ok := s.code.images[e.Map.Blob]; ok {
			return im
		}
		if s.code.images == nil {
			s.code.images = map[uint32]*patch.Image{}
		}
		blob := e.Map.Blob
		im := patch.NewImage(func() ([]byte, error) { return s.rd.Blob(blob) })
		s.code.images[blob] = im
		return im
	}
	p.code.AfterSyscall(p.mem, c.Nr, c.Args, e.ExitRegs[trace.RAX], image)
}

// applyRand replays a patched rdrand or rdseed: the thread runs to the
// site's trap, which gets the recorded value.
func (s *Session) applyRand(t *rthread, e *trace.Event) error {
	what := e.TrapName()
	st, err := s.run(t)
	if err != nil {
		return err
	}
	if st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGILL) {
		return s.diverge(e, "expected %s at %#x, got %s", what, e.Regs[trace.RIP], describe(st))
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.real, &regs); err != nil {
		return err
	}
	if err := s.compareRegs(e, "at "+what, &e.Regs, &regs); err != nil {
		return err
	}
	site, ok := t.proc.code.Site(regs[trace.RIP])
	if !ok {
		return s.diverge(e, "the recording patched an %s at %#x, and the replay did not", what, regs[trace.RIP])
	}
	site.Emulate(&regs, e.Value, e.Aux&1 != 0)
	if err := ptrace.SetRegs(t.real, &regs); err != nil {
		return fmt.Errorf("complete %s at %#x: %w", what, site.Addr, err)
	}
	return nil
}
