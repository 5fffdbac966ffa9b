// Package tracediff compares two recordings of the same program: it aligns
// them per process and thread by their sequence of system calls, signals,
// traps and scheduling decisions, finds where they first part, and sums up
// what differs after (calls only in one, results that differ: times,
// random bytes, file contents; scheduling; exit statuses). `rewind diff`,
// the MCP tool diff_traces and `rewind replay --diff` are built on it.
package tracediff

import (
	"errors"
	"fmt"
	"time"
)

// ErrDifferentPrograms is returned (wrapped) when the two recordings are
// not of the same program.
var ErrDifferentPrograms = errors.New("not recordings of the same program")

// Options tune Diff.
type Options struct {
	// Stacks asks for the stack and source line of each side of the first
	// divergence, found by replaying both recordings up to it.
	Stacks bool
	// StackTimeout bounds each of those replays (0: DefaultStackTimeout).
	StackTimeout time.Duration
}

// DefaultStackTimeout bounds the replay that finds a side's stack.
const DefaultStackTimeout = 2 * time.Minute

// Diff compares recording a with recording b.
func Diff(a, b string, opts Options) (rep *Report, err error) {
	defer func() {
		// A recording the rules did not foresee must not end the caller
		// (an MCP server, the UI): it is reported as what it is.
		if p := recover(); p != nil {
			rep, err = nil, fmt.Errorf("diff: internal error comparing %s and %s: %v", a, b, p)
		}
	}()
	ra, err := load(a)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	rb, err := load(b)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	if err := sameProgram(ra, rb); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	rep = &Report{A: describe(ra), B: describe(rb), Differences: []Difference{}}
	entries := compare(ra, rb)
	var real []entry
	for _, e := range entries {
		if e.expected {
			rep.Expected = addTo(rep.Expected, e)
			continue
		}
		real = append(real, e)
		rep.Differences = addTo(rep.Differences, e)
	}
	rep.Same = len(real) == 0
	if rep.Same {
		return rep, nil
	}
	rep.First = divergence(ra, rb, firstBehaviour(real))
	if opts.Stacks {
		timeout := opts.StackTimeout
		if timeout <= 0 {
			timeout = DefaultStackTimeout
		}
		placeSide(a, rep.First.A, timeout)
		placeSide(b, rep.First.B, timeout)
	}
	return rep, nil
}

// sameProgram checks that two recordings ran the same executable: the same
// file (by its hash), or the same path.
func sameProgram(ra, rb *recording) error {
	ha, hb := ra.header, rb.header
	if ha.ExeSHA256 != "" && ha.ExeSHA256 == hb.ExeSHA256 || ha.Program == hb.Program {
		return nil
	}
	return fmt.Errorf("%s records %s, %s records %s: %w", ra.path, ha.Program, rb.path, hb.Program, ErrDifferentPrograms)
}

// describe sums up one recording.
func describe(r *recording) Recording {
	threads := 0
	for _, p := range r.procs {
		threads += len(p.threads)
	}
	return Recording{Trace: r.path, Program: r.header.Program, Args: r.header.Args, Events: r.events,
		Processes: len(r.procs), Threads: threads, Notice: r.notice}
}

// addTo counts e in the summary, by category and name.
func addTo(list []Difference, e entry) []Difference {
	name := e.name
	switch {
	case name != "":
	case e.a != nil:
		name = e.a.key
	case e.b != nil:
		name = e.b.key
	}
	for i := range list {
		if list[i].Category == e.cat && list[i].Name == name {
			list[i].Count++
			return list
		}
	}
	d := Difference{Category: e.cat, Name: name, Count: 1, FirstA: -1, FirstB: -1}
	if e.a != nil {
		d.FirstA, d.TextA = e.a.ev, e.a.text
	}
	if e.b != nil {
		d.FirstB, d.TextB = e.b.ev, e.b.text
	}
	return append(list, d)
}

// divergence describes the first difference, both sides.
func divergence(ra, rb *recording, e entry) *Divergence {
	return &Divergence{Category: e.cat, What: e.what, Process: e.proc, Thread: e.thread,
		A: side(e.a, e.pa, e.ta, e.nextA), B: side(e.b, e.pb, e.tb, e.nextB)}
}

// side is one recording's side of a difference: its step, or, where it
// lacks the step, the thread's next one.
func side(it *item, p *process, t *thread, next int64) *Side {
	s := &Side{Event: next, Missing: it == nil}
	at := next
	if it != nil {
		s.Event, s.Text, at = it.ev, it.text, it.next
	}
	s.Moment = "end"
	if at >= 0 {
		s.Moment = fmt.Sprintf("#%d", at)
	}
	if p != nil {
		s.Pid, s.Process = p.pid, command(p)
	}
	if t != nil {
		s.Thread = t.tid
	}
	if s.Missing && s.Event >= 0 && t != nil {
		for i := range t.items {
			if t.items[i].ev == s.Event {
				s.Text = t.items[i].text
			}
		}
	}
	return s
}

// firstBehaviour is the difference to show first: the first that is not
// only scheduling (a preemption in one run, threads in another order),
// which varies with the load of the machine and changes what the program
// computes only where it races, and whose consequences, if any, are the
// differences after it; the first scheduling one when nothing else differs.
func firstBehaviour(real []entry) entry {
	for _, e := range real {
		if e.cat != CatScheduling {
			return e
		}
	}
	return real[0]
}
