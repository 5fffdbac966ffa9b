package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/attach"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Recording a process that already runs (rewind record -p). The recorder
// seizes its threads (engine/attach), changes what recording needs in each
// of them and remembers how to undo it, writes the snapshot as the first
// event, then records as it does from an exec. At the end it detaches
// (detach.go) and the process runs on without rewind.

// attached is what the recorder changed in a process it attached to, to be
// put back at the detach.
type attached struct {
	proc *attach.Process
	// affinity is each thread's CPU set before it was bound to rewind's CPU.
	affinity map[int]unix.CPUSet
	// rseq are the rseq areas the recorder unregistered, by tid.
	rseq map[int]trace.Rseq
	// vdso is the vDSO as it was before its functions were patched into
	// system calls, and vdsoAddr where it is.
	vdso     []byte
	vdsoAddr uint64
	// cpuid: CPUID faulting was turned on in every thread.
	cpuid bool
	// tscSigsegv are the threads whose rdtsc the program itself made
	// fault (PR_SET_TSC) before rewind came.
	tscSigsegv map[int]bool
}

// sigIgn is SIG_IGN.
const sigIgn = 1

// ptraceGetRseqConfiguration is PTRACE_GET_RSEQ_CONFIGURATION.
const ptraceGetRseqConfiguration = 0x420f

// rseqFlagUnregister is RSEQ_FLAG_UNREGISTER.
const rseqFlagUnregister = 1

// rseqConfiguration is struct ptrace_rseq_configuration.
type rseqConfiguration struct {
	Addr  uint64
	Len   uint32
	Sig   uint32
	Flags uint32
	_     uint32
}

// attachTo seizes process pid, readies its threads for recording, writes
// the trace header and the snapshot, and registers the threads, parked at
// their stops. It runs on the ptrace thread, bound to cpu.
func (r *Recorder) attachTo(pid, cpu int) error {
	begin := time.Now()
	p, err := attach.SeizeHere(pid)
	if err != nil {
		return err
	}
	r.att = &attached{proc: p, affinity: map[int]unix.CPUSet{}, rseq: map[int]trace.Rseq{}, tscSigsegv: map[int]bool{}}
	r.pid = pid
	fail := func(err error) error {
		r.undoAttach(p.Threads())
		p.Detach()
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
	if err := r.prepareThreads(p.Threads(), cpu); err != nil {
		return fail(err)
	}
	// The snapshot is taken once the rseq areas say "unregistered": that
	// is the memory the recorded run starts from.
	snap, err := p.Snapshot()
	if err != nil {
		return fail(err)
	}
	snap.Rseq = r.att.rseq
	h.Pid, h.CPU, h.Attached, h.CPUIDFaulting = pid, &cpu, true, r.cpuidFaulting
	ignored := ignoredSet(snap.Handlers)
	h.Ignored = &ignored
	h.Rlimits["RLIMIT_STACK"] = stackLimit(snap.Rlimits, h.Rlimits["RLIMIT_STACK"])
	if r.opts.Chaos {
		r.chaos = newChaos(r.opts.Seed)
		h.Chaos, h.ChaosSeed = true, r.chaos.seed
	}
	if r.opts.Trace != nil {
		r.w, err = r.opts.Trace.Start(h)
	} else {
		r.w, err = trace.Create(r.opts.Output, h)
	}
	if err != nil {
		return fail(err)
	}
	r.files = newFileStore(r.w)
	if err := r.writeSnapshot(snap); err != nil {
		r.w.Abort()
		return fail(err)
	}
	root := r.newProcess(pid, 0)
	root.mem = p.Mem()
	if err := r.patchSnapshot(root, snap); err != nil {
		r.w.Abort()
		return fail(err)
	}
	held := p.TakeHeld()
	restarted := p.Restarted()
	for _, st := range snap.Threads {
		t := &thread{tid: st.Tid, proc: root, state: parked, park: parkResume,
			resumeRegs: st.Regs, haveRegs: true, restartNr: restarted[st.Tid]}
		t.tscSigsegv = r.att.tscSigsegv[st.Tid]
		for _, info := range held[st.Tid] {
			t.held = append(t.held, heldSignal{sig: int(binary.LittleEndian.Uint32(info)), info: info})
		}
		r.threads[st.Tid] = t
		r.ready = append(r.ready, t)
	}
	if r.opts.Attached != nil {
		var size uint64
		for _, reg := range snap.Regions {
			if len(reg.Blobs) > 0 {
				size += reg.Size
			}
		}
		r.opts.Attached(AttachInfo{Threads: len(snap.Threads), Regions: len(snap.Regions), Bytes: size, Pause: time.Since(begin)})
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
			if err := stepOut(tid, m.Start, m.End, held); err != nil {
				return err
			}
		}
		p.Hold(held)
	}
	return nil
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
	var set unix.CPUSet
	set.Set(cpu)
	for _, tid := range tids {
		if err := ptrace.SetOptions(tid, ptrace.Options&^ptrace.OptExitKill); err != nil {
			return err
		}
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &old); err == nil {
			r.att.affinity[tid] = old
			if err := unix.SchedSetaffinity(tid, &set); err != nil {
				return fmt.Errorf("thread %d: bind to CPU %d: %w", tid, cpu, err)
			}
		}
		if err := r.unregisterRseq(tid, m); err != nil {
			return err
		}
		r.att.tscSigsegv[tid] = tscMode(tid, m)
		if err := ptrace.TrapInstructions(tid, m, r.cpuidFaulting); err != nil {
			return fmt.Errorf("thread %d: %w", tid, err)
		}
	}
	r.att.cpuid = r.cpuidFaulting
	return nil
}

// unregisterRseq takes the thread's rseq area away from the kernel, which
// would otherwise write into it and move the thread out of critical
// sections behind the recorder's back. glibc then asks the kernel for the
// CPU instead.
func (r *Recorder) unregisterRseq(tid int, m *ptrace.Mem) error {
	var conf rseqConfiguration
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, ptraceGetRseqConfiguration, uintptr(tid), unsafe.Sizeof(conf), uintptr(unsafe.Pointer(&conf)), 0, 0)
	if e != 0 || conf.Addr == 0 {
		return nil // no rseq here (an old kernel, or none registered)
	}
	ret, err := ptrace.InjectSyscall(tid, m, unix.SYS_RSEQ, conf.Addr, uint64(conf.Len), rseqFlagUnregister, uint64(conf.Sig))
	if err != nil {
		return fmt.Errorf("thread %d: unregister its rseq area: %w", tid, err)
	}
	if ret < 0 {
		return fmt.Errorf("thread %d: unregister its rseq area: %w", tid, unix.Errno(-ret))
	}
	r.att.rseq[tid] = trace.Rseq{Addr: conf.Addr, Len: conf.Len, Sig: conf.Sig}
	return nil
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

// writeSnapshot stores the regions' bytes as blobs and logs the snapshot.
func (r *Recorder) writeSnapshot(snap *trace.Snapshot) error {
	for i := range snap.Regions {
		reg := &snap.Regions[i]
		if reg.Path == "[vdso]" {
			r.att.vdso, r.att.vdsoAddr = slices.Clone(reg.Data), reg.Start
		}
		for off := 0; off < len(reg.Data); off += trace.MaxRegionBlob {
			id, err := r.w.AddBlob(reg.Data[off:min(off+trace.MaxRegionBlob, len(reg.Data))])
			if err != nil {
				return fmt.Errorf("snapshot: region %#x-%#x: %w", reg.Start, reg.End(), err)
			}
			reg.Blobs = append(reg.Blobs, id)
		}
		reg.Data = nil
	}
	e, err := trace.EncodeSnapshot(snap)
	if err != nil {
		return err
	}
	return r.log(e)
}

// patchSnapshot patches the running image as an exec's would be: the vDSO's
// functions into system calls and the rdrand and rdseed of executable
// memory. Replay does the same on the rebuilt process.
func (r *Recorder) patchSnapshot(p *process, snap *trace.Snapshot) error {
	p.code = &patch.Space{}
	if r.att.vdsoAddr != 0 {
		unknown, err := patch.PatchVDSO(p.mem, r.att.vdsoAddr)
		if err != nil {
			return fmt.Errorf("snapshot: patch the vDSO: %w", err)
		}
		if len(unknown) > 0 {
			r.warnOnce("vdso unknown functions", "rewind: warning: the vDSO exports functions rewind does not know (%s): they return ENOSYS\n",
				strings.Join(unknown, ", "))
		}
	}
	for _, mp := range patch.RegionMappings(snap.Regions, r.code.Path) {
		r.warnPatch(p.code.Map(p.mem, mp))
	}
	return nil
}
