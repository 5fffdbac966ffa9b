package cli

import (
	"errors"
	"os"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/ui"
)

// uiOptions say how the terminal UI opens on a trace.
type uiOptions struct {
	sessionOptions
	initial string     // a command run first ("" stays at the start)
	hint    string     // shown in the Console ("": nothing)
	beside  *ui.Beside // shown next to the panes (nil: nothing)
}

// openUI opens the terminal UI on a trace.
func openUI(trace string, o uiOptions) error {
	cfg, err := ui.LoadConfig(ui.ConfigPath())
	if err != nil {
		return err
	}
	s, err := openSession(trace, o.sessionOptions, nil)
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
	err = ui.Run(s, ui.Options{Config: cfg, NoColor: os.Getenv("NO_COLOR") != "", Initial: o.initial, Hint: o.hint,
		Session: sf, SaveSession: true, Warnings: warnings, Beside: o.beside})
	if errors.Is(err, ui.ErrEngineBusy) {
		// Still in use by the stuck operation: rewind's exit ends it.
		return err
	}
	s.Close()
	return err
}
