package record

import (
	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Patched trapping instructions (engine/hook's Trap): a cpuid, rdtsc or
// xgetbv that trapped is patched, with the instructions around it, into a jump to
// a stub that asks the hook, so that the next ones at that site cost no
// stop; known sites carry the patch to later processes.

// patchTrap patches the instruction of kind k that t trapped at (rip),
// with the code around it (a patch.Window), and lists the patch in e, the
// trap's event, for replay to make there. regs are t's registers after the
// instruction: a thread standing inside the window goes on at the same
// instruction in the stub. Not in the hook's code or a stub, nor where a
// thread of the address space stands inside the window.
func (r *Recorder) patchTrap(t *thread, e *trace.Event, k hook.Trap, rip uint64, regs *trace.Regs) error {
	p := t.proc
	if !r.trapsPatched(t, k) || r.inHook(p, rip) || r.inStub(p, rip) {
		return nil
	}
	w, ok := p.code.TrapWindow(p.mem, rip, k.Len(), k.NeedsPrev())
	if !ok || !k.Patchable(w) || r.inWindow(t, w) || p.code.Trapped(w.Start, w.End()) {
		// (A trapped rdrand or cpuid copied into the stub would trap
		// where no site is known.)
		return nil
	}
	batch := hook.NewSiteWrites(p.mem)
	h, err := r.writeTrap(t, k, w, batch)
	if err != nil || h.Stub == 0 {
		return err
	}
	if err := batch.Flush(); err != nil {
		return err
	}
	regs[trace.RIP] = hook.TrapResume(w, h.Stub, regs[trace.RIP])
	e.Hooks = append(e.Hooks, h)
	r.learnSite(p, rip, k.Nr)
	return nil
}

// trapsPatched says whether instructions of kind k that t traps at are
// patched: under the filter, in a thread the hook serves (as hookSiteAt
// says), for cpuid with a table of answers, for xgetbv with XCR0 to give.
func (r *Recorder) trapsPatched(t *thread, k hook.Trap) bool {
	if !r.filtered || t.ownFilter || t.i386 || t.pt.tracer != 0 || t.proc.mem == nil {
		return false
	}
	switch k.Nr {
	case hook.NrCpuid:
		return len(r.cpuidAnswers) > 0
	case hook.NrXgetbv:
		return r.xcr0 != 0
	}
	return true
}

// inWindow says whether a thread of t's address space other than t stands
// inside window w (past its first instruction), where the patch would
// leave it in the middle of the jump. A thread in the kernel (in a system
// call, whose instruction no window holds) stands outside.
func (r *Recorder) inWindow(t *thread, w patch.Window) bool {
	for _, u := range r.threads {
		if u == t || u.proc.code != t.proc.code || u.state == gone {
			continue
		}
		var regs trace.Regs
		if ptrace.GetRegs(u.tid, &regs) != nil {
			continue
		}
		if pc := regs[trace.RIP]; pc > w.Start && pc < w.End() {
			return true
		}
	}
	return false
}

// writeTrap adds the stub and the jump of the window w of t's process,
// for instructions of kind k, to batch, which the caller flushes; a zero
// Stub when no stub page could be had.
func (r *Recorder) writeTrap(t *thread, k hook.Trap, w patch.Window, batch *hook.SiteWrites) (trace.HookPatch, error) {
	p := t.proc
	stub, fresh, err := r.stubFor(t, w.Start)
	if err != nil || stub == 0 {
		return trace.HookPatch{}, err
	}
	if err := batch.AddTrap(k, w, stub); err != nil {
		return trace.HookPatch{}, err
	}
	site := w.Start + uint64(w.Trap)
	p.hooks.sites[site] = true
	if p.hooks.traps == nil {
		p.hooks.traps = map[uint64]bool{}
	}
	p.hooks.traps[stub] = true
	return trace.HookPatch{Site: site, Stub: stub, Page: fresh, Nr: k.Nr}, nil
}

// trapOf says which patchable instruction trapped event e is (not rdtscp:
// three bytes, and an answer the hook does not give).
func trapOf(e *trace.Event) (hook.Trap, bool) {
	switch {
	case e.Kind == trace.KindCpuid && e.Flags&trace.FlagXgetbv == 0:
		return hook.TrapCpuid, true
	case e.Kind == trace.KindRdtsc && e.Flags&trace.FlagRdtscp == 0:
		return hook.TrapRdtsc, true
	}
	return hook.Trap{}, false
}
