package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/tracediff"
	"github.com/rewind-debugger/rewind/ui"
)

// exitDiffTrouble is diff's status when it could not compare (diff(1)'s
// 2): 0 means the recordings agree, 1 that they differ.
const exitDiffTrouble = 2

// diffOptions are diff's flags.
type diffOptions struct {
	json     bool // --json
	noStacks bool // --no-stacks
}

func newDiffCmd() *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff [--json] [--no-stacks] A.rwd B.rwd",
		Short: "Show where two recordings of a program part, and what differs after",
		Long: `Aligns two recordings of the same program per process and thread (processes
by order of creation and command line, threads by order of creation) by their
system calls, signals, traps and scheduling, and reports where they first
part: both events, each with its stack and source line (found by replaying
each recording to it), then what differs after by category: time, random,
data (contents read), result, args, written, signal, only-a, only-b,
scheduling, exit, process. Differences any two runs have (the loader's
cycle-counter reads, AT_RANDOM) are listed apart and not counted.
--json prints one JSON object (schema in docs/analysis.md).
Exits 0 when the recordings agree, 1 when they differ, 2 when they cannot be
compared (a missing file, not a trace, recordings of different programs).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(args[0], args[1], &o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the report as JSON")
	cmd.Flags().BoolVar(&o.noStacks, "no-stacks", false, "do not replay the recordings for the stacks of the first difference")
	return cmd
}

// runDiff implements rewind diff.
func runDiff(a, b string, o *diffOptions) error {
	rep, err := tracediff.Diff(a, b, tracediff.Options{Stacks: !o.noStacks})
	if err != nil {
		fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(err.Error()))
		return &exitError{exitDiffTrouble}
	}
	if o.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		tracediff.Render(os.Stdout, rep, terminalWidth())
	}
	if !rep.Same {
		return &exitError{1}
	}
	return nil
}

// terminalWidth is the width of the terminal on stdout, or $COLUMNS, or 0
// when neither says (output to a file: one side above the other).
func terminalWidth() int {
	if ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	n, _ := strconv.Atoi(os.Getenv("COLUMNS"))
	return n
}

// openDiffUI is replay --diff A B: the UI on B where it leaves A, on the
// process where it does (unless -p says which), with A's side beside.
func openDiffUI(b string, o *replayOptions) error {
	rep, err := tracediff.Diff(o.diffA, b, tracediff.Options{Stacks: true})
	if err != nil {
		return err
	}
	uo := uiOptions{sessionOptions: o.sessionOptions()}
	if f := rep.First; f != nil && f.B != nil && uo.process == 0 {
		uo.process = f.B.Pid
	}
	uo.initial, uo.beside, uo.hint = ui.DiffOpening(rep)
	return openUI(b, uo)
}
