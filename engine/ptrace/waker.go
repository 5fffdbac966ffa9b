package ptrace

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// wakerArg is argv[1] of the rewind binary when it runs as a waker.
const wakerArg = "__rewind_waker"

// Waker is a child process whose only purpose is to end: its death makes a
// blocking Wait of the tracer thread return, so that another goroutine can
// get the tracer's attention (a signal to rewind itself), or a deadline
// can (Alarm), without the tracer polling. The tracer sleeps in wait4 at
// no cost between its tracees' stops; a timer or a channel there would
// cost a signal and two thread wake-ups at every stop.
type Waker struct {
	pid  int
	mu   sync.Mutex
	pipe *os.File // the write end of the child's stdin; closing it ends the child
}

// StartWaker starts a waker. It must run on the tracer thread: only that
// thread's children are seen by its Wait.
func StartWaker() (*Waker, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("waker: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("waker: %w", err)
	}
	defer r.Close()
	// The native helper in its waker mode where there is one: rewind
	// itself would start a Go runtime on the other CPU (~3 ms of a short
	// recording).
	cmd := wakerCmd(self, helperFile(), r)
	err = cmd.Start()
	if err != nil && cmd.Path == helperPath {
		cmd = wakerCmd(self, nil, r)
		err = cmd.Start()
	}
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("waker: %w", err)
	}
	return &Waker{pid: cmd.Process.Pid, pipe: w}, nil
}

// wakerCmd is the command of a waker reading stdin: the native helper
// (native, its image) or, with none, rewind itself (self).
func wakerCmd(self string, native, stdin *os.File) *exec.Cmd {
	cmd := exec.Command(self, wakerArg)
	if native != nil {
		cmd = exec.Command(helperPath)
		cmd.Args = []string{helperName, "waker"}
		cmd.ExtraFiles = []*os.File{nil, nil, native}
	}
	cmd.Stdin = stdin
	cmd.Env = []string{}
	// A process group of its own: the terminal's Ctrl-C, Ctrl-\ and
	// hangup go to rewind's group, and a waker they killed would look,
	// to the recorder, like a wake nobody asked for, or (a spare) leave
	// it a dead waker to sleep on.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// Pid is the waker's process id, as Wait reports its death.
func (w *Waker) Pid() int { return w.pid }

// Wake ends the waker. It is safe from any goroutine, and more than once.
func (w *Waker) Wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pipe != nil {
		w.pipe.Close()
		w.pipe = nil
	}
}

// Alarm has the waker end d from now, in place of the alarm set before; a
// negative d cancels it. A stop may come first: Wait then returns it, and
// the waker's death later, if the alarm is not cancelled in time. The
// waker is sent the alarm's time on CLOCK_MONOTONIC, not d: one still
// starting reads it late, and must not ring that much later.
func (w *Waker) Alarm(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pipe != nil {
		at := int64(-1)
		if d >= 0 {
			at = monotonic() + int64(d)
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(at))
		w.pipe.Write(b[:]) // atomic: 8 bytes; a dead waker is seen by Wait
	}
}

// monotonic is CLOCK_MONOTONIC in nanoseconds, the clock of the waker's
// alarms.
func monotonic() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// Close ends the waker and reaps it (on the tracer thread), unless Wait
// already did (reaped). It is killed rather than waited for: one started
// just before may still be starting its runtime, which short recordings
// would wait out.
func (w *Waker) Close(reaped bool) {
	w.Wake()
	if !reaped {
		unix.Kill(w.pid, unix.SIGKILL)
		unix.Wait4(w.pid, nil, 0, nil)
	}
}

// runWaker is the waker's body where there is no native one (helper.c's
// waker): it lives until its stdin closes or the last alarm read there
// rings.
func runWaker() {
	alarms := make(chan time.Duration)
	go func() {
		var b [8]byte
		for {
			if _, err := io.ReadFull(os.Stdin, b[:]); err != nil {
				os.Exit(0)
			}
			at := int64(binary.LittleEndian.Uint64(b[:]))
			d := time.Duration(-1)
			if at >= 0 {
				d = max(time.Duration(at-monotonic()), 0)
			}
			alarms <- d
		}
	}()
	var ring <-chan time.Time
	for {
		select {
		case d := <-alarms:
			ring = nil
			if d >= 0 {
				ring = time.After(d)
			}
		case <-ring:
			os.Exit(0)
		}
	}
}
