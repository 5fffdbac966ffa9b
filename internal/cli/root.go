// Package cli is rewind's command line, on cobra: one file a command (the
// root command, rewind PROG, is this file), the helpers they share in files
// named for what they are. The root package's main only calls Main, so that
// go install . still builds the rewind binary.
package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/attach"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/record"
)

// Main runs rewind with the process's arguments and exits with its status:
// the command's own (an *exitError), or 1 after a one-line error.
func Main() {
	ptrace.MaybeRunHelper()
	attach.MaybeRunGuard()
	root := newRoot()
	root.SetArgs(gdbStyleFlags(os.Args[1:]))
	err := root.Execute()
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(ee.code)
	default:
		fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(err.Error()))
		os.Exit(1)
	}
}

// gdbStyleFlags lets replay take gdb's single-dash -ex and -batch (pflag
// would read them as -e x and -b -a -t -c -h). Only replay's arguments are touched: record passes the program's
// arguments through untouched.
func gdbStyleFlags(args []string) []string {
	if len(args) == 0 || args[0] != "replay" {
		return args
	}
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == "--" {
			break
		}
		switch a {
		case "-ex", "-batch":
			out[i] = "-" + a
		}
	}
	return out
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "rewind [PROG [ARGS...]]",
		Short: "Record a program once, then debug the recording forwards and backwards",
		Long: `Rewind records one run of a Linux x86-64 program (C, C++, Rust, Go) without
hardware performance counters, and replays it deterministically.

  rewind ./prog args            record a run, then debug it in the terminal UI
  rewind demo                   try it on a bundled buggy program
  rewind record ./prog args     record a run into prog-1.rwd
  rewind replay TRACE           debug a recording in the terminal UI
  rewind events --json TRACE    the recorded events as NDJSON
  rewind mcp TRACE              serve a recording to coding agents (MCP)
  rewind dap                    serve recordings to editors (Debug Adapter Protocol)
  rewind replay --gdbserver - TRACE   serve a recording to gdb (target remote |)
  rewind replay --check TRACE   replay it and verify every event
  rewind info TRACE             summarise a recording
  rewind why TRACE              explain a failure: the write that caused it
  rewind diff A.rwd B.rwd       where two recordings of a program part, and what differs
  rewind pack TRACE             store its source and debug files in it`,
		Version:       record.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return runProgramUI(args)
		},
	}
	root.Flags().SetInterspersed(false)
	root.AddCommand(newRecordCmd(), newAttachCmd(), newReplayCmd(), newInfoCmd(), newPackCmd(), newPsCmd(), newEventsCmd(), newWhyCmd(),
		newMCPCmd(), newDAPCmd(), newDiffCmd(), newDemoCmd())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%s: %w (see rewind %s --help)", c.Name(), err, c.Name())
	})
	return root
}

// runProgramUI is `rewind PROG ARGS...`: record, then open the UI at the
// end of the recording (at the crash if there is one).
func runProgramUI(args []string) error {
	_, trace, err := runRecord("", -1, args, record.Options{})
	if err != nil {
		return err
	}
	return openUI(trace, uiOptions{sessionOptions: sessionOptions{budget: debugger.DefaultCheckpointBudget}, initial: "continue"})
}
