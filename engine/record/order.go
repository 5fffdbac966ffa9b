package record

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// Output order. Replay re-emits a write to a standard stream when it
// replays the write's event: the complete call, or the exit of a call that
// was left in the kernel while other threads ran. Where in that interval
// the bytes reached the stream only the kernel knows: at once when the pipe
// or terminal has room, piece by piece as a reader drains a full pipe,
// interleaved with other writers' pieces when a write is larger than
// PIPE_BUF. So the recorder makes the interval the only thing that matters:
//
//   - A write to a stream is not left in the kernel at its entry, as other
//     calls that may block are: its thread keeps the CPU, and the bytes reach
//     the stream before any other thread runs. Only if it still blocks after
//     a slice (a full pipe) does the deadline let others run meanwhile.
//   - While one thread's write to a file is in the kernel, another thread's
//     write to the same file waits at its entry until the first one's exit
//     is logged. Writes to one file never overlap, so their bytes reach it in
//     the order of their events. That thread would have waited in the kernel
//     anyway: the file was full.
//   - When a thread ends the process (exit_group) while another is blocked in
//     a write to a stream, the blocked write is interrupted and its exit
//     logged before the exit_group: its result is the count of bytes that
//     reached the stream, which replay re-emits. Interrupting it changes
//     nothing the program can see: it is about to be killed there.

// holdWrite stops t at the entry of its write to a stream if another
// thread's write to the same file is still in the kernel. It reports
// whether t is held; writeDone releases it.
func (r *Recorder) holdWrite(t *thread) bool {
	if t.stream == 0 {
		return false
	}
	id := r.out.ids[t.stream]
	for _, u := range r.threads {
		if u != t && u.writing() && r.out.ids[u.stream] == id {
			t.state, t.park = parked, parkHeldEntry
			r.out.held = append(r.out.held, t)
			return true
		}
	}
	return false
}

// writing reports whether t is in the kernel in a write to a stream whose
// entry is logged and whose exit is not.
func (t *thread) writing() bool {
	return t.stream != 0 && t.inSyscall && t.split && t.state != gone
}

// writeDone ends t's call to a stream (its exit is logged, or it died): if
// the call was a write left in the kernel, the threads held behind it are
// made ready; if t was itself held, it is forgotten.
func (r *Recorder) writeDone(t *thread) {
	if t.stream == 0 {
		return
	}
	id, release := r.out.ids[t.stream], t.split
	t.stream = 0
	keep := r.out.held[:0]
	for _, h := range r.out.held {
		switch {
		case h == t || h.state == gone:
		case release && r.out.ids[h.stream] == id:
			r.enqueue(h)
		default:
			keep = append(keep, h)
		}
	}
	clear(r.out.held[len(keep):])
	r.out.held = keep
}

// flushWrites logs the exits of the writes to streams that other threads
// of t's process have in the kernel, before t's exit_group kills them.
func (r *Recorder) flushWrites(t *thread) error {
	var ws []*thread
	for _, u := range r.threads {
		if u != t && u.proc == t.proc && u.writing() {
			ws = append(ws, u)
		}
	}
	slices.SortFunc(ws, func(a, b *thread) int { return a.tid - b.tid })
	for _, u := range ws {
		switch {
		case u.state == parked && u.park == parkBlockedExit:
			// Its write returned; its exit waits for its turn.
			r.dropReady(u)
		case u.state == inKernel:
			ok, err := r.interruptWrite(u)
			if err != nil || !ok {
				return err
			}
		default:
			continue
		}
		if _, err := r.logExit(u); err != nil {
			return err
		}
		// Stopped at its exit, its exit logged: the exit_group ends it.
		u.state, u.park = parked, parkResume
	}
	return nil
}

// interruptWrite interrupts u, blocked in a write, and waits for the exit
// stop of the write. It reports false when u did not stop there (it died,
// or stopped for something else, which is handled as usual).
func (r *Recorder) interruptWrite(u *thread) (bool, error) {
	if err := ptrace.Interrupt(u.tid); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return false, nil
		}
		return false, fmt.Errorf("interrupt the write of thread %d: %w", u.tid, err)
	}
	st, _, err := ptrace.Wait(u.tid, false)
	if err != nil {
		return false, err
	}
	if st.Kind == ptrace.StopSyscall {
		return true, nil
	}
	return false, r.dispatch(st)
}
