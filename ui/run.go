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
	m.eng.evr.Close()
	return err
}
