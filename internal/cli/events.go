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

// eventsOptions are events' flags.
type eventsOptions struct {
	from, to int64    // --from, --to (-1: the end)
	thread   int32    // --thread (0: all)
	types    []string // --type, each maybe comma-separated
	json     bool     // --json
}

// filter checks the flags and says which events they select.
func (o *eventsOptions) filter() (debugger.EventFilter, error) {
	var ts []string
	for _, t := range o.types {
		for _, x := range strings.Split(t, ",") {
			if x = strings.TrimSpace(x); x == "" {
				continue
			}
			if !slices.Contains(debugger.Types, x) {
				return debugger.EventFilter{}, fmt.Errorf("events: unknown type %q (%s)", x, strings.Join(debugger.Types, ", "))
			}
			ts = append(ts, x)
		}
	}
	if o.from < 0 || (o.to >= 0 && o.to < o.from) {
		return debugger.EventFilter{}, fmt.Errorf("events: bad range --from %d --to %d", o.from, o.to)
	}
	return debugger.EventFilter{Types: ts, Thread: o.thread}, nil
}

func newEventsCmd() *cobra.Command {
	var o eventsOptions
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
			f, err := o.filter()
			if err != nil {
				return err
			}
			return runEvents(os.Stdout, args[0], o.from, o.to, f, o.json)
		},
	}
	cmd.Flags().Int64Var(&o.from, "from", 0, "first event")
	cmd.Flags().Int64Var(&o.to, "to", -1, "last event")
	cmd.Flags().Int32Var(&o.thread, "thread", 0, "only this thread")
	cmd.Flags().StringSliceVar(&o.types, "type", nil, "only these types: "+strings.Join(debugger.Types, ", "))
	cmd.Flags().BoolVar(&o.json, "json", false, "NDJSON output")
	return cmd
}

// runEvents lists events from to to of the trace at path that f selects,
// on w.
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
