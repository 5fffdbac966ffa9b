package record

import (
	"slices"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Known sites: a site the hook served in one process is patched at once
// wherever a later process maps the same code, at its exec or its mmap,
// so that the loader's and libc's first calls in each child of a shell
// need no stop (Event.Hooks, which replay applies at the same events).

// knownSites are the system call sites the hook served, by the file that
// holds them (its Image: a stored file's, or an exec'd one's by device,
// inode, size and time) and their offset in it, with the call's number:
// where a later process maps the file, they are patched at once, so that
// a program's first calls (the loader's, libc's start) need no stop
// either.
type knownSites map[*patch.Image]map[uint64]uint32

// learnSite notes the site patched in p, its call's rip (or a cpuid's
// address) and number (hook.NrCpuid), if it lies in a file.
func (r *Recorder) learnSite(p *process, rip uint64, nr uint32) {
	fs := p.code.Files(rip, rip+1)
	if len(fs) != 1 {
		return
	}
	f := fs[0]
	if r.known == nil {
		r.known = knownSites{}
	}
	if r.known[f.Image] == nil {
		r.known[f.Image] = map[uint64]uint32{}
	}
	off := rip - f.Start + f.Offset
	if _, ok := r.known[f.Image][off]; !ok {
		r.known[f.Image][off] = nr
		r.knownGen++
	}
}

// patchLearned patches in the process of t, stopped at a system call's
// exit, the sites learned since it last did: a fork's child learns those
// of the code it shares with its parent, which goes on running it and
// would otherwise stop at each of its children's first calls there (the
// set_robust_list of glibc's fork, in the child). Only with t the process's
// one thread, and no patch over t's rip: nothing else can stand inside a
// patch, unlike at an exec or an mmap, where none of the code has run.
func (r *Recorder) patchLearned(t *thread, e *trace.Event) error {
	p := t.proc
	if p.knownGen == r.knownGen || p.hooks == nil || p.mem == nil || !r.filtered || t.split {
		return nil
	}
	// Once per generation, patched or not: a process of several threads
	// would otherwise count them at each of its calls.
	p.knownGen = r.knownGen
	for _, u := range r.threads {
		if u != t && u.proc == p && u.state != gone {
			return nil
		}
	}
	return r.patchKnown(t, e, 0, ^uint64(0), t.entry[trace.RIP])
}

// patchKnown patches the known sites of the files mapped in [lo, hi) of
// t's process, which the program has not run yet (an exec's, an mmap's), or
// not where a patch would cover avoid (t's rip), and lists them in e for
// replay.
func (r *Recorder) patchKnown(t *thread, e *trace.Event, lo, hi, avoid uint64) error {
	if !r.filtered {
		return nil // no hook page for the stubs to call (--no-buffer)
	}
	if t.ownFilter || t.i386 || t.pt.tracer != 0 {
		// Under a filter of the program's own, which would judge the
		// hook's calls, or traced by a program of the recording (gdb,
		// strace), whose syscall stops must show the program's own
		// sites, sites are not patched (hookSiteAt) either.
		return nil
	}
	p := t.proc
	key, planned := r.planKey(t, lo, hi, avoid)
	if pl := r.plans[key]; planned && pl != nil {
		if done, err := r.applyPlan(t, e, pl); done || err != nil {
			return err
		}
	}
	// The sites' code is read at once, their stubs and jumps written
	// together (hook.SiteWrites): an exec maps dozens of sites, which took
	// three system calls each.
	writes := hook.NewSiteWrites(p.mem)
	var plan *patchPlan
	if planned {
		plan = &patchPlan{}
		writes.LogTo(plan.logWrite)
	}
	first := len(e.Hooks)
	for _, f := range p.code.Files(lo, hi) {
		r.loadKnown(f.Image)
		sites := r.known[f.Image]
		offs := make([]uint64, 0, len(sites))
		for off := range sites {
			if off >= f.Offset && off-f.Offset < f.End-f.Start {
				offs = append(offs, off)
			}
		}
		slices.Sort(offs)
		codes := r.readSites(p, f.Start-f.Offset, offs, sites)
		prereadWindows(writes.Code(), f, offs, sites)
		for _, off := range offs {
			rip := f.Start + off - f.Offset
			if p.hooks != nil && p.hooks.sites[rip] {
				continue
			}
			if k, ok := hook.TrapOf(sites[off]); ok {
				// A cpuid the scan trapped (no CPUID faulting) is put
				// back for the window, which asks the hook instead; the
				// code is read and written through the batch.
				code := writes.Code()
				orig, untrapped := p.code.Untrap(code, rip)
				w, ok := p.code.TrapWindow(code, rip, k.Len(), k.NeedsPrev())
				if !ok || !k.Patchable(w) || !r.trapsPatched(t, k) || avoid > w.Start && avoid < w.Start+uint64(w.Len) || p.code.Trapped(w.Start, w.End()) {
					if untrapped {
						r.warnPatch(p.code.Retrap(code, orig))
						plan = nil // (its warning, once)
					}
					continue
				}
				h, err := r.writeTrap(t, k, w, writes)
				if err != nil || h.Stub == 0 {
					if ferr := writes.Flush(); err == nil {
						err = ferr
					}
					return err
				}
				e.Hooks = append(e.Hooks, h)
				if plan != nil && untrapped {
					plan.untrapped = append(plan.untrapped, rip)
				}
				continue
			}
			code := codes[off]
			if code == nil || writes.Covers(rip) {
				code = make([]byte, hook.SiteCode)
				if _, err := writes.Code().ReadAt(code, rip-hook.SiteBefore); err != nil {
					continue
				}
			}
			site, ok := hook.FindSite(code, rip, sites[off])
			if !ok || site.Covers(avoid) || r.inSiteCall(t, site) {
				continue
			}
			if ok, err := r.addSitePatch(t, site, writes, e); !ok {
				return err
			}
		}
	}
	if err := writes.Flush(); err != nil {
		return err
	}
	if plan != nil {
		r.keepPlan(key, plan, p, e.Hooks[first:])
	}
	return nil
}

// patchVDSOSites patches the system calls of the vDSO's stubs (patchVDSO's)
// of t's process, at its execve's exit, to call the hook, and lists them
// in e for replay, as patchKnown does known sites: they lie in no file,
// and each process's first clock read at each (a compiler's gettimeofday,
// a Go program's clock_gettime) otherwise stopped to patch it.
func (r *Recorder) patchVDSOSites(t *thread, e *trace.Event) error {
	p := t.proc
	if len(p.vdsoSites) == 0 || p.hooks == nil || t.ownFilter || t.i386 || t.pt.tracer != 0 {
		return nil
	}
	// The stubs' code is the recorder's own, written at the exec stop:
	// each a site of the shape mov $nr,%eax; syscall (replay finds it so).
	writes := hook.NewSiteWrites(p.mem)
	for _, s := range p.vdsoSites {
		if !hook.Bufferable(uint64(s.Nr)) || p.hooks.sites[s.RIP] {
			continue
		}
		site := hook.Site{Shape: hook.ShapeMov, RIP: s.RIP, Nr: s.Nr}
		if ok, err := r.addSitePatch(t, site, writes, e); !ok {
			return err
		}
	}
	return writes.Flush()
}

// addSitePatch adds to writes the patch of site, in t's process, to call
// a stub (found or made by stubFor), and lists it in e for replay. When no
// stub can be had, it flushes what writes holds and returns false, with
// the error if any: the caller stops patching.
func (r *Recorder) addSitePatch(t *thread, site hook.Site, writes *hook.SiteWrites, e *trace.Event) (bool, error) {
	stub, fresh, err := r.stubFor(t, site.RIP)
	if err != nil || stub == 0 {
		if ferr := writes.Flush(); err == nil {
			err = ferr
		}
		return false, err
	}
	if err := writes.Add(site, stub); err != nil {
		return false, err
	}
	t.proc.hooks.sites[site.RIP] = true
	e.Hooks = append(e.Hooks, trace.HookPatch{Site: site.RIP, Stub: stub, Page: fresh, Nr: site.Nr})
	return true, nil
}

// windowReach is how far around its instruction a trap's window may
// reach (patch.FindWindow), and maxPreread the most code prereadWindows
// reads at once.
const (
	windowReach = 256
	maxPreread  = 1 << 20
)

// prereadWindows reads at once the code around the known trapping
// instructions at offs of the file mapped as f, for the patcher to find
// their windows in (ptrace.Writes.Preread).
func prereadWindows(code *ptrace.Writes, f patch.FileRegion, offs []uint64, sites map[uint64]uint32) {
	lo, hi := ^uint64(0), uint64(0)
	for _, off := range offs {
		if _, trap := hook.TrapOf(sites[off]); trap {
			rip := f.Start + off - f.Offset
			lo, hi = min(lo, rip), max(hi, rip)
		}
	}
	if hi == 0 {
		return
	}
	lo, hi = max(f.Start, lo-min(lo, windowReach)), min(f.End, hi+windowReach)
	if hi > lo && hi-lo <= maxPreread {
		code.Preread(lo, hi)
	}
}

// readSites reads the code of the known system call sites offs of a file
// mapped at base (the address of its offset 0), by offset; none when it
// cannot be read at once (each site is read alone then).
func (r *Recorder) readSites(p *process, base uint64, offs []uint64, sites map[uint64]uint32) map[uint64][]byte {
	var rips, which []uint64
	for _, off := range offs {
		if _, trap := hook.TrapOf(sites[off]); !trap {
			rips = append(rips, base+off)
			which = append(which, off)
		}
	}
	codes, err := hook.SiteCodes(p.mem, rips)
	if err != nil {
		return nil
	}
	byOff := make(map[uint64][]byte, len(which))
	for i, off := range which {
		byOff[off] = codes[i]
	}
	return byOff
}
