package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/frontend"
)

// recordOptions are record's flags.
type recordOptions struct {
	out           string        // -o
	bindCPU       int           // --bind-to-cpu (-1: the default)
	chaos         bool          // --chaos (or --chaos-seed)
	seed          uint64        // --chaos-seed
	pid           int           // -p: record a running process
	noBuffer      bool          // --no-buffer
	serial        bool          // --serial
	withSources   bool          // --with-sources
	keepOnFailure bool          // --keep-on-failure
	duration      time.Duration // --duration, with -p
	keepLast      time.Duration // --keep-last
	untilFail     int           // --until-fail: at most this many runs
	jobs          int           // -j, with --until-fail
	failOn        string        // --fail-on, with --until-fail
	cpuFeatures   string        // --cpu-features
	hide          machine.Hide  // what --cpu-features hides
}

// recorder is what the flags set of the recorder's options.
func (o *recordOptions) recorder() record.Options {
	return record.Options{Chaos: o.chaos, Seed: o.seed, KeepLast: o.keepLast, NoBuffer: o.noBuffer, Serial: o.serial,
		Hide: o.hide, CPUSpec: o.cpuFeatures}
}

func newRecordCmd() *cobra.Command {
	var o recordOptions
	cmd := &cobra.Command{
		Use:   "record [-o TRACE] [--keep-last D] [--no-buffer] [--serial] [--with-sources] [--cpu-features SPEC] [--until-fail[=N] [-j J] [--fail-on REGEX] | --keep-on-failure] [--] PROG [ARGS...] | record -p PID [-o TRACE] [--duration D] [--keep-last D] [--with-sources]",
		Short: "Record one run of PROG",
		Long: `Runs PROG under recording with stdin, stdout and stderr passed through, then
exits with PROG's status (128+N when killed by signal N). The trace is written
atomically to TRACE (default ./PROG-N.rwd, the first N free; an existing TRACE
given with -o is replaced once the recording is complete).

If the trace cannot be written (-o names a directory, the directory is not
writable, the disk is full, an I/O error), rewind says why in one line and
exits with status 125: before the program starts when it can tell, else by
killing the program and keeping the trace up to its last good frame in
TRACE.NNNN.partial.

The simple system calls (reads of files, fstat, clock_gettime, getpid, close
and the like) are made by the program itself, through a page rewind maps into
it, and cost no stop; each is still an event of the recording. --no-buffer
stops at every call instead.

Processes that share no memory run side by side, and a process with one
thread waits for a pipe or a socket with no stop: two processes exchanging
messages cost little. --serial has them take turns, as threads do.

With -p PID, rewind records a process that already runs (as "rewind attach
PID" does): it stops it for a snapshot of its state, records from there, and
lets it go on, detached, at Ctrl-C, SIGTERM, SIGHUP or SIGUSR2 to rewind, or
after --duration. The process ending or crashing ends the recording too.

--with-sources packs the recording once it is written, as rewind pack does
with its default limits: the source files and separate debug files of the
recorded programs travel in the trace (pack's report goes to stderr).

--cpu-features SPEC hides CPU features from the program, so that the
recording replays on a CPU without them (another machine's): a level of the
x86-64 psABI (x86-64, x86-64-v2, x86-64-v3, x86-64-v4) hides every feature
beyond it, then -FEATURE hides one more and +FEATURE keeps one
("x86-64-v3,+aes"; names as /proc/cpuinfo spells them). cpuid's answers no
longer show them, so libraries pick code without them; code built to use one
without asking cpuid still does.

--until-fail[=N] hunts a failure that will not reproduce: it records PROG
again and again (-j J runs at a time, each bound to a CPU of its own; one per
CPU by default) until a run fails (a non-zero exit, a fatal signal, or
--fail-on REGEX matching a line of its output) or N runs (default 100) pass, keeps the
first failing recording (-o TRACE, default ./PROG-fail-N.rwd) and the last
passing one (TRACE-pass.rwd, or ./PROG-pass-N.rwd), deletes the rest, and
prints each run's outcome, the chaos seeds, and the time a run took. With
--chaos each run explores other schedules. It exits with the failing run's
status (1 when only its output failed it), 0 when every run passed.
--keep-on-failure, for one run (CI), deletes the recording when the program
succeeds.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.pid != 0 {
				if len(args) > 0 {
					return errors.New("record -p PID takes no program: it records the running process")
				}
				return nil
			}
			if o.duration != 0 {
				return errors.New("--duration needs -p PID")
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd.Flags(), args) },
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "trace file to write (default ./PROG-N.rwd)")
	cmd.Flags().IntVar(&o.bindCPU, "bind-to-cpu", -1, "bind the program and every process it starts to this CPU (default: the program to the one that takes most of the device interrupts where no other recording is bound there, else the one rewind starts on; processes that compute side by side to others); replay binds to it too")
	cmd.Flags().BoolVar(&o.chaos, "chaos", false, "randomise scheduling (which thread runs next, slice lengths, preemption points) to expose races; the seed is in the trace")
	cmd.Flags().Uint64Var(&o.seed, "chaos-seed", 0, "seed for --chaos (implies it; default: random)")
	cmd.Flags().IntVarP(&o.pid, "pid", "p", 0, "record the running process PID instead of starting PROG")
	cmd.Flags().DurationVar(&o.duration, "duration", 0, "with -p: detach after this long (e.g. 30s, 5m)")
	cmd.Flags().DurationVar(&o.keepLast, "keep-last", 0, "ring buffer: keep only about the last D of the run (between D and 1.5 D), on bounded disk")
	cmd.Flags().BoolVar(&o.serial, "serial", false, "have the recorded processes take turns on one CPU, as threads do, instead of running side by side")
	cmd.Flags().BoolVar(&o.noBuffer, "no-buffer", false, "stop at every system call instead of letting the program make the simple ones itself (slower; -p never buffers)")
	cmd.Flags().BoolVar(&o.withSources, "with-sources", false, "store the programs' source files and separate debug files in the trace (rewind pack)")
	cmd.Flags().IntVar(&o.untilFail, "until-fail", 0, "record PROG again and again until a run fails, at most N runs (default 100)")
	cmd.Flags().Lookup("until-fail").NoOptDefVal = "100"
	cmd.Flags().IntVarP(&o.jobs, "jobs", "j", 0, "with --until-fail: runs at a time, each on a CPU of its own (default: one per CPU)")
	cmd.Flags().StringVar(&o.failOn, "fail-on", "", "with --until-fail: a run with an output line that matches REGEX failed, whatever its status")
	cmd.Flags().StringVar(&o.cpuFeatures, "cpu-features", "", "hide CPU features from the program so the recording replays on CPUs without them: x86-64-v2, x86-64-v3, x86-64-v4, then -FEATURE / +FEATURE")
	cmd.Flags().BoolVar(&o.keepOnFailure, "keep-on-failure", false, "delete the recording when the program succeeds (one run: CI)")
	return cmd
}

// run is record: a hunt (--until-fail), a running process (-p), or one
// run of PROG.
func (o *recordOptions) run(flags *pflag.FlagSet, args []string) error {
	// The recorder's garbage is short-lived (events on their way to the
	// writer) and its live heap small: collecting it four times less often
	// takes a few percent off a recording, in which the program waits for
	// the recorder at each stop.
	debug.SetGCPercent(400)
	if flags.Changed("chaos-seed") {
		o.chaos = true
	}
	if o.keepLast < 0 {
		return fmt.Errorf("--keep-last %v: must be positive", o.keepLast)
	}
	if flags.Changed("cpu-features") {
		if o.pid != 0 {
			return errors.New("--cpu-features: a running process has asked cpuid already: not with -p")
		}
		_, have := machine.CPUInfo()
		hide, err := machine.ParseHide(o.cpuFeatures, have)
		if err != nil {
			return err
		}
		o.hide = hide
	}
	hunting := flags.Changed("until-fail")
	if err := huntFlags(flags, hunting, o); err != nil {
		return err
	}
	if hunting {
		h, err := newHunt(flags, o, args)
		if err != nil {
			return err
		}
		return runHunt(h) // hunt.go
	}
	if o.pid != 0 {
		path, err := runAttach(o.out, o.bindCPU, o.pid, o.duration, o.recorder())
		if err == nil && o.withSources {
			err = packRecorded(path)
		}
		return err
	}
	code, path, err := runRecord(o.out, o.bindCPU, args, o.recorder())
	if err != nil {
		return err
	}
	if o.keepOnFailure && code == 0 {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("--keep-on-failure: %w", err)
		}
		fmt.Fprintf(os.Stderr, "rewind: %s succeeded: its recording is deleted (--keep-on-failure)\n", filepath.Base(args[0]))
		return &exitError{code}
	}
	if o.withSources {
		if err := packRecorded(path); err != nil {
			// The recording is whole; the program's status is what
			// record exits with.
			fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(err.Error()))
		}
	}
	return &exitError{code}
}

// packRecorded is record --with-sources: rewind pack with its default
// limits, reported on stderr (stdout is the program's).
func packRecorded(path string) error {
	if err := packTrace(os.Stderr, path, trace.DefaultPackLimits, false); err != nil {
		return fmt.Errorf("--with-sources: %w", err)
	}
	return nil
}

// cpuFlag checks --bind-to-cpu: nil for the default.
func cpuFlag(bindCPU int) (*int, error) {
	if bindCPU < 0 {
		return nil, nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || !set.IsSet(bindCPU) {
		return nil, fmt.Errorf("--bind-to-cpu %d: not a CPU this process may run on", bindCPU)
	}
	return &bindCPU, nil
}

// runRecord records args and returns the program's shell-style exit
// status and the trace written. When the trace could not be written, it
// prints why and returns an *exitError of exitTraceFailed. ro holds the
// recorder's options the flags set (chaos mode…).
func runRecord(out string, bindCPU int, args []string, ro record.Options) (int, string, error) {
	cpu, err := cpuFlag(bindCPU)
	if err != nil {
		return 0, "", err
	}
	ro.CPU = cpu
	rec, err := frontend.Record(frontend.RecordOptions{Recorder: ro, Args: args, Output: out})
	if err != nil {
		return 0, "", recordFailed(err)
	}
	if rec.Interrupted != 0 {
		fmt.Fprintf(os.Stderr, "rewind: recorded %d events to %s (stopped by %s; the program was killed)\n",
			rec.Events, displayPath(rec.Trace), unix.SignalName(rec.Interrupted))
		return rec.ExitCode(), rec.Trace, nil
	}
	fmt.Fprintf(os.Stderr, "rewind: recorded %d events to %s\n", rec.Events, displayPath(rec.Trace))
	if hint := goTestHint(args, os.Getenv("GOFLAGS")); hint != "" {
		fmt.Fprintln(os.Stderr, hint)
	}
	return rec.ExitCode(), rec.Trace, nil
}

// recordFailed is the error of a recording that failed: a trace that
// could not be written is rewind's own failure (traceFailed), anything else
// (no such program, a process that cannot be attached to) is the user's.
func recordFailed(err error) error {
	var re *frontend.RecordError
	if errors.As(err, &re) && re.TraceFailed {
		return traceFailed(re.Err)
	}
	if re != nil {
		return re.Err
	}
	return err
}
