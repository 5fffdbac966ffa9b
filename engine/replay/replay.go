// Package replay re-runs a recorded program deterministically from its
// trace: the same executable is started the same way, each thread is resumed
// only when the log says it ran, most system calls are emulated (skipped in
// the kernel with PTRACE_SYSEMU, their results and memory injected), and those
// that shape the address space or the threads are executed again. Every event
// is checked against the live registers; a mismatch is a Divergence.
package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Divergence reports that the replaying process did not do what the
// recording says.
type Divergence struct {
	Event int64
	Tid   int32
	Msg   string
}

func (d *Divergence) Error() string {
	return fmt.Sprintf("divergence at event %d (tid %d): %s", d.Event, d.Tid, d.Msg)
}

// Options configure a replay.
type Options struct {
	// Stdout and Stderr receive what the replaying program writes to its
	// standard output and error, read from its memory. Nil discards.
	Stdout, Stderr io.Writer
	// Process is the recorded pid of the process to debug: only it and its
	// ancestors (up to its birth) run, and the session starts at its birth.
	// 0 runs every process of the tree (what --check does).
	Process int32
	// Tree, when set, is the recording's process tree (trace.Processes),
	// which Open would otherwise read from the whole trace.
	Tree []*trace.Process
}

// lookahead bounds how far the session reads ahead for a thread's next event.
const lookahead = 1 << 14

// Session is a replay in progress. Its methods must be called from one
// goroutine; the ptrace work runs on the session's own locked thread.
type Session struct {
	opts Options
	rd   *trace.Reader
	hdr  *trace.Header
	// hookImage is the hook page's code the trace was recorded with
	// (hook.ImageOf its header's Hook), which replay maps.
	hookImage []byte
	// plans are what patchKnownSites did for a list of patches, to do
	// again where the same code is mapped the same way (patchplan.go);
	// planning collects the one being made.
	plans     map[string]*replayPlan
	planning  *replayPlan
	plansUsed int
	th        *ptrace.Thread
	pid       int         // real pid of main, the process the debugger sees
	mem       *ptrace.Mem // main's memory
	main      *rproc
	procs     map[int32]*rproc // the live processes replay runs, by recorded pid
	// chain is set when replay runs one process (Options.Process): it and
	// its ancestors, first process first. start is the first event of the
	// focused process's life (0 when it is the first process).
	chain   []int32
	start   int64
	threads map[int32]*rthread
	queue   []*trace.Event // events read ahead
	eof     bool
	// fpFull is the length of this CPU's FPU state in a signal frame, once
	// a frame of the recording's was fitted with one (fitFrame): 0 on a
	// CPU of the recording's XSAVE layout.
	fpFull int
	// frameFP is the FPU state of the first signal frame this kernel
	// built in the replay: its software bytes say this CPU's layout, so
	// that a frame of the same one needs no reading (fitFrame).
	frameFP []byte
	// looseFlags are the flags register checks leave out beyond the
	// kernel's (withRecordedFlags): the arithmetic ones on another CPU
	// model than the recording's, whose undefined ones (AF after a
	// logical operation, most after a multiplication) it sets its way,
	// and which only branches read, or pushf.
	looseFlags uint64
	// wideStack says whether preemptions' sums of the stack further up
	// (Event.Hash) are compared: on the recording's CPU model and kernel,
	// where a signal frame up there holds the same FPU state.
	wideStack bool
	next      int64 // index of the next event
	done      bool
	status    unix.WaitStatus

	blobs blobCache
	// provided are the files provideExe wrote for an exec, to remove;
	// removed, those removed (the exec'd image is then the stored one).
	provided []string
	removed  map[string]bool
	// exeBlobs are the executables the recording stored (path to blob),
	// and the other files replay mapped from the trace (noteStored).
	exeBlobs map[string]uint32
	// storedPaths name the stored files by blob (noteStored).
	storedPaths map[uint32]string

	// Debugging state: breakpoints (inserted only while a thread runs),
	// hardware watchpoints, the preemption point being sought, the last
	// user stop.
	bps      map[uint64]byte
	inserted []insertedBP
	// insertedIn is the memory of the process the breakpoints are in.
	insertedIn *ptrace.Mem
	preemptPC  uint64
	// cpuidAt: preemptPC is a cpuid's, which runToCpuid seeks (cpuid.go).
	cpuidAt bool
	tramp   *trampoline
	// counters count arrivals for the rest of a segment of counterThread
	// (counter.go).
	counters      map[uint64]*counter
	counterThread *rthread
	watches       []Watchpoint
	watchGen      int
	stop          *Stop
	// fileMaps are the file mappings rebuilt from the trace (the kernel
	// sees them as anonymous memory or memfds, mapfile.go).
	fileMaps mapNames
	// firstImage is the image the first exec rebuilds from the trace,
	// where the local files are not the recorded ones (execimage.go).
	firstImage *trace.Image
	// fromTrace: FromTraceEnv is set (execimage.go).
	fromTrace bool
	// cpuidFault: replayed processes trap cpuid (trapsCpuid).
	cpuidOnce  sync.Once
	cpuidFault bool
	// vdsoDiffers: this kernel's vDSO is not the recording's (otherVDSO).
	vdsoOnce    sync.Once
	vdsoDiffers bool
	onMapping   func()
	// sh is replay's copy of the memory the program shared (shared.go).
	sh sharedState
	// files are the memfds of stored files that private mappings map
	// (mapfile.go); local says, by blob, whether the file a blob was read
	// from is still at its path, unchanged.
	files storedFiles
	local map[uint32]bool
	// code holds the files code patching reads: executable mappings by blob
	// (read from the trace), the files the kernel mapped at exec by path.
	// The sites belong to each process (rproc.code).
	code patch.Images
	// analyses seeds code's images with kept analyses (analyses.go).
	analyses *patch.AnalysisStore
	// quiet withdraws ptrace.QuietStops when the session closes.
	quiet func()
	// fromSnapshot: see FromSnapshot; snap is the snapshot, until it is
	// rebuilt.
	fromSnapshot bool
	snap         *trace.Snapshot
	// batchTo and batch: the buffered calls given to the hook
	// (buffered.go).
	batchTo  int64
	batch    *batch
	batchBuf batch // what batch points to, reused
	// filtered: the program runs under the recorder's seccomp filter,
	// which lets the hook page's own calls through (buffered.go).
	filtered bool
}

// rthread is one thread of the replaying process.
type rthread struct {
	rec  int32 // tid in the recording
	real int   // tid now
	proc *rproc
	// resumeSig is the signal to deliver when the thread is next resumed
	// (it is stopped at that signal's delivery).
	resumeSig int
	// frame is the event of resumeSig when the recording holds the frame
	// its handler got: the delivery is then a single step, and the frame
	// is written at the handler's entry (signal.go).
	frame *trace.Event
	// injected is a signal already sent for the thread's next event.
	injected int
	// atEntry: parked at the entry of an emulated call whose exit is a later event.
	atEntry bool
	// atFilter: stopped by the filter (PTRACE_EVENT_SECCOMP) at the call
	// that ends a run of buffered calls, which reexec may make again from
	// there; any other use first turns the stop into PTRACE_SYSEMU's
	// (leaveFilterStop). The call runs when resumed unless its number is
	// taken out.
	atFilter bool
	// atExec: parked at the exec stop of a re-executed execve.
	atExec bool
	// atExecExit: with atExec, the image was rebuilt from the trace
	// (execimage.go), which left the thread at the execve's exit already.
	atExecExit bool
	// inKernel: left inside a re-executed call that blocks (a vfork waiting
	// for its child) until its exit event.
	inKernel bool
	dead     bool
	// pending is a stop already obtained (by a single-step) for the event
	// about to be applied.
	pending *ptrace.Status
	// stopEvent and stopPC: where the thread last stopped for the user, so
	// that resuming there steps over a breakpoint instead of reporting it.
	stopEvent int64
	stopPC    uint64
	watchGen  int
	// watchVals: the watched values when t was last resumed, to tell
	// which watchpoint a debug exception that lost its DR6 was for.
	watchVals []uint64
}

// Open starts replaying the trace at path: the program is launched as it was
// recorded and stopped at its exec.
func Open(path string, opts Options) (*Session, error) {
	rd, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	s := &Session{opts: opts, rd: rd, hdr: rd.Header(), threads: map[int32]*rthread{}, procs: map[int32]*rproc{}}
	s.analyses = patch.DefaultAnalysisStore()
	s.fromTrace = os.Getenv(FromTraceEnv) == "1"
	first, err := s.peek(0)
	switch {
	case err != nil:
	case first != nil && first.Kind == trace.KindExec:
		// The recorded program may be a script whose interpreter is here
		// as recorded: not the local files then, but the trace's image.
		progErr := s.checkProgram() // (hashes the program: once)
		s.firstImage, err = s.rebuildFor(first, progErr != nil)
		if err == nil && s.firstImage == nil {
			err = progErr
		}
	default:
		err = s.checkProgram()
	}
	if err == nil {
		err = s.checkCPU()
	}
	if err != nil {
		rd.Close()
		return nil, err
	}
	if h := s.hdr.Hook; h != "" {
		var ok bool
		if s.hookImage, ok = hook.ImageOf(h); !ok {
			rd.Close()
			return nil, fmt.Errorf("replay: %s was recorded with hook page %s, and this rewind has %s: replay it with the rewind that recorded it", path, h, hook.ID())
		}
		if err := hook.Usable(); err != nil {
			rd.Close()
			return nil, fmt.Errorf("replay: %s was recorded with system call buffering, and %w", path, err)
		}
	}
	if opts.Process != 0 {
		if s.chain, err = followChain(path, opts.Tree, opts.Process); err != nil {
			rd.Close()
			return nil, fmt.Errorf("replay: %w", err)
		}
	}
	s.quiet = ptrace.QuietStops()
	s.th = ptrace.NewThread()
	s.th.Do(func() {
		if err = s.launch(); err == nil {
			err = s.toFocus()
		}
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// FromSnapshot reports a recording that starts from a snapshot of a running
// process (rewind record -p, or the ring buffer of --keep-last) rather than
// from an exec: its program's start and main are not in it.
func (s *Session) FromSnapshot() bool { return s.fromSnapshot }

// Header returns the trace header.
func (s *Session) Header() *trace.Header { return s.hdr }

// Footer returns the trace footer, nil for a trace that did not finish.
func (s *Session) Footer() *trace.Footer { return s.rd.Footer() }

// Start is the first event of the debugged process's life: 0, or the event
// after its birth for a process the first one forked (Options.Process).
func (s *Session) Start() int64 { return s.start }

// Next returns the index of the next event to replay.
func (s *Session) Next() int64 { return s.next }

// Done reports whether the recorded program has ended in replay.
func (s *Session) Done() bool { return s.done }

// checkCPU refuses a trace this machine's CPU cannot replay, and notes
// whether it is another model than the recording's (looseFlags) or runs
// another kernel (wideStack).
func (s *Session) checkCPU() error {
	if model, _ := machine.CPUInfo(); s.hdr.CPUModel != "" && model != "" && model != s.hdr.CPUModel {
		s.looseFlags = eflagsStatus
	}
	var u unix.Utsname
	s.wideStack = s.looseFlags == 0 && (s.hdr.Kernel == "" || unix.Uname(&u) == nil && unix.ByteSliceToString(u.Release[:]) == s.hdr.Kernel)
	if missing := machine.MissingFeatures(s.hdr); len(missing) > 0 {
		return fmt.Errorf("replay: this CPU lacks instructions the recorded program may have used (%s): it would fault where the recording ran on", strings.Join(missing, " "))
	}
	return nil
}

// checkProgram refuses to replay a program that changed since recording
// (where the trace has no image of its exec to rebuild it from).
func (s *Session) checkProgram() error {
	f, err := os.Open(s.hdr.Program)
	if err != nil {
		return fmt.Errorf("replay needs the recorded program: %w", err)
	}
	defer f.Close()
	if s.hdr.ExeSHA256 == "" {
		return nil
	}
	sum, err := trace.FileSHA256(f)
	if err != nil {
		return err
	}
	if sum != s.hdr.ExeSHA256 {
		return fmt.Errorf("%s changed since it was recorded (different SHA-256); replay needs the same executable", s.hdr.Program)
	}
	return nil
}

func (s *Session) launch() error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	cpu := -1
	if s.hdr.CPU != nil {
		if cpu, err = ptrace.PickCPU(*s.hdr.CPU); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		ptrace.PinThread(cpu) // stops handed over on one CPU; a refusal only costs speed
	}
	ignored := int64(-1)
	if s.hdr.Ignored != nil {
		ignored = int64(*s.hdr.Ignored)
	}
	spec := &ptrace.Spec{Path: s.hdr.Program, Args: s.hdr.Args, Env: s.hdr.Env, Dir: s.hdr.Cwd,
		StackLimit: s.hdr.Rlimits["RLIMIT_STACK"][0], CPU: cpu, Ignored: ignored, Stdin: null, Stdout: null, Stderr: null,
		Filter: s.hdr.Hook != ""}
	if s.firstImage != nil {
		// The vessel, whose image becomes the recorded one (execimage.go).
		spec.Path, spec.Args = ptrace.VesselPath(), []string{"rewind-vessel"}
		if st, err := os.Stat(spec.Dir); err != nil || !st.IsDir() {
			spec.Dir = "/" // the recorded directory is not here: nothing replayed reads it
		}
	}
	pid, err := ptrace.Start(spec)
	if errors.Is(err, ptrace.ErrNoFilter) {
		// The hook then answers calls only, and replay makes the rest.
		spec.Filter = false
		pid, err = ptrace.Start(spec)
	}
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	s.filtered = spec.Filter
	p := &rproc{real: pid}
	s.pid = pid
	if p.mem, err = ptrace.OpenMem(pid); err != nil {
		return err
	}
	e, err := s.peek(0)
	if err != nil {
		return err
	}
	if e == nil || (e.Kind != trace.KindExec && e.Kind != trace.KindSnapshot) {
		return errors.New("replay: trace does not start with an exec event or a snapshot")
	}
	p.rec = e.Tid
	if e.Kind == trace.KindSnapshot {
		s.fromSnapshot = true
		snap, err := trace.DecodeSnapshot(e)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		s.snap = snap
		p.rec = int32(snap.Pid) // the process, whose first thread may not be its leader
	}
	s.procs[p.rec] = p
	s.setMain(p)
	t := &rthread{rec: e.Tid, real: pid, proc: p, atExec: true}
	s.threads[e.Tid] = t
	if s.firstImage != nil {
		// At once, so that the program is there from the start (its
		// mappings, its symbols) as where the kernel exec'd it.
		return s.rebuildExec(t, e, s.firstImage)
	}
	return nil
}

// Close kills the replaying process and releases the session.
func (s *Session) Close() {
	if s.th != nil {
		s.th.Do(func() {
			s.killLive()
			s.sh.close()
			s.files.close()
			s.analyses.SaveLearned()
		})
		s.th.Close()
	}
	s.rd.Close()
	if s.quiet != nil {
		s.quiet()
	}
	if debugSearch {
		fmt.Fprintf(os.Stderr, "replay: patch plans: %d made, %d used\n", len(s.plans), s.plansUsed)
	}
}

// peek returns the i-th event ahead (0: the next), or nil at the end.
func (s *Session) peek(i int) (*trace.Event, error) {
	for len(s.queue) <= i && !s.eof {
		e, err := s.rd.Next()
		if errors.Is(err, io.EOF) {
			s.eof = true
			break
		}
		if err != nil {
			return nil, err
		}
		s.queue = append(s.queue, e)
	}
	if i < len(s.queue) {
		return s.queue[i], nil
	}
	return nil, nil
}

// peekThread returns the next event of thread tid after the one being
// replayed, or nil if there is none within the lookahead.
func (s *Session) peekThread(tid int32) *trace.Event {
	for i := 1; i < lookahead; i++ {
		e, err := s.peek(i)
		if err != nil || e == nil {
			return nil
		}
		if e.Tid == tid {
			return e
		}
	}
	return nil
}

// Step replays the next event and returns it; io.EOF after the last.
func (s *Session) Step() (*trace.Event, error) {
	var e *trace.Event
	var err error
	s.th.Do(func() {
		e, err = s.step()
		if err == errStopped {
			err = nil
		}
		s.stop = nil
	})
	return e, err
}

// Run replays to the end of the recording.
func (s *Session) Run() error {
	var err error
	// One trip to the ptrace thread for the whole run: a hop per event
	// would cost as much as the event's ptrace stop.
	s.th.Do(func() {
		s.batchUntil(-1)
		defer s.batchUntil(0)
		for {
			if _, err = s.step(); err != nil && err != errStopped {
				return
			}
			s.stop = nil
		}
	})
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// step replays one event on the ptrace thread.
func (s *Session) step() (*trace.Event, error) {
	e, err := s.peek(0)
	if err != nil {
		return nil, err
	}
	if e == nil {
		// The end of the recording, also for a trace cut short (its
		// reader says so where it is opened): what it holds is replayed.
		return nil, io.EOF
	}
	if s.chain != nil && s.threads[e.Tid] == nil {
		// A process this replay does not run (Options.Process). What it
		// read of a shared object is what the object holds, for the
		// processes that do run too (the recorder logs it once: a file
		// that another process mapped first).
		if e.Kind == trace.KindSharedMem && e.Shared != nil {
			if err := s.applySharedMem(nil, e); err != nil {
				return e, fmt.Errorf("replay: event %d (tid %d): %w", s.next, e.Tid, err)
			}
		}
		s.skip(e)
		return e, nil
	}
	if t := s.threads[e.Tid]; t != nil {
		ran, err := s.runBuffered(t)
		if err != nil {
			var d *Divergence
			if errors.As(err, &d) || err == errStopped {
				return e, err
			}
			return e, fmt.Errorf("replay: event %d (tid %d): %w", s.next, e.Tid, err)
		}
		if ran {
			// The stop is the event's now at the head of the queue.
			if e, err = s.peek(0); err != nil {
				return e, err
			}
			if e == nil {
				return nil, io.EOF
			}
		}
	}
	before := s.watchedValues()
	if err := s.apply(e); err != nil {
		var d *Divergence
		if errors.As(err, &d) || err == errStopped {
			return e, err
		}
		return e, fmt.Errorf("replay: event %d (tid %d): %w", s.next, e.Tid, err)
	}
	s.queue[0] = nil
	s.queue = s.queue[1:]
	s.next++
	if before != nil && s.stop == nil {
		after := s.watchedValues()
		for i := range after {
			if before[i] != after[i] {
				// The kernel wrote it (a system call's output).
				t := s.threads[e.Tid]
				var pc uint64
				if t != nil && !t.dead {
					var regs trace.Regs
					ptrace.GetRegs(t.real, &regs)
					pc = regs[trace.RIP]
				}
				s.stop = &Stop{Kind: StopWatchpoint, Tid: e.Tid, PC: pc, Watch: i, Event: true, Values: after}
				break
			}
		}
	}
	return e, nil
}

// diverge builds a Divergence for the event being replayed.
func (s *Session) diverge(e *trace.Event, format string, args ...any) error {
	return &Divergence{Event: s.next, Tid: e.Tid, Msg: fmt.Sprintf(format, args...)}
}

// apply replays one event. It runs on the ptrace thread.
func (s *Session) apply(e *trace.Event) error {
	t := s.threads[e.Tid]
	if t == nil {
		return s.diverge(e, "no thread %d in the replay", e.Tid)
	}
	if t.dead && e.Kind != trace.KindThreadExit && e.Kind != trace.KindExit {
		return s.diverge(e, "thread %d has already exited", e.Tid)
	}
	switch e.Kind {
	case trace.KindExec:
		return s.applyExec(t, e)
	case trace.KindSnapshot:
		return s.applySnapshot(t, e)
	case trace.KindSyscall, trace.KindSyscallEntry:
		if s.execsAway(t, e) {
			// A sharing child at its exec: it has written all it
			// could of the followed memory. Its end frees a vfork's
			// parent; its later events are not replayed.
			if err := s.toEntry(t, e); err != nil {
				return err
			}
			s.dropProcess(t.proc)
			return nil
		}
		if err := s.applySyscall(t, e); err != nil {
			return err
		}
		s.patchAfterSyscall(t, e)
		if err := s.patchHookSite(t, e); err != nil {
			return err
		}
		return s.ptraceEffects(t, e)
	case trace.KindSyscallExit:
		if err := s.applySyscallExit(t, e); err != nil {
			return err
		}
		if err := s.patchHookSite(t, e); err != nil {
			return err
		}
		return s.ptraceEffects(t, e)
	case trace.KindSignal:
		return s.applySignal(t, e)
	case trace.KindRdtsc, trace.KindCpuid:
		return s.applyTrap(t, e)
	case trace.KindRdrand:
		return s.applyRand(t, e)
	case trace.KindPreempt:
		return s.applyPreempt(t, e)
	case trace.KindThreadExit:
		return s.applyThreadExit(t, e)
	case trace.KindExit:
		return s.applyExit(t, e)
	case trace.KindEnd:
		// The recording stopped here with the program running: nothing
		// to do, and nothing follows.
		return nil
	case trace.KindSharedMem:
		return s.applySharedMem(t, e)
	}
	return fmt.Errorf("unknown event kind %d", e.Kind)
}

// waitFor waits for the next stop of t. The death of a process forked in
// the replay is seen without reaping it: reaping would send its replaying
// parent a SIGCHLD the recording delivers by itself where it happened.
func (s *Session) waitFor(t *rthread) (ptrace.Status, error) {
	var st ptrace.Status
	var err error
	if p := t.proc; p != nil && t.real == p.real && p.forked {
		st, err = ptrace.WaitNoReap(t.real)
	} else {
		st, _, err = ptrace.Wait(t.real, false)
	}
	if err != nil {
		return st, err
	}
	if st.Kind == ptrace.Exited || st.Kind == ptrace.Killed {
		t.dead = true
		if p := t.proc; p != nil && t.real == p.real {
			p.status = st.Raw
			if p == s.main {
				s.status = st.Raw
			}
		}
	}
	return st, nil
}

// describe says in words what a stop was, for divergence messages.
func describe(st ptrace.Status) string {
	switch st.Kind {
	case ptrace.StopSyscall:
		return "a system call"
	case ptrace.StopSignal:
		return fmt.Sprintf("signal %s", unix.SignalName(unix.Signal(st.Sig)))
	case ptrace.Exited:
		return fmt.Sprintf("thread exit (status %d)", st.Code)
	case ptrace.Killed:
		return fmt.Sprintf("death by %s", unix.SignalName(unix.Signal(st.Sig)))
	}
	return st.String()
}

// where says where a thread stopped by a signal is, for divergence
// messages: its rip and, for a fault, the address, and the arrival
// counters open then (counter.go), their code being a likely culprit.
func (s *Session) where(t *rthread, st ptrace.Status) string {
	if st.Kind != ptrace.StopSignal || t.dead {
		return ""
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.real, &regs); err != nil {
		return ""
	}
	out := fmt.Sprintf(" at rip %#x", regs[trace.RIP])
	if info, err := ptrace.GetSiginfo(t.real); err == nil && len(info) >= 24 && (st.Sig == int(unix.SIGSEGV) || st.Sig == int(unix.SIGBUS)) {
		out += fmt.Sprintf(" (address %#x)", binary.LittleEndian.Uint64(info[16:24]))
	} else if err == nil && st.Sig == int(unix.SIGTRAP) {
		// Which trap: a step, a breakpoint, a debug register (a stray
		// one under load is still unexplained).
		dr6, _ := ptrace.GetDebugReg(t.real, dr6)
		out += fmt.Sprintf(" (si_code %#x, dr6 %#x, eflags %#x)", ptrace.SiCode(info), dr6, regs[trace.EFLAGS])
	}
	for pc, c := range s.counters {
		if c.open {
			out += fmt.Sprintf(", counting arrivals at %#x in a page at %#x", pc, c.tr.page)
		}
	}
	return out
}

// checkRegs reads t's registers and checks them against want, recorded
// with e; what says where in a divergence's message.
func (s *Session) checkRegs(t *rthread, e *trace.Event, what string, want *trace.Regs) (trace.Regs, error) {
	var regs trace.Regs
	if err := ptrace.GetRegs(t.real, &regs); err != nil {
		return regs, err
	}
	return regs, s.compareRegs(e, what, want, &regs)
}

// compareRegs checks live registers against recorded ones, but for the
// resume flag and the fixed bit (withRecordedFlags), which CPUs and kernels
// set differently, and the program never sees.
func (s *Session) compareRegs(e *trace.Event, what string, want, live *trace.Regs) error {
	g := withRecordedFlags(live, want, s.looseFlags)
	if e.Kind == trace.KindSyscall || e.Kind == trace.KindSyscallEntry {
		// At a system call, r11 holds the flags (the syscall
		// instruction put them there).
		g[trace.R11] = g[trace.R11]&^s.looseFlags | want[trace.R11]&s.looseFlags
	}
	got := &g
	if *want == *got {
		return nil
	}
	for i := range want {
		if want[i] != got[i] {
			return s.diverge(e, "%s: expected %s=%#x, got %#x (rip %#x, recorded rip %#x)",
				what, trace.RegNames[i], want[i], got[i], got[trace.RIP], want[trace.RIP])
		}
	}
	return nil
}

// writeMem writes recorded memory into t's process.
func (s *Session) writeMem(t *rthread, mems []trace.Mem) error {
	for _, m := range mems {
		if _, err := t.proc.mem.WriteAt(m.Data, m.Addr); err != nil {
			return err
		}
	}
	return nil
}

// blob returns the contents of a stored file, read-only: the decompressed
// files are kept (blobcache.go), since the processes of a tree map the same
// libraries again and again.
func (s *Session) blob(id uint32) ([]byte, error) {
	if data, ok := s.blobs.get(id); ok {
		return data, nil
	}
	data, err := s.rd.Blob(id)
	if err != nil {
		return nil, err
	}
	s.blobs.put(id, data)
	return data, nil
}
