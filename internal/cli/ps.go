package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// psOptions are ps's flags.
type psOptions struct {
	json bool // --json
}

func newPsCmd() *cobra.Command {
	var o psOptions
	cmd := &cobra.Command{
		Use:   "ps TRACE",
		Short: "List the processes of a recording: pid, parent, exit, events, command line",
		Long: `Lists every process the recording holds, in order of birth, like rr ps:
its pid and its parent's as recorded, how it ended, the range of events of its
life (from the fork that made it to its end) and its command line (a child that
did not exec shows its parent's). Pass a PID to replay -p to debug that process.
On an unfinished or damaged trace it lists what the usable events show and exits 2.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPs(os.Stdout, args[0], &o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "one JSON object per process")
	return cmd
}

// psRow is one process as `rewind ps --json` prints it.
type psRow struct {
	Pid    int32    `json:"pid"`
	Parent int32    `json:"ppid"`
	Exit   string   `json:"exit"`
	Status *int32   `json:"status,omitempty"`
	First  int64    `json:"first_event"`
	Last   int64    `json:"last_event"`
	Args   []string `json:"args"`
}

// runPs lists the processes of the trace at path on w.
func runPs(w io.Writer, path string, o *psOptions) error {
	rd, err := trace.Open(path)
	if err != nil {
		return err
	}
	defer rd.Close()
	procs := trace.NewProcesses()
	for i := int64(0); ; i++ {
		e, err := rd.Next()
		if err != nil {
			break // io.EOF, or where the usable events end (Status says)
		}
		procs.Observe(i, e)
	}
	var rows []psRow
	for _, p := range procs.List {
		r := psRow{Pid: p.Pid, Parent: p.Parent, Exit: "-", First: p.Born, Last: p.Last, Args: p.Args}
		if p.Exited {
			st := p.Status
			r.Status = &st
			r.Exit = debugger.ExitWord(st)
		}
		rows = append(rows, r)
	}
	if o.json {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	} else {
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "PID\tPPID\tEXIT\tEVENTS\tCMD")
		for _, r := range rows {
			ppid := "--"
			if r.Parent != 0 {
				ppid = fmt.Sprint(r.Parent)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t#%d-#%d\t%s\n", r.Pid, ppid, r.Exit, r.First, r.Last, strings.Join(quoteArgs(r.Args), " "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return traceStatusExit(rd.Status())
}
