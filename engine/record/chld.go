package record

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// chldIdle is how many waits in a row may sleep in wait4 before the
// recorder stops listening to SIGCHLD.
const chldIdle = 256

// chldWatch subscribes to SIGCHLD only while the recorder needs it: when it
// polls with a deadline (threads wait for the CPU), a stop must wake its
// select. Otherwise it sleeps in wait4, which every stop wakes, and the
// stops of the tracees send no SIGCHLD at all (ptrace.QuietStops): a
// subscription cost, at every ptrace stop, a signal relayed through the
// runtime and a goroutine woken for nothing, and the signal alone woke a
// sleeping thread of ours (a third of the recorder's CPU in a loop of
// system calls).
type chldWatch struct {
	ch    chan os.Signal
	on    bool
	idle  int    // blocking waits since the last poll
	quiet func() // withdraws QuietStops
	loud  func() // withdraws LoudStops while subscribed
}

func newChldWatch() *chldWatch {
	return &chldWatch{ch: make(chan os.Signal, 1), quiet: ptrace.QuietStops()}
}

// polling is called before a non-blocking wait that may be followed by a
// select on c.ch: a stop after that wait then reaches the channel.
func (c *chldWatch) polling() {
	c.idle = 0
	if !c.on {
		c.loud = ptrace.LoudStops()
		signal.Notify(c.ch, unix.SIGCHLD)
		c.on = true
	}
}

// blocking is called before a wait that sleeps in wait4. The subscription
// is dropped after a run of them, not at once: a program whose threads
// take turns would otherwise subscribe and unsubscribe at every switch.
func (c *chldWatch) blocking() {
	if !c.on {
		return
	}
	if c.idle++; c.idle >= chldIdle {
		c.unsubscribe()
	}
}

// unsubscribe ends the subscription and drops a signal it left in the
// channel.
func (c *chldWatch) unsubscribe() {
	if !c.on {
		return
	}
	signal.Stop(c.ch)
	c.loud()
	c.on = false
	select {
	case <-c.ch:
	default:
	}
}

// close ends the watch when the recording ends.
func (c *chldWatch) close() {
	c.unsubscribe()
	c.quiet()
}
