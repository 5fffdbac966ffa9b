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

// threadState is where a recorded thread is.
type threadState int

const (
	// parked: stopped by ptrace and waiting for the CPU; park says at what.
	parked threadState = iota
	// running: resumed in user code or in a short system call.
	running
	// inKernel: resumed into a system call that may block; its exit stop
	// will park it (parkBlockedExit).
	inKernel
	// gone: exited.
	gone
	// stopped: in a job control stop, until a SIGCONT (jobctl.go).
	stopped
)

// parkKind says what a parked thread will do when resumed.
type parkKind int

const (
	parkResume      parkKind = iota // resume as is (after a logged event, a new thread, a preemption)
	parkBlockedExit                 // at the exit stop of a blocking call whose exit is not logged yet
	parkHeldEntry                   // at the entry of a write held behind another (order.go)
	parkSaved                       // at a stop handled when it gets its turn (saved; sidebyside.go)
	parkEntry                       // at a call's entry, handled when it gets its turn (sidebyside.go)
)

type thread struct {
	tid   int
	proc  *process
	state threadState
	park  parkKind
	// groupSig is the signal of its last group-stop (jobctl.go).
	groupSig int

	// System call in progress (between entry and exit stops).
	inSyscall bool
	split     bool // its entry was logged as KindSyscallEntry
	nr        int
	entry     trace.Regs
	in        []trace.Mem
	refused   bool
	// execFile: the program an exec in progress runs through a descriptor.
	execFile  *trace.MapFile
	birth     bool   // new thread: its clone's exit stop is still to come
	restartNr int    // the call restart_syscall would resume
	vfork     bool   // a process clone sharing memory: capture the parent's stack
	forked    int    // the child process the current call created (0: none)
	child     int    // the task (thread or process) the current call created (0: none)
	stream    int    // the standard stream (1, 2) the call writes to, 0 if none
	i386      bool   // the call was made with int $0x80 (i386.go)
	robust    uint64 // the head given to set_robust_list (robust.go)

	// refusedRet is the result of a call refused at its entry.
	refusedRet int64
	// tscSigsegv: the program asked for PR_TSC_SIGSEGV (see tsc.go).
	tscSigsegv bool
	// tscTrapped: the kernel makes its rdtsc fault already (the recorder
	// set PR_TSC_SIGSEGV for it or the thread it was cloned from, and
	// execve keeps it): its next exec need not set it again.
	tscTrapped bool
	// ownFilter: the thread runs under a seccomp filter of the program's
	// own (seccomp.go), inherited by the threads and children it makes.
	ownFilter bool
	// seenEntry: its last stop was a syscall-entry stop, so that a
	// seccomp stop next is the same call's (onSeccompStop).
	seenEntry bool
	// hookSite: the site of its current call, patched to go through the
	// hook page when the call returns (hook.go); Shape 0: none.
	hookSite hook.Site

	// resumeRegs are the registers the thread had when last resumed: an
	// asynchronous signal that stops it with these registers arrived before it
	// ran any instruction, so it is delivered there and logged.
	resumeRegs trace.Regs
	haveRegs   bool

	// Signals held back to be delivered at a deterministic point.
	held      []heldSignal
	injecting *heldSignal

	sliceStart time.Time
	spin       spinState
	// pt is the thread's part in the program's own ptrace (emuptrace.go).
	pt ptraceState
	// merging: it runs on a queue collapse dissolved, and waits on the
	// serial one from its next stop; saved is a stop that waits for its
	// turn there (sidebyside.go).
	merging bool
	saved   ptrace.Status
	// mergeKick: collapse interrupted it, and that stop is still to come.
	mergeKick bool
}

type heldSignal struct {
	sig  int
	info []byte
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
	// sites keeps the known sites across recordings; sitesLoaded, how
	// many an image had once they were loaded (sitecache.go).
	sites       *siteCache
	sitesLoaded map[*patch.Image]int
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
	cpus    []*cpu
	serial  *cpu
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
	// out: the program's standard streams (streams.go, order.go).
	out streams
	// cpuidFaulting: the CPU can trap cpuid, so its answers are logged.
	cpuidFaulting bool
	// cpuidPatched: it cannot, and the cpuid instructions found in the
	// code are trapped as rdrand's are (cpuid.go).
	cpuidPatched bool
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
	var stack uint64
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_STACK, &lim) == nil {
		stack = lim.Cur
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

	// The program shares our terminal: Ctrl-C reaches it directly, and it is
	// recorded as the signal it is. A second one, or SIGTERM/SIGHUP, stops
	// the recording (see onStopSignal).
	// The tracees' stops send rewind no SIGCHLD: it waits for them in
	// wait4, which they wake anyway (ptrace.QuietStops).
	defer ptrace.QuietStops()()
	ignored := ptrace.IgnoredSignals() // before Notify takes SIGINT over
	r.stop = make(chan os.Signal, 4)
	r.stops = make(chan unix.Signal, 16)
	stopSigs := []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT}
	if opts.Attach != 0 {
		stopSigs = append(stopSigs, unix.SIGUSR2) // "the bug showed: keep what I have"
	}
	signal.Notify(r.stop, append(stopSigs, groupFatal...)...)
	defer ptrace.IgnoreSignals(realtime())()
	defer func() {
		signal.Stop(r.stop)
		close(r.stop)
	}()

	th := ptrace.NewThread()
	defer th.Close()
	r.startLogger()
	defer r.stopLogger()
	var runErr error
	th.Do(func() {
		want := -1
		if opts.CPU != nil {
			want = *opts.CPU
		}
		var cpu int
		if cpu, runErr = ptrace.PickCPU(want); runErr != nil {
			return
		}
		// On the program's CPU, each stop is handed over on one CPU. A
		// refusal only costs speed.
		ptrace.PinThread(cpu)
		r.start = time.Now()
		if opts.Attach != 0 {
			if runErr = r.attachTo(opts.Attach, cpu); runErr != nil {
				r.pid = 0
				return
			}
		} else if runErr = r.launch(stack, cpu, ignored); runErr != nil {
			return
		}
		if r.ring != nil {
			tick := time.NewTicker(r.ring.period())
			defer tick.Stop()
			quit := make(chan struct{})
			defer close(quit)
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
		}
		if opts.Duration > 0 {
			// The end comes as a signal to rewind would: through the
			// waker, which interrupts the recorder's wait.
			stop := time.AfterFunc(opts.Duration, func() { r.stop <- durationElapsed })
			defer stop.Stop()
		}
		r.w.AutoPush(pushEvery)
		r.lastPush = time.Now()
		var wk *ptrace.Waker
		if wk, runErr = ptrace.StartWaker(); runErr != nil {
			unix.Kill(r.pid, unix.SIGKILL)
			return
		}
		r.waker.Store(wk)
		go r.relayStops()
		defer r.startWatchdog()()
		if opts.Attach != 0 {
			runErr = r.run(r.scheduleIdle)
		} else {
			runErr = r.run(r.startLeader)
		}
		r.closeWakers()
	})
	if err := r.drainLog(); err != nil && runErr == nil {
		runErr = err
	}
	r.saveKnown()
	if r.pid == 0 {
		return nil, runErr
	}
	w := r.w
	res := &Result{Events: w.Events(), Status: r.status, Trace: opts.Output, Interrupted: r.interrupted,
		Detached: r.att != nil && !r.rootDone}
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
	foot := &trace.Footer{Events: w.Events(), ExitStatus: int(r.status), Exited: r.interrupted == 0, Blobs: r.files.count()}
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
	res.Events = foot.Events
	return res, nil
}

// launch starts the program, stopped at its exec, and the trace.
func (r *Recorder) launch(stack uint64, cpu int, ignored uint64) error {
	opts := r.opts
	spec := &ptrace.Spec{Path: opts.Path, Args: opts.Args, Env: opts.Env, Dir: opts.Dir,
		StackLimit: stack, CPU: cpu, Ignored: int64(ignored), Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr}
	// The seccomp filter is the base of system call buffering
	// (docs/design.md, §6 "System call buffering"): where it cannot be
	// had, the program is started again without.
	spec.Filter = !opts.NoBuffer
	var err error
	r.pid, err = ptrace.Start(spec)
	if errors.Is(err, ptrace.ErrNoFilter) {
		r.warnOnce("no filter", "rewind: warning: system call buffering is off (%v): every call costs a stop\n", err)
		spec.Filter = false
		r.pid, err = ptrace.Start(spec)
	}
	if err != nil {
		return err
	}
	r.filtered = spec.Filter
	h := NewHeader(opts.Path, opts.Args, opts.Env, opts.Dir, stack)
	if opts.Chaos {
		r.chaos = newChaos(opts.Seed)
		h.Chaos, h.ChaosSeed = true, r.chaos.seed
	}
	// Chaos explores the order of every thread's turns, and a ring
	// buffer's snapshot holds one process: both keep the serial queue.
	r.sideBySide = r.filtered && !opts.Serial && r.chaos == nil && opts.KeepLast == 0
	h.Pid = r.pid
	if r.filtered {
		h.Hook = hook.ID()
	}
	h.CPU = &cpu
	h.Ignored = &ignored
	h.CPUIDFaulting = cpuidFaultingHere(h.CPUFlags)
	r.cpuidFaulting = h.CPUIDFaulting
	h.CpuidPatched = !h.CPUIDFaulting
	r.cpuidPatched = h.CpuidPatched
	if r.filtered && (r.cpuidFaulting || r.cpuidPatched) {
		h.Cpuid = r.cpuidTable()
		r.cpuidAnswers = h.Cpuid
	}
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
func (r *Recorder) log(e *trace.Event) error {
	e.Time = r.now()
	push := false
	if e.Kind == trace.KindExit || e.Kind == trace.KindEnd || e.Kind == trace.KindSignal {
		// (Others: the writer's AutoPush takes them within pushEvery.)
		now := time.Now()
		if push = e.Kind != trace.KindSignal || now.Sub(r.lastPush) >= pushSignalGap; push {
			r.lastPush = now
		}
	}
	if r.logger.busy() {
		// After the logger's flushes, without waiting for them.
		if err := r.sendLog(logJob{w: r.w, event: e.Clone(), push: push}); err != nil {
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

// deadlineAt returns when the recorder must step in: a run queue's current
// thread has used its slice while others wait, or holds a signal back.
// Zero: never.
func (r *Recorder) deadlineAt() time.Time {
	dl := r.mergeRetry
	for _, c := range r.cpus {
		t := c.current
		if t == nil || t.state == gone {
			continue
		}
		if d := r.busyDeadline(t); !d.IsZero() && (dl.IsZero() || d.Before(dl)) {
			dl = d
		}
	}
	return dl
}

// handle dispatches one stop; its errors say where the recording was.
func (r *Recorder) handle(st ptrace.Status) error {
	r.dog.stops.Add(1)
	if debug {
		t := r.threads[st.Tid]
		fmt.Fprintf(os.Stderr, "rec: %v (current %v)\n", st, t != nil && t.cpu().current == t)
	}
	if err := r.dispatch(st); err != nil {
		// Say where the recording was: the event being recorded, and
		// which thread stopped for what.
		return fmt.Errorf("at event %d (%v): %w", r.events(), st, err)
	}
	return nil
}

// dispatch handles one stop according to the thread and the kind of stop.
func (r *Recorder) dispatch(st ptrace.Status) error {
	t := r.threads[st.Tid]
	if t == nil {
		return r.handleStranger(st)
	}
	if t.mergeKick || t.merging {
		if done, err := r.mergeStopped(t, st); done || err != nil {
			return err
		}
	}
	if t == t.cpu().current && st.Kind != ptrace.Exited && st.Kind != ptrace.Killed {
		if err := r.flushHook(t); err != nil {
			return err
		}
	}
	switch st.Kind {
	case ptrace.Exited, ptrace.Killed:
		return r.onDeath(t, st)
	case ptrace.StopSyscall:
		// Under the recorder's filter, a syscall-entry stop (a thread
		// resumed with PTRACE_SYSCALL) is followed by the filter's
		// seccomp stop for the same call (onSeccompStop).
		t.seenEntry = r.filtered && !t.inSyscall
		return r.onSyscallStop(t)
	case ptrace.StopSignal:
		return r.onSignal(t, st.Sig)
	case ptrace.StopEvent:
		return r.onEvent(t, st)
	case ptrace.StopGroup:
		t.groupSig = st.Sig
		return r.onGroupStop(t)
	}
	return fmt.Errorf("unexpected %v", st)
}

// onSyscallStop handles the entry or exit of a system call: a
// syscall-stop, or the PTRACE_EVENT_SECCOMP stop that is the entry of a
// call under the recorder's filter.
func (r *Recorder) onSyscallStop(t *thread) error {
	if t.spin.active() {
		r.cancelSpin(t)
	}
	t.spin.heldBlocked = false // the mask may change in the call
	if t.birth {
		// A new thread's first syscall stop is the exit of the clone
		// that made it (reported from ret_from_fork): not an event.
		t.birth = false
		var regs trace.Regs
		if err := ptrace.GetRegs(t.tid, &regs); err != nil {
			return err
		}
		if nr := regs[trace.OrigRAX]; regs[trace.RAX] == 0 && (nr == unix.SYS_CLONE || nr == unix.SYS_CLONE3 || nr == unix.SYS_FORK || nr == unix.SYS_VFORK) {
			t.resumeRegs, t.haveRegs = regs, true
			return r.resume(t, 0)
		}
	}
	if t.inSyscall {
		return r.onSyscallExit(t)
	}
	if untraced, err := r.hookCallEntry(t); untraced || err != nil {
		return err
	}
	return r.onSyscallEntry(t)
}

// handleStranger deals with a task we have not registered: a new thread or
// child whose first stop arrived before its parent's clone event.
func (r *Recorder) handleStranger(st ptrace.Status) error {
	if st.Kind == ptrace.Exited || st.Kind == ptrace.Killed {
		return nil
	}
	r.pending[st.Tid] = st
	return nil
}

// onEvent handles PTRACE_EVENT stops.
func (r *Recorder) onEvent(t *thread, st ptrace.Status) error {
	switch st.Event {
	case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
		msg, err := ptrace.EventMsg(t.tid)
		if err != nil {
			return err
		}
		child := int(msg)
		p := t.proc
		if isProcess(st.Event, child) {
			// A child process: recorded with the tree, scheduled with
			// every other thread. It inherits rdtsc trapping and CPUID
			// faulting from its parent.
			p = r.newProcess(child, t.proc.pid)
			t.forked = child
		}
		t.child = child
		nt := &thread{tid: child, proc: p, state: parked, park: parkResume, birth: true, tscSigsegv: t.tscSigsegv, tscTrapped: t.tscTrapped, ownFilter: t.ownFilter}
		r.threads[child] = nt
		// Its process's hook may no longer wait: another thread, or a
		// child sharing its memory, needs the queue.
		if err := r.runFlagsOn(t.cpu()); err != nil {
			return err
		}
		if err := r.followFork(t, nt, st.Event); err != nil {
			return err
		}
		if pst, ok := r.pending[child]; ok {
			delete(r.pending, child)
			if err := r.newThreadStop(nt, pst); err != nil {
				return err
			}
		} else {
			nt.state = running // until its first stop arrives
			nt.spin.starting = true
		}
		return r.let(t, 0)
	case unix.PTRACE_EVENT_EXEC:
		return r.onExecEvent(t)
	case unix.PTRACE_EVENT_SECCOMP:
		return r.onSeccompStop(t)
	case unix.PTRACE_EVENT_STOP:
		if r.ptraceContinued(t) {
			return nil // it stays in its emulated stop
		}
		if t.state == stopped {
			return r.onContinued(t)
		}
		if t.spin.starting {
			return r.newThreadStop(t, st)
		}
		return r.onInterrupt(t)
	}
	return r.let(t, 0)
}

// newThreadStop parks a new thread at its first stop until it is scheduled.
func (r *Recorder) newThreadStop(t *thread, st ptrace.Status) error {
	t.spin.starting = false
	if st.Kind == ptrace.Exited || st.Kind == ptrace.Killed {
		return r.onDeath(t, st)
	}
	if err := t.proc.openMem(); err != nil {
		return err
	}
	if err := r.setRunFlags(t.proc); err != nil {
		return err
	}
	if stopped, err := r.birthStop(t); stopped || err != nil {
		return err
	}
	t.state, t.park = parked, parkResume
	c := t.cpu()
	r.enqueue(t)
	// A parent waiting for its child (waitpid after fork) gives it the
	// CPU now rather than at the end of its slice.
	if err := r.yieldBlockedCall(c); err != nil {
		return err
	}
	return r.scheduleIfIdle(c)
}

// onDeath records the end of a thread or of the whole program.
func (r *Recorder) onDeath(t *thread, st ptrace.Status) error {
	c := t.cpu()
	wasCurrent := c.current == t
	r.ptraceDeath(t, st)
	t.state = gone
	r.dropReady(t)
	if r.chaos != nil {
		r.chaos.forget(t)
	}
	r.writeDone(t)
	delete(r.threads, t.tid)
	if t.tid == t.proc.pid {
		if err := r.onProcessExit(t, st); err != nil || r.done {
			return err
		}
	} else {
		if err := r.logSeccompKilled(t, st); err != nil {
			return err
		}
		e := &trace.Event{Kind: trace.KindThreadExit, Tid: int32(t.tid)}
		if t.robust != 0 {
			e.Mem = robustWords(t.proc.mem, t.robust)
		}
		if err := r.log(e); err != nil {
			return err
		}
	}
	if wasCurrent {
		c.current = nil
	}
	if t.tid == t.proc.pid {
		if err := r.queueGone(c); err != nil {
			return err
		}
	}
	// A death can make a waiting tracer ready (ptraceProcessGone).
	return r.scheduleIdle()
}

// settleMax bounds how long the end of a recording waits for the running
// thread's system call to return.
const settleMax = 200 * time.Millisecond

// settleCurrent lets the running threads' system calls, already in the
// kernel and not expected to block, reach their exit stops and be logged
// before the program is killed: the kernel may have done its work (a write
// the user saw on the terminal), which replay must then do too.
func (r *Recorder) settleCurrent() {
	end := time.Now().Add(settleMax)
	for _, c := range r.cpus {
		if t := c.current; t != nil {
			r.settle(t, end)
		}
	}
}

// settle is settleCurrent for t, the current thread of a run queue, until
// end.
func (r *Recorder) settle(t *thread, end time.Time) {
	if !t.inSyscall || t.split || t.state != running {
		return
	}
	for t.inSyscall && t.state == running && time.Now().Before(end) {
		st, ok, err := ptrace.Wait(t.tid, true)
		if err != nil {
			return
		}
		if !ok {
			time.Sleep(time.Millisecond)
			continue
		}
		if r.handle(st) != nil || r.done {
			return
		}
	}
}

func (r *Recorder) dropReady(t *thread) {
	c := t.cpu()
	for i, x := range c.ready {
		if x == t {
			c.ready = append(c.ready[:i], c.ready[i+1:]...)
			return
		}
	}
}

func (r *Recorder) dumpState() {
	for i, c := range r.cpus {
		cur := "nil"
		if t := c.current; t != nil {
			cur = fmt.Sprintf("%d(state %d inSys %v split %v spin %d)", t.tid, t.state, t.inSyscall, t.split, t.spin.phase)
		}
		var rd []int
		for _, t := range c.ready {
			rd = append(rd, t.tid)
		}
		fmt.Fprintf(os.Stderr, "   cpu %d: current %s ready %v\n", i, cur, rd)
	}
	fmt.Fprintf(os.Stderr, "   deadline %v\n", r.deadlineAt())
}

// resume lets t run until its next stop, delivering sig.
func (r *Recorder) resume(t *thread, sig int) error {
	if r.pausing && sig == 0 {
		t.state, t.park = parked, parkResume
		return nil
	}
	t.state = running
	return r.let(t, sig)
}

// let resumes t until its next stop, delivering sig, without changing
// its scheduling state. Under the recorder's seccomp filter a thread out
// of a system call runs with PTRACE_CONT (its next call stops it as a
// PTRACE_EVENT_SECCOMP stop); one in a call, or a new thread whose first
// stop is the end of the clone that made it, with PTRACE_SYSCALL, which
// stops it at the call's exit. So does a thread under a filter of the
// program's own, whose verdicts (an errno, a kill) the kernel gives
// before any seccomp stop: the recorder sees its calls at their
// syscall-entry stops, as without its filter.
func (r *Recorder) let(t *thread, sig int) error {
	if r.filtered && !t.inSyscall && !t.birth && !t.ownFilter {
		return ptrace.Cont(t.tid, sig)
	}
	return ptrace.Syscall(t.tid, sig)
}

// park stops considering t as running; it will be resumed when scheduled.
func (r *Recorder) parkReady(t *thread, k parkKind) {
	t.state, t.park = parked, k
	r.enqueue(t)
}

// scheduleIfIdle gives run queue c to its next ready thread when none
// runs there.
func (r *Recorder) scheduleIfIdle(c *cpu) error {
	if r.pausing {
		return nil
	}
	if t := c.current; t != nil && t.state != gone && t.state != inKernel && t.state != parked && t.state != stopped {
		return nil
	}
	if len(c.ready) == 0 {
		c.current = nil
		return nil
	}
	return r.switchTo(r.takeNext(c))
}

// switchTo makes t the running thread of its run queue.
func (r *Recorder) switchTo(t *thread) error {
	c := t.cpu()
	c.current = t
	t.sliceStart = time.Now()
	t.spin.slice = r.newSlice()
	if prev := c.lastProc; prev != t.proc {
		// Memory another process of the tree shares with this one may
		// have changed since it last ran: what it will read is logged, so
		// that a replay of this process alone (-p) sees it.
		c.lastProc = t.proc
		if prev != nil && r.shared.tracking(t.proc.pid) {
			if err := r.syncShared(t, r.procOf(t), nil); err != nil {
				return err
			}
		}
	}
	switch t.park {
	case parkBlockedExit:
		t.park = parkResume
		return r.finishSyscall(t)
	case parkHeldEntry:
		t.park = parkResume
		c := t.effective(t.call())
		return r.startCall(t, &c)
	case parkSaved:
		// Its stop waited for this turn (sidebyside.go): handled now.
		st := t.saved
		t.park, t.saved, t.state = parkResume, ptrace.Status{}, running
		return r.dispatch(st)
	case parkEntry:
		t.park, t.state = parkResume, running
		return r.onSyscallEntry(t)
	}
	return r.resumeLogged(t)
}

// resumeLogged resumes a thread whose last event is logged, first delivering
// a held signal if there is one to deliver here.
func (r *Recorder) resumeLogged(t *thread) error {
	if held, err := r.resumeEntry(t); held || err != nil {
		return err
	}
	if stopped, err := r.resumeExit(t); stopped || err != nil {
		return err
	}
	if !t.haveRegs {
		if err := ptrace.GetRegs(t.tid, &t.resumeRegs); err != nil {
			return err
		}
		t.haveRegs = true
	}
	if err := r.injectHeld(t); err != nil {
		return err
	}
	return r.resume(t, t.takeResumeSig())
}

// yield ends t's turn at a point where its last event is logged, if others
// wait and its slice is used up. It reports whether it switched.
func (r *Recorder) yield(t *thread) (bool, error) {
	c := t.cpu()
	if len(c.ready) == 0 || time.Since(t.sliceStart) < r.sliceOf(t) || r.inHookNow(t) {
		return false, nil
	}
	r.parkReady(t, parkResume)
	return true, r.switchTo(r.takeNext(c))
}

// onStopSignal handles a signal sent to rewind itself, and reports whether
// the recording must end now. Ctrl-C (and Ctrl-\\) from the terminal reach
// the whole foreground process group: the program gets its own and handles
// it as it would without rewind. So the first one is passed on only if the
// program has not got it shortly after (a kill aimed at rewind alone; see
// forward). The second one, or SIGTERM or SIGHUP, stops the recording.
func (r *Recorder) onStopSignal(sig unix.Signal) bool {
	switch sig {
	case rotateSignal:
		r.rotateDue = true
		return true
	case durationElapsed:
		r.interrupted = sig
		return true
	case stallSignal:
		r.reportStall()
		return !r.daemonRetry.IsZero() // the run loop asks about daemons
	}
	if r.att != nil {
		// The process is not in rewind's terminal: any of these is for
		// rewind, and ends the recording at once.
		switch sig {
		case unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGHUP, unix.SIGUSR2:
			r.interrupted = sig
			return true
		}
		otherSignal(sig)
		return false
	}
	if r.fromProgram(sig) {
		return false
	}
	switch sig {
	case unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGHUP:
	default:
		otherSignal(sig)
		return false
	}
	if sig == unix.SIGINT || sig == unix.SIGQUIT {
		r.interrupts++
		if r.interrupts == 1 {
			r.fwd = sig
			r.fwdSince = time.Now()
			r.fwdAt = r.fwdSince.Add(fwdGrace)
			return false
		}
	}
	r.interrupted = sig
	return true
}

// fwdGrace is how long the program's own copy of a terminal signal may take
// to show up (as pending, or delivered) before rewind passes one on.
const fwdGrace = 50 * time.Millisecond

// forward passes the first Ctrl-C rewind received on to the program, unless
// the program got one of its own around the same time.
func (r *Recorder) forward() {
	sig := r.fwd
	r.fwd, r.fwdAt = 0, time.Time{}
	if t, ok := r.sawSig[sig]; ok && t.After(r.fwdSince.Add(-time.Second)) {
		return
	}
	if ptrace.PendingSignal(r.pid, int(sig)) {
		return
	}
	unix.Kill(r.pid, sig)
}

// durationElapsed stands, among the signals that stop a recording, for the
// end of Options.Duration.
const durationElapsed = unix.Signal(-1)

// stopReason says in words why rewind stopped a recording.
func (r *Recorder) stopReason(sig unix.Signal) string {
	if r.att != nil {
		if sig == durationElapsed {
			return "detached after " + r.opts.Duration.String()
		}
		return "detached (" + unix.SignalName(sig) + " to rewind)"
	}
	if sig == unix.SIGINT || sig == unix.SIGQUIT {
		return "interrupted (" + unix.SignalName(sig) + " to rewind twice)"
	}
	return "interrupted (" + unix.SignalName(sig) + " to rewind)"
}

// end stops the recording while the program runs: the end event goes last
// in the trace, then the program is killed (it cannot go on unrecorded: it
// is traced with PTRACE_O_EXITKILL and its threads are serialized by us).
// Its death is not an event: replay stops at the end event, with the
// program alive there.
func (r *Recorder) end() error {
	r.settleCurrent()
	tid := r.pid
	if t := r.someCurrent(); t != nil {
		tid = t.tid
	}
	for _, c := range r.cpus {
		if t := c.current; t != nil && t.state == running {
			if err := r.flushRunning(t); err != nil {
				return err
			}
		}
	}
	if err := r.log(&trace.Event{Kind: trace.KindEnd, Tid: int32(tid), Data: []byte(r.stopReason(r.interrupted))}); err != nil {
		return err
	}
	r.closeWakers()
	if r.att != nil {
		r.done = true
		return r.detach()
	}
	r.killAll()
	for {
		st, _, err := ptrace.Wait(-1, false)
		if err != nil {
			break // ECHILD: every task is gone
		}
		if st.Tid == r.pid && !r.rootDone && (st.Kind == ptrace.Exited || st.Kind == ptrace.Killed) {
			r.status = st.Raw
		}
	}
	r.done = true
	return nil
}
