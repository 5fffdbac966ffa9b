package ui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/rewind-debugger/rewind/debugger"
)

// Run runs the UI until the user quits.
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
	// Operations may still run in the background: stop them and keep the
	// session locked, so that closing it cannot race with them.
	m.eng.cancelled.Store(true)
	if m.askCancel != nil {
		m.askCancel()
	}
	m.eng.mu.Lock()
	m.eng.evMu.Lock()
	m.eng.evr.Close()
	return err
}
