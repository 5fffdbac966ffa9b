package debugger

import (
	"fmt"
	"slices"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

// The gdb remote server (package gdbserver) drives the session with
// addresses, not source locations: gdb resolves its breakpoints itself and
// inserts them at every resume. These methods give it the session's
// breakpoints and watchpoints by address, so that exec generations,
// library mappings and the reverse searches treat them like the user's.

// SetAddressStops makes the breakpoints at addrs and the watchpoints ws the
// session's only ones. The engine is told only when they changed: gdb
// removes and inserts the same breakpoints around every stop, and each
// change makes the timeline replay the current segment again to count
// arrivals.
func (s *Session) SetAddressStops(addrs []uint64, ws []replay.Watchpoint) error {
	if len(ws) > replay.MaxWatchpoints {
		return fmt.Errorf("at most %d hardware watchpoints", replay.MaxWatchpoints)
	}
	var have []uint64
	for _, b := range s.bps {
		have = append(have, b.addrs...)
	}
	var haveW []replay.Watchpoint
	for _, w := range s.watches {
		haveW = append(haveW, w.wp)
	}
	if slices.Equal(have, addrs) && slices.Equal(haveW, ws) {
		return nil
	}
	gen := s.tl.Generation()
	s.bps = s.bps[:0]
	for _, a := range addrs {
		s.bps = append(s.bps, &breakpoint{id: s.nextID, spec: fmt.Sprintf("*%#x", a), addrs: []uint64{a}, gen: gen})
		s.nextID++
	}
	s.watches = s.watches[:0]
	for _, w := range ws {
		s.watches = append(s.watches, &watch{id: s.nextID, expr: fmt.Sprintf("*%#x", w.Addr), wp: w})
		s.nextID++
	}
	if err := s.syncBreakpoints(); err != nil {
		return fmt.Errorf("setting breakpoints: %w", err)
	}
	if err := s.syncWatches(); err != nil {
		return fmt.Errorf("setting watchpoints: %w", err)
	}
	return nil
}

// ContinueAddressStops runs forwards (or backwards) to the next stop at
// one of the address stops, a signal or an end of the recording. A write
// watchpoint stops only where the value changes, as gdb's watch reports.
func (s *Session) ContinueAddressStops(reverse bool) (*timeline.Stop, error) {
	if reverse {
		return s.continueBackward()
	}
	return s.continueForward()
}

// StopWatchpoint is the watchpoint that made st stop.
func (s *Session) StopWatchpoint(st *timeline.Stop) (replay.Watchpoint, bool) {
	if st.Reason != timeline.ReasonWatchpoint {
		return replay.Watchpoint{}, false
	}
	w := s.armedWatch(st)
	if w == nil {
		return replay.Watchpoint{}, false
	}
	return w.wp, true
}
