package record

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Processes side by side. Under the recorder's filter, a process that
// shares no memory with another, and neither traces another nor writes
// into another's memory, takes turns with no one else: it has a run queue
// of its own (cpus.go), on which its threads take turns while other
// processes run at the same time. A process sees the others only through
// system calls, whose results the trace holds, and replay runs each
// process's events in their order, so the order between processes that
// only the kernel saw does not matter to it. What a process does between
// two of its events, the others cannot see until its next call.
//
// Two processes exchanging messages then cost no stop: a process alone on
// its queue with one thread lets its hook wait in a read of a pipe or a
// socket (hook.SetRunFlags), as nothing else waits for that thread to stop.
// A signal or an interrupt that stops the thread there turns the read into
// a traced one (leaveHookWait), which the recorder handles as any other.
//
// What ties processes makes them take turns on the serial queue: a shared
// mapping the tracker follows (shared.go) that may change under the
// process sends it there (a file it cannot write, mapped shared, as glibc
// maps gconv-modules.cache, does not: another process's write to that file
// is seen at the process's next call, as an unrecorded writer's is); a
// clone that shares memory keeps the child with its parent; ptrace between
// processes, process_vm_writev and writes to /proc/PID/mem send every
// process there for the rest of the recording (collapse).
//
// The order of the standard streams: while processes run side by side,
// their writes to the standard streams are traced (the hook's, not
// buffered), and a write's entry is logged before it runs, so that another
// process's write to the same file waits behind it (order.go) and their
// events are in the order in which their bytes reached the file.

// mayRunApart says whether processes may have run queues of their own now.
func (r *Recorder) mayRunApart() bool { return r.sideBySide && !r.solo }

// joinsSerial says whether t's process, on a run queue of its own, now
// maps shared memory that may change under it: placeAfter moves it to the
// serial queue.
func (r *Recorder) joinsSerial(t *thread) bool {
	return r.mayRunApart() && t.cpu() != r.serial && r.shared.mayChange(t.proc.pid)
}

// queueLeader gives the first process a run queue of its own, as every
// process that nothing ties to another has.
func (r *Recorder) queueLeader(p *process) {
	if r.mayRunApart() {
		p.cpu = r.newCPU()
		r.bal.add(p.pid)
	}
}

// placeAfter moves t's process, whose call c's exit is logged, to the run
// queue the call makes right: a child it forked to one of its own, itself
// to one of its own after an exec that left its parent's memory, to the
// serial queue once it maps shared memory. It reports whether t left the
// queue it had (it waits for its turn on the other one, or has it).
func (r *Recorder) placeAfter(t *thread, c *syscalls.Call) (bool, error) {
	if r.entangled {
		r.entangled = false
		if !r.solo {
			return true, r.collapse(t, "a process wrote into another's memory", parkResume)
		}
	}
	if !r.mayRunApart() {
		return false, nil
	}
	if r.joinsSerial(t) {
		return true, r.moveProcess(t, t.proc, r.serial)
	}
	if c.Ret < 0 && c.Ret >= -4095 || t.cpu() == r.serial {
		return false, nil
	}
	switch c.Nr {
	case unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_CLONE, unix.SYS_CLONE3:
		if t.forked != 0 {
			return false, r.splitOff(t, r.procs[t.forked])
		}
	case unix.SYS_EXECVE, unix.SYS_EXECVEAT:
		if r.liveOn(t.cpu()) > 1 && r.threadsOf(t.proc) == 1 {
			// A vfork child (posix_spawn) leaves its parent's memory.
			return true, r.moveProcess(t, t.proc, r.newCPU())
		}
	}
	return false, nil
}

// splitOff gives child, just forked by t (whose fork is logged: none of the
// child's events may come before it), a run queue of its own, unless it
// shares memory with t's process.
func (r *Recorder) splitOff(t *thread, child *process) error {
	if child == nil || child.cpu != t.cpu() || child.code == t.proc.code || r.shared.mayChange(child.pid) {
		return nil
	}
	ct := r.threads[child.pid]
	if ct == nil || ct.state == gone || r.threadsOf(child) != 1 {
		return nil
	}
	switch {
	case ct.state == parked && ct.park == parkResume:
	case ct.state == running && ct.spin.starting: // not at its first stop yet
	default:
		return nil
	}
	c := r.newCPU()
	r.dropReady(ct)
	child.cpu = c
	r.bal.add(child.pid)
	if ct.state == parked {
		c.ready = append(c.ready, ct)
	}
	if err := r.runFlagsOn(t.cpu()); err != nil {
		return err
	}
	if err := r.orderStreams(); err != nil {
		return err
	}
	if ct.state == parked {
		if err := r.setRunFlags(child); err != nil {
			return err
		}
	}
	return r.scheduleIfIdle(c)
}

// moveProcess moves p, whose thread t is stopped at a logged point as the
// current thread of its queue, to queue to: t waits for its turn there.
func (r *Recorder) moveProcess(t *thread, p *process, to *cpu) error {
	from := p.cpu
	if from == to {
		return nil
	}
	var moved []*thread
	for _, u := range r.threads {
		if u.proc == p && u.state == parked {
			r.dropReady(u)
			if u != t {
				moved = append(moved, u)
			}
		}
	}
	if from.current == t {
		from.current = nil
	}
	p.cpu = to
	if to == r.serial {
		r.bal.remove(p.pid, true)
	} else {
		r.bal.add(p.pid)
	}
	t.state, t.park = parked, parkResume
	to.ready = append(to.ready, t)
	to.ready = append(to.ready, moved...)
	r.dropEmpty()
	if err := r.runFlagsOn(from); err != nil {
		return err
	}
	if err := r.runFlagsOn(to); err != nil {
		return err
	}
	if err := r.orderStreams(); err != nil {
		return err
	}
	if err := r.scheduleIfIdle(from); err != nil {
		return err
	}
	return r.scheduleIfIdle(to)
}

// tiesAtEntry looks at the call t stops at the entry of (t.entry read,
// nothing of it handled: no emulated tracer exists before the first
// ptrace): one that ties processes (ptrace, process_vm_writev) sends
// every process to the serial queue first. It reports whether t waits for
// its turn there, where its entry is handled.
func (r *Recorder) tiesAtEntry(t *thread) (bool, error) {
	why := ""
	switch t.entry[trace.OrigRAX] {
	case unix.SYS_PTRACE:
		why = "a process called ptrace"
	case unix.SYS_PROCESS_VM_WRITEV:
		why = "a process wrote into another's memory"
	default:
		if !r.writesOthersShared(t) {
			return false, nil
		}
		why = "a process wrote a file another maps shared"
	}
	t.inSyscall = false
	return true, r.collapse(t, why, parkEntry)
}

// collapse sends every process to the serial queue for the rest of the
// recording. t, stopped, waits for its turn there, parked as park says; the threads running elsewhere
// are interrupted, and wait too from their next stop (mergeStop). No
// thread of the other queues, nor t, gets a turn before they all stopped:
// two threads of a process would share its hook, and t's call may be about
// one of them (a ptrace attach).
func (r *Recorder) collapse(t *thread, why string, park parkKind) error {
	if debug {
		fmt.Fprintf(os.Stderr, "rec: collapse: %s\n", why)
	}
	r.solo = true
	r.bal.stop(true)
	s := r.serial
	for _, c := range r.cpus {
		if c == s {
			continue
		}
		r.mergeHeld = append(r.mergeHeld, c.ready...)
		c.ready = nil
		u := c.current
		c.current = nil
		if u == nil || u == t || u.state != running {
			continue
		}
		if u.inSyscall {
			// In a call that may wait for one of those held: it waits
			// in the kernel as a split call, its exit logged at its turn.
			split, err := r.splitInCall(u)
			if err != nil {
				return err
			}
			if split {
				u.state = inKernel
				continue
			}
		}
		// Its stop comes as it comes: at the exit of a call that does
		// not wait; in user code or waiting in the hook, at the interrupt.
		u.merging = true
		r.mergePending++
		if !u.inSyscall {
			u.mergeKick = true
			if err := ptrace.Interrupt(u.tid); err != nil {
				return err
			}
		}
	}
	for _, p := range r.procs {
		p.cpu = s
	}
	r.cpus = r.cpus[:1]
	if s.current == t {
		s.current = nil
	}
	t.state, t.park = parked, park
	r.mergeHeld = append(r.mergeHeld, t)
	r.releaseMerged()
	for _, p := range r.procs {
		if err := r.setRunFlags(p); err != nil {
			return err
		}
	}
	if err := r.orderStreams(); err != nil {
		return err
	}
	return r.scheduleIfIdle(s)
}

// mergeStopped handles a stop of t that collapse waits for or caused (its
// interrupt's, which may come late). It reports whether it handled st.
func (r *Recorder) mergeStopped(t *thread, st ptrace.Status) (bool, error) {
	kick := st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_STOP && t.mergeKick
	if kick {
		t.mergeKick = false
	}
	switch {
	case !t.merging && kick:
		// The interrupt's stop, after another stop ended the wait: the
		// thread goes on as it was, a stopped one staying stopped.
		if t.state == stopped {
			return true, ptrace.Listen(t.tid)
		}
		return true, r.let(t, 0)
	case !t.merging:
		return false, nil
	case st.Kind == ptrace.Exited || st.Kind == ptrace.Killed || st.Kind == ptrace.StopGroup:
		// Nothing of it runs after these: handled as they come.
		t.merging = false
		r.mergeDone()
		return false, r.scheduleIfIdle(r.serial)
	}
	return true, r.mergeStop(t, st)
}

// mergeStop handles the first stop of t after collapse interrupted it on
// the queue it had: it waits on the serial queue for its turn, when its
// stop is handled.
func (r *Recorder) mergeStop(t *thread, st ptrace.Status) error {
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return err
	}
	if waited, err := r.leaveHookWait(t, &regs); waited || err != nil {
		// It makes its read again, traced: that stop is the one.
		if err != nil {
			return err
		}
		return r.let(t, 0)
	}
	if r.inHook(t.proc, regs[trace.RIP]) {
		// In the middle of the hook, whose buffer and stack the other
		// threads of its process use once it waits: it goes on, and is
		// interrupted again a moment later.
		if r.mergeRetry.IsZero() {
			r.mergeRetry = time.Now().Add(mergeRetryAfter)
		}
		return r.let(t, 0)
	}
	t.merging = false
	if err := r.flushHook(t); err != nil {
		return err
	}
	t.saved = st
	t.state, t.park = parked, parkSaved
	r.mergeHeld = append(r.mergeHeld, t)
	r.mergeDone()
	return r.scheduleIfIdle(r.serial)
}

// mergeRetryAfter is how long a thread collapse interrupted in the middle
// of the hook runs on before it is interrupted again.
const mergeRetryAfter = time.Millisecond

// mergeAgain interrupts again the threads collapse waits for that run.
func (r *Recorder) mergeAgain() error {
	r.mergeRetry = time.Time{}
	for _, t := range r.threads {
		if t.merging && t.state == running && !t.inSyscall {
			t.mergeKick = true
			if err := ptrace.Interrupt(t.tid); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
		}
	}
	return nil
}

// mergeDone counts a thread collapse waited for as stopped (or gone).
func (r *Recorder) mergeDone() {
	r.mergePending--
	r.releaseMerged()
}

// releaseMerged gives the threads collapse held their turns on the serial
// queue once none it waits for runs: first those whose stop waits (one may
// be inside a call, which no other thread of its process may see
// half-made: its site patched under it), then the others.
func (r *Recorder) releaseMerged() {
	if r.mergePending > 0 {
		return
	}
	for _, saved := range []bool{true, false} {
		for _, u := range r.mergeHeld {
			if u.state != gone && (u.park == parkSaved || u.park == parkEntry) == saved {
				r.serial.ready = append(r.serial.ready, u)
			}
		}
	}
	clear(r.mergeHeld)
	r.mergeHeld = r.mergeHeld[:0]
}

// leaveHookWait turns a read the hook waits in, which a signal or an
// interrupt stopped (regs), into a traced one: the call returns
// hook.Retrace, and the hook makes it again, traced. The recorder then
// handles it as it handles any call that may block. It reports whether t
// was waiting there.
func (r *Recorder) leaveHookWait(t *thread, regs *trace.Regs) (bool, error) {
	if !r.sideBySide || regs[trace.RIP] != hook.UntracedIP || !ptrace.IsRestart(regs[trace.RAX]) && int64(regs[trace.RAX]) != -int64(unix.EINTR) {
		return false, nil
	}
	if !hook.Waits(regs[trace.OrigRAX]) || !hook.Waiting(t.proc.mem) {
		return false, nil
	}
	regs[trace.RAX] = ^uint64(hook.Retrace - 1) // -Retrace
	if err := ptrace.SetRegs(t.tid, regs); err != nil {
		return true, fmt.Errorf("leave the hook's wait: %w", err)
	}
	return true, nil
}

// setRunFlags tells p's hook how it runs now (hook.SetRunFlags): whether
// it may wait in a read, and whether its writes to the standard streams
// are traced.
func (r *Recorder) setRunFlags(p *process) error {
	if !r.sideBySide || p.mem == nil {
		return nil
	}
	wait := r.mayRunApart() && p.cpu != r.serial && r.liveOn(p.cpu) == 1 && !r.shared.mayChange(p.pid)
	flags := runFlags{known: true, wait: wait, stdTraced: r.stdTraced}
	if flags == p.runFlags {
		return nil
	}
	if err := hook.SetRunFlags(p.mem, wait, r.stdTraced); err != nil {
		return nil // no hook page yet (a process from before its exec)
	}
	p.runFlags = flags
	return nil
}

// runFlags are the flags a process's hook was last given (setRunFlags).
type runFlags struct{ known, wait, stdTraced bool }

// runFlagsOn gives the processes of queue c their flags.
func (r *Recorder) runFlagsOn(c *cpu) error {
	for _, p := range r.procs {
		if p.cpu == c {
			if err := r.setRunFlags(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// orderStreams has the hooks trace writes to the standard streams while
// two queues or more have threads (see above), and buffer them again once
// one has. The change to traced comes when one queue, stopped, makes the
// second: no hook is in the middle of a write then.
func (r *Recorder) orderStreams() error {
	busy := 0
	for _, c := range r.cpus {
		if r.liveOn(c) > 0 {
			busy++
		}
	}
	if want := busy > 1; want != r.stdTraced {
		r.stdTraced = want
		for _, p := range r.procs {
			if err := r.setRunFlags(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// queueGone follows the end of a process of queue c: c is dropped if no
// process has it, and the standard streams are buffered again when one
// queue is left.
func (r *Recorder) queueGone(c *cpu) error {
	if !r.sideBySide {
		return nil
	}
	if c != r.serial && c.current == nil {
		r.dropEmpty()
	}
	return r.orderStreams()
}

// liveOn counts the live threads of queue c.
func (r *Recorder) liveOn(c *cpu) int {
	n := 0
	for _, t := range r.threads {
		if t.state != gone && t.proc.cpu == c {
			n++
		}
	}
	return n
}

// threadsOf counts the live threads of p.
func (r *Recorder) threadsOf(p *process) int {
	n := 0
	for _, t := range r.threads {
		if t.state != gone && t.proc == p {
			n++
		}
	}
	return n
}

// dropEmpty forgets the queues, but the serial one, that no process has.
func (r *Recorder) dropEmpty() {
	keep := r.cpus[:1]
	for _, c := range r.cpus[1:] {
		used := c.current != nil || len(c.ready) > 0
		for _, p := range r.procs {
			used = used || p.cpu == c
		}
		if used {
			keep = append(keep, c)
		}
	}
	clear(r.cpus[len(keep):])
	r.cpus = keep
}
