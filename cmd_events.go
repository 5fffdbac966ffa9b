package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/trace"
)

func newEventsCmd() *cobra.Command {
	var from, to int64
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "events [--from N] [--to M] TRACE",
		Short: "List the recorded events, strace-style",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if jsonOut {
				return errNotImplemented("rewind events --json")
			}
			return runEvents(os.Stdout, args[0], from, to)
		},
	}
	cmd.Flags().Int64Var(&from, "from", 0, "first event")
	cmd.Flags().Int64Var(&to, "to", -1, "last event")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "NDJSON output")
	return cmd
}

func runEvents(w io.Writer, path string, from, to int64) error {
	warn, err := debugger.ReadEvents(path, from, to, func(i int64, e *trace.Event, text string) {
		fmt.Fprintf(w, "#%-7d %7d %10.6f %s\n", i, e.Tid, float64(e.Time)/1e9, text)
	})
	if err != nil {
		return err
	}
	if warn != "" {
		fmt.Fprintf(os.Stderr, "rewind: warning: %s\n", warn)
	}
	return nil
}
