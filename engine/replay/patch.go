package replay

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Code patching in replay: the same sites as the recorder's, found by the
// same algorithm (engine/patch) in the same bytes at the same events, and
// the vDSO's functions made system calls as they were when recorded.

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
		if _, _, err := patch.PatchVDSO(p.mem, st.VDSO); err != nil {
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
	p.code = &patch.Space{Cpuid: s.hdr.CpuidPatched, Xgetbv: s.hdr.Xgetbv}
	maps, err := patch.ExecMappings(p.real, nil, s.execImage)
	if err != nil {
		return st, err
	}
	for _, mp := range maps {
		p.code.Map(p.mem, mp)
	}
	return st, nil
}

// execImage is the image of a file an exec mapped. An executable written
// during the recording (a test binary go test builds) is put back for its
// exec (provideExe) and removed at once: its mappings then say "(deleted)",
// where the recorder saw the file, and it is the stored copy.
func (s *Session) execImage(path string) *patch.Image {
	if id, ok := storedBlobOf(path); ok {
		// A stored file's memfd, where an image was rebuilt (execimage.go).
		return s.analyses.Follow(s.code.Blob(id, func() ([]byte, error) {
			data, err := s.blob(id)
			return bytes.Clone(data), err
		}), func() string { return s.blobName(id) })
	}
	orig, deleted := strings.CutSuffix(path, " (deleted)")
	if !deleted {
		return s.analyses.Follow(s.code.Exec(path), func() string { return fileName(path) })
	}
	id, ok := s.exeBlobs[orig]
	if !ok || !s.removed[orig] {
		return nil
	}
	return s.analyses.Follow(s.code.Blob(id, func() ([]byte, error) {
		data, err := s.blob(id)
		return bytes.Clone(data), err // the cache's copy stays untouched
	}), func() string { return s.blobName(id) })
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
		if s.unchanged(e.Map) {
			// The file itself, named as the recorder names it: its
			// kept analysis, and its bytes unless they are needed,
			// without decompressing the trace's copy (mapfile.go).
			path := e.Map.Path
			return s.analyses.Follow(s.code.Exec(path), func() string { return fileName(path) })
		}
		blob := e.Map.Blob
		return s.analyses.Follow(s.code.Blob(blob, func() ([]byte, error) { return s.rd.Blob(blob) }),
			func() string { return s.blobName(blob) })
	}
	p.code.AfterSyscall(p.mem, c.Nr, c.Args, e.ExitRegs[trace.RAX], image)
}

// applyRand replays a patched rdrand or rdseed: the thread runs to the
// site's trap, which gets the recorded value.
func (s *Session) applyRand(t *rthread, e *trace.Event) error {
	what := e.TrapName()
	var regs trace.Regs
	if err := s.runToTrap(t, e, unix.SIGILL, &regs); err != nil {
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

// fromHook says whether e is a call the hook page made through its traced
// instruction: buffered when recorded, or made traced then too.
func (s *Session) fromHook(e *trace.Event) bool {
	return s.hdr.Hook != "" && e.Regs[trace.RIP] == hook.Traced+2
}

// compareBuffered checks, at the entry of a call the hook page made, the
// registers the recorder knows of it (hook.go of engine/record) and, for
// a call the hook recorded, the paths it read: what the hook checks when
// it answers the call itself (buffered.go).
func (s *Session) compareBuffered(t *rthread, e *trace.Event, regs *trace.Regs) error {
	if !hook.TracedRIP(regs[trace.RIP]) {
		return s.diverge(e, "expected %s made by the hook page, got a call at rip %#x", syscalls.Name(int(e.Syscall)), regs[trace.RIP])
	}
	for _, i := range []int{trace.OrigRAX, trace.RDI, trace.RSI, trace.RDX, trace.R10, trace.R8, trace.R9} {
		if e.Regs[i] != regs[i] {
			return s.diverge(e, "at %s (made by the hook page): expected %s=%#x, got %#x (rip %#x)",
				syscalls.Name(int(e.Syscall)), trace.RegNames[i], e.Regs[i], regs[i], regs[trace.RIP])
		}
	}
	if e.Flags&trace.FlagBuffered == 0 {
		return nil
	}
	for _, in := range e.In {
		got := make([]byte, len(in.Data))
		if n, _ := t.proc.mem.ReadAt(got, in.Addr); n != len(got) || !bytes.Equal(got, in.Data) {
			what := "the path"
			if _, src := syscalls.WriteTarget(&syscalls.Call{Nr: int(e.Syscall)}); src == syscalls.FromMemory {
				what = "the bytes written"
			}
			return s.diverge(e, "at %s (made by the hook page): expected %s %q, got %q",
				syscalls.Name(int(e.Syscall)), what, bytes.TrimRight(in.Data, "\x00"), bytes.TrimRight(got[:n], "\x00"))
		}
	}
	return nil
}

// patchHookSite patches the site of the call of e, which has just
// returned, as the recorder did (FlagHookSite): a stub page mapped where
// it mapped one, the stub, and the jump over the site's code.
func (s *Session) patchHookSite(t *rthread, e *trace.Event) error {
	if t.dead || t.proc.dead {
		// Or its process was dropped by the call: a focused replay
		// hands over to the child of a fork, whose exit in the parent
		// may list sites the child learned (patchLearned).
		return nil
	}
	if err := s.patchKnownSites(t, e); err != nil {
		return err
	}
	if e.Flags&trace.FlagHookSite == 0 {
		return nil
	}
	rip := e.Regs[trace.RIP]
	if e.Kind == trace.KindSyscallExit {
		// A failed execve's: the thread stands at the site, returned.
		var regs trace.Regs
		if err := ptrace.GetRegs(t.real, &regs); err != nil {
			return err
		}
		rip = regs[trace.RIP]
	}
	site, err := s.patchSite(t, e, trace.HookPatch{Site: rip, Stub: e.Aux, Page: e.Value, Nr: uint32(e.Syscall)}, nil, nil)
	if err != nil {
		return err
	}
	if resume := site.Resume(e.Aux); resume != rip {
		// Where the recorder moved the thread, off the covered code.
		return ptrace.SetRIP(t.real, resume)
	}
	return nil
}

// patchKnownSites patches the known sites of code just mapped that e lists
// (no thread there yet) as patchSite does each, their code read at once and
// their patches written together (hook.SiteWrites), as the recorder does.
func (s *Session) patchKnownSites(t *rthread, e *trace.Event) error {
	if len(e.Hooks) == 0 {
		return nil
	}
	key, images := planKey(t, e.Hooks)
	if pl := s.plans[key]; pl != nil {
		return s.applyPlan(t, e, pl)
	}
	s.planning = &replayPlan{images: images}
	defer func() { s.planning = nil }()
	m := t.proc.mem
	var rips []uint64
	for _, h := range e.Hooks {
		if _, trap := hook.TrapOf(h.Nr); !trap {
			rips = append(rips, h.Site)
		}
	}
	codes, err := hook.SiteCodes(m, rips)
	if err != nil {
		return err
	}
	w := hook.NewSiteWrites(m)
	w.LogTo(s.planning.write)
	i := 0
	for _, h := range e.Hooks {
		if _, trap := hook.TrapOf(h.Nr); trap {
			if _, err := s.patchTrap(t, e, h, w); err != nil {
				return err
			}
			continue
		}
		if _, err := s.patchSite(t, e, h, codes[i], w); err != nil {
			return err
		}
		i++
	}
	if err := w.Flush(); err != nil {
		return err
	}
	s.keepPlan(key)
	return nil
}

// patchSite patches one site as the recorder did at e: the stub page
// mapped first if it mapped one, the stub, the jump over the site's code.
// code is the site's code read before (nil: read it here); w, when not
// nil, takes the patch, to be flushed by the caller.
func (s *Session) patchSite(t *rthread, e *trace.Event, h trace.HookPatch, code []byte, w *hook.SiteWrites) (hook.Site, error) {
	if _, ok := hook.TrapOf(h.Nr); ok {
		_, err := s.patchTrap(t, e, h, nil)
		return hook.Site{}, err
	}
	m := t.proc.mem
	if w != nil && (h.Page != 0 || w.Covers(h.Site)) {
		// An injected mmap runs code at the thread's rip; a jump not
		// written yet changes what was read.
		if err := w.Flush(); err != nil {
			return hook.Site{}, err
		}
		code = nil
	}
	if err := s.mapStubPage(t, e, h); err != nil {
		return hook.Site{}, err
	}
	if code == nil {
		code = make([]byte, hook.SiteCode)
		if _, err := m.ReadAt(code, h.Site-hook.SiteBefore); err != nil {
			return hook.Site{}, err
		}
	}
	site, ok := hook.FindSite(code, h.Site, h.Nr)
	if !ok {
		return site, s.diverge(e, "the recording patched the system call site at %#x, which is not one the hook serves here (% x)", h.Site, code)
	}
	batch := w
	if batch == nil {
		batch = hook.NewSiteWrites(m)
	}
	if err := batch.Add(site, h.Stub); err != nil {
		return site, s.diverge(e, "%v", err)
	}
	// The debugger reads the code the jump replaces.
	s.remember(t, site.Start(), code[hook.SiteBefore-(h.Site-site.Start()):][:site.Len()])
	if w == nil {
		return site, batch.Flush()
	}
	return site, nil
}

// mapStubPage maps the page of stubs the recorder mapped for patch h, if
// it mapped one.
func (s *Session) mapStubPage(t *rthread, e *trace.Event, h trace.HookPatch) error {
	if h.Page == 0 {
		return nil
	}
	addr, n := hook.PagesOf(h.Page)
	got, err := hook.MapStubPages(t.real, t.proc.mem, addr, n)
	if err != nil {
		return err
	}
	if uint64(got) != addr {
		return s.diverge(e, "the recording mapped hook stub pages at %#x, replay could not (%d)", addr, got)
	}
	s.planning.add(planOp{kind: opMap, addr: h.Page})
	return nil
}

// patchTrap patches the trapping instruction at h.Site with the code
// around it as the recorder did at e (hook.Trap), and returns its window;
// into batch, the code read and written through it, to be flushed by the
// caller, or, when nil, at once.
func (s *Session) patchTrap(t *rthread, e *trace.Event, h trace.HookPatch, batch *hook.SiteWrites) (w patch.Window, err error) {
	k, ok := hook.TrapOf(h.Nr)
	if !ok {
		return patch.Window{}, s.diverge(e, "the recording patched the site at %#x as %#x, which this rewind does not know", h.Site, h.Nr)
	}
	if err := s.mapStubPage(t, e, h); err != nil {
		return patch.Window{}, err
	}
	if batch == nil {
		batch = hook.NewSiteWrites(t.proc.mem)
		defer func() {
			if ferr := batch.Flush(); err == nil {
				err = ferr
			}
		}()
	}
	// A cpuid the scan trapped (a recording without CPUID faulting): the
	// recorder put it back for the window.
	if _, ok := t.proc.code.Untrap(batch.Code(), h.Site); ok {
		s.planning.add(planOp{kind: opForget, addr: h.Site})
	}
	w, ok = t.proc.code.TrapWindow(batch.Code(), h.Site, k.Len(), k.NeedsPrev())
	if !ok {
		return w, s.diverge(e, "the recording patched the %s at %#x, which replay finds no window around", k.Name, h.Site)
	}
	// The debugger reads the code the jump replaces.
	s.remember(t, w.Start, w.Code)
	if err := batch.AddTrap(k, w, h.Stub); err != nil {
		return w, s.diverge(e, "%v", err)
	}
	return w, nil
}
