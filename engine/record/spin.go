package record

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/insn"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Preemption in user code. When a thread runs user code past its slice while
// others wait, or while a signal is held for it, or at a random moment in
// chaos mode, it is interrupted somewhere and must be stopped at a point
// replay can find again without an instruction counter: replay runs the
// thread from its previous event to the first pass at the point's pc with
// the point's fingerprint (see replay/search.go).
//
//  1. Seek: the thread is single-stepped, a few instructions at most, to
//     an instruction replay can patch with a jump to a trampoline that
//     compares the registers in the tracee (insn.PlanPatch); a breakpoint
//     per pass would cost a ptrace stop per loop iteration. One whose patch
//     moves a single instruction is preferred, for a few more steps.
//  2. Check: a breakpoint there catches the next pass. If the registers,
//     stack window, FPU/SSE registers and executable data are all the same
//     as at the previous pass, the thread is spinning: the first pass with
//     this fingerprint is provably equivalent, and it is preempted there,
//     exactly. Otherwise it is preempted at this second pass, marked
//     approximate; if only memory changed between the passes (a loop
//     counter kept on the stack, or in a global), the first word that did
//     is logged too (Event.In), for the trampoline to compare, since the
//     registers alone would match at every pass.
//
// A pass that does not come within a slice (the pc is not in a loop) ends
// the check: the thread is preempted at the next patchable instruction.

type spinPhase int

const (
	spinNone         spinPhase = iota
	spinInterrupting           // PTRACE_INTERRUPT sent
	spinSeeking                // single-stepping to a point replay can patch
	spinStepping               // single-stepping off X before arming the breakpoint
	spinWaitHit                // breakpoint armed at X
	spinCircling               // single-stepping back to X (in a hurry)
)

const (
	// maxSeek bounds the instructions stepped to find a patchable one: a
	// step costs a ptrace stop.
	maxSeek = 32
	// maxSeekClean bounds the steps spent looking for a point whose patch
	// moves a single instruction, before any patchable point will do.
	maxSeekClean = 12
	// signalDelay is how long a signal that arrived in user code waits for
	// the thread's next system call before it is delivered in user code.
	signalDelay = time.Millisecond
	// hitWait is how long the check waits for the second pass at its
	// breakpoint before it looks for it by single-stepping instead, at
	// most maxCircle instructions (a long loop, or no loop, or a thread
	// that did not get the CPU).
	hitWait   = 20 * time.Millisecond
	maxCircle = 64
)

type spinState struct {
	phase    spinPhase
	starting bool // a new thread whose first stop has not arrived
	exiting  bool // the thread called exit: it is going away
	// hurry: preempt at the first patchable point, without waiting for a
	// second pass (the breakpoint was not hit within a slice).
	hurry bool
	steps int // instructions single-stepped while seeking
	// skip: instructions to step before seeking (chaos mode: random).
	skip    int
	armedAt time.Time
	pc      uint64
	orig    byte
	armed   bool
	first   snapshot // the state at the first pass at pc

	// slice is the thread's current time slice (random in chaos mode).
	slice time.Duration
	// heldAt is when the oldest signal held for the thread arrived;
	// heldBlocked: every held signal is blocked (until its next system
	// call, the only way its mask changes).
	heldAt      time.Time
	heldBlocked bool
}

// snapshot is a thread's state at a pass, as far as fingerprints go.
type snapshot struct {
	regs      trace.Regs
	stackAt   uint64
	stack     []byte
	fp        uint64
	data      [][]byte
	dataRange []ptrace.Range
	// approx is what the registers point at and the stack from rsp up
	// (approx.go): a loop that counts in memory only a pointer reaches
	// has the same registers, stack window and global data at every
	// pass, and a qsort in a loop the same stack window.
	approx approxWords
}

func (s *spinState) active() bool { return s.phase != spinNone }

// dataOf returns where t's process keeps its global data (nil if it
// cannot be read): read again each time, since the heap grows.
func (r *Recorder) dataOf(t *thread) []ptrace.Range {
	d, _ := ptrace.DataRanges(t.tid)
	return d
}

// siblingInCall says whether another thread of t's process is in a system
// call whose exit is not logged yet: the kernel may have written its
// results into the process's data (a read's buffer, pipe2's descriptors
// on the heap) before t's preemption point, where replay writes them only
// at that exit, after the point. A preemption then holds no hash of the
// data (Event.Aux 0: replay checks none), only the registers, stacks and
// FPU state.
func (r *Recorder) siblingInCall(t *thread) bool {
	for _, u := range r.threads {
		if u != t && u.proc == t.proc && u.state != gone && (u.split || u.state == inKernel) {
			return true
		}
	}
	return false
}

// memOf is the memory of t's process, pidOf its process id.
func (r *Recorder) memOf(t *thread) *ptrace.Mem { return t.proc.mem }
func (r *Recorder) pidOf(t *thread) int         { return t.proc.pid }

// busyDeadline is when the recorder must step into the run of t, the
// current thread (zero: never): its slice is used up while others wait, or
// a signal it does not block has waited signalDelay.
func (r *Recorder) busyDeadline(t *thread) time.Time {
	if t.spin.phase == spinWaitHit {
		return t.spin.armedAt.Add(hitWait)
	}
	var dl time.Time
	if len(t.cpu().ready) > 0 {
		dl = t.sliceStart.Add(r.sliceOf(t))
	}
	if len(t.held) > 0 && !t.spin.heldBlocked {
		if sd := t.spin.heldAt.Add(signalDelay); dl.IsZero() || sd.Before(dl) {
			dl = sd
		}
	}
	return dl
}

// preemptInCall gives the CPU to a ready thread while t, the current
// thread, runs in the kernel a system call that may block or blocks by
// nature (sigsuspend, pause: re-executed in replay) and that started while
// no one else was ready: its entry is logged as a split call's and its
// exit waits for its next turn. It reports whether it switched.
func (r *Recorder) preemptInCall(t *thread) (bool, error) {
	if len(t.cpu().ready) == 0 {
		return false, nil
	}
	if split, err := r.splitInCall(t); !split || err != nil {
		return split, err
	}
	return true, r.leaveInKernel(t)
}

// splitInCall logs the entry of the call t, running, is in the kernel
// with, if it may block or blocks by nature, as a split call's, for others
// to run meanwhile. It reports whether it did.
func (r *Recorder) splitInCall(t *thread) (bool, error) {
	spec, known := syscalls.Lookup(t.nr)
	c := t.effective(t.call())
	if t.split || t.state != running || !known || (spec.Policy != syscalls.Emulate && !syscalls.MayBlock(&c)) {
		return false, nil
	}
	if r.inHook(t.proc, t.entry[trace.RIP]) {
		// Made from the hook page, whose stack the others would use.
		return false, nil
	}
	return true, r.logEntry(t)
}

// yieldBlockedCall gives the CPU at once to a thread made ready while the
// current one waits in the kernel in a call that may block and was not
// split (no one was ready at its entry): a thread whose blocking call
// returned, typically with what the current one waits for in turn (two
// processes exchanging messages), or a new thread or child (a parent's
// waitpid for it). Waiting for the slice's end instead
// would make each message cost a slice. Calls that block by nature and are
// re-executed in replay, and threads with held signals, are left to the
// deadline, which handles them.
func (r *Recorder) yieldBlockedCall(c *cpu) error {
	t := c.current
	if t == nil || !t.inSyscall || t.split || t.state != running || len(t.held) > 0 ||
		t.spin.exiting || t.spin.starting || t.pt.waitRetry {
		return nil
	}
	if c := t.effective(t.call()); !syscalls.MayBlock(&c) {
		return nil
	}
	_, err := r.preemptInCall(t)
	return err
}

func (r *Recorder) sliceOf(t *thread) time.Duration {
	if t.spin.slice > 0 {
		return t.spin.slice
	}
	return r.opts.Slice
}

// deadline runs when a run queue's current thread used its slice while
// others wait or a signal held for it waited long enough.
func (r *Recorder) deadline() error {
	now := time.Now()
	if !r.mergeRetry.IsZero() && !now.Before(r.mergeRetry) {
		if err := r.mergeAgain(); err != nil {
			return err
		}
	}
	for _, c := range r.cpus {
		t := c.current
		if t == nil || t.state == gone {
			continue
		}
		if dl := r.busyDeadline(t); dl.IsZero() || now.Before(dl) {
			continue
		}
		if err := r.deadlineOf(t, now); err != nil && !errors.Is(err, unix.ESRCH) {
			return err
		}
	}
	return nil
}

// deadlineOf is deadline for t, the current thread of its run queue.
func (r *Recorder) deadlineOf(t *thread, now time.Time) error {
	t.sliceStart = now
	if t.spin.exiting || t.spin.starting || t.pt.waitRetry || t.frame != nil {
		// (A thread stepped into its signal handler stops there at once.)
		// A tracer's wait made WNOHANG (emuptrace.go) returns at once and
		// is no event unless it answers: its entry must not be logged.
		return nil
	}
	signal := len(t.held) > 0 && !t.spin.heldBlocked
	if signal {
		t.spin.heldAt = now // the next try, if this one finds no point
	}
	if t.inSyscall {
		// A system call we did not expect to block is taking long: let
		// others run meanwhile, as if it had been a blocking one.
		if len(t.held) > 0 {
			if err := r.injectHeld(t); err != nil {
				return err
			}
			if t.injecting == nil {
				// It blocks them all: they wait for a change of its
				// mask, which only a system call's stop brings (and
				// clears this), not for the next deadline.
				t.spin.heldBlocked = true
			}
		}
		_, err := r.preemptInCall(t)
		return err
	}
	if t.state != running || (!signal && len(t.cpu().ready) == 0) {
		return nil
	}
	switch t.spin.phase {
	case spinNone:
		t.spin.hurry = false
	case spinWaitHit:
		// The pc was not passed again within a slice: not a loop, or a
		// long one. Preempt at the next patchable point.
		t.spin.hurry = true
	default:
		return nil
	}
	t.spin.phase = spinInterrupting
	return ptrace.Interrupt(t.tid)
}

// deliverable reports whether t, stopped, does not block one of the
// signals held for it.
func (r *Recorder) deliverable(t *thread) bool {
	blocked, err := ptrace.SigMask(t.tid)
	if err != nil {
		blocked = ptrace.BlockedMask(r.pidOf(t), t.tid)
	}
	for _, h := range t.held {
		if blocked&(1<<(h.sig-1)) == 0 {
			return true
		}
	}
	return false
}

// onInterrupt handles the PTRACE_EVENT_STOP our interrupt caused.
func (r *Recorder) onInterrupt(t *thread) error {
	switch t.spin.phase {
	case spinInterrupting:
	case spinStepping, spinSeeking, spinCircling:
		// The stop of an interrupt sent before the one being handled
		// (the breakpoint was hit first): the step is still to do.
		return ptrace.Step(t.tid, 0)
	default:
		// A late stop from an interrupt the detector no longer wants (the
		// thread reached a system call meanwhile): the thread may be blocked
		// in the kernel, so only let it go on, keeping its scheduling state.
		return r.let(t, 0)
	}
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return err
	}
	if t.spin.armed {
		if err := r.armSpin(t, false); err != nil {
			return err
		}
	}
	if waited, err := r.leaveHookWait(t, &regs); waited || err != nil {
		// Waiting in the hook's read: made again traced, it is where
		// the others get the CPU or a held signal is delivered.
		t.spin.phase = spinNone
		if err != nil {
			return err
		}
		return r.resume(t, 0)
	}
	if int64(regs[trace.OrigRAX]) >= 0 && ptrace.IsRestart(regs[trace.RAX]) {
		// Stopped on its way out of an interrupted call (after a signal
		// it ignores, a SIGCONT), before the kernel restarts it: a step
		// from here would run the call. It makes it at once: let it.
		t.spin.phase = spinNone
		return r.resume(t, 0)
	}
	if len(t.held) > 0 && len(t.cpu().ready) == 0 && !r.deliverable(t) {
		// Interrupted for signals it blocks: they wait for its next
		// system call, where its mask may change.
		t.spin.heldBlocked = true
		t.spin.phase = spinNone
		return r.resume(t, 0)
	}
	return r.seekFrom(t, &regs)
}

// codeAt reads the instruction bytes at pc (fewer at the end of a mapping).
func (r *Recorder) codeAt(t *thread, pc uint64) []byte {
	var b [2 * insn.MaxLen]byte
	n, _ := r.memOf(t).ReadAt(b[:], pc)
	return b[:n]
}

// spinTrap handles the SIGTRAPs of the detector and of the seek: the end
// of a single step, or the breakpoint at X.
func (r *Recorder) spinTrap(t *thread, regs *trace.Regs) error {
	if t.spin.armed && regs[trace.RIP] == t.spin.pc+1 {
		regs[trace.RIP] = t.spin.pc
		if err := r.armSpin(t, false); err != nil {
			return err
		}
		if err := ptrace.SetRegs(t.tid, regs); err != nil {
			return fmt.Errorf("move back onto the spin breakpoint at %#x: %w", t.spin.pc, err)
		}
		if t.spin.phase == spinInterrupting {
			// Hit before the interrupt stopped it: the interrupt's stop
			// comes later (onInterrupt steps on).
			return r.seekFrom(t, regs)
		}
		return r.secondPass(t, regs)
	}
	switch t.spin.phase {
	case spinStepping:
		if err := r.armSpin(t, true); err != nil {
			return err
		}
		t.spin.phase = spinWaitHit
		t.spin.armedAt = time.Now()
		return r.resume(t, 0)
	case spinSeeking:
		return r.seekStep(t, regs)
	case spinCircling:
		return r.circleStep(t, regs)
	}
	// Not ours: the program's own trap.
	r.cancelSpin(t)
	return r.onSignal(t, int(unix.SIGTRAP))
}

// seekFrom starts looking for a point replay can patch, from where t is
// stopped in user code, to preempt it there.
func (r *Recorder) seekFrom(t *thread, regs *trace.Regs) error {
	t.spin.phase = spinSeeking
	t.spin.steps = 0
	t.spin.skip = r.chaosSkip()
	return r.seekStep(t, regs)
}

// seekStep is one step of the seek: stop here if replay can patch this
// instruction (or if looking further costs too much), else single-step it.
func (r *Recorder) seekStep(t *thread, regs *trace.Regs) error {
	if r.inHook(t.proc, regs[trace.RIP]) {
		// On the hook's stack, in code that runs otherwise in replay:
		// no point to preempt at. The next deadline tries again.
		return r.abandonSeek(t)
	}
	code := r.codeAt(t, regs[trace.RIP])
	if insn.RepString(code) {
		// Perhaps in the middle of it, where replay cannot stop: try
		// again at the next deadline.
		return r.abandonSeek(t)
	}
	if r.trapsAt(code) {
		// A cpuid the CPU traps: an event of its own comes, and a held
		// signal is delivered there. A preemption point on it could not
		// be stepped over in replay, where it traps too.
		t.spin.phase = spinNone
		return r.resume(t, 0)
	}
	if t.spin.steps < t.spin.skip && insn.Steppable(code) {
		t.spin.steps++
		return ptrace.Step(t.tid, 0)
	}
	if p, ok := insn.PlanPatch(code, regs[trace.RIP]); ok {
		// A run of one instruction is preferred, or one the file's
		// analysis says no jump lands inside: a branch into a longer
		// run's middle costs replay a stop each time (see insn.Patch),
		// and loops are often entered there (a search in qsort's merge
		// loop took 780k of them). After a few steps, any run.
		if len(p.Insns) == 1 || t.spin.steps >= t.spin.skip+maxSeekClean || !insn.Steppable(code) || r.runClear(t, regs[trace.RIP], p) {
			return r.firstPass(t, regs, code[0])
		}
	}
	if !insn.Steppable(code) && isKernelEntry(code) {
		// A system call or a trapped instruction: an event of its own
		// comes, and a held signal is delivered there.
		t.spin.phase = spinNone
		return r.resume(t, 0)
	}
	if !insn.Steppable(code) || t.spin.steps >= t.spin.skip+maxSeek {
		return r.preempt(t, regs, "max seek or unsteppable", trace.FlagApprox, nil)
	}
	t.spin.steps++
	return ptrace.Step(t.tid, 0)
}

// runClear says whether the file's analysis knows that no jump lands
// inside the run p at rip (patch.Space.Lands).
func (r *Recorder) runClear(t *thread, rip uint64, p insn.Patch) bool {
	if t.proc.code == nil {
		return false
	}
	lands, known := t.proc.code.Lands(rip, p.Boundaries())
	return known && !lands
}

// abandonSeek lets t run on without preempting it now (it stands at a rep
// string instruction); the next deadline interrupts it again.
func (r *Recorder) abandonSeek(t *thread) error {
	t.spin.phase = spinNone
	return r.resume(t, 0)
}

// firstPass is the arrival at a patchable point: note the state and wait
// for the next pass, at a breakpoint, or in a hurry by single-stepping.
func (r *Recorder) firstPass(t *thread, regs *trace.Regs, op byte) error {
	snap, err := r.snapshot(t, regs)
	if err != nil {
		return err
	}
	t.spin.first = snap
	t.spin.pc = regs[trace.RIP]
	t.spin.orig = op
	t.spin.phase = spinStepping
	if t.spin.hurry {
		t.spin.phase = spinCircling
		t.spin.steps = 0
	}
	return ptrace.Step(t.tid, 0)
}

// circleStep is one step of a hurried check: back at the point is its
// second pass; a system call ends the check (it is an event, and a switch
// point); after maxCircle instructions the thread is preempted where it is.
func (r *Recorder) circleStep(t *thread, regs *trace.Regs) error {
	if regs[trace.RIP] == t.spin.pc {
		return r.secondPass(t, regs)
	}
	code := r.codeAt(t, regs[trace.RIP])
	if !insn.Steppable(code) && isKernelEntry(code) || r.trapsAt(code) {
		t.spin.phase = spinNone
		t.spin.first = snapshot{}
		return r.resume(t, 0)
	}
	if insn.RepString(code) {
		t.spin.first = snapshot{}
		return r.abandonSeek(t)
	}
	if t.spin.steps >= maxCircle || !insn.Steppable(code) {
		// Preempted here, where replay can patch: at a point it cannot,
		// each pass is a stop, and a point in a hot loop that matches
		// only in the recorded iteration is then out of its search's
		// reach. Else on to one, or the next deadline tries again.
		if _, ok := insn.PlanPatch(code, regs[trace.RIP]); ok {
			t.spin.first = snapshot{}
			return r.preempt(t, regs, "no second pass", trace.FlagApprox, nil)
		}
		if t.spin.steps >= maxCircle+maxSeek || !insn.Steppable(code) {
			t.spin.first = snapshot{}
			return r.abandonSeek(t)
		}
	}
	t.spin.steps++
	return ptrace.Step(t.tid, 0)
}

// secondPass compares the next pass at the point with the first.
func (r *Recorder) secondPass(t *thread, regs *trace.Regs) error {
	snap, err := r.snapshot(t, regs)
	if err != nil {
		return err
	}
	first := t.spin.first
	t.spin.first = snapshot{}
	if debug {
		for i := range snap.regs {
			if snap.regs[i] != first.regs[i] {
				fmt.Fprintf(os.Stderr, "rec: second pass: %s %#x, was %#x\n", trace.RegNames[i], snap.regs[i], first.regs[i])
			}
		}
	}
	if !sameGPRs(&snap.regs, &first.regs) {
		return r.logPreempt(t, regs, "registers changed", trace.FlagApprox, snap.approx.all(), snap.approx.wide)
	}
	if word, ok := firstChange(&first, &snap); ok {
		return r.logPreempt(t, regs, "memory changed", trace.FlagApprox, append([]trace.Mem{word}, snap.approx.all()...), snap.approx.wide)
	}
	if snap.regs != first.regs || snap.fp != first.fp || snap.approx.wide != first.approx.wide {
		return r.logPreempt(t, regs, "flags, fpu or stack changed", trace.FlagApprox, snap.approx.all(), snap.approx.wide)
	}
	return r.logPreempt(t, regs, "spin", 0, nil, 0) // a spin
}

// sameGPRs compares the general registers, those the replay trampoline
// compares: a difference in the flags alone (the parity of a result) does
// not tell passes apart there.
func sameGPRs(a, b *trace.Regs) bool {
	for _, i := range []int{trace.RAX, trace.RCX, trace.RDX, trace.RBX, trace.RSP, trace.RBP, trace.RSI, trace.RDI,
		trace.R8, trace.R9, trace.R10, trace.R11, trace.R12, trace.R13, trace.R14, trace.R15} {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// snapshot reads t's fingerprint state at regs.
func (r *Recorder) snapshot(t *thread, regs *trace.Regs) (snapshot, error) {
	mem := r.memOf(t)
	s := snapshot{regs: *regs, dataRange: r.dataOf(t)}
	s.stackAt, s.stack = mem.StackWindow(regs[trace.RSP])
	var err error
	if s.fp, err = ptrace.FPHash(t.tid); err != nil {
		return s, err
	}
	for _, rg := range s.dataRange {
		b := make([]byte, rg.Len)
		n, _ := mem.ReadAt(b, rg.Addr)
		s.data = append(s.data, b[:n])
	}
	s.approx, _ = r.approxPoint(t, regs)
	return s, nil
}

// firstChange finds the first 8-byte word, in the stack window, the
// executable's data, the stack from rsp up, then what the registers
// point at, that differs between two passes, and returns it as it is at
// the second.
func firstChange(a, b *snapshot) (trace.Mem, bool) {
	word := func(addr uint64, x, y []byte) (trace.Mem, bool) {
		for i := 0; i+8 <= len(x) && i+8 <= len(y); i += 8 {
			if !bytes.Equal(x[i:i+8], y[i:i+8]) {
				return trace.Mem{Addr: addr + uint64(i), Data: append([]byte(nil), y[i:i+8]...)}, true
			}
		}
		return trace.Mem{}, false
	}
	if a.stackAt == b.stackAt {
		if w, ok := word(b.stackAt, a.stack, b.stack); ok {
			return w, true
		}
	}
	for i := range min(len(a.data), len(b.data)) {
		if w, ok := word(b.dataRange[i].Addr, a.data[i], b.data[i]); ok {
			return w, true
		}
	}
	if a.approx.deep.Addr == b.approx.deep.Addr {
		if w, ok := word(b.approx.deep.Addr, a.approx.deep.Data, b.approx.deep.Data); ok {
			return w, true
		}
	}
	for _, p := range b.approx.ptrs {
		for _, q := range a.approx.ptrs {
			if q.Addr != p.Addr {
				continue
			}
			if w, ok := word(p.Addr, q.Data, p.Data); ok {
				return w, true
			}
		}
	}
	return trace.Mem{}, false
}

// trapsAt says whether code starts with a cpuid the CPU traps (CPUID
// faulting), which is no kernel entry where the CPU does not.
func (r *Recorder) trapsAt(code []byte) bool {
	return r.cpuidFaulting && len(code) >= 2 && code[0] == 0x0f && code[1] == 0xa2
}

// isKernelEntry reports whether the instruction makes a system call or
// traps into the recorder, which logs it as an event (rdtsc, rdtscp, the
// ud2 of a patched rdrand or rdseed; cpuid with CPUID faulting is not known
// here and counts as not).
func isKernelEntry(code []byte) bool {
	if len(code) < 2 {
		return false
	}
	switch {
	case code[0] == 0x0f && (code[1] == 0x05 || code[1] == 0x34 || code[1] == 0x31 || code[1] == 0x0b):
		return true // syscall, sysenter, rdtsc, ud2
	case code[0] == 0xcd:
		return true // int n
	case len(code) >= 3 && code[0] == 0x0f && code[1] == 0x01 && code[2] == 0xf9:
		return true // rdtscp
	}
	return false
}

// stepSignal handles a signal stop of a thread the detector is stepping:
// the step has not happened, do it again. It reports false for a stop that
// is not an asynchronous signal (a fault of the stepped instruction), which
// ends the seek and is handled as usual.
func (r *Recorder) stepSignal(t *thread, sig int, info []byte) (bool, error) {
	switch t.spin.phase {
	case spinStepping, spinSeeking, spinCircling:
	default:
		return false, nil
	}
	if isSyncSignal(sig, info) {
		r.cancelSpin(t)
		return false, nil
	}
	r.hold(t, sig, info)
	return true, ptrace.Step(t.tid, 0)
}

// armSpin writes or removes the breakpoint at the detector's pc.
func (r *Recorder) armSpin(t *thread, on bool) error {
	b := []byte{t.spin.orig}
	if on {
		b[0] = 0xcc
	}
	if _, err := r.memOf(t).WriteAt(b, t.spin.pc); err != nil {
		return err
	}
	t.spin.armed = on
	return nil
}

// cancelSpin abandons the detector (the thread reached a system call).
func (r *Recorder) cancelSpin(t *thread) {
	if t.spin.armed {
		r.armSpin(t, false)
	}
	t.spin.phase = spinNone
	t.spin.first = snapshot{}
}

// preempt logs a preemption of t at regs and gives the CPU to another thread
// (or delivers the held signal that caused it). The fingerprint is the
// registers, the stack window, the FPU/SSE registers (Value), the
// executable's data (Aux), the memory words in words (In) and, for an
// approximate one, the sum of the stack above them (Hash).
func (r *Recorder) preempt(t *thread, regs *trace.Regs, why string, flags uint32, words []trace.Mem) error {
	var wide uint64
	if flags&trace.FlagApprox != 0 {
		more, ok := r.approxPoint(t, regs)
		if !ok {
			// Not a point replay can stop at: the next deadline tries
			// again, or the fault the thread is about to take is an
			// event of its own.
			t.spin.phase = spinNone
			return r.resume(t, 0)
		}
		words = append(words, more.all()...)
		wide = more.wide
	}
	return r.logPreempt(t, regs, why, flags, words, wide)
}

// logPreempt is preempt at a point known to be one: the second pass of a
// breakpoint, whose snapshot has the approximate words already (words,
// and the wide stack sum wide, Event.Hash).
func (r *Recorder) logPreempt(t *thread, regs *trace.Regs, why string, flags uint32, words []trace.Mem, wide uint64) error {
	if debug {
		fmt.Fprintf(os.Stderr, "rec: preempt %d at %#x: %s (%d steps)\n", t.tid, regs[trace.RIP], why, t.spin.steps)
	}
	t.spin.phase = spinNone
	if regs[trace.OrigRAX] != ^uint64(0) {
		// Stopped by an interrupt, whose entry left its own mark there;
		// replay finds the point with a breakpoint (-1, no system call),
		// and a signal delivered here must see the same.
		regs[trace.OrigRAX] = ^uint64(0)
		if err := ptrace.SetRegs(t.tid, regs); err != nil {
			return fmt.Errorf("preempt at %#x: %w", regs[trace.RIP], err)
		}
	}
	mem := r.memOf(t)
	fp, err := ptrace.FPHash(t.tid)
	if err != nil {
		return err
	}
	var data uint64
	if !r.siblingInCall(t) {
		data = mem.DataSum(r.dataOf(t))
	}
	e := &trace.Event{Kind: trace.KindPreempt, Flags: flags, Tid: int32(t.tid), Regs: *regs,
		StackHash: mem.StackHash(regs[trace.RSP]), Value: fp, Aux: data, In: words, Hash: wide}
	if err := r.log(e); err != nil {
		return err
	}
	t.resumeRegs, t.haveRegs = *regs, true
	if c := t.cpu(); len(c.ready) > 0 && (len(t.held) == 0 || t.spin.heldBlocked) {
		r.parkReady(t, parkResume)
		return r.switchTo(r.takeOther(c, t))
	}
	t.sliceStart = time.Now()
	return r.resumeLogged(t)
}
