package record

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/internal/prefault"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Linux clone flags the recorder looks at.
const (
	cloneVM        = 0x100
	cloneVfork     = 0x4000
	cloneParentTid = 0x100000
	cloneChildTid  = 0x1000000
)

// vforkStackBelow and vforkStackAbove bound the parent's stack saved after a
// vfork-like clone: the child ran on (or next to) it before exec, and replay
// has no child to do those writes again.
const (
	vforkStackBelow = 64 << 10
	vforkStackAbove = 4 << 10
)

// maxHashed caps how many bytes of a write are read to hash it, and of a
// write to standard output or error are kept for replay to re-emit: all of
// them, up to what one event holds.
const maxHashed = trace.MaxEventMem

// errRestartBlock is -ERESTART_RESTARTBLOCK: the call will be resumed by
// restart_syscall, which has the interrupted call's arguments and outputs.
const errRestartBlock = -516

// effective returns the call as the table should see it: restart_syscall
// continues the thread's interrupted call.
func (t *thread) effective(c syscalls.Call) syscalls.Call {
	if c.Nr == unix.SYS_RESTART_SYSCALL && t.restartNr != 0 {
		c.Nr = t.restartNr
	}
	return c
}

// onSyscallEntry handles a syscall-enter-stop of the running thread.
func (r *Recorder) onSyscallEntry(t *thread) error {
	peeked := t.havePeek
	t.havePeek = false
	if stopped, err := r.takeInterrupt(t); stopped || err != nil {
		return err
	}
	if stopped, err := r.ptraceSyscallStop(t, true); stopped || err != nil {
		return err
	}
	t.inSyscall = true
	t.split, t.refused, t.vfork, t.in, t.forked, t.child, t.stream = false, false, false, nil, 0, 0, 0
	t.execFile = nil
	if peeked {
		t.entry = t.peeked
	} else if err := ptrace.GetRegs(t.tid, &t.entry); err != nil {
		return err
	}
	if r.mayRunApart() {
		if waits, err := r.tiesAtEntry(t); waits || err != nil {
			return err
		}
	}
	t.i386 = r.madeWithInt80(t)
	raw := t.call()
	t.nr = raw.Nr
	c := t.effective(raw)
	r.noteKill(&c)
	r.hookSiteAt(t, &c)
	if _, known := syscalls.Lookup(c.Nr); known {
		handled, done, err := r.emulateEntry(t, &c)
		if err != nil || done {
			return err
		}
		if !handled {
			if err := r.refuseAtEntry(t, &c); err != nil {
				return err
			}
		}
		if ranges, err := syscalls.InputRanges(&c, r.tracee(t)); err == nil {
			t.in, _ = readRanges(t.proc.mem, ranges, t.in) // inputs are display prefixes
		}
		switch c.Nr {
		case unix.SYS_CLONE:
			t.vfork = c.Args[0]&cloneVM != 0 && c.Args[0]&cloneVfork != 0
		case unix.SYS_VFORK:
			t.vfork = true
		}
		if err := r.sharedEntry(t, &c); err != nil {
			return err
		}
		t.stream = r.writeStream(t, &c)
	}
	switch c.Nr {
	case unix.SYS_EXIT, unix.SYS_EXIT_GROUP:
		// No exit stop follows: log it now. Others run only once the
		// thread is gone, so its exit (and the tid clearing the kernel does
		// then) happens at this point of the log in replay too.
		if c.Nr == unix.SYS_EXIT_GROUP {
			if err := r.flushWrites(t); err != nil {
				return err
			}
		}
		t.inSyscall = false
		t.spin.exiting = true
		e := &trace.Event{Kind: trace.KindSyscall, Flags: trace.FlagNoReturn | t.callFlags(), Tid: int32(t.tid),
			Syscall: int32(c.Nr), Regs: t.entry, ExitRegs: t.entry, In: t.in}
		if err := r.log(e); err != nil {
			return err
		}
		if stopped, err := r.ptraceExitStop(t, &c); stopped || err != nil {
			return err
		}
		if err := r.resume(t, 0); err != nil {
			return err
		}
		if c.Nr == unix.SYS_EXIT && t.tid == t.proc.pid && r.othersLive(t) {
			// The main thread leaves first (pthread_exit in main): the
			// kernel reports its death only with the process's, once the
			// others are gone, so they must run meanwhile.
			return r.leaveInKernel(t)
		}
		return nil
	case unix.SYS_EXECVE, unix.SYS_EXECVEAT:
		// The exec stop comes between entry and exit: log the entry first.
		t.execFile = r.execFdFile(t, &c) // execfd.go
		return r.logEntryAndRun(t, false)
	}
	if exit, ok := r.knownExit(t, &c); ok {
		t.knownExit, t.haveKnownExit = exit, true
		return r.finishSyscall(t)
	}
	return r.startCall(t, &c)
}

// othersLive reports whether t's process has threads other than t.
func (r *Recorder) othersLive(t *thread) bool {
	for _, o := range r.threads {
		if o != t && o.proc == t.proc && o.state != gone {
			return true
		}
	}
	return false
}

// startCall lets t, at the entry of c, into the kernel. A call that may
// block is logged as an entry and left there while another thread runs,
// except a write to a standard stream (see order.go), which may have to
// wait at its entry instead.
func (r *Recorder) startCall(t *thread, c *syscalls.Call) error {
	if r.holdWrite(t) {
		return r.scheduleIfIdle(t.cpu())
	}
	if len(t.held) > 0 && syscalls.MayBlock(c) {
		// A signal is held for this thread: let it interrupt the wait rather
		// than block forever on something the signal should end.
		if err := r.injectHeld(t); err != nil {
			return err
		}
	}
	if t.stream != 0 && r.stdTraced {
		// Processes run side by side: the entry goes in the log before
		// the bytes reach the stream, for the others' writes to wait
		// behind it (sidebyside.go, order.go).
		return r.logEntryAndRun(t, false)
	}
	if (len(t.cpu().ready) > 0 && t.stream == 0 || t.vfork) && syscalls.MayBlock(c) {
		// A vfork parent sleeps until its child execs or exits: the child
		// (not born yet) must get the CPU meanwhile.
		return r.logEntryAndRun(t, true)
	}
	return r.resume(t, 0)
}

// logEntryAndRun logs t's entry as a split system call, lets it continue in
// the kernel and, if switchAway is set, gives the CPU to another thread.
func (r *Recorder) logEntryAndRun(t *thread, switchAway bool) error {
	if err := r.logEntry(t); err != nil {
		return err
	}
	if err := r.resume(t, 0); err != nil {
		return err
	}
	if !switchAway {
		return nil
	}
	return r.leaveInKernel(t)
}

// logEntry logs t's current call as the entry of a split system call.
func (r *Recorder) logEntry(t *thread) error {
	t.split = true
	return r.log(&trace.Event{Kind: trace.KindSyscallEntry, Flags: t.callFlags(), Tid: int32(t.tid), Syscall: int32(t.nr), Regs: t.entry, In: t.in, Map: t.execFile})
}

// leaveInKernel marks t, resumed inside a system call, as blocked there and
// runs another thread.
func (r *Recorder) leaveInKernel(t *thread) error {
	t.state = inKernel
	return r.scheduleIfIdle(t.cpu())
}

// onSyscallExit handles a syscall-exit-stop.
func (r *Recorder) onSyscallExit(t *thread) error {
	if done, err := r.emulatedExit(t); done || err != nil {
		return err
	}
	if t.state == inKernel {
		// A blocking call returned while another thread runs: its exit is
		// logged when the thread is next scheduled.
		t.park = parkBlockedExit
		t.state = parked
		c := t.cpu()
		r.enqueue(t)
		if err := r.yieldBlockedCall(c); err != nil {
			return err
		}
		return r.scheduleIfIdle(c)
	}
	return r.finishSyscall(t)
}

// finishSyscall logs the exit of t's current system call (t is at its exit
// stop and is the running thread) and lets it go on.
func (r *Recorder) finishSyscall(t *thread) error {
	if t.nr == unix.SYS_FUTEX {
		if err := r.settleDying(t); err != nil {
			return err
		}
	}
	c, err := r.logExit(t)
	if err != nil {
		return err
	}
	if t.nr == unix.SYS_EXECVE || t.nr == unix.SYS_EXECVEAT {
		t.split = false
	}
	if c.Nr == unix.SYS_SCHED_YIELD && len(t.cpu().ready) > 0 {
		// What sched_yield asks for: let the others run now, rather than
		// spin through the rest of the slice.
		t.sliceStart = time.Time{}
	}
	r.noteContinue(&c)
	if moved, err := r.placeAfter(t, &c); moved || err != nil {
		return err
	}
	if stopped, err := r.ptraceEventStop(t); stopped || err != nil {
		return err
	}
	if stopped, err := r.ptraceSyscallStop(t, false); stopped || err != nil {
		return err
	}
	if switched, err := r.yield(t); switched || err != nil {
		return err
	}
	return r.resumeLogged(t)
}

// logExit logs the exit of t's current system call; t is at its exit stop.
func (r *Recorder) logExit(t *thread) (syscalls.Call, error) {
	t.inSyscall = false
	var exit trace.Regs
	if t.haveKnownExit {
		exit, t.haveKnownExit = t.knownExit, false
	} else if err := ptrace.GetRegs(t.tid, &exit); err != nil {
		return syscalls.Call{}, err
	}
	if err := r.completeSkipped(t, &exit); err != nil {
		return syscalls.Call{}, err
	}
	e := &trace.Event{Kind: trace.KindSyscall, Flags: t.callFlags(), Tid: int32(t.tid), Syscall: int32(t.nr), Regs: t.entry, ExitRegs: exit, In: t.in}
	if t.split {
		e.Kind = trace.KindSyscallExit
		e.Regs, e.In = trace.Regs{}, nil
	}
	c := t.effective(t.call())
	c.Ret = int64(exit[trace.RAX])
	r.forgetStreams(c.Nr)
	r.daemonSyscall(c.Nr)
	if c.Nr == unix.SYS_SET_ROBUST_LIST && c.Ret == 0 {
		t.robust = c.Args[0]
	}
	r.noteOwnFilter(t, &c)
	if err := r.tscExit(t, &c); err != nil {
		return c, err
	}
	t.restartNr = 0
	if c.Ret == errRestartBlock {
		t.restartNr = c.Nr
	}
	if err := r.captureOutputs(t, &c, e); err != nil {
		return c, err
	}
	other := r.procMemWrites(t, &c, e) // procmem.go
	r.entangled = r.entangled || other != nil
	if !t.split && !t.refused && isMemoryCall(c.Nr) {
		r.patchAfterSyscall(t, &c, e)
	}
	if why := syscalls.WhyUnsupported(&c); why != "" {
		r.markUnsupported(&c, e, why)
	}
	chk, key, err := r.sharedSyscall(t, &c, e)
	if err != nil {
		return c, err
	}
	if (t.nr == unix.SYS_EXECVE || t.nr == unix.SYS_EXECVEAT) && c.Ret == 0 {
		// (t.nr: the first program's execve has no entry the recorder saw.)
		if err := r.startProgram(t, e); err != nil {
			return c, err
		}
	}
	if c.Nr == unix.SYS_MMAP && c.Ret >= 0 && c.Args[2]&unix.PROT_EXEC != 0 && !t.refused {
		if err := r.patchKnown(t, e, uint64(c.Ret), uint64(c.Ret)+c.Args[1], 0); err != nil {
			return c, err
		}
	}
	// e.Hooks before the call's own site, the order replay patches them
	// in: a stub page the site's patch maps is there for those after.
	if err := r.patchLearned(t, e); err != nil {
		return c, err
	}
	if err := r.patchHookSite(t, e); err != nil {
		return c, err
	}
	if err := r.logOwned(e); err != nil { // (its outputs: readRanges's)
		return c, err
	}
	if other != nil {
		if err := r.log(other); err != nil {
			return c, err
		}
	}
	if err := r.sharedDropped(t); err != nil {
		return c, err
	}
	if r.joinsSerial(t) {
		// It runs nothing of its own until its turn on the serial queue
		// (placeAfter), where the processes it now shares memory with
		// take turns: the switch compares then, once the one running
		// there has stopped (switchTo). Compared now, the pages could
		// hold what that one writes after its next event, which replay
		// writes there before it runs to that event.
		t.proc.syncDue = true
	} else if err := r.sharedAfter(t, chk, key); err != nil {
		return c, err
	}
	r.publishShared()
	t.resumeRegs, t.haveRegs = exit, true
	r.writeDone(t)
	return c, nil
}

// captureOutputs fills e with what replay needs to reproduce the call.
func (r *Recorder) captureOutputs(t *thread, c *syscalls.Call, e *trace.Event) error {
	if t.refused && !t.pt.emulated {
		return nil
	}
	ranges, err := syscalls.OutputRanges(c, r.tracee(t))
	var rerr error
	if e.Mem, rerr = readRanges(t.proc.mem, ranges, nil); rerr != nil {
		e.Mem = nil
		r.markUnsupported(c, e, "it wrote "+rerr.Error())
		return nil
	}
	if err != nil && !syscalls.Failed(c) {
		// What it wrote is unknown: replay could not go on faithfully.
		r.markUnsupported(c, e, "rewind could not tell what it wrote: "+err.Error())
	}
	ok := c.Ret >= 0 || c.Ret < -4095
	switch c.Nr {
	case unix.SYS_MMAP:
		// Shared mappings get their contents from the shared memory
		// tracker (shared.go), which follows them as they change.
		if ok && c.Args[3]&(unix.MAP_ANONYMOUS|unix.MAP_SHARED) == 0 {
			m, err := r.files.capture(t.tid, int(int32(c.Args[4])), c.Args[5], c.Args[1])
			if err != nil {
				r.warnOnce("mmap capture", "rewind: warning: mmap of fd %d at event %d: %v\n", int32(c.Args[4]), r.events(), err)
			}
			e.Map = m
		}
	case unix.SYS_CLONE, unix.SYS_FORK, unix.SYS_VFORK:
		if ok {
			noteNewTask(t, c, e) // pidns.go
		}
		if ok && t.forked != 0 {
			e.Flags |= trace.FlagNewProcess
		}
		if ok && t.vfork {
			sp := e.Regs[trace.RSP]
			if t.split {
				sp = t.entry[trace.RSP]
			}
			stack, _ := readRanges(t.proc.mem, []syscalls.Range{{Addr: sp - vforkStackBelow, Len: vforkStackBelow + vforkStackAbove}}, nil)
			e.Mem = append(e.Mem, stack...)
		}
	}
	r.captureWrite(t, c, e)
	return nil
}

// readChunk bounds each allocation of readRanges, so that a length the
// program passed costs only the memory actually mapped there.
const readChunk = 64 << 20

// errEventTooLarge says a call wrote more than one event holds.
var errEventTooLarge = fmt.Errorf("more than the %d MiB one event holds", trace.MaxEventMem>>20)

// readRanges reads each range (strings up to their NUL) and appends what
// could be read: a range ends at its first unreadable byte. It never keeps
// part of what it could read: past trace.MaxEventMem bytes in all it stops
// with errEventTooLarge.
func readRanges(m *ptrace.Mem, ranges []syscalls.Range, out []trace.Mem) ([]trace.Mem, error) {
	total := 0
	for _, rg := range ranges {
		if rg.Addr == 0 || rg.Len <= 0 {
			continue
		}
		if rg.CString {
			s, _ := m.ReadString(rg.Addr, rg.Len)
			out = append(out, trace.Mem{Addr: rg.Addr, Data: append(s, 0)})
			continue
		}
		var data []byte
		for len(data) < rg.Len {
			if total+len(data) >= trace.MaxEventMem {
				return out, errEventTooLarge
			}
			n := min(rg.Len-len(data), readChunk, trace.MaxEventMem-total-len(data))
			switch {
			case data == nil:
				data = prefault.Bytes(n) // a big read's pages at once
			case cap(data)-len(data) < n:
				// Past the first chunk, room doubled and backed at
				// once: append grew it by a quarter at a time, a fault a
				// page (50 ms of a 67 MB read's stop).
				data = append(prefault.Bytes(min(rg.Len, 2*cap(data), trace.MaxEventMem-total)), data...)
			}
			got, _ := m.ReadAt(data[len(data):len(data)+n], rg.Addr+uint64(len(data)))
			data = data[:len(data)+got]
			if got < n {
				break
			}
		}
		if len(data) > 0 {
			out = append(out, trace.Mem{Addr: rg.Addr, Data: data})
			total += len(data)
		}
	}
	return out, nil
}

// warnOnce prints a warning the first time its key comes: the key names
// what is warned about ("refused 101 (ptrace)", "shared device mapping"), so
// that warnings of different kinds never silence each other.
func (r *Recorder) warnOnce(key string, format string, args ...any) {
	if r.warned[key] {
		return
	}
	for _, a := range args {
		if err, ok := a.(error); ok && errors.Is(err, trace.ErrWrite) {
			// The trace cannot be written: the recording ends with that
			// error, in one line, at its next event (the disk filled
			// while an mmap's file was stored once warned first).
			return
		}
	}
	r.warned[key] = true
	fmt.Fprintf(r.opts.Warn, format, args...)
}

// onExecEvent handles the exec stop of an execve in the recorded process.
func (r *Recorder) onExecEvent(t *thread) error {
	msg, err := ptrace.EventMsg(t.tid)
	if err != nil {
		return fmt.Errorf("exec stop: %w", err)
	}
	if int(msg) != t.tid {
		// The stop is reported under the main thread's tid, which the
		// exec'ing thread now has (threadexec.go).
		if t, err = r.execTakesLeader(t, int(msg)); err != nil {
			return err
		}
	}
	if err := t.proc.reopenMem(); err != nil {
		return err
	}
	if err := r.onExec(t); err != nil {
		return err
	}
	if err := r.ptraceExec(t, int(msg)); err != nil {
		return err
	}
	return r.resume(t, 0)
}

// onExec prepares a new image at its exec stop (patch the vDSO and the
// code, note AT_RANDOM) and logs it.
func (r *Recorder) onExec(t *thread) error {
	var regs trace.Regs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return err
	}
	// Before anything is patched: the image as the kernel left it.
	image, maps, data, err := r.captureImage(t.proc.pid, t.proc.mem, regs[trace.RSP])
	if err != nil {
		return fmt.Errorf("exec stop: %w", err)
	}
	st, vdso, err := r.startImage(t, regs[trace.RSP], maps)
	if err != nil {
		return fmt.Errorf("exec stop: %w", err)
	}
	e := &trace.Event{Kind: trace.KindExec, Tid: int32(t.tid), Regs: regs, Data: data, Value: vdso, Image: image}
	if r.logger.busy() || r.w.Events() > 0 { // (not the first exec: no wait for the logger)
		e.Map = r.captureExe(t.proc.pid)
	}
	if st.AtRandom != 0 {
		e.Mem, _ = readRanges(t.proc.mem, []syscalls.Range{{Addr: st.AtRandom, Len: 16}}, nil)
	}
	t.resumeRegs, t.haveRegs = regs, true
	return r.log(e)
}
