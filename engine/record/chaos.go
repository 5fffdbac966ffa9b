package record

import (
	"math"
	"math/rand/v2"
	"time"
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
const (
	chaosMinSlice = 50 * time.Microsecond
	chaosMaxSlice = 20 * time.Millisecond
)

type chaos struct {
	seed uint64
	rng  *rand.Rand
}

// newChaos seeds the generator (seed 0: a random seed).
func newChaos(seed uint64) *chaos {
	for seed == 0 {
		seed = rand.Uint64()
	}
	return &chaos{seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// takeNext removes from the ready queue the thread to run next: the
// oldest, or in chaos mode any.
func (r *Recorder) takeNext(c *cpu) *thread {
	i := 0
	if r.chaos != nil && len(c.ready) > 1 {
		i = r.chaos.rng.IntN(len(c.ready))
	}
	t := c.ready[i]
	c.ready = append(c.ready[:i], c.ready[i+1:]...)
	return t
}

// takeOther is takeNext after t was preempted: in chaos mode another
// thread than t, which a preemption is for (one between a load and its
// store loses an update only if another thread runs before the store).
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
	i := others[r.chaos.rng.IntN(len(others))]
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
	// Log-uniform: as many slices under 1ms as over.
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
