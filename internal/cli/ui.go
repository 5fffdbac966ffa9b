package cli

import (
	"errors"
	"os"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/ui"
)

// openUI opens the terminal UI on a trace, runs initial first ("" stays at
// the start), shows hint in the Console and beside (nil: nothing) next to
// the panes.
func openUI(trace, initial, hint string, budget int64, beside *ui.Beside) error {
	cfg, err := ui.LoadConfig(ui.ConfigPath())
	if err != nil {
		return err
	}
	s, err := openSession(trace, budget)
	if err != nil {
		return err
	}
	// A damaged session file is a warning: the session goes on without it.
	sf, serr := debugger.LoadSessionFile(trace)
	var warnings []string
	if serr != nil {
		warnings = append(warnings, serr.Error())
	}
	// no-color.org: any non-empty NO_COLOR means no colour at all.
	err = ui.Run(s, ui.Options{Config: cfg, NoColor: os.Getenv("NO_COLOR") != "", Initial: initial, Hint: hint,
		Session: sf, SaveSession: true, Warnings: warnings, Beside: beside})
	if errors.Is(err, ui.ErrEngineBusy) {
		// Still in use by the stuck operation: rewind's exit ends it.
		return err
	}
	s.Close()
	return err
}
