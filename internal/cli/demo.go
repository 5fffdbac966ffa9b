package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/demo"
	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/spf13/cobra"
)

func newDemoCmd() *cobra.Command {
	return &cobra.Command{Use: "demo", Short: "Record a bundled buggy program and open it at its crash", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runDemo() }}
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
	if _, _, err := runRecord(trace, -1, []string{prog}, record.Options{}); err != nil {
		return err
	}
	return openUI(trace, uiOptions{sessionOptions: sessionOptions{budget: debugger.DefaultCheckpointBudget}, initial: "continue", hint: demo.Hint})
}
