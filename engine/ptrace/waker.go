package ptrace

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"

	"golang.org/x/sys/unix"
)

// wakerArg is argv[1] of the rewind binary when it runs as a waker.
const wakerArg = "__rewind_waker"

// Waker is a child process whose only purpose is to end: its death makes a
// blocking Wait of the tracer thread return, so that another goroutine can
// get the tracer's attention (a signal to rewind itself) without the tracer
// polling. The tracer sleeps in wait4 at no cost between its tracees' stops;
// a timer or a channel there would cost a signal and two thread wake-ups at
// every stop.
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
	cmd := exec.Command(self, wakerArg)
	cmd.Stdin = r
	cmd.Env = []string{}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("waker: %w", err)
	}
	return &Waker{pid: cmd.Process.Pid, pipe: w}, nil
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

// runWaker is the waker's body: it lives until its stdin closes.
func runWaker() {
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}
