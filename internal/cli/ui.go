package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/demo"
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

// runProgramUI is `rewind PROG ARGS...`: record, then open the UI at the
// end of the recording (at the crash if there is one).
func runProgramUI(args []string) error {
	_, trace, err := runRecord("", -1, args)
	if err != nil {
		return err
	}
	return openUI(trace, "continue", "", debugger.DefaultCheckpointBudget, nil)
}

// runDemo is `rewind demo`: build the bundled buggy program, record it and
// open the UI at its crash with a hint of what to try.
func runDemo() error {
	dir, err := os.MkdirTemp("", "rewind-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prog, lang, err := demo.Build(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "rewind: built the demo program (%s), recording it\n", lang)
	trace := filepath.Join(dir, "corrupt.rwd")
	os.Setenv("GOTRACEBACK", "crash") // the Go version crashes like the C one
	if _, _, err := runRecord(trace, -1, []string{prog}); err != nil {
		return err
	}
	return openUI(trace, "continue", demo.Hint, debugger.DefaultCheckpointBudget, nil)
}
