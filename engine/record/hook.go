package record

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// System call buffering, the recorder's side (engine/hook; docs/design.md,
// §6 "System call buffering").
// Under the filter, a call the hook records itself made at a site of the
// usual shape (mov $nr,%eax; syscall) gets its site patched after it: the
// next calls there go through the hook, which makes them with no stop and
// appends them to its buffer; the recorder turns the buffer into events at
// the next stop of the thread that runs (flushHook). Only one thread runs
// code at a time, so the buffer holds the current thread's calls.

// stubPage is a page of stubs near patched sites (a jump reaches ±2 GiB).
type stubPage struct {
	addr uint64
	used int
}

// hookSpace is what the hook added to an address space: stub pages and
// the sites patched to jump to them.
type hookSpace struct {
	pages []stubPage
	sites map[uint64]bool
	traps map[uint64]bool // the stubs of patched trapping instructions (trapsite.go)
	// full are the 16 MiB regions (address >> 24) with no room for stubs
	// within a jump: a site there is left as it is at once, not after the
	// hundreds of mmaps that found none.
	full map[uint64]bool
}

// clone returns a copy for a forked address space (nil stays nil).
func (h *hookSpace) clone() *hookSpace {
	if h == nil {
		return nil
	}
	return &hookSpace{pages: slices.Clone(h.pages), sites: maps.Clone(h.sites), traps: maps.Clone(h.traps), full: maps.Clone(h.full)}
}

// trapStub says whether pc is in the stub of a patched trapping
// instruction.
func (h *hookSpace) trapStub(pc uint64) bool {
	page := pc &^ (pageSize - 1)
	return h != nil && h.traps[page+(pc-page)/hook.StubLen*hook.StubLen]
}

// startProgram prepares the program an execve of t started, at the
// call's exit (e): rdtsc and cpuid trap, and under the filter the hook
// page is mapped and the sites of the executable and the loader that
// served calls in earlier processes are patched (e.Hooks). At the exit,
// not the exec stop: a call injected there would run as the end of the
// execve.
func (r *Recorder) startProgram(t *thread, e *trace.Event) error {
	if r.filtered {
		// The hook first: its code makes the calls injected next with
		// one stop each (hook.Install).
		if err := r.installHook(t); err != nil {
			return fmt.Errorf("exec: %w", err)
		}
	}
	if err := ptrace.TrapInstructions(t.tid, t.proc.mem, !t.tscTrapped, r.cpuidFaulting); err != nil {
		return fmt.Errorf("trap rdtsc/cpuid: %w", err)
	}
	t.tscTrapped = true
	if !r.filtered {
		return nil
	}
	t.proc.knownGen = r.knownGen
	if err := r.patchKnown(t, e, 0, ^uint64(0), 0); err != nil {
		return err
	}
	return r.patchVDSOSites(t, e)
}

// installHook maps the hook page into the process of t, at the exit of
// its exec, and tells the hook which files it leaves to the recorder.
func (r *Recorder) installHook(t *thread) error {
	mode := hook.ModeRecord
	if t.ownFilter {
		mode = hook.ModeTraced // the program's filter outlives the exec (noteOwnFilter)
	}
	if err := hook.Install(t.tid, t.proc.mem, mode, hook.Image); err != nil {
		return err
	}
	file := func(id fileID) [2]uint64 { return [2]uint64{id.dev, id.ino} }
	if err := hook.SetStreams(t.proc.mem, file(r.out.ids[1]), file(r.out.ids[2]), procDev()); err != nil {
		return err
	}
	if r.xcr0 != 0 {
		if err := hook.SetXCR0(t.proc.mem, r.xcr0); err != nil {
			return err
		}
	}
	if r.cpuidBytes == nil {
		c := hook.EncodeCpuid(r.cpuidAnswers)
		r.cpuidBytes = &c
	}
	if err := r.cpuidBytes.Set(t.proc.mem); err != nil {
		return err
	}
	if t.tscSigsegv {
		if err := hook.MarkTscTrap(t.proc.mem); err != nil {
			return err
		}
	}
	t.proc.runFlags = runFlags{} // a new page
	if err := r.setRunFlags(t.proc); err != nil {
		return err
	}
	if sm := r.shared; sm != nil && sm.hooked {
		// The files the others map shared (publishShared).
		if err := hook.SetSharedMaps(t.proc.mem, sm.hookList(t.proc.pid, nil)); err != nil {
			return err
		}
	}
	return hook.SetStored(t.proc.mem, 0, r.files.hookFiles())
}

// publishStored adds a file just stored, the index-th, to the table of
// stored files of every process's hook page (a process before its first
// exec's end has none: it gets the whole table then).
func (r *Recorder) publishStored(index int, f storedFile) {
	if r.holdStored {
		if len(r.held) == 0 {
			r.heldFrom = index
		}
		r.held = append(r.held, f.key)
		return
	}
	r.publishFiles(index, []hook.StoredFile{f.key})
}

// publishFiles writes files, from the index-th on, into the table of
// every process's hook page.
func (r *Recorder) publishFiles(index int, files []hook.StoredFile) {
	for _, p := range r.procs {
		if p.mem != nil {
			hook.SetStored(p.mem, index, files)
		}
	}
}

// publishHeld publishes the files stored while they were held.
func (r *Recorder) publishHeld() {
	r.holdStored = false
	if len(r.held) > 0 {
		r.publishFiles(r.heldFrom, r.held)
		r.held = r.held[:0]
	}
}

// procDev is the device of procfs, whose files the hook leaves alone.
var procDev = sync.OnceValue(func() uint64 {
	var st unix.Stat_t
	if unix.Stat("/proc/self", &st) != nil {
		return 0
	}
	return st.Dev
})

// hookSiteAt decides, at the entry of t's call c, whether its site is
// patched once the call returns (t.hookSite).
func (r *Recorder) hookSiteAt(t *thread, c *syscalls.Call) {
	t.hookSite = hook.Site{}
	if !r.filtered || t.ownFilter || t.i386 || t.pt.tracer != 0 || t.proc.mem == nil || !hook.Bufferable(uint64(c.Nr)) {
		return
	}
	rip := t.entry[trace.RIP]
	if r.inHook(t.proc, rip) || r.inStub(t.proc, rip) || t.proc.hooks != nil && t.proc.hooks.sites[rip] {
		return
	}
	code := make([]byte, hook.SiteCode)
	if _, err := t.proc.mem.ReadAt(code, rip-hook.SiteBefore); err != nil {
		return
	}
	if site, ok := hook.FindSite(code, rip, uint32(c.Nr)); ok {
		t.hookSite = site
	}
}

// inHook says whether pc is in the hook page's code or in a stub of p
// where the thread runs on the hook's stack, which one thread at a time
// may use, and no signal, preemption or flush may come. A call the hook
// makes traced is made by the stub, on the program's stack: there the
// thread may block, take signals and give the CPU to others.
func (r *Recorder) inHook(p *process, pc uint64) bool {
	if !r.filtered {
		return false
	}
	if pc >= hook.Base && pc < hook.Base+hook.CodeSize {
		return true
	}
	if p.hooks.trapStub(pc) {
		return hook.InTrapStub(p.mem, pc) // on the trap stack
	}
	return r.inStub(p, pc) && !hook.OnProgramStack(pc)
}

// inStub says whether pc is in a page of p's stubs.
func (r *Recorder) inStub(p *process, pc uint64) bool {
	if p.hooks == nil {
		return false
	}
	for _, sp := range p.hooks.pages {
		if pc >= sp.addr && pc < sp.addr+pageSize {
			return true
		}
	}
	return false
}

// inHookNow says whether t, stopped, stands in the hook's code or stubs.
func (r *Recorder) inHookNow(t *thread) bool {
	if !r.filtered {
		return false
	}
	var regs trace.Regs
	return ptrace.GetRegs(t.tid, &regs) == nil && r.inHook(t.proc, regs[trace.RIP])
}

// patchHookSite patches the site of t's call, which has just returned,
// to jump to a new stub, and marks e, the call's event, for replay to do
// the same there.
func (r *Recorder) patchHookSite(t *thread, e *trace.Event) error {
	site := t.hookSite
	t.hookSite = hook.Site{}
	// A call that may block is logged in two events when it did, or when
	// others ran meanwhile: its site is patched at the exit (an execve
	// only if it failed: one that succeeded is another program's memory
	// now). Else a site whose calls always wait that way (a send while
	// the other side runs) would never be patched.
	exit := e.Kind == trace.KindSyscallExit
	failedExec := exit && e.Syscall == unix.SYS_EXECVE && int64(e.ExitRegs[trace.RAX]) < 0
	if site.Shape == 0 || e.Kind != trace.KindSyscall && !exit || t.split && !exit || ptrace.IsRestart(e.ExitRegs[trace.RAX]) ||
		e.Syscall == unix.SYS_EXECVE && !failedExec {
		// (A call the kernel restarts goes back to its syscall
		// instruction, which a ShapeCmp patch covers.)
		return nil
	}
	p := t.proc
	if r.inSiteCall(t, site) || p.hooks != nil && p.hooks.sites[site.RIP] {
		return nil // another time, or another thread's call (while t's waited) patched it
	}
	stub, fresh, err := r.stubFor(t, site.RIP)
	if err != nil || stub == 0 {
		return err
	}
	if err := writeSite(p, site, stub); err != nil {
		return err
	}
	if resume := site.Resume(stub); resume != site.RIP {
		if err := ptrace.SetRIP(t.tid, resume); err != nil {
			return fmt.Errorf("hook site: %w", err)
		}
	}
	p.hooks.sites[site.RIP] = true
	e.Flags |= trace.FlagHookSite
	e.Aux, e.Value = stub, fresh
	r.learnSite(p, site.RIP, site.Nr)
	return nil
}

// writeSite writes site's stub at stub and the jump to it over the site.
func writeSite(p *process, site hook.Site, stub uint64) error {
	w := hook.NewSiteWrites(p.mem)
	if err := w.Add(site, stub); err != nil {
		return err
	}
	return w.Flush()
}

// inSiteCall says whether a thread other than t, of t's address space,
// made its last system call at site and may be in it still: the patch of
// a ShapeCmp site covers the address it returns to. (A call of t itself
// interrupted by a signal whose handler makes the call patching the site
// would return there too; handlers seldom read files.)
func (r *Recorder) inSiteCall(t *thread, site hook.Site) bool {
	if site.Shape != hook.ShapeCmp {
		return false
	}
	for _, u := range r.threads {
		if u != t && u.proc.code == t.proc.code && site.Covers(u.entry[trace.RIP]) {
			return true
		}
	}
	return false
}

// stubFor returns the address of a free stub within a jump of rip, and
// the pages it mapped for it (hook.PackPages; 0 if it used one mapped
// before); 0 when no page could be had.
func (r *Recorder) stubFor(t *thread, rip uint64) (stub, fresh uint64, err error) {
	p := t.proc
	if p.hooks == nil {
		p.hooks = &hookSpace{sites: map[uint64]bool{}}
	}
	reach := func(a uint64) bool { d := int64(a - rip); return d > -(1<<31)+pageSize && d < (1<<31)-pageSize }
	for i := range p.hooks.pages {
		sp := &p.hooks.pages[i]
		if sp.used+hook.StubLen <= pageSize && reach(sp.addr) {
			stub = sp.addr + uint64(sp.used)
			sp.used += hook.StubLen
			return stub, 0, nil
		}
	}
	// Below the site, in free address space the kernel would not hand out
	// soon: mmap allocates from the top down. A few pages at once: each
	// mmap is a stop pair. Code too low for that (a program linked at
	// 0x400000, gcc's cc1) gets them as far above as a jump reaches, out of
	// the way of its heap.
	const size = hook.StubPages * pageSize
	base := rip &^ (pageSize - 1)
	if p.hooks.full[base>>24] {
		return 0, 0, nil
	}
	var tries []uint64
	for off := uint64(1 << 28); off < 1<<31-(1<<24); off += 1 << 24 {
		if base > off+lowestStub {
			tries = append(tries, base-off)
		}
	}
	for off := uint64(1<<31 - 1<<25); off >= 1<<28; off -= 1 << 24 {
		tries = append(tries, base+off)
	}
	for _, addr := range tries {
		got, err := hook.MapStubPages(t.tid, p.mem, addr, hook.StubPages)
		if err != nil {
			return 0, 0, fmt.Errorf("map a hook stub page: %w", err)
		}
		if uint64(got) == addr {
			for i := uint64(0); i < hook.StubPages; i++ {
				p.hooks.pages = append(p.hooks.pages, stubPage{addr: addr + i*pageSize})
			}
			p.hooks.pages[len(p.hooks.pages)-hook.StubPages].used = hook.StubLen
			return addr, hook.PackPages(addr, hook.StubPages), nil
		}
		if got >= 0 {
			// Mapped elsewhere (an old kernel ignoring the flag): give it back.
			ptrace.InjectSyscall(t.tid, p.mem, unix.SYS_MUNMAP, uint64(got), size)
		}
	}
	if p.hooks.full == nil {
		p.hooks.full = map[uint64]bool{}
	}
	p.hooks.full[base>>24] = true
	return 0, 0, nil
}

// lowestStub is the lowest address stubFor maps stubs at: above the
// usual vm.mmap_min_addr, and out of the first megabytes where programs
// linked at fixed addresses lie.
const lowestStub = 1 << 24

// flushHook turns the records the hook buffered for t, the running thread
// now stopped, into events, and empties the buffer. Not while t is inside
// the hook, where a record may be half written.
func (r *Recorder) flushHook(t *thread) error { return r.takeRecords(t, false) }

// flushRunning logs the records the hook holds for t, which may still be
// running, when the recording ends: the calls it made since its last stop
// had their effects (a line its write put in a pipe), and are the trace's
// last events. The buffer stays as it is: the hook commits a record
// (CTL_LEN) once it is whole, and the process is not resumed by rewind.
func (r *Recorder) flushRunning(t *thread) error { return r.takeRecords(t, true) }

// takeRecords turns the records in t's hook buffer into events: those the
// thread, stopped, made since it last stopped (emptying the buffer), or,
// at the end, those it committed (running).
func (r *Recorder) takeRecords(t *thread, running bool) error {
	if !r.filtered || t.proc.mem == nil {
		return nil
	}
	// The length first: at most stops the buffer is empty, and one read
	// is all the stop costs.
	var lb [8]byte
	if _, err := t.proc.mem.ReadAt(lb[:], hook.CtlLenAddr); err != nil {
		return nil // no hook page (a process from before its exec)
	}
	n := binary.LittleEndian.Uint64(lb[:])
	if n == 0 {
		return nil
	}
	if !running {
		if err := ptrace.GetRegs(t.tid, &t.peeked); err != nil {
			return nil
		}
		t.havePeek = true
		if r.inHook(t.proc, t.peeked[trace.RIP]) {
			return nil
		}
	}
	if n > hook.BufSize {
		return fmt.Errorf("hook buffer of thread %d: %d bytes, more than it holds", t.tid, n)
	}
	recs := r.logger.buffer(int(n))
	if _, err := t.proc.mem.ReadAt(recs, hook.Buf); err != nil {
		return fmt.Errorf("hook buffer of thread %d: %w", t.tid, err)
	}
	if !running {
		if _, err := t.proc.mem.WriteAt(make([]byte, 8), hook.CtlLenAddr); err != nil {
			return fmt.Errorf("hook buffer of thread %d: %w", t.tid, err)
		}
	}
	// What the recorder decides on is taken here, in order; the events
	// are logged beside the program (bufferlog.go).
	job := logJob{w: r.w, now: r.now, tid: int32(t.tid), recs: recs}
	rec := &r.hookRec
	r.holdStored = true
	defer func() {
		r.noting = 0
		r.publishHeld()
	}()
	for i, off := 0, 0; off < len(recs); i++ {
		if nr, size, ok := hook.PeekRecord(recs, off); ok && !r.decidesOn(nr) {
			off += size
			continue
		}
		r.noting = i
		size, err := hook.ParseRecord(recs, off, rec)
		if err != nil {
			return fmt.Errorf("thread %d: %w", t.tid, err)
		}
		off += size
		// What the recorder notes of a call it sees (logExit) that
		// matters for these: the descriptors of the standard streams.
		r.forgetStreams(int(rec.Nr))
		var m *trace.MapFile
		switch {
		case rec.Nr != unix.SYS_MMAP || rec.File == 0:
		case rec.File == hook.FileNew:
			m, err = r.files.storeNew(&rec.New, rec.Args[5], rec.Args[1])
		default:
			m, err = r.files.mapFile(rec.File-1, rec.Args[5], rec.Args[1])
		}
		if err != nil {
			return fmt.Errorf("thread %d: %w", t.tid, err)
		}
		if m != nil {
			job.maps = append(job.maps, make([]*trace.MapFile, i+1-len(job.maps))...)
			job.maps[i] = m
		}
		if rec.Nr == unix.SYS_SET_ROBUST_LIST && rec.Ret == 0 {
			t.robust = rec.Args[0] // as logExit notes it
		}
		if isMemoryCall(int(rec.Nr)) {
			// Nothing the hook records changes code, but a mapping
			// or an unmapping may drop patched sites.
			r.warnPatch(t.proc.code.AfterSyscall(t.proc.mem, int(rec.Nr), rec.Args, uint64(rec.Ret), nil))
		}
	}
	if len(recs) >= asyncFlush || r.logger.busy() {
		return r.sendLog(job)
	}
	// Few, with the logger idle: at once, as waking it costs more.
	err := job.log(rec, &r.hookEvent)
	r.logger.recycle(recs)
	return err
}

// decidesOn says whether the recorder takes anything from a buffered call
// nr at the stop that flushes it (takeRecords), besides its event: a
// thread's robust list, mappings, and the standard streams' descriptors
// while it knows them (a loop of close calls forgets them once).
func (r *Recorder) decidesOn(nr uint64) bool {
	return nr == unix.SYS_SET_ROBUST_LIST || isMemoryCall(int(nr)) || r.out.fds != nil && forgetsStreams(int(nr))
}

// bufferedEvent makes e the event of a call the hook recorded: the
// registers replay sees when the hook makes the call traced there. e's
// memory slices are reused.
func bufferedEvent(tid int32, rec *hook.Record, e *trace.Event) {
	var regs trace.Regs
	regs[trace.OrigRAX] = rec.Nr
	regs[trace.RAX] = ^uint64(unix.ENOSYS - 1) // -ENOSYS
	for i, a := range argRegs {
		regs[a] = rec.Args[i]
	}
	regs[trace.RIP] = hook.Traced + 2
	exit := regs
	exit[trace.RAX] = uint64(rec.Ret)
	*e = trace.Event{Kind: trace.KindSyscall, Flags: trace.FlagBuffered, Tid: tid, Syscall: int32(rec.Nr), Regs: regs, ExitRegs: exit, Hash: rec.Hash,
		Mem: e.Mem[:0], In: e.In[:0]}
	for _, o := range rec.Outputs {
		e.Mem = append(e.Mem, trace.Mem{Addr: o.Addr, Data: o.Data})
	}
	for _, in := range rec.Inputs {
		e.In = append(e.In, trace.Mem{Addr: in.Addr, Data: in.Data})
	}
	if rec.Std != 0 && len(e.In) == 1 {
		// A write to a standard stream: its bytes, which replay shows, as
		// a traced one's (captureWrite); the first ones for the listing.
		e.Data = e.In[0].Data
		e.In[0].Data = e.Data[:min(len(e.Data), 32)]
		e.Flags |= trace.FlagStdout
		if rec.Std == 2 {
			e.Flags ^= trace.FlagStdout | trace.FlagStderr
		}
	}
}

// bufferedRdtsc makes e the event of an rdtsc the hook read at a patched
// site: where (the site's address, the record's argument) and the value,
// which replay gives the hook back (or, one at a time, answers as a trap of
// the stub's own rdtsc).
func bufferedRdtsc(tid int32, rec *hook.Record, e *trace.Event) {
	*e = trace.Event{Kind: trace.KindRdtsc, Flags: trace.FlagBuffered, Tid: tid, Value: uint64(rec.Ret), Mem: e.Mem[:0], In: e.In[:0]}
	e.Regs[trace.RIP] = rec.Args[0]
}

// hookCallEntry lets a call the hook makes through its untraced
// instruction go on unseen when a thread resumed with PTRACE_SYSCALL (under
// a filter of the program's own, or for its first stop) stops at its
// entry: the hook records it in its buffer, or made it for itself. The
// registers of any other call are kept for onSyscallEntry (peeked).
func (r *Recorder) hookCallEntry(t *thread) (bool, error) {
	if !r.filtered {
		return false, nil
	}
	if !t.havePeek {
		if err := ptrace.GetRegs(t.tid, &t.peeked); err != nil {
			return false, err
		}
	}
	if t.peeked[trace.RIP] != hook.UntracedIP {
		t.havePeek = true
		return false, nil
	}
	t.seenEntry = false
	return true, ptrace.Cont(t.tid, 0)
}
