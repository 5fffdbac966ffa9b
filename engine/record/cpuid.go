package record

import (
	"os"
	"slices"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// NoCPUIDFaultingEnv, set to 1, makes the recorder act as on a CPU that
// cannot fault on cpuid (tests, and the recordings such a machine makes,
// checked here).
const NoCPUIDFaultingEnv = "REWIND_RECORD_NO_CPUID_FAULTING"

// cpuidFaultingHere says whether this CPU (its /proc/cpuinfo flags) can
// trap cpuid for the recorder.
func cpuidFaultingHere(flags []string) bool {
	return slices.Contains(flags, "cpuid_fault") && os.Getenv(NoCPUIDFaultingEnv) != "1"
}

// newSpace is a new address space's patched code: with cpuid sites too
// where the CPU cannot fault on cpuid.
func (r *Recorder) newSpace() *patch.Space {
	return &patch.Space{Cpuid: r.cpuidPatched, Xgetbv: r.xgetbv}
}

// emulateXgetbv completes a trapped xgetbv (site, a SIGILL there) with the
// recorder's own, less the register states of the features hidden from
// the program, and logs its answer. An xgetbv of a register this CPU
// lacks (ecx neither 0 nor, where cpuid says it has it, 1) would fault
// the recorder: its site is put back and the program runs it to its fault
// (a SIGSEGV, recorded; replay, which traps the site, stops there). ecx 1
// (XINUSE) answers the recorder's state, not the program's: no library
// asks it.
func (r *Recorder) emulateXgetbv(t *thread, site *patch.Site, regs *trace.Regs) error {
	ecx := uint32(regs[trace.RCX])
	if ecx > 1 || ecx == 1 && !r.xinuse() {
		t.proc.code.Untrap(t.proc.mem, site.Addr)
		return r.resume(t, 0)
	}
	e := &trace.Event{Kind: trace.KindCpuid, Flags: trace.FlagXgetbv, Tid: int32(t.tid), Regs: *regs}
	a, d := machine.XGETBV(ecx)
	e.Value = r.opts.Hide.XCR0(uint64(a) | uint64(d)<<32)
	rip := regs[trace.RIP]
	e.ApplyTrap(regs)
	// xgetbv(0), as cpuid: patched with the code around it to ask the
	// hook from now on, where the code sets ecx to 0 just before.
	if ecx == 0 && r.xcr0 != 0 {
		if err := r.patchTrapped(t, e, hook.TrapXgetbv, rip, regs); err != nil {
			return err
		}
	}
	return r.completeTrapped(t, e, site, regs)
}

// xcr0 is xgetbv(0) as the program sees it, hide's register states
// cleared: what patched xgetbv sites answer (hook.TrapXgetbv); 0 where the
// kernel did not enable XSAVE (OSXSAVE), where xgetbv faults.
func xcr0(hide machine.Hide) uint64 {
	if _, _, c, _ := machine.CPUID(1, 0); c&(1<<27) == 0 {
		return 0
	}
	a, d := machine.XGETBV(0)
	return hide.XCR0(uint64(a) | uint64(d)<<32)
}

// xinuse says whether this CPU answers xgetbv with ecx 1 (cpuid leaf 0xd,
// subleaf 1, eax bit 2).
func (r *Recorder) xinuse() bool {
	a, _, _, _ := machine.CPUID(0xd, 1)
	return a&(1<<2) != 0
}

// emulateCpuid completes a patched cpuid the thread trapped on (site, a
// SIGILL there) with the recorder's own, masked as a faulting one is, and
// logs its answer as a KindCpuid event, as where cpuid faults.
func (r *Recorder) emulateCpuid(t *thread, site *patch.Site, regs *trace.Regs) error {
	e := &trace.Event{Kind: trace.KindCpuid, Tid: int32(t.tid), Regs: *regs}
	e.Value, e.Aux = r.cpuid(uint32(regs[trace.RAX]), uint32(regs[trace.RCX]))
	rip := regs[trace.RIP]
	e.ApplyTrap(regs)
	// As a cpuid that faulted: patched, with the code around it, to ask
	// the hook's table from now on.
	if err := r.patchTrapped(t, e, hook.TrapCpuid, rip, regs); err != nil {
		return err
	}
	return r.completeTrapped(t, e, site, regs)
}

// patchTrapped patches the instruction of kind k the scan trapped at rip
// (patchTrap), the instruction itself put back in place for the window,
// or traps it again where it cannot be patched.
func (r *Recorder) patchTrapped(t *thread, e *trace.Event, k hook.Trap, rip uint64, regs *trace.Regs) error {
	orig, ok := t.proc.code.Untrap(t.proc.mem, rip)
	if !ok {
		return nil
	}
	n := len(e.Hooks)
	if err := r.patchTrap(t, e, k, rip, regs); err != nil {
		return err
	}
	if len(e.Hooks) == n {
		r.warnPatch(t.proc.code.Retrap(t.proc.mem, orig))
	}
	return nil
}

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
	var regs [4]uint32
	regs[0], regs[1], regs[2], regs[3] = machine.CPUID(leaf, sub)
	switch {
	case leaf == 1:
		regs[2] &^= cpuid1EcxRdrand
	case leaf == 7 && sub == 0:
		regs[1] &^= cpuid7EbxHLE | cpuid7EbxRTM | cpuid7EbxRdseed
	}
	r.opts.Hide.Apply(leaf, sub, &regs)
	value, aux = uint64(regs[0])|uint64(regs[1])<<32, uint64(regs[2])|uint64(regs[3])<<32
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
//
// The table is kept in the cache (cpuidtable.go): in a VM each of its
// ~190 questions is an exit to the hypervisor, 2–10 ms of every recording.
func (r *Recorder) cpuidTable() []hook.CpuidAnswer {
	key := cpuidTableKey(r.opts.Hide)
	if tab, ok := loadCpuidTable(key); ok {
		r.learnCpuid(tab)
		return tab
	}
	tab := r.askCpuidTable()
	saveCpuidTable(key, tab)
	return tab
}

// learnCpuid makes tab's answers the recording's (Recorder.cpuid), so that
// a cpuid that traps is answered as the table answers it.
func (r *Recorder) learnCpuid(tab []hook.CpuidAnswer) {
	if r.cpuids == nil {
		r.cpuids = map[cpuidKey][2]uint64{}
	}
	for _, a := range tab {
		r.cpuids[cpuidKey{a.Leaf, a.Sub}] = [2]uint64{uint64(a.Eax) | uint64(a.Ebx)<<32, uint64(a.Ecx) | uint64(a.Edx)<<32}
	}
}

// askCpuidTable asks cpuid the table's questions.
func (r *Recorder) askCpuidTable() []hook.CpuidAnswer {
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
