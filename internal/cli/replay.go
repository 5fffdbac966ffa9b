package cli

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// replayOptions are replay's flags.
type replayOptions struct {
	check   bool        // --check
	batch   bool        // --batch
	json    bool        // --json, with --batch
	session bool        // --session, with --batch
	cpMiB   int64       // --checkpoint-memory, in MiB
	process int32       // -p
	gdbAddr string      // --gdbserver
	diffA   string      // --diff
	script  batchScript // -ex and -x, in the order given
}

// sessionOptions are what the session of every way of debugging a trace
// opens with.
func (o *replayOptions) sessionOptions() sessionOptions {
	return sessionOptions{process: o.process, budget: o.cpMiB << 20}
}

func newReplayCmd() *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay [-p PID] [--check | --batch [--json] (-ex CMD)... [-x FILE] | --gdbserver [HOST:]PORT|- | --diff A] TRACE",
		Short: "Replay a recording",
		Long: `Without flags, opens the recording in the terminal UI at the first line of
the program's main (goto start reaches the dynamic loader before it).
--check replays to the end without a UI, re-emitting the program's output as
the replaying process produces it, verifies every event and prints
"replay OK: N events", or "divergence at event N (tid T): ..." and exits 1.
On an unfinished or damaged trace, every mode first says in one line on stderr
how many events are usable and why not all; --check replays those and exits 2.

A recording of several processes (rewind ps lists them): --check replays every
one and re-emits their output in order; -p PID replays and debugs one (the UI
and batch mode open by default on the process that crashed, else on the last
one that exec'd the recorded program). The process command switches.

--gdbserver serves the replay to gdb over the remote serial protocol, with
reverse execution: on stdio with -, for
  gdb PROG -ex 'target remote | rewind replay --gdbserver - TRACE'
or on a TCP port ([HOST:]PORT, port 0 picks one and says which on stderr),
for gdb's target remote HOST:PORT.

--diff A opens TRACE in the UI where it leaves recording A (rewind diff A
TRACE), with A's event, stack and source line beside the panes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			modes := 0
			for _, on := range []bool{o.check, o.gdbAddr != "", o.batch || len(o.script) > 0, o.diffA != ""} {
				if on {
					modes++
				}
			}
			if modes > 1 {
				return errors.New("--check, --gdbserver, --batch (-ex, -x) and --diff are different ways to replay: choose one")
			}
			switch {
			case o.check:
				return runCheck(args[0], o.process)
			case o.gdbAddr != "":
				return runGDBServer(args[0], &o)
			case o.batch || len(o.script) > 0:
				return runBatch(args[0], &o)
			case o.diffA != "":
				return openDiffUI(args[0], &o)
			}
			return openUI(args[0], uiOptions{sessionOptions: o.sessionOptions(), initial: "start"})
		},
	}
	cmd.Flags().BoolVar(&o.check, "check", false, "replay to the end and verify every event")
	cmd.Flags().Int32VarP(&o.process, "process", "p", 0, "the recorded pid of the process to replay (rewind ps lists them)")
	cmd.Flags().Int64Var(&o.cpMiB, "checkpoint-memory", debugger.DefaultCheckpointBudget>>20, "memory budget of checkpoints in MiB (0: no checkpoints)")
	cmd.Flags().BoolVar(&o.batch, "batch", false, "run debugger commands without the UI")
	cmd.Flags().BoolVar(&o.json, "json", false, "with --batch, one JSON object per result")
	cmd.Flags().Var(scriptFlag{&o.script, false}, "ex", "with --batch, a command to run (repeatable; -ex and -x run in the order given, as gdb's)")
	cmd.Flags().VarP(scriptFlag{&o.script, true}, "x", "x", "with --batch, a file of commands (repeatable)")
	cmd.Flags().StringVar(&o.diffA, "diff", "", "open the UI where TRACE leaves recording A, A's side beside (rewind replay --diff A B)")
	cmd.Flags().StringVar(&o.gdbAddr, "gdbserver", "", "serve the replay to gdb: - for stdio, or [HOST:]PORT")
	cmd.Flags().BoolVar(&o.session, "session", false, "with --batch, set up the breakpoints and watchpoints of the recording's session file (TRACE.session) first")
	return cmd
}

// runCheck implements replay --check. On an unfinished or damaged trace it
// says first how many events are usable, replays those and exits with
// exitPartialTrace.
func runCheck(path string, pid int32) error {
	// As for recording (record.go): a replay's garbage is events on
	// their way through, its live heap small without a debugger's tables.
	debug.SetGCPercent(400)
	st, err := trace.Check(path)
	if err != nil {
		return err
	}
	if st.Usable == 0 && st.Message != "" {
		return fmt.Errorf("%s: nothing to replay: %s", path, st.Message)
	}
	warnTrace(st)
	s, err := replay.Open(path, replay.Options{Stdout: os.Stdout, Stderr: os.Stderr, Process: pid})
	if err != nil {
		return err
	}
	defer s.Close()
	warnMachine(s.Header())
	err = s.Run()
	var d *replay.Divergence
	switch {
	case errors.As(err, &d):
		fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(err.Error()))
		return &exitError{1}
	case err != nil && (st.Condition == trace.Complete || s.Next() < st.Usable):
		return err
	}
	// Replay may report the end of a partial trace as an error: reaching
	// it is the success here, the status says the trace is partial.
	fmt.Fprintf(os.Stderr, "replay OK: %d events\n", s.Next())
	if st.Condition != trace.Complete {
		return &exitError{exitPartialTrace}
	}
	return nil
}
