package ui

import (
	"errors"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/rewind-debugger/rewind/debugger"
)

// ErrEngineBusy is returned by Run when the user quit while an engine
// operation did not stop within quitGrace of being cancelled. The session
// is still in use then: the caller must not close it, and should exit;
// the replaying processes die with rewind (they are traced with
// PTRACE_O_EXITKILL).
var ErrEngineBusy = errors.New("the replay did not stop in time; its processes end with rewind")

// quitGrace is how long quitting waits for a cancelled operation.
const quitGrace = 2 * time.Second

// Run runs the UI until the user quits. The terminal is restored before it
// returns, even when an operation is still running.
func Run(s *debugger.Session, opts Options) error {
	m, err := New(s, opts)
	if err != nil {
		return err
	}
	var popts []tea.ProgramOption
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	_, err = tea.NewProgram(m, popts...).Run()
	m.saveSession()
	// Operations may still run in the background: stop them and keep the
	// session locked, so that closing it cannot race with them.
	m.eng.cancelled.Store(true)
	if m.askCancel != nil {
		m.askCancel()
	}
	if !lockWithin(&m.eng.mu, quitGrace) {
		return errors.Join(err, ErrEngineBusy)
	}
	m.eng.evMu.Lock()
	m.eng.evr.Close()
	return err
}

// lockWithin locks mu unless it stays locked for d.
func lockWithin(mu *sync.Mutex, d time.Duration) bool {
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if mu.TryLock() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}
