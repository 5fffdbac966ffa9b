// Package record records one run of a program under ptrace into a trace.
//
// The recorder serializes the tracee's threads: exactly one runs user code at
// a time, and switches happen at system calls (or at a proven spin). A
// blocking system call stays in the kernel while another thread runs; its
// result is logged when its thread is next scheduled. The log is therefore the
// global order of these intervals, which replay reproduces. See
// docs/design.md, §2 "The recording model".
package record

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// debug traces every stop on stderr (REWIND_DEBUG=1).
var debug = os.Getenv("REWIND_DEBUG") != ""

// Options configure a recording.
type Options struct {
	Path   string   // absolute path of the executable (see ResolveProgram)
	Args   []string // argv including argv[0]
	Env    []string
	Dir    string
	Output string // trace path
	// Trace, when set, is the trace file prepared for Output before the
	// program starts (trace.Reserve). Record starts it once the program
	// runs; the caller discards it afterwards (a no-op once started).
	Trace *trace.Pending
	// Slice is how long a thread may run while others wait before the
	// recorder tries to switch (default 10ms).
	Slice time.Duration
	// Warn receives one-line warnings (unsupported system calls…).
	Warn io.Writer
	// Stdin, Stdout, Stderr of the program (default: rewind's own).
	Stdin, Stdout, Stderr *os.File
	// Attach, when not 0, is the pid of a running process to record
	// instead of starting Path (rewind record -p): it is detached, still
	// running, when the recording ends.
	Attach int
	// Attached, when set, is called once the process attached to is
	// snapshotted, before it runs again.
	Attached func(AttachInfo)
	// KeepLast, when not 0, makes the recording a ring buffer that keeps
	// about that long of the end of the program's life (ring.go).
	KeepLast time.Duration
	// Duration, when not 0, ends the recording after that long, as a
	// SIGTERM to rewind would.
	Duration time.Duration
	// CPU binds the program to this CPU (nil, or one not allowed here: the
	// CPU rewind runs on when it starts).
	CPU *int
	// Chaos randomises scheduling (see chaos.go) with the generator seeded
	// by Seed (0: a random seed, recorded in the trace header).
	Chaos bool
	Seed  uint64
	// Serial has the processes of the tree take turns, as the threads of
	// one process do, rather than run side by side (sidebyside.go).
	Serial bool
	// NoBuffer records every system call with ptrace stops, without the
	// seccomp filter and the hook page that let most calls run with none
	// (rewind record --no-buffer). A recording of a running process
	// (Attach) never buffers: the hook could not be removed at detach.
	NoBuffer bool
	// Hide hides CPU features from the program (rewind record --cpu-features), and
	// CPUSpec is the spec that named them: the recording then replays on
	// CPUs without them.
	Hide    machine.Hide
	CPUSpec string
}

// Result summarizes a finished recording.
type Result struct {
	Events int64
	Status unix.WaitStatus // the program's wait status
	Trace  string
	// Interrupted is the signal that made rewind stop the recording before
	// the program ended (0: the program ended by itself).
	Interrupted unix.Signal
	// Detached: the process rewind attached to was let go, still running.
	Detached bool
}

// ExitCode is the shell-style status: the exit code, or 128+signal; for a
// recording rewind stopped, 128+the signal rewind received, as a shell
// reports a job it interrupted.
func (r *Result) ExitCode() int {
	if r.Detached {
		return 0
	}
	if r.Interrupted != 0 {
		return 128 + int(r.Interrupted)
	}
	if r.Status.Signaled() {
		return 128 + int(r.Status.Signal())
	}
	return r.Status.ExitStatus()
}

// Recorder is one recording in progress. All its methods run on the ptrace
// thread.
type Recorder struct {
	opts   Options
	w      *trace.Writer
	pid    int // the first process
	start  time.Time
	status unix.WaitStatus
	done   bool
	// filtered says the program runs under the recorder's seccomp filter
	// (ptrace.Spec.Filter): its threads run with PTRACE_CONT (let).
	filtered bool
	// known are the sites the hook served, patched at once where their
	// files are mapped again (hook.go).
	known knownSites
	// knownGen counts the sites learned (patchLearned).
	knownGen int
	// xcr0 is what the hook answers at patched xgetbv sites (0: they are
	// not patched).
	xcr0 uint64
	// plans are what patchKnown did at fresh mappings, to do again where
	// the same code is mapped the same way (patchplan.go); plansUsed
	// counts the mappings patched from one.
	plans     map[string]*patchPlan
	plansUsed int
	// sites keeps the known sites across recordings; sitesLoaded, how
	// many an image had once they were loaded (sitecache.go).
	sites       *siteCache
	sitesLoaded map[*patch.Image]int
	// held, while takeRecords turns a buffer into events, gathers the
	// files it stores, published to the hook pages at once at its end
	// (heldFrom: the index of the first): git maps thousands.
	holdStored bool
	heldFrom   int
	held       []hook.StoredFile
	// hookRec and hookEvent are takeRecords' scratch: a flush turns up
	// to hook.BufSize bytes of records into events.
	hookRec   hook.Record
	hookEvent trace.Event
	// logger logs the events of flushed records beside the program
	// (bufferlog.go), from Record's start to its end; noting is the record
	// takeRecords is at, which events() counts.
	logger *bufLogger
	noting int
	// shepherd is the pid of the process that traces the daemons left
	// running under the filter (ptrace/shepherd.go), or 0.
	shepherd int

	// procs are the live processes of the tree; rootDone is set once the
	// first one has ended (status holds its wait status).
	procs    map[int]*process
	rootDone bool
	threads  map[int]*thread
	// cpus are the run queues (cpus.go); serial, the first, holds every
	// process that must take turns with others (all of them, unless they
	// run side by side: sidebyside.go).
	cpus   []*cpu
	serial *cpu
	// unclaim releases the device CPU the program moved to (progcpu.go).
	unclaim func()
	// allowed are the CPUs rewind may use; bal moves the processes that
	// compute side by side over them (balance.go), or is nil.
	allowed unix.CPUSet
	bal     *balancer
	pending map[int]ptrace.Status
	// sideBySide: processes that nothing ties run side by side, each on
	// a queue of its own, until solo (sidebyside.go); stdTraced: the
	// hooks trace writes to the standard streams meanwhile; entangled: the
	// call being logged wrote into another process's memory.
	sideBySide, solo, stdTraced, entangled bool
	// mergeHeld wait for their turns until the mergePending threads
	// collapse interrupted have stopped (sidebyside.go).
	mergeHeld    []*thread
	mergePending int
	mergeRetry   time.Time

	files  *fileStore
	warned map[string]bool
	// imageBlobs are the blobs of exec images' bytes by their SHA-256:
	// stored once a trace (execimage.go).
	imageBlobs map[[32]byte]uint32
	images     imageCache
	cpuids     map[cpuidKey][2]uint64
	// cpuidAnswers is the table of cpuid answers of every hook page
	// (trace.Header.Cpuid): patched cpuid sites read it.
	cpuidAnswers []hook.CpuidAnswer
	// cpuidBytes is cpuidAnswers encoded for the hook pages, once.
	cpuidBytes *hook.CpuidBytes
	// out: the program's standard streams (streams.go, order.go).
	out streams
	// cpuidFaulting: the CPU can trap cpuid, so its answers are logged.
	cpuidFaulting bool
	// cpuidPatched: it cannot, and the cpuid instructions found in the
	// code are trapped as rdrand's are (cpuid.go).
	cpuidPatched bool
	// xgetbv: the xgetbv instructions found in the code are trapped too
	// (trace.Header.Xgetbv).
	xgetbv bool
	// shared tracks the memory the program shares with the world (shared.go).
	shared *sharedMem
	// rootSid is the session of the first process; daemonCheck asks the
	// run loop whether only daemons are left (daemon.go).
	rootSid int
	// rootSidKnown says rootSid was read: 0 is a session too (one whose
	// leader is outside the pid namespace, as in most containers).
	rootSidKnown bool
	daemonCheck  bool
	daemonRetry  time.Time // when to ask again an unsure daemonCheck
	// code holds the files code patching reads (the sites are per process).
	code codeFiles
	// chaos is nil unless scheduling is randomised.
	chaos *chaos

	// att is what was changed in the process attached to (attach.go),
	// nil for a program rewind started.
	att *attached
	// ring is the ring buffer (ring.go), nil without --keep-last.
	ring *ring
	// pausing: the threads are being stopped for a snapshot; none is to
	// be resumed or scheduled.
	pausing bool
	// rotateDue: the ring buffer's timer rang.
	rotateDue bool
	// guardDirty: the guard's view of what is changed is out of date.
	guardDirty bool
	// stop receives the signals that ask rewind itself to stop.
	stop chan os.Signal
	// caught closes once the signals of stop come to it (catchStops).
	caught chan struct{}
	// interrupts is how many SIGINT/SIGQUIT rewind received, and sawSig when
	// the program last had one delivered: the terminal sends Ctrl-C to the
	// whole foreground group, program and rewind alike.
	interrupts int
	sawSig     map[unix.Signal]time.Time
	// programKills: when the program last sent each signal to a group
	// rewind is in (see groupsig.go).
	programKills map[unix.Signal]time.Time
	// fwd is a first Ctrl-C to pass on at fwdAt if the program did not get
	// its own (fwdSince: when rewind got it).
	fwd             unix.Signal
	fwdAt, fwdSince time.Time
	// interrupted is the signal that ended the recording early.
	interrupted unix.Signal
	// ptPoll is when the tracers waiting outside the kernel are next
	// looked at for signals (emuptrace.go).
	ptPoll time.Time
	// lastPush is when the events were last pushed to the file.
	lastPush time.Time
	// waker's death wakes the recorder's wait when rewind gets a signal;
	// stops holds the signals it was woken for.
	waker atomic.Pointer[ptrace.Waker]
	// spare is the next waker, already running (wait.go); nil until a
	// deadline first needs one.
	spare *ptrace.Waker
	// alarmAt is when the waker's alarm rings (zero: none).
	alarmAt time.Time
	stops   chan unix.Signal
	// dog is what the watchdog (watchdog.go) reads.
	dog watchdog
}

// pushEvery bounds what a recorder killed with SIGKILL loses: events reach
// the file at most this long after they happened.
const pushEvery = time.Second

// pushSignalGap rate-limits the push that every signal event asks for, so
// that a program taking thousands of signals a second does not write a frame
// for each one.
const pushSignalGap = time.Millisecond

// Record runs the program and writes the trace. The program's exit status is
// in the result even when err is non-nil for a problem after it started.
func Record(opts Options) (*Result, error) {
	r := newRecorder(opts)
	// The program shares our terminal: Ctrl-C reaches it directly, and it is
	// recorded as the signal it is. A second one, or SIGTERM/SIGHUP, stops
	// the recording (see onStopSignal).
	// The tracees' stops send rewind no SIGCHLD: it waits for them in
	// wait4, which they wake anyway (ptrace.QuietStops).
	defer ptrace.QuietStops()()
	ignored := ptrace.IgnoredSignals() // before Notify takes SIGINT over
	stopCatching := r.catchStops()
	defer ptrace.IgnoreSignals(realtime())()
	defer stopCatching()

	th := ptrace.NewThread()
	defer th.Close()
	r.startLogger()
	defer r.stopLogger()
	var runErr error
	th.Do(func() { runErr = r.record(ignored) })
	if err := r.drainLog(); err != nil && runErr == nil {
		runErr = err
	}
	r.saveKnown()
	if r.pid == 0 {
		return nil, runErr
	}
	return r.finish(th, runErr)
}

// newRecorder is a recorder for opts, with their defaults filled in.
func newRecorder(opts Options) *Recorder {
	if opts.Slice == 0 {
		opts.Slice = 10 * time.Millisecond
	}
	if opts.Warn == nil {
		opts.Warn = os.Stderr
	}
	if opts.Stdin == nil {
		opts.Stdin = os.Stdin
	}
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	r := &Recorder{
		opts:    opts,
		sawSig:  map[unix.Signal]time.Time{},
		threads: map[int]*thread{},
		procs:   map[int]*process{},
		pending: map[int]ptrace.Status{},
		warned:  map[string]bool{},
		out:     newStreams(opts.Stdout, opts.Stderr),
		sites:   defaultSiteCache(),
	}
	r.serial = r.newCPU()
	if r.sites != nil {
		r.code.analyses = patch.DefaultAnalysisStore()
	}
	return r
}

// catchStops has the signals that stop a recording (stop.go) come to
// r.stop, and returns what undoes it. The runtime takes them over on a
// goroutine of its own, done (r.caught) before the program runs (record):
// signal.Notify's first call starts a thread of the runtime's and hands it
// each signal in turn, ~0.6 ms of a recording's fixed cost here, now
// beside the launch of the program.
func (r *Recorder) catchStops() func() {
	r.stop = make(chan os.Signal, 4)
	r.stops = make(chan unix.Signal, 16)
	r.caught = make(chan struct{})
	stopSigs := []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT}
	if r.opts.Attach != 0 {
		stopSigs = append(stopSigs, unix.SIGUSR2) // "the bug showed: keep what I have"
	}
	go func() {
		signal.Notify(r.stop, append(stopSigs, groupFatal...)...)
		close(r.caught)
	}()
	return func() {
		<-r.caught
		signal.Stop(r.stop)
		close(r.stop)
	}
}

// record is the recording, on the tracer thread: it starts (or attaches
// to) the program, then runs the recording loop to its end.
func (r *Recorder) record(ignored uint64) error {
	opts := r.opts
	var stack uint64
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_STACK, &lim) == nil {
		stack = lim.Cur
	}
	want := -1
	if opts.CPU != nil {
		want = *opts.CPU
	}
	cpu, err := ptrace.PickCPU(want)
	if err != nil {
		return err
	}
	unix.SchedGetaffinity(0, &r.allowed) // before the tracer thread binds itself
	// On the program's CPU, each stop is handed over on one CPU. A
	// refusal only costs speed. In chaos mode the recorder takes another
	// CPU where it can: on the program's, a thread it resumed keeps the
	// CPU until the kernel's tick takes it back, about a millisecond
	// later whatever the slice, so preemptions came late and few.
	ptrace.PinThread(r.tracerCPU(cpu))
	r.start = time.Now()
	defer func() { r.bal.stop(false) }()
	if opts.Attach != 0 {
		if err := r.attachTo(opts.Attach, cpu); err != nil {
			r.pid = 0
			return err
		}
	} else {
		var dev <-chan int
		if want < 0 {
			dev = r.seekDeviceCPU()
		}
		err := r.launch(stack, cpu, dev, ignored)
		if r.unclaim != nil {
			defer r.unclaim()
		}
		if err != nil {
			return err
		}
	}
	if r.ring != nil {
		defer r.tickRotation()()
	}
	if opts.Duration > 0 {
		// The end comes as a signal to rewind would: through the
		// waker, which interrupts the recorder's wait.
		stop := time.AfterFunc(opts.Duration, func() { r.stop <- durationElapsed })
		defer stop.Stop()
	}
	r.w.AutoPush(pushEvery)
	r.lastPush = time.Now()
	wk, err := ptrace.StartWaker()
	if err != nil {
		unix.Kill(r.pid, unix.SIGKILL)
		return err
	}
	r.waker.Store(wk)
	go r.relayStops()
	defer r.startWatchdog()()
	defer r.closeWakers()
	<-r.caught // (catchStops) before the program runs on
	if opts.Attach != 0 {
		return r.run(r.scheduleIdle)
	}
	return r.run(r.startLeader)
}

// tickRotation asks, through r.stop, for the ring buffer's next segment
// every period, until the returned function runs.
func (r *Recorder) tickRotation() func() {
	tick := time.NewTicker(r.ring.period())
	quit := make(chan struct{})
	go func() {
		for {
			select {
			case <-tick.C:
				select {
				case r.stop <- rotateSignal:
				case <-quit:
					return
				}
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		tick.Stop()
	}
}

// finish closes the trace of a recording that started, and says how it
// went: on an error, the program is killed (or detached from) and the
// partial trace kept.
func (r *Recorder) finish(th *ptrace.Thread, runErr error) (*Result, error) {
	opts := r.opts
	w := r.w
	res := &Result{Events: w.Events(), Status: r.status, Trace: opts.Output, Interrupted: r.interrupted,
		Detached: r.att != nil && !r.rootDone}
	if debug {
		fmt.Fprintf(os.Stderr, "rec: patch plans: %d made, %d used\n", len(r.plans), r.plansUsed)
	}
	if runErr != nil {
		if !r.done {
			if r.att != nil {
				// Whatever went wrong, the process must go on.
				th.Do(func() { r.detach() })
			} else {
				r.killAll()
			}
		}
		w.Abort()
		return res, fmt.Errorf("record: %w (partial trace left in %s)", runErr, w.Partial())
	}
	foot := &trace.Footer{Events: w.Events(), ExitStatus: int(r.status), Exited: r.interrupted == 0, Blobs: r.files.count(), Spread: r.bal.spread()}
	if r.interrupted != 0 {
		foot.Interrupted = r.stopReason(r.interrupted)
	}
	if r.ring != nil {
		joined, err := r.finishRing(foot)
		if err != nil {
			return res, fmt.Errorf("record: %w", err)
		}
		res.Events = joined.Events
		return res, nil
	}
	if err := w.Close(foot); err != nil {
		return res, fmt.Errorf("record: %w (partial trace left in %s)", err, w.Partial())
	}
	if debug {
		fmt.Fprintf(os.Stderr, "rec: %d events frames stored raw (the data came faster than it compressed)\n", w.RawFrames())
	}
	res.Events = foot.Events
	return res, nil
}

// launch starts the program, stopped at its exec, on cpu or the device
// CPU dev brings (nil: the user chose cpu), and the trace.
func (r *Recorder) launch(stack uint64, cpu int, dev <-chan int, ignored uint64) error {
	opts := r.opts
	spec := &ptrace.Spec{Path: opts.Path, Args: opts.Args, Env: opts.Env, Dir: opts.Dir,
		StackLimit: stack, CPU: cpu, Ignored: int64(ignored), Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr}
	// The seccomp filter is the base of system call buffering
	// (docs/design.md, §6 "System call buffering"): where it cannot be
	// had, the program is started again without.
	spec.Filter = !opts.NoBuffer
	if err := hook.Usable(); spec.Filter && err != nil {
		r.warnOnce("no filter", "rewind: warning: system call buffering is off (%v): every call costs a stop\n", err)
		spec.Filter = false
	}
	// The header and the hook's cpuid table (the program's hash,
	// /proc/cpuinfo, the cache) are made while the program starts: ~0.5
	// ms of each recording's fixed cost. The table fills r.cpuids, which
	// nothing reads before the program's first stop.
	header := make(chan *trace.Header, 1)
	filter := spec.Filter
	go func() {
		h := NewHeader(opts.Path, opts.Args, opts.Env, opts.Dir, stack)
		if filter {
			h.Cpuid = r.cpuidTable()
		}
		header <- h
	}()
	var err error
	r.pid, err = ptrace.Start(spec)
	if errors.Is(err, ptrace.ErrNoFilter) {
		r.warnOnce("no filter", "rewind: warning: system call buffering is off (%v): every call costs a stop\n", err)
		spec.Filter = false
		r.pid, err = ptrace.Start(spec)
	}
	h := <-header
	if err != nil {
		return err
	}
	if dev != nil {
		cpu = r.toDeviceCPU(cpu, dev)
	}
	r.filtered = spec.Filter
	if !r.filtered {
		h.Cpuid, r.cpuids = nil, nil // no hook to answer from it
	}
	if opts.Chaos {
		r.chaos = newChaos(opts.Seed)
		h.Chaos, h.ChaosSeed = true, r.chaos.seed
	}
	// Chaos explores the order of every thread's turns, and a ring
	// buffer's snapshot holds one process: both keep the serial queue.
	r.sideBySide = r.filtered && !opts.Serial && r.chaos == nil && opts.KeepLast == 0
	if r.sideBySide && opts.CPU == nil {
		r.bal = newBalancer(cpu, r.allowed)
	}
	h.Pid = r.pid
	h.CPUFlags, h.CPUHidden, h.CPUSpec = opts.Hide.Without(h.CPUFlags), opts.Hide, opts.CPUSpec
	if r.filtered {
		h.Hook = hook.ID()
	}
	h.CPU = &cpu
	h.Ignored = &ignored
	h.CPUIDFaulting = cpuidFaultingHere(h.CPUFlags)
	r.cpuidFaulting = h.CPUIDFaulting
	h.CpuidPatched = !h.CPUIDFaulting
	r.cpuidPatched = h.CpuidPatched
	h.Xgetbv, r.xgetbv = true, true
	if r.filtered {
		h.XCR0 = xcr0(opts.Hide)
		r.xcr0 = h.XCR0
	}
	r.cpuidAnswers = h.Cpuid // (made for CPUID faulting or patched sites alike)
	r.w, err = r.startTrace(h)
	if err != nil {
		unix.Kill(r.pid, unix.SIGKILL)
		ptrace.Wait(r.pid, false)
		r.pid = 0
		return err
	}
	r.files = newFileStore(r.w)
	if r.filtered {
		r.files.onStore = r.publishStored
	}
	return nil
}

// startTrace starts the trace file, or the ring buffer's first segment.
func (r *Recorder) startTrace(h *trace.Header) (*trace.Writer, error) {
	if r.opts.KeepLast > 0 {
		return r.startRing(h)
	}
	return r.createOutput(h)
}

// createOutput starts the trace file the recording is for.
func (r *Recorder) createOutput(h *trace.Header) (*trace.Writer, error) {
	if r.opts.Trace != nil {
		return r.opts.Trace.Start(h)
	}
	return trace.Create(r.opts.Output, h)
}

func (r *Recorder) now() int64 { return int64(time.Since(r.start)) }

// log appends an event stamped with the time. The event reaches the file
// within pushEvery, and at once for an end or a signal: those are where a
// user looks first when the recorder itself did not survive.
func (r *Recorder) log(e *trace.Event) error { return r.logEvent(e, false) }

// logOwned is log for an event whose outputs' bytes (Mem) are the
// recorder's own, read for it alone and never written again
// (readRanges): with big ones, the logger appends it (bufferlog.go)
// while the program runs, without a copy of them first.
func (r *Recorder) logOwned(e *trace.Event) error { return r.logEvent(e, true) }

func (r *Recorder) logEvent(e *trace.Event, owned bool) error {
	e.Time = r.now()
	push := false
	if e.Kind == trace.KindExit || e.Kind == trace.KindEnd || e.Kind == trace.KindSignal {
		// (Others: the writer's AutoPush takes them within pushEvery.)
		now := time.Now()
		if push = e.Kind != trace.KindSignal || now.Sub(r.lastPush) >= pushSignalGap; push {
			r.lastPush = now
		}
	}
	if big := owned && outputBytes(e) >= bigEvent; big || r.logger.busy() {
		// After the logger's flushes, without waiting for them.
		var c *trace.Event
		if owned {
			c = handOver(e)
		} else {
			c = e.Clone()
		}
		if err := r.sendLog(logJob{w: r.w, event: c, push: push}); err != nil {
			return err
		}
	} else if err := (&logJob{w: r.w, event: e, push: push}).logEvent(); err != nil {
		return err
	}
	return r.sharedOnEvent(e)
}

// startLeader starts the recording of a launched program at its exec stop.
func (r *Recorder) startLeader() error {
	root := r.newProcess(r.pid, 0)
	r.queueLeader(root)
	if err := root.openMem(); err != nil {
		return err
	}
	r.noteSession()
	leader := &thread{tid: r.pid, proc: root, state: parked, inSyscall: true, nr: unix.SYS_EXECVE}
	r.threads[r.pid] = leader
	if err := r.onExec(leader); err != nil {
		return err
	}
	leader.split = true // the exit of the initial execve is logged as an exit
	leader.cpu().current = leader
	return r.resume(leader, 0)
}

// run is the recording loop, from start (the exec stop of the program, or
// the threads of the process attached to) to its end.
func (r *Recorder) run(start func() error) error {
	defer func() {
		for _, p := range r.procs {
			p.close()
		}
	}()
	defer r.code.close()
	if err := start(); err != nil {
		return err
	}
	for !r.done {
		if debug {
			r.dumpState()
		}
		// Asked before waiting, whatever handled the stop that raised
		// the question (a stop, a deadline, an ESRCH): with only daemons
		// left, blocked, no other stop would come to ask it.
		if r.daemonCheck {
			if ds := r.checkDaemons(time.Now()); ds != nil {
				return r.releaseDaemons(ds)
			}
		}
		st, ok, err := r.wait()
		if err != nil {
			if errors.Is(err, unix.ECHILD) {
				return errors.New("lost track of the program (no traced task left)")
			}
			return err
		}
		if !ok {
			if r.interrupted != 0 {
				return r.end()
			}
			if r.rotateDue {
				r.rotateDue = false
				if err := r.rotate(); err != nil {
					return err
				}
			}
			now := time.Now()
			if r.fwd != 0 && !now.Before(r.fwdAt) {
				r.forward()
			}
			if err := r.pollWaits(now); err != nil {
				return err
			}
			if !r.daemonRetry.IsZero() && !now.Before(r.daemonRetry) && !r.done {
				if ds := r.checkDaemons(now); ds != nil {
					return r.releaseDaemons(ds)
				}
			}
			if dl := r.deadlineAt(); dl.IsZero() || now.Before(dl) {
				continue
			}
			if err := r.deadline(); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
			continue
		}
		err = r.handle(st)
		if err == nil && len(r.cpus) > 1 {
			// A stop of one queue's thread may have readied another's
			// (a write it held, a tracer it woke): that queue runs it.
			err = r.scheduleIdle()
		}
		if r.guardDirty {
			r.guardUpdate()
		}
		if err != nil {
			if errors.Is(err, unix.ESRCH) {
				// The thread vanished under us (killed by an exit_group or
				// a fatal signal): its death notice follows.
				continue
			}
			return err
		}
	}
	return nil
}
