// Package ptrace wraps the Linux ptrace and wait interfaces with types, and
// provides the one OS thread every ptrace request must come from: the kernel
// binds a tracee to the thread that attached it, so a Go program must keep
// all its ptrace calls on a single locked goroutine.
package ptrace

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Thread runs functions on one goroutine locked to its OS thread. Every
// ptrace call of a session goes through the same Thread.
type Thread struct {
	work chan func()
	done chan struct{}
}

// NewThread starts the locked goroutine. Close stops it.
func NewThread() *Thread {
	t := &Thread{work: make(chan func()), done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		// Never unlocked: if the thread is left behind, the runtime kills
		// it when the goroutine exits, together with any ptrace state.
		runtime.LockOSThread()
		close(ready)
		for {
			select {
			case f := <-t.work:
				f()
			case <-t.done:
				return
			}
		}
	}()
	<-ready
	return t
}

// Do runs f on the locked thread and waits for it to return. A panic in f is
// re-raised in the caller so that it is not lost on another goroutine.
func (t *Thread) Do(f func()) {
	finished := make(chan any, 1)
	t.work <- func() {
		defer func() {
			if p := recover(); p != nil {
				// With the stack where it happened: the caller's
				// says nothing of it.
				finished <- fmt.Sprintf("%v\n\n%s", p, debug.Stack())
				return
			}
			finished <- nil
		}()
		f()
	}
	if p := <-finished; p != nil {
		panic(p)
	}
}

// DoValue runs f on the locked thread t, as Do does, and returns what f
// returns.
func DoValue[T any](t *Thread, f func() (T, error)) (T, error) {
	var v T
	var err error
	t.Do(func() { v, err = f() })
	return v, err
}

// Close stops the thread. The OS thread exits with it (it stays locked).
func (t *Thread) Close() {
	close(t.done)
}
