package record

import (
	"fmt"
	"maps"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The CPU balancer. The program starts bound to one CPU (the one rewind
// starts on, or --bind-to-cpu's), and so does every process it starts,
// which inherits the binding. Processes that run side by side
// (sidebyside.go) need not share it: each one's events are ordered only
// against its own. Left on one CPU, `make -j`'s compilers took turns there
// and a build took twice as long on two CPUs. Spread as soon as they are
// made, short-lived children (a shell's `sh -c`) ran 50% slower: each of
// their many stops then crossed CPUs to the tracer, which stays on the
// program's CPU.
//
// So a goroutine looks, every balancePeriod while two or more processes
// have run queues of their own, at how much CPU each used since the last
// look and how long it waited for one, and moves those that compute and
// wait for the program's CPU to other CPUs of rewind's, while the
// program's CPU has more processes that compute than the least busy one.
// Processes that stop often use little CPU between looks, and processes
// that take turns seldom wait: they stay with the tracer.
//
// Nothing a recorded process sees depends on which CPU it runs: cpuid's
// answers, rdtscp's TSC_AUX, getcpu and sched_getaffinity are recorded, and
// rseq, whose area the kernel writes the CPU into, is refused. A moved
// process still sees one CPU in its affinity mask. The program's own
// choice wins: a thread moves only while its mask is the program's CPU
// alone, so `taskset -c 3 make -j` under rewind keeps make's jobs on CPU 3.

// balancePeriod is how often the balancer looks at the processes.
const balancePeriod = 10 * time.Millisecond

// busyShare is the share of a period a process must have computed to count
// as busy (two processes that share a CPU fully get half each). To count
// as crowded, it must also have waited for the CPU, ready to run, for
// waitShare of it, and slept for less than 1-awakeShare: two processes
// that take turns (a client and its server) run half the time and wait a
// quarter, while the other writes its answer and goes on to its next read,
// but sleep the last quarter, and moving one apart would make each message
// cross CPUs, 3× slower than on one.
const (
	busyShare  = 0.2
	waitShare  = 0.25
	awakeShare = 0.9
)

// balancer moves busy processes off the program's CPU. The recorder tells
// it which processes have run queues of their own; it never touches the
// recorder's state, and moves threads with sched_setaffinity only, from its
// own goroutine.
type balancer struct {
	prog   int   // the program's CPU
	others []int // rewind's other CPUs, from the one after prog on

	mu      sync.Mutex
	procs   map[int]*balanced // by pid: the processes on queues of their own
	stopped bool              // no more moves (the recording ended or collapsed)
	last    time.Time         // the last look
	next    int               // where the search for the least busy CPU starts
	moved   map[int]int       // the processes moved, by CPU (Footer.Spread)
	wake    chan struct{}     // a process was added
	quit    chan struct{}
	done    chan struct{}
}

// balanced is what the balancer knows of one process.
type balanced struct {
	cpu int // the CPU its threads are bound to
	// ran is its CPU time at the last look, waited its threads' time
	// waiting for a CPU at the last look, if it was busy (-1: unknown).
	ran, waited time.Duration
	// busy: it computed for busyShare of the last period; crowded: it
	// also waited for the CPU for waitShare of it and hardly slept.
	busy, crowded bool
}

// newBalancer makes a balancer for a program bound to cpu, with set the
// CPUs rewind may use, or nil when that is cpu alone.
func newBalancer(cpu int, set unix.CPUSet) *balancer {
	if set.Count() < 2 {
		return nil
	}
	b := &balancer{prog: cpu, procs: map[int]*balanced{}, wake: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{})}
	for i := 1; i < 1024; i++ {
		if c := (cpu + i) % 1024; set.IsSet(c) {
			b.others = append(b.others, c)
		}
	}
	go b.run()
	return b
}

// add has the balancer watch process pid, which has a run queue of its own.
func (b *balancer) add(pid int) {
	if b == nil {
		return
	}
	// Where it runs: a child of a moved process runs where its parent
	// does; one whose mask the program chose (not one CPU) is none of
	// the balancer's business, and counts on no CPU (-1).
	cpu := -1
	var set unix.CPUSet
	if unix.SchedGetaffinity(pid, &set) == nil && set.Count() == 1 {
		for c := 0; c < 1024 && cpu < 0; c++ {
			if set.IsSet(c) {
				cpu = c
			}
		}
	}
	b.mu.Lock()
	if !b.stopped && b.procs[pid] == nil {
		b.procs[pid] = &balanced{cpu: cpu, ran: -1, waited: -1}
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// remove stops watching process pid: it ended, or takes turns with others
// on the serial queue, where it goes back to the program's CPU.
func (b *balancer) remove(pid int, back bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	if p := b.procs[pid]; p != nil {
		if back {
			moveThreads(pid, p.cpu, b.prog)
		}
		delete(b.procs, pid)
	}
	b.mu.Unlock()
}

// stop ends the balancing, sending every moved process back to the
// program's CPU when back is set (every process now takes turns there).
func (b *balancer) stop(back bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	if !b.stopped {
		b.stopped = true
		close(b.quit)
		for pid, p := range b.procs {
			if back {
				moveThreads(pid, p.cpu, b.prog)
			}
		}
		clear(b.procs)
	}
	b.mu.Unlock()
	<-b.done
}

// run looks at the processes every period while two or more are watched.
func (b *balancer) run() {
	defer close(b.done)
	tick := time.NewTicker(balancePeriod)
	defer tick.Stop()
	for {
		b.mu.Lock()
		idle := len(b.procs) < 2
		if idle {
			b.last = time.Time{}
		}
		b.mu.Unlock()
		if idle {
			select {
			case <-b.wake:
				continue
			case <-b.quit:
				return
			}
		}
		select {
		case <-tick.C:
			b.look(time.Now())
		case <-b.quit:
			return
		}
	}
}

// look measures the CPU each watched process used since the last look
// (its CPU clock, one system call), and, for those that were busy, how long
// they waited for one (their threads' schedstat files, read only then), and
// moves the processes the plan says. A process must be busy at two looks
// in a row to count as crowded: the first gives the wait a start.
func (b *balancer) look(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	period := float64(now.Sub(b.last))
	first := b.last.IsZero()
	b.last = now
	var ts unix.Timespec
	for pid, p := range b.procs {
		p.busy, p.crowded = false, false
		// A process's CPU clock, which any process may read.
		if unix.ClockGettime(int32(^pid<<3|2), &ts) != nil {
			p.ran, p.waited = -1, -1
			continue // gone: the recorder removes it at its exit
		}
		ran := time.Duration(ts.Nano())
		r := float64(ran - p.ran)
		p.busy = p.ran >= 0 && !first && period > 0 && r >= busyShare*period
		p.ran = ran
		if !p.busy {
			p.waited = -1
			continue
		}
		waited := waitTime(pid)
		if p.waited >= 0 && waited >= 0 {
			w := float64(waited - p.waited)
			p.crowded = w >= waitShare*period && r+w >= awakeShare*period
			if debug {
				fmt.Fprintf(os.Stderr, "rec: balance: %d on CPU %d ran %.0f%% waited %.0f%%\n", pid, p.cpu, 100*r/period, 100*w/period)
			}
		}
		p.waited = waited
	}
	for _, m := range b.plan() {
		moveThreads(m.pid, b.prog, m.to)
		b.procs[m.pid].cpu = m.to
		if b.moved == nil {
			b.moved = map[int]int{}
		}
		b.moved[m.to]++
	}
}

// spread returns how many processes it moved to each CPU (nil: none).
func (b *balancer) spread() map[int]int {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.moved)
}

// waitTime sums the time the threads of process pid waited, ready, for a
// CPU (/proc/PID/task/TID/schedstat's second field), or is -1.
func waitTime(pid int) time.Duration {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	d, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	var waited time.Duration
	for _, e := range d {
		b, err := os.ReadFile(dir + e.Name() + "/schedstat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) >= 2 {
			w, _ := strconv.ParseInt(f[1], 10, 64)
			waited += time.Duration(w)
		}
	}
	return waited
}

// move is one process sent to another CPU.
type move struct{ pid, to int }

// plan says which crowded processes on the program's CPU go where: all
// but the first, one at a time, to the CPU with the fewest busy processes,
// while that CPU has at least two fewer than the program's. Its choice
// depends on the processes alone (pids in order), not on the map's order.
func (b *balancer) plan() []move {
	load := map[int]int{}
	var here []int
	for pid, p := range b.procs {
		if !p.busy {
			continue
		}
		load[p.cpu]++
		if p.cpu == b.prog && p.crowded {
			here = append(here, pid)
		}
	}
	sort.Ints(here)
	var moves []move
	for _, pid := range here[min(1, len(here)):] {
		best := -1
		for i := range b.others {
			c := b.others[(b.next+i)%len(b.others)]
			if best < 0 || load[c] < load[best] {
				best = c
			}
		}
		if load[b.prog]-load[best] < 2 {
			break
		}
		load[b.prog]--
		load[best]++
		b.next++
		moves = append(moves, move{pid, best})
	}
	return moves
}

// moveThreads binds every thread of process pid that is bound to CPU from
// alone to CPU to; none for from -1, a process on CPUs of its choice. A
// refusal (a thread gone, a CPU taken away) only costs speed.
func moveThreads(pid, from, to int) {
	if from == to || from < 0 {
		return
	}
	d, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return
	}
	for _, e := range d {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var set unix.CPUSet
		if unix.SchedGetaffinity(tid, &set) != nil || set.Count() != 1 || !set.IsSet(from) {
			continue
		}
		set.Zero()
		set.Set(to)
		unix.SchedSetaffinity(tid, &set)
	}
}
