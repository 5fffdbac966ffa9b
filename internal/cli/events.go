package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/trace"
)

func newEventsCmd() *cobra.Command {
	var from, to int64
	var thread int32
	var types []string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "events [--json] [--from N] [--to M] [--thread T] [--type syscall|signal|thread|exec|exit] TRACE",
		Short: "List the recorded events, strace-style or as NDJSON",
		Long: `Lists the events of a recording: system calls decoded strace-style with their
results, signals, thread creation and exit, exec, exit. --json prints one JSON
object a line (fields in docs/analysis.md). --type may be repeated or comma-separated.
On an unfinished or damaged trace it lists the usable events, says in one line
on stderr why the rest is not usable, and exits 2.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ts []string
			for _, t := range types {
				for _, x := range strings.Split(t, ",") {
					if x = strings.TrimSpace(x); x == "" {
						continue
					}
					if !slices.Contains(debugger.Types, x) {
						return fmt.Errorf("events: unknown type %q (%s)", x, strings.Join(debugger.Types, ", "))
					}
					ts = append(ts, x)
				}
			}
			if from < 0 || (to >= 0 && to < from) {
				return fmt.Errorf("events: bad range --from %d --to %d", from, to)
			}
			return runEvents(os.Stdout, args[0], from, to, debugger.EventFilter{Types: ts, Thread: thread}, jsonOut)
		},
	}
	cmd.Flags().Int64Var(&from, "from", 0, "first event")
	cmd.Flags().Int64Var(&to, "to", -1, "last event")
	cmd.Flags().Int32Var(&thread, "thread", 0, "only this thread")
	cmd.Flags().StringSliceVar(&types, "type", nil, "only these types: "+strings.Join(debugger.Types, ", "))
	cmd.Flags().BoolVar(&jsonOut, "json", false, "NDJSON output")
	return cmd
}

func runEvents(w io.Writer, path string, from, to int64, f debugger.EventFilter, jsonOut bool) error {
	evs, _, err := debugger.ReadEventRecords(path, from, to, f, 0)
	if err != nil {
		return err
	}
	// The listing may stop before the end: the status needs the rest.
	st, err := trace.Check(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for i := range evs {
		e := &evs[i]
		if jsonOut {
			if err := enc.Encode(e); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(w, "#%-7d %7d %10.6f %s\n", e.Event, e.Thread, e.Time, e.Text)
	}
	return traceStatusExit(st)
}
