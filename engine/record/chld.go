package record

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// chldIdle is how many waits in a row may sleep in wait4 before the
// recorder stops listening to SIGCHLD.
const chldIdle = 256

// chldWatch subscribes to SIGCHLD only while the recorder needs it: when it
// polls with a deadline (threads wait for the CPU), a stop must wake its
// select. Otherwise it sleeps in wait4, and a subscription would cost, at
// every ptrace stop, a signal relayed through the runtime and a goroutine
// woken for nothing: a third of the recorder's time in a loop of system calls.
type chldWatch struct {
	ch   chan os.Signal
	on   bool
	idle int // blocking waits since the last poll
}

func newChldWatch() *chldWatch { return &chldWatch{ch: make(chan os.Signal, 1)} }

// polling is called before a non-blocking wait that may be followed by a
// select on c.ch: a stop after that wait then reaches the channel.
func (c *chldWatch) polling() {
	c.idle = 0
	if !c.on {
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
		c.stop()
	}
}

// stop ends the subscription and drops a signal it left in the channel.
func (c *chldWatch) stop() {
	if !c.on {
		return
	}
	signal.Stop(c.ch)
	c.on = false
	select {
	case <-c.ch:
	default:
	}
}
