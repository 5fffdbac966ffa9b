package record

import (
	"math"
	"math/rand/v2"
	"time"

	"golang.org/x/sys/unix"
)

// Chaos mode (record --chaos) makes the scheduling decisions that the
// serialized recording takes for the program random: which ready thread
// runs next, and how long a slice is before a thread that makes no system
// call is preempted (at an approximate fingerprint: see spin.go). Races that
// the default scheduling hides (a thread runs its whole short loop within
// one slice) then show up in some recordings, and every recording replays
// as usual: the decisions are in the log, not in the generator.

// chaosSlices are the slice lengths chaos mode picks from, log-uniformly
// between the bounds: short slices preempt threads in the middle of short
// critical sections, long ones let a thread get far ahead of the others.
// Half of the recordings (drawn from the seed) take all their slices
// between the short bounds instead: a race in a loop of a millisecond
// needs a preemption inside it, which a slice drawn from the whole range
// is as likely as not to outlast (race.c's 1M increments lose an update
// in ~7% of short-sliced recordings here, ~2% of the others).
const (
	chaosMinSlice      = 50 * time.Microsecond
	chaosMaxSlice      = 20 * time.Millisecond
	chaosShortMinSlice = 100 * time.Microsecond
	chaosShortMaxSlice = 300 * time.Microsecond
)

// Periods: chaos mode alternates, at random, periods where every ready
// thread is as likely to run next as another with periods of priorities
// (rr's idea): each thread gets a random priority, and one runs only when
// no thread of a higher priority is ready, so that a thread can starve for
// the whole period (a bug that needs one thread to lag far behind, say a
// worker that has not started when the others expect its result). A
// period lasts between chaosMinPeriod and chaosMaxPeriod, log-uniformly:
// priorities also end the starvation of a thread that a higher one spins
// waiting for.
const (
	chaosMinPeriod = time.Millisecond
	chaosMaxPeriod = time.Second
	chaosLevels    = 8 // priorities 0 (lowest) to chaosLevels-1
)

type chaos struct {
	seed uint64
	rng  *rand.Rand
	// period is the current period's number and end; priorities says
	// whether it has them. A thread's priority is drawn the first time
	// the period looks at it.
	period     int
	periodEnd  time.Time
	priorities bool
	prio       map[*thread]chaosPrio
	// short: every slice is a short one (half of the recordings).
	short bool
}

// chaosPrio is a thread's priority in one period.
type chaosPrio struct {
	period, level int
}

// newChaos seeds the generator (seed 0: a random seed).
func newChaos(seed uint64) *chaos {
	for seed == 0 {
		seed = rand.Uint64()
	}
	ch := &chaos{seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), prio: map[*thread]chaosPrio{}}
	ch.short = ch.rng.IntN(2) == 0
	return ch
}

// level is t's priority in the current period, starting a new period when
// the last has ended.
func (ch *chaos) level(t *thread, now time.Time) int {
	if now.After(ch.periodEnd) {
		ch.period++
		lo, hi := float64(chaosMinPeriod), float64(chaosMaxPeriod)
		ch.periodEnd = now.Add(time.Duration(lo * math.Pow(hi/lo, ch.rng.Float64())))
		ch.priorities = ch.rng.IntN(2) == 0
		clear(ch.prio)
	}
	p, ok := ch.prio[t]
	if !ok || p.period != ch.period {
		p = chaosPrio{period: ch.period, level: ch.rng.IntN(chaosLevels)}
		ch.prio[t] = p
	}
	return p.level
}

// pick chooses among the indexes of c.ready in cands: at random, among
// those of the highest priority in a period that has priorities.
func (ch *chaos) pick(c *cpu, cands []int) int {
	now := time.Now()
	top := -1
	var best []int
	for _, i := range cands {
		l := ch.level(c.ready[i], now)
		if !ch.priorities {
			best = cands
			break
		}
		switch {
		case l > top:
			top, best = l, append(best[:0], i)
		case l == top:
			best = append(best, i)
		}
	}
	return best[ch.rng.IntN(len(best))]
}

// forget drops a thread that ended from the priorities.
func (ch *chaos) forget(t *thread) { delete(ch.prio, t) }

// takeNext removes from the ready queue the thread to run next: the
// oldest, or in chaos mode any (of the highest priority, in a period
// that has priorities).
func (r *Recorder) takeNext(c *cpu) *thread {
	i := 0
	if r.chaos != nil && len(c.ready) > 1 {
		all := make([]int, len(c.ready))
		for k := range all {
			all[k] = k
		}
		i = r.chaos.pick(c, all)
	}
	t := c.ready[i]
	c.ready = append(c.ready[:i], c.ready[i+1:]...)
	return t
}

// takeOther is takeNext after t was preempted: in chaos mode another
// thread than t, which a preemption is for (one between a load and its
// store loses an update only if another thread runs before the store),
// whatever the priorities: among the others, one of the highest.
func (r *Recorder) takeOther(c *cpu, t *thread) *thread {
	if r.chaos == nil || len(c.ready) < 2 {
		return r.takeNext(c)
	}
	var others []int
	for i, u := range c.ready {
		if u != t {
			others = append(others, i)
		}
	}
	if len(others) == 0 {
		return r.takeNext(c)
	}
	i := r.chaos.pick(c, others)
	u := c.ready[i]
	c.ready = append(c.ready[:i], c.ready[i+1:]...)
	return u
}

// newSlice is the length of the slice a thread gets when it is scheduled
// (0: the default).
func (r *Recorder) newSlice() time.Duration {
	if r.chaos == nil {
		return 0
	}
	lo, hi := float64(chaosMinSlice), float64(chaosMaxSlice)
	if r.chaos.short {
		lo, hi = float64(chaosShortMinSlice), float64(chaosShortMaxSlice)
	}
	// Log-uniform: as many slices under 1ms as over (in the long range).
	return time.Duration(lo * math.Pow(hi/lo, r.chaos.rng.Float64()))
}

// chaosSkip is how many instructions a preemption steps over before it
// looks for its point: where an interrupt lands is biased towards the
// instructions that stall (a load waiting for the store before it), and
// a race needs the points in between too.
func (r *Recorder) chaosSkip() int {
	if r.chaos == nil {
		return 0
	}
	return r.chaos.rng.IntN(chaosMaxSkip)
}

// chaosMaxSkip bounds chaosSkip: each step costs a ptrace stop.
const chaosMaxSkip = 16

// tracerCPU is the CPU the recorder's tracer thread runs on for a program
// bound to cpu: the same one, or, in chaos mode, another this process may
// use (the next one up, wrapping), so that the recorder is awake when a
// slice ends.
func (r *Recorder) tracerCPU(cpu int) int {
	if !r.opts.Chaos {
		return cpu
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return cpu
	}
	for i := 1; i < 1024; i++ {
		if c := (cpu + i) % 1024; set.IsSet(c) {
			return c
		}
	}
	return cpu
}
