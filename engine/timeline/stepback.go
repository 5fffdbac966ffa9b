package timeline

// The instruction before a thread's first arrival at an address in its
// segment. previous finds the instruction before a moment by stepping
// from the arrival at its anchor before it; for a first arrival that is
// the segment's start, and a segment can hold millions of instructions:
// all of main, in a program that makes no system call before it exits,
// whose end (the exit_group instruction) is such a first arrival.
// reverse-stepi there single-stepped from before main, for minutes.
//
// The call that made the thread's frame ran shortly before (the frame's
// own instructions since): its last arrival before the moment, counted
// from the segment's start at full speed, is a point a few steps back.

// beforeFirstArrival returns the moment one instruction before m, the
// first arrival of its thread at m.PC in its segment, stepping from the
// call that made the thread's frame. ok is false when no such call ran in
// the segment before m, or m is more than maxNameSteps instructions after
// it: the caller steps from the segment's start.
func (tl *Timeline) beforeFirstArrival(m Moment) (Moment, bool) {
	if tl.pos != m {
		if err := tl.Goto(m); err != nil {
			return Moment{}, false
		}
	}
	var calls []uint64
	for _, r := range tl.frameReturns(m.Tid) {
		if r.callLen > 0 {
			calls = append(calls, r.addr-uint64(r.callLen))
		}
	}
	if len(calls) == 0 {
		return Moment{}, false
	}
	counts, err := tl.arrivalsTo(m, calls)
	if err != nil {
		return Moment{}, false
	}
	for _, c := range calls {
		k := counts[c]
		if k == 0 || c == m.PC {
			continue
		}
		at, ok := tl.viaProxy(Moment{Event: m.Event, Tid: m.Tid, PC: c, Hits: k}, m.PC)
		if ok && at.Steps > 0 {
			// The first arrival at m.PC after a point before m is m.
			at.Steps--
			return at, true
		}
	}
	return Moment{}, false
}

// arrivalsTo returns the arrivals at pcs in m's segment up to moment m,
// counted as Goto counts those of an operation's temporary breakpoints.
func (tl *Timeline) arrivalsTo(m Moment, pcs []uint64) (map[uint64]int, error) {
	temp, accept, gen := tl.temp, tl.accept, tl.tempGen
	defer func() { tl.temp, tl.accept, tl.tempGen = temp, accept, gen }()
	tl.temp, tl.accept = append(append([]uint64(nil), temp...), pcs...), nil
	tl.tempGen = tl.index.ExecsBefore(m.Event)
	if err := tl.Goto(m); err != nil {
		return nil, err
	}
	counts := map[uint64]int{}
	for _, a := range pcs {
		counts[a] = tl.counts[a]
	}
	return counts, nil
}
