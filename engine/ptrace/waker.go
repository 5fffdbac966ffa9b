package ptrace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"

	"golang.org/x/sys/unix"
)

// wakerArg is argv[1] of the rewind binary when it runs as a waker.
const wakerArg = "__rewind_waker"

// pokeSignal is the signal Poke sends the waker's main thread, which the
// tracer sees as a signal-delivery stop and swallows.
const pokeSignal = unix.SIGUSR2

// Waker is a traced child process whose only purpose is to be seen by the
// tracer's Wait: its death (Wake) or a stop of its main thread (Poke) makes a
// blocking Wait of the tracer thread return, so that another goroutine can
// get the tracer's attention (a signal to rewind itself, a scheduling
// deadline) without the tracer polling. The tracer sleeps in wait4 at no cost
// between its tracees' stops; a subscription to SIGCHLD there would cost a
// signal and two thread wake-ups at every stop (a quarter of the recording
// time of a fork-heavy program).
type Waker struct {
	pid  int
	mu   sync.Mutex
	pipe *os.File // the write end of the child's stdin; closing it ends the child
}

// StartWaker starts a waker and seizes it. It must run on the tracer thread:
// only that thread's tracees and children are seen by its Wait.
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
	wk := &Waker{pid: cmd.Process.Pid, pipe: w}
	if err := Seize(wk.pid, OptExitKill); err != nil {
		wk.Close(false)
		return nil, fmt.Errorf("waker: %w", err)
	}
	return wk, nil
}

// Pid is the waker's process id, as Wait reports its stops and death.
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

// Poke has the waker stop once (a pokeSignal to its traced main thread),
// which Resume then lets go. It is safe from any goroutine. The signal
// goes straight to the thread: a byte for the waker to read and signal
// itself cost it a turn on a busy CPU before the tracer woke (a recording
// of a program taking 1 ms timer signals did not finish under load).
// A waker Wake ended is not signalled; one that died otherwise is a zombie
// until the tracer reaps it, and replaced right after.
func (w *Waker) Poke() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pipe != nil {
		unix.Tgkill(w.pid, w.pid, pokeSignal)
	}
}

// Resume lets the waker go on after a stop st that Wait reported for it,
// swallowing the pokes and the job-control stops (the waker must keep
// running) and passing any other signal on. It runs on the tracer thread.
func (w *Waker) Resume(st Status) error {
	sig := 0
	if st.Kind == StopSignal {
		switch unix.Signal(st.Sig) {
		case pokeSignal, unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		default:
			sig = st.Sig
		}
	}
	if err := Cont(w.pid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("waker: %w", err)
	}
	return nil
}

// Close ends the waker and reaps it (on the tracer thread), unless Wait
// already did (reaped). It is killed rather than waited for: one started
// just before may still be starting its runtime, which short recordings
// would wait out.
func (w *Waker) Close(reaped bool) {
	w.Wake()
	if !reaped {
		unix.Kill(w.pid, unix.SIGKILL)
		unix.Wait4(w.pid, nil, unix.WALL, nil)
	}
}

// runWaker is the waker's body: it lives until its stdin closes.
func runWaker() {
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}
