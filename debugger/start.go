package debugger

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

// mainFunction names the function a user calls the program's main and
// where its first line is: Go's main.main, a Rust binary's own fn main
// (not the C main that std generates around it), else C and C++'s main.
func (s *Session) mainFunction() (string, []uint64, error) {
	t := s.symbols()
	var names []string
	if s.isGo() {
		names = append(names, "main.main")
	}
	// rustc names the crate of a binary after it, '-' made '_'.
	crate := strings.ReplaceAll(filepath.Base(s.Header().Program), "-", "_")
	names = append(names, crate+"::main", "main")
	for _, name := range names {
		var addrs []uint64
		for _, fn := range t.FindFunction(name) {
			if name == "main" && fn.Lang() == dwarf.LangRust {
				continue // a crate's main under another name: not the user's
			}
			addrs = append(addrs, fn.Entry)
		}
		if len(addrs) > 0 {
			return name, addrs, nil
		}
	}
	if sym, ok := t.Lookup("main"); ok {
		return "main", []uint64{sym.Addr}, nil
	}
	return "", nil, errors.New("start: the program has no main function with symbols (goto start is the loader)")
}

// cmdStart is gdb's `start`: back to the beginning of the recording, then
// forwards to the first line of the program's main with a temporary
// breakpoint, which is where a user wants to begin (the dynamic loader's
// work before it is seldom what they look for). User breakpoints met on
// the way stop first, as in gdb. A process forked from another never runs
// its main: it stays at the start of its life, and says so.
func (s *Session) cmdStart(res *Result) error {
	if err := s.syncBreakpoints(); err != nil {
		return err
	}
	if s.startsRunning() {
		// Recorded from a running process: main ran long before, and
		// the recording's first moment is the best first screen.
		if err := s.cmdGoto("start", res); err != nil {
			return err
		}
		res.Text = fmt.Sprintf("The recording starts from a snapshot of process %d, which was running (goto start is the same place)\n%s", s.Process(), res.Text)
		return nil
	}
	if err := s.tl.Goto(s.startOfProgram()); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	// Resolved in the program the process runs from here: after an exec
	// of its own, the addresses of its parent's program mean nothing.
	name, addrs, err := s.mainFunction()
	if err != nil {
		return err
	}
	tid := s.currentThread()
	hit := false
	// Breakpoints met before main stop too (conditional ones when they
	// hold).
	err = s.run(res, func() (*timeline.Stop, error) {
		st, err := s.tl.ContinueWith(addrs, nil)
		hit = err == nil && st.Reason == timeline.ReasonStep
		return st, err
	})
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if res.Stop.Reason == string(timeline.ReasonExit) || res.Stop.Reason == string(timeline.ReasonEnd) {
		// It never ran main: its start is the better first screen.
		var back Result
		if err := s.cmdGoto("start", &back); err != nil {
			return err
		}
		*res = back
		res.Text = fmt.Sprintf("process %d never runs %s (thread %d): at the start of its life\n%s", s.Process(), name, tid, res.Text)
		return nil
	}
	if !hit && res.Stop.Reason == string(timeline.ReasonSignal) {
		res.Text = fmt.Sprintf("process %d never runs the first line of %s (it was forked after it): stopped at its signal\n%s", s.Process(), name, res.Text)
	}
	if hit {
		s.selectFrameOf(name, res)
		res.Text = fmt.Sprintf("Stopped at the first line of %s (goto start reaches the loader)\n%s", name, res.Text)
	}
	return nil
}

// MainEvent returns the event at which the program first reaches the
// first line of its main, and puts the session back where it was. The
// events before it are the dynamic loader's and libc's start: the
// Timeline folds them also when the UI opens elsewhere (at a crash).
func (s *Session) MainEvent() (int64, bool) {
	if s.startsRunning() {
		return 0, false // no loader before the snapshot
	}
	_, addrs, err := s.mainFunction()
	if err != nil {
		return 0, false
	}
	back := s.tl.Now()
	defer s.tl.Goto(back)
	if err := s.tl.Goto(s.startOfProgram()); err != nil {
		return 0, false
	}
	st, err := s.tl.ContinueRun(timeline.Run{Temp: addrs, IgnoreWatchpoints: true})
	if err != nil || st.Reason != timeline.ReasonStep {
		return 0, false
	}
	return st.Moment.Event, true
}

// selectFrameOf selects the innermost frame of function name when the stop
// is in code inlined into it (rustc inlines into the first line of fn
// main): the Source pane then shows the user's line, as `up` would.
func (s *Session) selectFrameOf(name string, res *Result) {
	frames, err := s.stack(s.currentThread())
	if err != nil {
		return
	}
	for i := range frames {
		fi := s.frameInfo(frames, i)
		if fi.Function != name {
			continue
		}
		if i > 0 {
			var fr Result
			if s.cmdFrame("frame", fmt.Sprint(i), &fr) == nil {
				res.Text += "\n" + fr.Text
			}
		}
		return
	}
}

// startsRunning reports that the debugged program was already running
// where the recording starts (a snapshot of it: rewind record -p, or the
// ring buffer) and that it did not exec another program since.
func (s *Session) startsRunning() bool {
	return s.tl.Session().FromSnapshot() && s.startOfProgram() == s.tl.Start()
}

// startOfProgram is where the debugged process's own program begins: just
// after its last exec when it made one after its birth (a forked child
// that ran another program), else the start of its life.
func (s *Session) startOfProgram() timeline.Moment {
	for _, p := range s.procs {
		if p.Pid == s.Process() && p.Exec > p.Born && p.Exec+1 < s.tl.Index().Total() {
			return timeline.Moment{Event: p.Exec + 1}
		}
	}
	return s.tl.Start()
}
