package tracediff

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
)

// entry is one difference found, before the report sums them up.
type entry struct {
	finding
	proc, thread int // from 1
	// a and b are the steps (nil: the step is missing there); pa, pb the
	// processes and ta, tb the threads they belong to (nil: unpaired).
	a, b   *item
	pa, pb *process
	ta, tb *thread
	// nextA and nextB are, for a missing step, the thread's next event in
	// that recording (-1: none).
	nextA, nextB int64
	// order places the entry in B's order of events.
	order float64
}

// pairProcesses pairs the processes of A with those of B: pids differ
// between runs, so by command line, in order of creation.
func pairProcesses(pa, pb []*process) map[*process]*process {
	out := map[*process]*process{}
	used := map[*process]bool{}
	match := func(a *process, strict bool) {
		for _, b := range pb {
			if used[b] || path.Base(a.exe) != path.Base(b.exe) {
				continue
			}
			if strict && !slices.Equal(tail(a.args), tail(b.args)) {
				continue
			}
			out[a], used[b] = b, true
			return
		}
	}
	for _, a := range pa {
		match(a, true)
	}
	for _, a := range pa {
		if out[a] == nil {
			match(a, false)
		}
	}
	return out
}

// tail is argv without argv[0], which names the program's path.
func tail(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	return args[1:]
}

// idMap maps the pids and tids of paired processes and threads (by order
// of creation).
func idMap(pairs map[*process]*process) ids {
	m := ids{}
	for a, b := range pairs {
		m[strconv.Itoa(int(a.pid))] = strconv.Itoa(int(b.pid))
		for i := range min(len(a.threads), len(b.threads)) {
			m[strconv.Itoa(int(a.threads[i].tid))] = strconv.Itoa(int(b.threads[i].tid))
		}
	}
	return m
}

// compare finds every difference between two recordings.
func compare(ra, rb *recording) []entry {
	pairs := pairProcesses(ra.procs, rb.procs)
	m := idMap(pairs)
	var out []entry
	var matched []entry
	pairedB := map[*process]bool{}
	for pi, pa := range ra.procs {
		pb := pairs[pa]
		if pb == nil {
			it := firstItem(pa)
			out = append(out, entry{finding: finding{cat: CatProcess, what: "process " + command(pa) + " only in A"},
				proc: pi + 1, thread: 1, a: it, pa: pa, nextB: -1, order: float64(pa.born) + 0.5})
			continue
		}
		pairedB[pb] = true
		for ti := range max(len(pa.threads), len(pb.threads)) {
			var ta, tb *thread
			if ti < len(pa.threads) {
				ta = pa.threads[ti]
			}
			if ti < len(pb.threads) {
				tb = pb.threads[ti]
			}
			es, ms := compareThreads(ta, tb, m)
			for _, list := range [][]entry{es, ms} {
				for i := range list {
					list[i].proc, list[i].thread, list[i].pa, list[i].pb = pi+1, ti+1, pa, pb
				}
			}
			out, matched = append(out, es...), append(matched, ms...)
		}
	}
	for _, pb := range rb.procs {
		if !pairedB[pb] {
			it := firstItem(pb)
			ev := pb.born
			if it != nil {
				ev = it.ev
			}
			out = append(out, entry{finding: finding{cat: CatProcess, what: "process " + command(pb) + " only in B"},
				proc: slices.Index(rb.procs, pb) + 1, thread: 1, b: it, pb: pb, nextA: -1, order: float64(ev)})
		}
	}
	out = append(out, scheduling(matched)...)
	slices.SortStableFunc(out, func(x, y entry) int {
		switch {
		case x.order < y.order:
			return -1
		case x.order > y.order:
			return 1
		}
		return 0
	})
	return out
}

// compareThreads aligns the histories of two threads (either may be nil:
// a thread one run has and the other not) and returns their differences
// and the steps paired (entries with no finding).
func compareThreads(ta, tb *thread, m ids) ([]entry, []entry) {
	var ia, ib []item
	if ta != nil {
		ia = ta.items
	}
	if tb != nil {
		ib = tb.items
	}
	keys := func(its []item) []string {
		out := make([]string, len(its))
		for i := range its {
			out[i] = its[i].key
		}
		return out
	}
	steps := align(keys(ia), keys(ib))
	var out, matched []entry
	lastB := -0.5
	if len(ib) > 0 {
		lastB = float64(ib[0].ev) - 0.5
	}
	next := func(its []item, from int) int64 {
		if from < len(its) {
			return its[from].ev
		}
		return -1
	}
	na, nb := 0, 0 // the next step of each
	for _, s := range steps {
		e := entry{ta: ta, tb: tb, nextA: -1, nextB: -1}
		switch {
		case s.a >= 0 && s.b >= 0:
			a, b := &ia[s.a], &ib[s.b]
			na, nb, lastB = s.a+1, s.b+1, float64(b.ev)
			matched = append(matched, entry{a: a, b: b, ta: ta, tb: tb, nextA: -1, nextB: -1})
			f, differ := classify(a, b, m)
			if !differ {
				continue
			}
			e.finding, e.a, e.b, e.order = f, a, b, float64(b.ev)
		case s.a >= 0:
			a := &ia[s.a]
			na = s.a + 1
			e.finding, e.a, e.nextB, e.order = onlyFinding(a, true), a, next(ib, nb), lastB+0.25
		default:
			b := &ib[s.b]
			nb, lastB = s.b+1, float64(b.ev)
			e.finding, e.b, e.nextA, e.order = onlyFinding(b, false), b, next(ia, na), float64(b.ev)
		}
		out = append(out, e)
	}
	return out, matched
}

// scheduling finds where the threads ran in another order: the paired
// steps in A's order and in B's, position by position; where another
// thread took the step, the runs were scheduled otherwise.
func scheduling(matched []entry) []entry {
	byA := slices.Clone(matched)
	slices.SortFunc(byA, func(x, y entry) int { return cmp.Compare(x.a.ev, y.a.ev) })
	slices.SortFunc(matched, func(x, y entry) int { return cmp.Compare(x.b.ev, y.b.ev) })
	var out []entry
	for k, eb := range matched {
		ea := byA[k]
		if ea.proc == eb.proc && ea.thread == eb.thread {
			continue
		}
		e := eb
		e.a, e.pa, e.ta = ea.a, ea.pa, ea.ta
		e.finding = finding{cat: CatScheduling, name: "order",
			what: fmt.Sprintf("another thread ran: process %d thread %d in B, process %d thread %d in A", eb.proc, eb.thread, ea.proc, ea.thread)}
		e.order = float64(eb.b.ev) - 0.1
		out = append(out, e)
	}
	return out
}

// firstItem is a process's first step, nil when it has none.
func firstItem(p *process) *item {
	for _, t := range p.threads {
		if len(t.items) > 0 {
			return &t.items[0]
		}
	}
	return nil
}

// command is a process's command line, for messages.
func command(p *process) string {
	if len(p.args) == 0 {
		return path.Base(p.exe)
	}
	s := path.Base(p.exe)
	for _, a := range p.args[1:] {
		s += " " + a
	}
	return s
}
