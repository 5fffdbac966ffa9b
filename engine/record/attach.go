package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/attach"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Recording a process that already runs (rewind record -p). The recorder
// seizes its threads (engine/attach), changes what recording needs in each
// of them and remembers how to undo it, writes the snapshot as the first
// event, then records as it does from an exec. At the end it detaches
// (detach.go) and the process runs on without rewind.

// attached is a recording of a process rewind attached to.
type attached struct {
	proc *attach.Process
	// changes are what the recorder changed in the processes, to put
	// back at the detach. Their code is kept by process (process.vdso and
	// process.code) and gathered by (*Recorder).changes.
	changes attach.Changes
	// guard puts the changes back if rewind dies (attach.StartGuard).
	guard *attach.Guard
	// kept is how many bytes of memory the snapshot stored.
	kept uint64
}

// rseqFlagUnregister is RSEQ_FLAG_UNREGISTER.
const rseqFlagUnregister = 1

// addrNoRandomize is personality(2)'s ADDR_NO_RANDOMIZE.
const addrNoRandomize = 0x0040000

// sigIgn is SIG_IGN.
const sigIgn = 1

// attachTo seizes process pid, readies its threads for recording, writes
// the trace header and the snapshot, and registers the threads, parked at
// their stops. It runs on the ptrace thread, bound to cpu.
func (r *Recorder) attachTo(pid, cpu int) error {
	begin := time.Now()
	p, err := attach.SeizeHere(pid)
	if err != nil {
		return err
	}
	r.att = &attached{proc: p, changes: attach.Changes{Threads: map[int]attach.ThreadSettings{}}}
	r.pid = pid
	fail := func(err error) error {
		c := r.changes()
		held := map[int][][]byte{}
		c.UndoCode(pid, p.Threads(), p.Mem(), held)
		for tid := range c.Threads { // only what was changed
			c.UndoThread(tid, p.Mem())
		}
		p.Hold(held)
		p.Detach()
		if r.att.guard != nil {
			r.att.guard.Release()
		}
		r.att = nil
		return err
	}
	h, err := attachHeader(pid)
	if err != nil {
		return fail(err)
	}
	// Its standard streams are its own, not rewind's: replay --check
	// re-emits what it writes to them.
	r.out = streamsOf(pid)
	r.cpuidFaulting = slices.Contains(h.CPUFlags, "cpuid_fault")
	// Before rdtsc traps: the vDSO's clock functions run it.
	if err := leaveVDSO(p); err != nil {
		return fail(err)
	}
	if r.att.guard, err = attach.StartGuard(os.Stderr); err != nil {
		return fail(err)
	}
	if err := r.prepareThreads(p.Threads(), cpu); err != nil {
		return fail(err)
	}
	// The snapshot is taken once the rseq areas say "unregistered": that
	// is the memory the recorded run starts from.
	snap, err := p.Snapshot()
	if err != nil {
		return fail(err)
	}
	if debug {
		fmt.Fprintf(os.Stderr, "rec: attach: snapshot taken %v after the seize\n", time.Since(begin))
	}
	h.Pid, h.CPU, h.Attached, h.CPUIDFaulting = pid, &cpu, true, r.cpuidFaulting
	ignored := ignoredSet(snap.Handlers)
	h.Ignored = &ignored
	h.Rlimits["RLIMIT_STACK"] = stackLimit(snap.Rlimits, h.Rlimits["RLIMIT_STACK"])
	if r.opts.Chaos {
		r.chaos = newChaos(r.opts.Seed)
		h.Chaos, h.ChaosSeed = true, r.chaos.seed
	}
	if r.w, err = r.startTrace(h); err != nil {
		return fail(err)
	}
	r.files = newFileStore(r.w)
	root := r.newProcess(pid, 0)
	root.mem = p.Mem()
	if err := r.sharedRegions(root, snap); err != nil {
		r.w.Abort()
		return fail(err)
	}
	if err := r.writeSnapshot(snap); err != nil {
		r.w.Abort()
		return fail(err)
	}
	if err := r.patchSnapshot(root, snap); err != nil {
		r.w.Abort()
		return fail(err)
	}
	r.guardUpdate()
	held := p.TakeHeld()
	restarted := p.Restarted()
	for _, st := range snap.Threads {
		t := &thread{tid: st.Tid, proc: root, state: parked, park: parkResume,
			resumeRegs: st.Regs, haveRegs: true, restartNr: restarted[st.Tid]}
		t.tscSigsegv = r.att.changes.Threads[st.Tid].TSCSigsegv
		for _, info := range held[st.Tid] {
			t.held = append(t.held, heldSignal{sig: int(binary.LittleEndian.Uint32(info)), info: info})
		}
		r.threads[st.Tid] = t
		root.cpu.ready = append(root.cpu.ready, t)
	}
	if r.opts.Attached != nil {
		r.opts.Attached(AttachInfo{Threads: len(snap.Threads), Regions: len(snap.Regions), Bytes: r.att.kept, Pause: time.Since(begin)})
	}
	return nil
}

// AttachInfo describes the snapshot a recording of a running process
// started from.
type AttachInfo struct {
	Threads, Regions int
	Bytes            uint64        // the memory stored in the trace
	Pause            time.Duration // from the seize to the snapshot written
}

// attachHeader describes the process for the trace header: its executable,
// command line, environment and directory as /proc shows them.
func attachHeader(pid int) (*trace.Header, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil, fmt.Errorf("attach to %d: its executable: %w", pid, err)
	}
	if strings.HasSuffix(exe, " (deleted)") {
		return nil, fmt.Errorf("attach to %d: its executable %s was deleted; replay needs it", pid, exe)
	}
	split := func(name string) []string {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
		b = bytes.TrimSuffix(b, []byte{0})
		if len(b) == 0 {
			return nil
		}
		return strings.Split(string(b), "\x00")
	}
	cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	h := NewHeader(exe, split("cmdline"), split("environ"), cwd, 0)
	return h, nil
}

// leaveVDSO steps every thread stopped inside the vDSO out of it before its
// functions are patched: the patch would change the code under it. The
// signals that stop it meanwhile go with those held at the seize.
func leaveVDSO(p *attach.Process) error {
	maps, err := ptrace.ReadMaps(p.Pid)
	if err != nil {
		return err
	}
	for _, m := range maps {
		if m.Path != "[vdso]" {
			continue
		}
		held := map[int][][]byte{}
		for _, tid := range p.Threads() {
			if err := attach.StepOut(tid, m.Start, m.End, held); err != nil {
				return err
			}
		}
		p.Hold(held)
	}
	return nil
}

// guardUpdate tells the guard what is changed now: after the attach, and
// (guardDirty) after a stop where a process of the tree forked, exec'd,
// ended or got code patched.
func (r *Recorder) guardUpdate() {
	r.guardDirty = false
	if r.att == nil || r.att.guard == nil {
		return
	}
	if err := r.att.guard.Update(r.changes()); err != nil {
		r.warnOnce("guard", "rewind: warning: %v: if rewind dies, the process keeps what recording changed in it\n", err)
	}
}

// changes gathers what the recorder changed, with the code of every live
// process of the tree by address.
func (r *Recorder) changes() *attach.Changes {
	var c attach.Changes
	if r.att != nil {
		c = r.att.changes
	} else {
		c = r.launchChanges() // daemons (daemon.go)
	}
	c.Code, c.Starts = map[int][]attach.Patch{}, map[int]uint64{}
	for pid, p := range r.procs {
		var code []attach.Patch
		if p.vdso != nil {
			code = append(code, *p.vdso)
		}
		if p.code != nil {
			for _, s := range p.code.Sites() {
				code = append(code, attach.Patch{Addr: s.Addr, Orig: s.Orig})
			}
		}
		sort.Slice(code, func(i, j int) bool { return code[i].Addr < code[j].Addr })
		c.Code[pid], c.Starts[pid] = code, attach.StartTime(pid)
	}
	return &c
}

// ignoredSet is the set of signals a process ignores (bit N-1 for N).
func ignoredSet(handlers []trace.SigAction) uint64 {
	var set uint64
	for _, a := range handlers {
		if a.Handler == sigIgn && a.Sig >= 1 && a.Sig <= 64 {
			set |= 1 << (a.Sig - 1)
		}
	}
	return set
}

// stackLimit is the process's RLIMIT_STACK, or def when it is not known.
func stackLimit(lims []trace.Rlimit, def [2]uint64) [2]uint64 {
	for _, l := range lims {
		if l.Resource == unix.RLIMIT_STACK {
			return [2]uint64{l.Cur, l.Max}
		}
	}
	return def
}

// prepareThreads readies each seized thread for recording: the recorder's
// ptrace options, rdtsc (and cpuid) trapping, rewind's CPU, and no rseq
// area, noting how to undo each.
func (r *Recorder) prepareThreads(tids []int, cpu int) error {
	m := r.att.proc.Mem()
	c := &r.att.changes
	unix.SchedGetaffinity(r.pid, &c.Affinity)
	c.Personality = personality(r.pid, r.pid)
	c.CPUID = r.cpuidFaulting
	var set unix.CPUSet
	set.Set(cpu)
	for _, tid := range tids {
		if err := ptrace.SetOptions(tid, ptrace.Options&^ptrace.OptExitKill); err != nil {
			return err
		}
		// Each change is noted as soon as it is made: a failure later
		// undoes only what was done.
		var ts attach.ThreadSettings
		note := func() { c.Threads[tid] = ts }
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &old); err == nil {
			if err := unix.SchedSetaffinity(tid, &set); err != nil {
				return fmt.Errorf("thread %d: bind to CPU %d: %w", tid, cpu, err)
			}
			ts.Affinity = &old
			note()
		}
		// What it execs from now on is laid out without ASLR, as replay
		// lays it out.
		if ret, err := ptrace.InjectSyscall(tid, m, unix.SYS_PERSONALITY, personality(r.pid, tid)|addrNoRandomize); err != nil || ret < 0 {
			return fmt.Errorf("thread %d: set ADDR_NO_RANDOMIZE: %v %d", tid, err, ret)
		}
		ts.Personality = true
		note()
		rs, err := unregisterRseq(tid, m)
		if err != nil {
			return err
		}
		ts.Rseq = rs
		note()
		ts.TSCSigsegv = tscMode(tid, m)
		if err := ptrace.TrapInstructions(tid, m, true, r.cpuidFaulting); err != nil {
			return fmt.Errorf("thread %d: %w", tid, err)
		}
		ts.Trapped = true
		note()
		r.guardUpdate()
	}
	return nil
}

// personality reads a thread's personality from /proc.
func personality(pid, tid int) uint64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/personality", pid, tid))
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 64)
	return n
}

// unregisterRseq takes the thread's rseq area away from the kernel, which
// would otherwise write into it and move the thread out of critical
// sections behind the recorder's back. glibc then asks the kernel for the
// CPU instead. It returns the area, nil when there was none.
func unregisterRseq(tid int, m *ptrace.Mem) (*ptrace.RseqConfig, error) {
	conf, err := ptrace.GetRseqConfig(tid)
	if err != nil || conf.Addr == 0 {
		return nil, nil // no rseq here (an old kernel, or none registered)
	}
	ret, err := ptrace.InjectSyscall(tid, m, unix.SYS_RSEQ, conf.Addr, uint64(conf.Len), rseqFlagUnregister, uint64(conf.Sig))
	if err != nil {
		return nil, fmt.Errorf("thread %d: unregister its rseq area: %w", tid, err)
	}
	if ret < 0 {
		return nil, fmt.Errorf("thread %d: unregister its rseq area: %w", tid, unix.Errno(-ret))
	}
	return &conf, nil
}

// tscMode reads whether the program itself asked its thread's rdtsc to
// fault (PR_GET_TSC), before rewind set it.
func tscMode(tid int, m *ptrace.Mem) bool {
	sigsegv := false
	ptrace.WithScratch(tid, m, 4, func(addr uint64) error {
		ret, err := ptrace.InjectSyscall(tid, m, unix.SYS_PRCTL, unix.PR_GET_TSC, addr)
		if err != nil || ret != 0 {
			return err
		}
		var b [4]byte
		if _, err := m.ReadAt(b[:], addr); err != nil {
			return err
		}
		sigsegv = binary.LittleEndian.Uint32(b[:]) == unix.PR_TSC_SIGSEGV
		return nil
	})
	return sigsegv
}

// sharedRegions names the object of each shared region of the snapshot, as
// the shared memory tracker (shared.go) will follow it from now on: what
// another process writes into it is logged like after any shared mmap.
func (r *Recorder) sharedRegions(p *process, snap *trace.Snapshot) error {
	sm := r.sharedMem()
	if err := sm.rescan(sharedProc{pid: p.pid, mem: p.mem}, nil); err != nil {
		return fmt.Errorf("snapshot: shared memory: %w", err)
	}
	for i := range snap.Regions {
		reg := &snap.Regions[i]
		m := sm.mappingAt(p.pid, reg.Start)
		if !reg.Shared() || m == nil {
			continue
		}
		m.obj.statSize()
		reg.Object = m.traceMap()
	}
	return nil
}

// writeSnapshot stores the regions' bytes as blobs and logs the snapshot.
// The blobs are written late (trace.Writer.AddLateBlobs): compressing a
// large address space would otherwise keep the process stopped.
func (r *Recorder) writeSnapshot(snap *trace.Snapshot) error {
	var chunks [][]byte
	var owner []int
	for i := range snap.Regions {
		reg := &snap.Regions[i]
		if r.att != nil && !snap.Ring {
			r.att.kept += uint64(len(reg.Data))
		}
		for off := 0; off < len(reg.Data); off += trace.MaxRegionBlob {
			chunks = append(chunks, reg.Data[off:min(off+trace.MaxRegionBlob, len(reg.Data))])
			owner = append(owner, i)
		}
		reg.Data = nil
	}
	ids, err := r.w.AddLateBlobs(chunks)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	for k, id := range ids {
		snap.Regions[owner[k]].Blobs = append(snap.Regions[owner[k]].Blobs, id)
	}
	e, err := trace.EncodeSnapshot(snap)
	if err != nil {
		return err
	}
	if err := r.log(e); err != nil {
		return err
	}
	// To the file at once: a recorder that dies later leaves a trace
	// that starts somewhere.
	if err := r.drainLog(); err != nil {
		return err
	}
	return r.w.Push()
}

// patchSnapshot patches the running image as an exec's would be: the vDSO's
// functions into system calls and the rdrand and rdseed of executable
// memory. Replay does the same on the rebuilt process.
func (r *Recorder) patchSnapshot(p *process, snap *trace.Snapshot) error {
	p.code = &patch.Space{}
	for _, reg := range snap.Regions {
		if reg.Path == "[vdso]" {
			if err := r.patchVDSO(p, reg.Start); err != nil {
				return fmt.Errorf("snapshot: patch the vDSO: %w", err)
			}
		}
	}
	for _, mp := range patch.RegionMappings(snap.Regions, r.code.Path) {
		r.warnPatch(p.code.Map(p.mem, mp))
	}
	return nil
}

// rseqEntry answers, in a process rewind attached to, an rseq
// registration (or the unregistration of one it answered) with success,
// registering nothing: glibc 2.35 and later make a thread's failed
// registration fatal when the thread that created it had one, and a thread
// created just before the attach registers once it first runs, under the
// recorder, which refuses rseq (the kernel's writes of the area differ
// between runs). The area is registered for real at the detach, as the
// ones the attach unregistered are (attach.ThreadSettings.Rseq); replay
// gives the recorded 0. false for any other call.
func (r *Recorder) rseqEntry(t *thread, c *syscalls.Call) (int64, bool) {
	if r.att == nil || c.Nr != unix.SYS_RSEQ || t.i386 {
		return 0, false
	}
	settings, ok := r.att.changes.Threads[t.tid]
	if !ok {
		// Created since the attach: it gets what inherited threads get
		// back at the detach (attach.UndoThread), its CPUs included.
		aff := r.att.changes.Affinity
		settings = attach.ThreadSettings{Personality: true, Trapped: true, Affinity: &aff}
	}
	area := &ptrace.RseqConfig{Addr: c.Args[0], Len: uint32(c.Args[1]), Sig: uint32(c.Args[3])}
	switch {
	case c.Args[2] == 0 && settings.Rseq == nil:
		settings.Rseq = area
	case c.Args[2] == rseqFlagUnregister && settings.Rseq != nil && *settings.Rseq == *area:
		settings.Rseq = nil
	default:
		return 0, false
	}
	if r.att.changes.Threads == nil {
		r.att.changes.Threads = map[int]attach.ThreadSettings{}
	}
	r.att.changes.Threads[t.tid] = settings
	r.guardDirty = true
	return 0, true
}
