package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/trace"
)

func newReplayCmd() *cobra.Command {
	var check, batch, jsonOut, session bool
	var cpMiB int64
	var pid int32
	var gdbAddr, diffA string
	var script batchScript
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
			sessionProcess = pid
			modes := 0
			for _, on := range []bool{check, gdbAddr != "", batch || len(script) > 0, diffA != ""} {
				if on {
					modes++
				}
			}
			if modes > 1 {
				return errors.New("--check, --gdbserver, --batch (-ex, -x) and --diff are different ways to replay: choose one")
			}
			switch {
			case check:
				return runCheck(args[0], pid)
			case gdbAddr != "":
				return runGDBServer(args[0], gdbAddr, cpMiB<<20)
			case batch || len(script) > 0:
				return runBatch(args[0], script, jsonOut, session, cpMiB<<20)
			case diffA != "":
				return openDiffUI(diffA, args[0], cpMiB<<20)
			}
			return openUI(args[0], "start", "", cpMiB<<20, nil)
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "replay to the end and verify every event")
	cmd.Flags().Int32VarP(&pid, "process", "p", 0, "the recorded pid of the process to replay (rewind ps lists them)")
	cmd.Flags().Int64Var(&cpMiB, "checkpoint-memory", debugger.DefaultCheckpointBudget>>20, "memory budget of checkpoints in MiB (0: no checkpoints)")
	cmd.Flags().BoolVar(&batch, "batch", false, "run debugger commands without the UI")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "with --batch, one JSON object per result")
	cmd.Flags().Var(scriptFlag{&script, false}, "ex", "with --batch, a command to run (repeatable; -ex and -x run in the order given, as gdb's)")
	cmd.Flags().VarP(scriptFlag{&script, true}, "x", "x", "with --batch, a file of commands (repeatable)")
	cmd.Flags().StringVar(&diffA, "diff", "", "open the UI where TRACE leaves recording A, A's side beside (rewind replay --diff A B)")
	cmd.Flags().StringVar(&gdbAddr, "gdbserver", "", "serve the replay to gdb: - for stdio, or [HOST:]PORT")
	cmd.Flags().BoolVar(&session, "session", false, "with --batch, set up the breakpoints and watchpoints of the recording's session file (TRACE.session) first")
	return cmd
}

// batchStep is one -ex command or one -x file of a batch.
type batchStep struct {
	text   string
	isFile bool
}

// batchScript is the -ex and -x arguments in the order given: gdb runs
// them in that order.
type batchScript []batchStep

// scriptFlag is the pflag value of -ex (isFile false) and -x (true), both
// appending to one script.
type scriptFlag struct {
	script *batchScript
	isFile bool
}

func (f scriptFlag) String() string { return "" }

// Set appends one argument to the script.
func (f scriptFlag) Set(v string) error {
	*f.script = append(*f.script, batchStep{v, f.isFile})
	return nil
}

// Type names the value in --help.
func (f scriptFlag) Type() string {
	if f.isFile {
		return "FILE"
	}
	return "CMD"
}

// commands expands the script: each -x file's lines (without blanks and
// # comments) where the file was given.
func (sc batchScript) commands() ([]string, error) {
	var cmds []string
	for _, st := range sc {
		if !st.isFile {
			cmds = append(cmds, st.text)
			continue
		}
		data, err := os.ReadFile(st.text)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				cmds = append(cmds, l)
			}
		}
	}
	return cmds, nil
}

// runBatch runs debugger commands without the UI, -ex commands and -x
// files in the order given, printing one result each (one JSON object a
// line with --json). quit ends the batch.
func runBatch(path string, script batchScript, jsonOut, session bool, budget int64) error {
	cmds, err := script.commands()
	if err != nil {
		return err
	}
	s, err := openSession(path, budget)
	if err != nil {
		return err
	}
	defer s.Close()
	warnSession(s)
	if session {
		restoreSession(s, path)
	}
	enc := json.NewEncoder(os.Stdout)
	lastOK := true
	prog := &batchProgress{out: os.Stderr, after: 2 * time.Second, every: time.Second}
	s.SetProgress(prog.update)
	for _, c := range cmds {
		prog.begin(c)
		res := s.Execute(c)
		lastOK = res.OK
		if jsonOut {
			if err := enc.Encode(res); err != nil {
				return err
			}
			continue
		}
		fmt.Printf("(rewind) %s\n", c)
		if res.Text != "" {
			// output's and echo's text ends where it says (gdb adds no
			// newline); the others end their line.
			fmt.Print(res.Text)
			if !strings.HasSuffix(res.Text, "\n") && !res.Unterminated() {
				fmt.Println()
			}
		}
		if res.Quit {
			break
		}
	}
	if !lastOK {
		// As gdb's batch mode: the status says whether the last command
		// succeeded, so that scripts can test it.
		return &exitError{1}
	}
	return nil
}

// batchProgress tells on stderr how far a long command got, so that a
// script's user sees a reverse search of minutes is working: nothing for
// the first seconds (most commands end before), then one line a second.
type batchProgress struct {
	out          io.Writer
	after, every time.Duration
	cmd          string
	start, last  time.Time
}

// begin starts the clock for a command.
func (p *batchProgress) begin(cmd string) {
	p.cmd, p.start, p.last = cmd, time.Now(), time.Time{}
}

// update is the session's progress callback; batch mode never cancels.
func (p *batchProgress) update(done, total int64) bool {
	now := time.Now()
	if now.Sub(p.start) < p.after || now.Sub(p.last) < p.every {
		return true
	}
	p.last = now
	pct := 0
	if total > 0 {
		pct = int(min(100, done*100/total))
	}
	fmt.Fprintf(p.out, "rewind: %s: %d%% (%d of %d events replayed)\n", p.cmd, pct, done, total)
	return true
}

// restoreSession sets up the breakpoints and watchpoints of the trace's
// session file (what the UI kept), saying on stderr what it did and what it
// could not: batch mode and MCP do this only when asked (--session), so
// that their results depend on their commands alone.
func restoreSession(s *debugger.Session, trace string) {
	f, err := debugger.LoadSessionFile(trace)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rewind: warning: %s\n", oneLine(err.Error()))
		return
	}
	n, _, problems := s.Restore(f)
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(p))
	}
	fmt.Fprintf(os.Stderr, "rewind: session: %d of %d breakpoints and watchpoints restored\n", n, len(f.Breakpoints)+len(f.Watchpoints))
}

// sessionProcess is the -p of replay: the process sessions open on (0:
// the default choice).
var sessionProcess int32

// openSession opens a debugging session with a checkpoint budget in bytes
// (0: no checkpoints), for batch mode and the UI.
func openSession(path string, budget int64) (*debugger.Session, error) {
	if budget < 0 {
		return nil, fmt.Errorf("--checkpoint-memory must be 0 or more")
	}
	return debugger.Open(path, debugger.Options{CheckpointBudget: budget, NoCheckpoints: budget == 0, Process: sessionProcess})
}

// warnSession says on stderr, in one line each, what is wrong with a
// session's trace (cut short, damaged) and with this machine for it.
func warnSession(s *debugger.Session) {
	warnTrace(s.TraceStatus())
	warnMachine(s.Header())
}

// runCheck implements replay --check. On an unfinished or damaged trace it
// says first how many events are usable, replays those and exits with
// exitPartialTrace.
func runCheck(path string, pid int32) error {
	// As for recording (cmd_record.go): a replay's garbage is events on
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
