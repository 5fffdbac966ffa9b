package record

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Patch plans. Each child of a shell or a make maps the same loader and
// libc at the same addresses (the recording runs without address space
// randomization), and patchKnown patched their known sites anew each
// time: read the code around ~120 sites in the child, find each site and
// window, allocate and build its stub, read the bytes between the writes,
// write. That was 0.6-0.8 ms of the recorder's ~1.3 ms at each exec of sh,
// for the same writes every time. What patchKnown did at a fresh mapping
// is kept as a plan: the stub pages it mapped, the writes it made, the
// patches it listed; where the same files are mapped at the same places,
// with the same known sites, trapped instructions and stub pages, by a
// process of one thread, the plan is done again without reading anything.
// The trace is the same either way: the same Event.Hooks.

// maxPlans bounds the plans a recording keeps (each a few tens of KB of
// writes): a build runs a few programs many times, not thousands once.
const maxPlans = 256

// patchPlan is what patchKnown did at one fresh mapping.
type patchPlan struct {
	writes    []planWrite
	hooks     []trace.HookPatch
	untrapped []uint64   // trapped sites put back for their windows' patches
	pages     []stubPage // the process's stub pages after
	full      map[uint64]bool
}

// planWrite is a write a plan makes.
type planWrite struct {
	addr uint64
	data []byte
}

// logWrite keeps a write patchKnown made (ptrace.Writes.Log).
func (pl *patchPlan) logWrite(addr uint64, data []byte) {
	pl.writes = append(pl.writes, planWrite{addr, slices.Clone(data)})
}

// planKey names what patchKnown's work on [lo, hi) of t's process depends
// on; false when a plan may not serve there: another thread of the
// process could stand in a site or a window, a patch must avoid t's rip,
// the code has sites patched already, or a file mapped there has no
// identity (then its known sites are not kept either).
func (r *Recorder) planKey(t *thread, lo, hi, avoid uint64) (string, bool) {
	p := t.proc
	if avoid != 0 || p.code == nil || p.mem == nil {
		return "", false
	}
	if r.othersInSpace(t, true) {
		return "", false
	}
	var b []byte
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	files := p.code.Files(lo, hi)
	if len(files) == 0 {
		return "", false
	}
	for _, f := range files {
		k, ok := r.code.keys[f.Image]
		if !ok {
			return "", false
		}
		r.loadKnown(f.Image)
		for _, v := range []uint64{k.Dev, k.Ino, uint64(k.Size), uint64(k.Mtime), uint64(k.Ctime), f.Start, f.End, f.Offset, uint64(len(r.known[f.Image]))} {
			u64(v)
		}
	}
	b = append(b, 's')
	p.code.SitesIn(lo, hi, func(addr uint64, op patch.Op) { u64(addr); b = append(b, byte(op)) })
	if h := p.hooks; h != nil {
		for site := range h.sites {
			if site >= lo && site < hi {
				return "", false
			}
		}
		b = append(b, 'p')
		for _, sp := range h.pages {
			u64(sp.addr)
			u64(uint64(sp.used))
		}
		b = append(b, 'f')
		for _, k := range slices.Sorted(maps.Keys(h.full)) {
			u64(k)
		}
	}
	for _, k := range []hook.Trap{hook.TrapCpuid, hook.TrapRdtsc} {
		b = append(b, boolByte(r.trapsPatched(t, k)))
	}
	return string(b), true
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// keepPlan keeps what patchKnown just did in p, listed as hooks, under
// key.
func (r *Recorder) keepPlan(key string, pl *patchPlan, p *process, hooks []trace.HookPatch) {
	pl.hooks = slices.Clone(hooks)
	if p.hooks != nil {
		pl.pages, pl.full = slices.Clone(p.hooks.pages), maps.Clone(p.hooks.full)
	}
	if r.plans == nil {
		r.plans = map[string]*patchPlan{}
	}
	if len(r.plans) < maxPlans {
		r.plans[key] = pl
	}
}

// applyPlan does plan pl in t's process, listing its patches in e. done is
// false, with nothing changed, when a stub page cannot be mapped where the
// plan has it (this process has something there): patchKnown then works
// as without a plan.
func (r *Recorder) applyPlan(t *thread, e *trace.Event, pl *patchPlan) (done bool, err error) {
	p := t.proc
	var mapped []uint64
	for _, h := range pl.hooks {
		if h.Page == 0 {
			continue
		}
		addr, n := hook.PagesOf(h.Page)
		size := uint64(n) * pageSize
		got, err := hook.MapStubPages(t.tid, p.mem, addr, n)
		if err != nil {
			return true, fmt.Errorf("map a hook stub page: %w", err)
		}
		if uint64(got) != addr {
			if got >= 0 {
				mapped = append(mapped, uint64(got), size)
			}
			for i := 0; i < len(mapped); i += 2 {
				if _, err := ptrace.InjectSyscall(t.tid, p.mem, unix.SYS_MUNMAP, mapped[i], mapped[i+1]); err != nil {
					return true, fmt.Errorf("unmap a hook stub page: %w", err)
				}
			}
			return false, nil
		}
		mapped = append(mapped, addr, size)
	}
	for _, w := range pl.writes {
		if _, err := p.mem.WriteAt(w.data, w.addr); err != nil {
			return true, fmt.Errorf("hook site: %w", err)
		}
	}
	if p.hooks == nil {
		p.hooks = &hookSpace{sites: map[uint64]bool{}}
	}
	p.hooks.pages, p.hooks.full = slices.Clone(pl.pages), maps.Clone(pl.full)
	for _, h := range pl.hooks {
		p.hooks.sites[h.Site] = true
		if _, trap := hook.TrapOf(h.Nr); trap {
			if p.hooks.traps == nil {
				p.hooks.traps = map[uint64]bool{}
			}
			p.hooks.traps[h.Stub] = true
		}
	}
	for _, addr := range pl.untrapped {
		p.code.Forget(addr)
	}
	e.Hooks = append(e.Hooks, pl.hooks...)
	r.plansUsed++
	return true, nil
}
