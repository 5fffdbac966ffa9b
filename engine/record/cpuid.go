package record

import (
	"bytes"
	"fmt"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// CPUID bits hidden from the program so that it uses something recordable:
// RDRAND and RDSEED (random numbers from an instruction that cannot be
// trapped) and HLE/RTM (transactions that abort nondeterministically).
const (
	cpuid1EcxRdrand = 1 << 30
	cpuid7EbxHLE    = 1 << 4
	cpuid7EbxRTM    = 1 << 11
	cpuid7EbxRdseed = 1 << 18
)

// cpuidKey is a leaf and subleaf of cpuid.
type cpuidKey struct{ leaf, sub uint32 }

// cpuid answers a trapped cpuid, masked, as Event.Value (eax, ebx) and
// Event.Aux (ecx, edx). Answers are kept: in a VM each cpuid of ours is an
// exit to the hypervisor (~9 µs here), and a program's loader asks ~70 of
// them at every exec. The few fields that name the CPU the question ran on
// (APIC ids) keep the first one's: the recording runs on one CPU anyway.
func (r *Recorder) cpuid(leaf, sub uint32) (value, aux uint64) {
	k := cpuidKey{leaf, sub}
	if v, ok := r.cpuids[k]; ok {
		return v[0], v[1]
	}
	a, b, c, d := cpuid(leaf, sub)
	switch {
	case leaf == 1:
		c &^= cpuid1EcxRdrand
	case leaf == 7 && sub == 0:
		b &^= cpuid7EbxHLE | cpuid7EbxRTM | cpuid7EbxRdseed
	}
	value, aux = uint64(a)|uint64(b)<<32, uint64(c)|uint64(d)<<32
	if r.cpuids == nil {
		r.cpuids = map[cpuidKey][2]uint64{}
	}
	r.cpuids[k] = [2]uint64{value, aux}
	return value, aux
}

// cpuidSubleaves are the leaves whose answer depends on the subleaf (ecx),
// and how many subleaves of each the table holds (Intel SDM, AMD APM); the
// others answer the same for any.
var cpuidSubleaves = map[uint32]uint32{
	0x4: 16, 0x7: 4, 0xb: 8, 0xd: 64, 0xf: 4, 0x10: 4, 0x12: 8, 0x14: 4, 0x17: 4, 0x18: 4,
	0x1b: 4, 0x1d: 4, 0x1e: 4, 0x1f: 8, 0x20: 4, 0x23: 4, 0x24: 4,
	0x8000001d: 8, 0x80000020: 4, 0x80000026: 4,
}

// cpuidTable asks cpuid every question of its basic and extended leaves
// the hook's table can hold (hook.SetCpuid), masked as trapped ones are:
// patched cpuid sites read their answers there, in replay too (the trace
// header keeps the table). The rest trap.
func (r *Recorder) cpuidTable() []hook.CpuidAnswer {
	var out []hook.CpuidAnswer
	add := func(leaf, sub uint32, any bool) {
		v, a := r.cpuid(leaf, sub)
		out = append(out, hook.CpuidAnswer{Leaf: leaf, Sub: sub, AnySub: any,
			Eax: uint32(v), Ebx: uint32(v >> 32), Ecx: uint32(a), Edx: uint32(a >> 32)})
	}
	for _, base := range []uint32{0, 0x80000000} {
		top, _ := r.cpuid(base, 0)
		last := uint32(top)
		if last < base || last-base > 0x40 {
			continue // no such range, or a CPU that claims too much
		}
		for leaf := base; leaf <= last; leaf++ {
			n, ok := cpuidSubleaves[leaf]
			if !ok {
				add(leaf, 0, true)
				continue
			}
			for sub := uint32(0); sub < n; sub++ {
				add(leaf, sub, false)
			}
		}
	}
	return out[:min(len(out), hook.CpuidMax)]
}

// patchCpuid patches the cpuid t trapped at (rip), with the code around it
// (a patch.Window), into a jump to a stub that asks the hook's table, and
// lists the patch in e, the trap's event, for replay to make there. regs
// are t's registers after the cpuid: a thread standing inside the window
// goes on at the same instruction in the stub. Not in the hook's code or a
// stub, nor where a thread of the address space stands inside the window.
func (r *Recorder) patchCpuid(t *thread, e *trace.Event, rip uint64, regs *trace.Regs) error {
	p := t.proc
	if len(r.cpuidAnswers) == 0 || t.ownFilter || t.i386 || t.pt.tracer != 0 || p.mem == nil ||
		r.inHook(p, rip) || r.inStub(p, rip) {
		return nil
	}
	w, ok := cpuidWindow(p, rip)
	if !ok || r.inWindow(t, w) {
		return nil
	}
	h, err := r.writeCpuid(t, w)
	if err != nil || h.Stub == 0 {
		return err
	}
	if resume := hook.CpuidResume(w, h.Stub, regs[trace.RIP]); resume != regs[trace.RIP] {
		regs[trace.RIP] = resume
	}
	e.Hooks = append(e.Hooks, h)
	r.learnSite(p, rip, hook.NrCpuid)
	return nil
}

// cpuidWindow finds the window to patch around the cpuid at rip of p.
func cpuidWindow(p *process, rip uint64) (patch.Window, bool) {
	fs := p.code.Files(rip, rip+1)
	if len(fs) != 1 {
		return patch.Window{}, false
	}
	f := fs[0]
	w, ok := f.Image.FindWindow(f.Start, f.Offset, rip, 2)
	if !ok || w.Start < f.Start || w.End() > f.End {
		return patch.Window{}, false
	}
	// The code must be the file's still (nothing patched it over).
	code := make([]byte, len(w.Code))
	if _, err := p.mem.ReadAt(code, w.Start); err != nil || !bytes.Equal(code, w.Code) {
		return patch.Window{}, false
	}
	return w, true
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

// writeCpuid writes the stub and the jump of the cpuid window w of t's
// process; a zero Stub when no stub page could be had.
func (r *Recorder) writeCpuid(t *thread, w patch.Window) (trace.HookPatch, error) {
	p := t.proc
	stub, fresh, err := r.stubFor(t, w.Start)
	if err != nil || stub == 0 {
		return trace.HookPatch{}, err
	}
	code, err := hook.CpuidStub(stub, w)
	if err != nil {
		return trace.HookPatch{}, err
	}
	jmp, err := hook.CpuidJump(w, stub)
	if err != nil {
		return trace.HookPatch{}, err
	}
	if _, err := p.mem.WriteAt(code, stub); err != nil {
		return trace.HookPatch{}, fmt.Errorf("cpuid stub: %w", err)
	}
	if _, err := p.mem.WriteAt(jmp, w.Start); err != nil {
		return trace.HookPatch{}, fmt.Errorf("cpuid site: %w", err)
	}
	p.hooks.sites[w.Start+uint64(w.Trap)] = true
	return trace.HookPatch{Site: w.Start + uint64(w.Trap), Stub: stub, Page: fresh, Nr: hook.NrCpuid}, nil
}
