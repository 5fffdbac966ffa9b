package record

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
)

// The watchdog: a recording that seems stuck says why. A user who sees
// `rewind record` sit there cannot tell a program waiting for its input
// from a thread rewind forgot to resume. When no tracee has stopped for
// stallAfter while none of them runs on a CPU, the recorder is woken and
// prints, on one line per thread, what each one waits for: the system call
// it is blocked in, rewind's scheduler, or a stop; then it goes on as
// before (and gives the CPU to a thread that waits for it, should nothing
// hold it). The next report of the same stall waits twice as long, so that
// a server idle for hours says so a handful of times.

// stallAfter is how long without a stop makes a stall.
const stallAfter = 5 * time.Second

// stallSignal stands, among the signals that wake the recorder, for the
// watchdog's report (durationElapsed and rotateSignal are the others).
const stallSignal = rotateSignal - 1

// watchdog is the state the watchdog goroutine shares with the recorder.
type watchdog struct {
	// stops counts the tracees' stops; the recorder adds one per stop.
	stops atomic.Uint64
}

// startWatchdog starts the watchdog; the function it returns stops it and
// waits until it has (it sends on r.stop, which closes after).
func (r *Recorder) startWatchdog() (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		r.watch(quit)
	}()
	return func() {
		close(quit)
		<-done
	}
}

// watch runs the watchdog until quit closes. It never touches the
// recorder's state: it only compares the stop count over time and wakes
// the recorder, which looks at its threads on its own thread.
func (r *Recorder) watch(quit <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, since, wait := r.dog.stops.Load(), time.Now(), stallAfter
	for {
		select {
		case <-quit:
			return
		case <-tick.C:
		}
		now := r.dog.stops.Load()
		if now != last {
			last, since, wait = now, time.Now(), stallAfter
			continue
		}
		if time.Since(since) < wait {
			continue
		}
		wait *= 2
		select {
		case r.stop <- stallSignal: // relayed as rewind's own signals are
		default: // the recorder has signals to handle: it is not stuck
		}
	}
}

// reportStall prints what every live thread waits for, unless one of them
// runs (a program computing without system calls makes no stops), and
// lets a thread waiting for the CPU have it if none holds it.
func (r *Recorder) reportStall() {
	tids := make([]int, 0, len(r.threads))
	for tid, t := range r.threads {
		if t.state != gone {
			tids = append(tids, tid)
		}
	}
	sort.Ints(tids)
	var lines []string
	for _, tid := range tids {
		t := r.threads[tid]
		kernel := ptrace.TaskState(tid)
		if kernel == 'R' {
			return // it computes: that is progress
		}
		lines = append(lines, fmt.Sprintf("thread %d (process %d): %s", tid, t.proc.pid, r.waitsFor(t, kernel)))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(r.opts.Warn, "rewind: no event for %s; waiting for:\n", stallAfter)
	for _, l := range lines {
		fmt.Fprintf(r.opts.Warn, "rewind:   %s\n", l)
	}
	if r.rootDone {
		// A stall with the first process gone asks again whether only
		// daemons are left: the stop that should have asked may have
		// come before the answer changed.
		_, _, whyNot := r.daemons()
		if whyNot != "" {
			fmt.Fprintf(r.opts.Warn, "rewind:   the program's first process has ended; not only daemons are left: %s\n", whyNot)
		}
		r.daemonRetry = time.Now()
	}
	if err := r.scheduleIdle(); err != nil {
		fmt.Fprintf(r.opts.Warn, "rewind:   scheduling a waiting thread: %v\n", err)
	}
}

// waitsFor says in words what thread t waits for; kernel is its state
// letter in /proc.
func (r *Recorder) waitsFor(t *thread, kernel byte) string {
	var b strings.Builder
	switch {
	case t.state == inKernel || (t.inSyscall && kernel != 't'):
		// Not returned: its output buffers are shown as addresses (a
		// failed call's are), its inputs as what they hold.
		c := t.effective(t.call())
		c.Ret = -1
		fmt.Fprintf(&b, "blocked in %s", syscalls.FormatCall(&c, t.proc.mem))
	case t.pt.waiting:
		b.WriteString("waits for a stop of a tracee it traces (emulated ptrace)")
	case t.state == parked && t.park == parkHeldEntry:
		b.WriteString("its write waits behind another thread's (output order)")
	case t.state == parked:
		b.WriteString("waits for rewind to give it the CPU")
		if c := t.cpu().current; c != nil && c != t {
			fmt.Fprintf(&b, " (thread %d has it)", c.tid)
		}
	case kernel == 'S' && hookWaits(t.tid):
		b.WriteString("waits in a read or a poll the hook makes (side by side: no stop)")
	default:
		b.WriteString("resumed by rewind")
	}
	switch kernel {
	case 't':
		b.WriteString("; stopped for rewind")
	case 'T':
		b.WriteString("; stopped (job control)")
	case 'D':
		b.WriteString("; in an uninterruptible wait")
	case 'Z', 'X':
		b.WriteString("; exited")
	}
	if len(t.held) > 0 {
		fmt.Fprintf(&b, "; %d signal(s) held for it", len(t.held))
	}
	return b.String()
}

// hookWaits says whether thread tid, asleep, sleeps in a read its hook
// makes (sidebyside.go): /proc's system call line ends with the
// instruction pointer, the hook's untraced syscall.
func hookWaits(tid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", tid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	nr, err := strconv.ParseUint(f[0], 10, 64)
	return err == nil && len(f) == 9 && hook.Waits(nr) && f[8] == fmt.Sprintf("%#x", hook.UntracedIP)
}
