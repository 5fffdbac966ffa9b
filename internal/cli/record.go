package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// exitTraceFailed is the status of rewind record when it could not write a
// complete trace, whatever the program did: as timeout(1) and env(1) do
// with 125, it keeps rewind's own failure apart from the statuses programs
// use (1 and 2 are common ones, and a Go program that panics exits 2).
const exitTraceFailed = 125

func newRecordCmd() *cobra.Command {
	var out string
	var bindCPU int
	var chaos bool
	var seed uint64
	var pid int
	var noBuffer, serial, withSources, keepOnFailure bool
	var duration, keepLast time.Duration
	var untilFail, jobs int
	var failOn string
	cmd := &cobra.Command{
		Use:   "record [-o TRACE] [--keep-last D] [--no-buffer] [--serial] [--with-sources] [--until-fail[=N] [-j J] [--fail-on REGEX] | --keep-on-failure] [--] PROG [ARGS...] | record -p PID [-o TRACE] [--duration D] [--keep-last D] [--with-sources]",
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
			if pid != 0 {
				if len(args) > 0 {
					return errors.New("record -p PID takes no program: it records the running process")
				}
				return nil
			}
			if duration != 0 {
				return errors.New("--duration needs -p PID")
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// The recorder's garbage is short-lived (events on their way
			// to the writer) and its live heap small: collecting it four
			// times less often takes a few percent off a recording, in
			// which the program waits for the recorder at each stop.
			debug.SetGCPercent(400)
			if cmd.Flags().Changed("chaos-seed") {
				chaos = true
			}
			if keepLast < 0 {
				return fmt.Errorf("--keep-last %v: must be positive", keepLast)
			}
			setChaos := func(o *record.Options) {
				o.Chaos, o.Seed, o.KeepLast, o.NoBuffer, o.Serial = chaos, seed, keepLast, noBuffer, serial
			}
			hunting := cmd.Flags().Changed("until-fail")
			if err := huntFlags(cmd, hunting, pid, keepLast, keepOnFailure, untilFail, jobs); err != nil {
				return err
			}
			if hunting {
				h := hunt{runs: untilFail, jobs: jobs, out: out, args: args}
				if failOn != "" {
					// Line by line, as grep matches: ^ and $ are a line's.
					re, err := regexp.Compile("(?m)" + failOn)
					if err != nil {
						return fmt.Errorf("--fail-on %q: %w", failOn, err)
					}
					h.failOn = re
				}
				for _, f := range []string{"chaos", "chaos-seed", "no-buffer", "serial", "with-sources"} {
					if fl := cmd.Flags().Lookup(f); fl.Changed {
						h.flags = append(h.flags, "--"+f+"="+fl.Value.String())
					}
				}
				return runHunt(h) // cmd_hunt.go
			}
			if pid != 0 {
				path, err := runAttach(out, bindCPU, pid, duration, setChaos)
				if err == nil && withSources {
					err = packRecorded(path)
				}
				return err
			}
			code, path, err := runRecord(out, bindCPU, args, setChaos)
			if err != nil {
				return err
			}
			if keepOnFailure && code == 0 {
				if err := os.Remove(path); err != nil {
					return fmt.Errorf("--keep-on-failure: %w", err)
				}
				fmt.Fprintf(os.Stderr, "rewind: %s succeeded: its recording is deleted (--keep-on-failure)\n", filepath.Base(args[0]))
				return &exitError{code}
			}
			if withSources {
				if err := packRecorded(path); err != nil {
					// The recording is whole; the program's status is
					// what record exits with.
					fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(err.Error()))
				}
			}
			return &exitError{code}
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVarP(&out, "output", "o", "", "trace file to write (default ./PROG-N.rwd)")
	cmd.Flags().IntVar(&bindCPU, "bind-to-cpu", -1, "bind the program to this CPU (default: the one rewind starts on); replay binds to it too")
	cmd.Flags().BoolVar(&chaos, "chaos", false, "randomise scheduling (which thread runs next, slice lengths, preemption points) to expose races; the seed is in the trace")
	cmd.Flags().Uint64Var(&seed, "chaos-seed", 0, "seed for --chaos (implies it; default: random)")
	cmd.Flags().IntVarP(&pid, "pid", "p", 0, "record the running process PID instead of starting PROG")
	cmd.Flags().DurationVar(&duration, "duration", 0, "with -p: detach after this long (e.g. 30s, 5m)")
	cmd.Flags().DurationVar(&keepLast, "keep-last", 0, "ring buffer: keep only about the last D of the run (between D and 1.5 D), on bounded disk")
	cmd.Flags().BoolVar(&serial, "serial", false, "have the recorded processes take turns on one CPU, as threads do, instead of running side by side")
	cmd.Flags().BoolVar(&noBuffer, "no-buffer", false, "stop at every system call instead of letting the program make the simple ones itself (slower; -p never buffers)")
	cmd.Flags().BoolVar(&withSources, "with-sources", false, "store the programs' source files and separate debug files in the trace (rewind pack)")
	cmd.Flags().IntVar(&untilFail, "until-fail", 0, "record PROG again and again until a run fails, at most N runs (default 100)")
	cmd.Flags().Lookup("until-fail").NoOptDefVal = "100"
	cmd.Flags().IntVarP(&jobs, "jobs", "j", 0, "with --until-fail: runs at a time, each on a CPU of its own (default: one per CPU)")
	cmd.Flags().StringVar(&failOn, "fail-on", "", "with --until-fail: a run with an output line that matches REGEX failed, whatever its status")
	cmd.Flags().BoolVar(&keepOnFailure, "keep-on-failure", false, "delete the recording when the program succeeds (one run: CI)")
	return cmd
}

// huntFlags checks the flags of --until-fail and --keep-on-failure.
func huntFlags(cmd *cobra.Command, hunting bool, pid int, keepLast time.Duration, keepOnFailure bool, runs, jobs int) error {
	f := cmd.Flags()
	switch {
	case !hunting && (f.Changed("jobs") || f.Changed("fail-on")):
		return errors.New("-j and --fail-on need --until-fail")
	case !hunting:
		if keepOnFailure && (pid != 0 || keepLast != 0) {
			return errors.New("--keep-on-failure is for a program rewind starts, recorded whole")
		}
		return nil
	case pid != 0 || keepLast != 0 || f.Changed("bind-to-cpu"):
		return errors.New("--until-fail records a program it starts, whole, on CPUs it picks: not with -p, --keep-last or --bind-to-cpu")
	case keepOnFailure:
		return errors.New("--until-fail keeps the failing recording already: not with --keep-on-failure")
	case runs < 1:
		return fmt.Errorf("--until-fail=%d: at least one run", runs)
	case jobs < 0:
		return fmt.Errorf("-j %d: at least one run at a time", jobs)
	}
	return nil
}

// packRecorded is record --with-sources: rewind pack with its default
// limits, reported on stderr (stdout is the program's).
func packRecorded(path string) error {
	if err := packTrace(os.Stderr, path, trace.DefaultPackLimits, false); err != nil {
		return fmt.Errorf("--with-sources: %w", err)
	}
	return nil
}

func newAttachCmd() *cobra.Command {
	var out string
	var bindCPU int
	var duration, keepLast time.Duration
	cmd := &cobra.Command{
		Use:   "attach PID [-o TRACE] [--duration D] [--keep-last D]",
		Short: "Record a running process (rewind record -p PID)",
		Long: `Stops process PID for a snapshot of its state, records it from there, and lets
it go on, detached, at Ctrl-C, SIGTERM, SIGHUP or SIGUSR2 to rewind, or after
--duration. The trace replays like any other; reverse execution stops at the
snapshot. Refused: a process another tracer holds, one of another user
without CAP_SYS_PTRACE, and rewind's own ancestors and descendants.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pid, err := strconv.Atoi(args[0])
			if err != nil || pid <= 0 {
				return fmt.Errorf("attach: %q is not a process id", args[0])
			}
			if keepLast < 0 {
				return fmt.Errorf("--keep-last %v: must be positive", keepLast)
			}
			_, err = runAttach(out, bindCPU, pid, duration, func(o *record.Options) { o.KeepLast = keepLast })
			return err
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "trace file to write (default ./PROG-N.rwd)")
	cmd.Flags().IntVar(&bindCPU, "bind-to-cpu", -1, "bind the process to this CPU while recording (default: the one rewind starts on)")
	cmd.Flags().DurationVar(&duration, "duration", 0, "detach after this long (e.g. 30s, 5m)")
	cmd.Flags().DurationVar(&keepLast, "keep-last", 0, "ring buffer: keep only about the last D of the run (between D and 1.5 D), on bounded disk")
	return cmd
}

// runAttach records the running process pid until rewind is told to stop,
// the duration ends or the process ends, and says where the trace is; it
// returns the trace's path.
func runAttach(out string, bindCPU, pid int, duration time.Duration, set ...func(*record.Options)) (string, error) {
	if duration < 0 {
		return "", fmt.Errorf("--duration %v: must be positive", duration)
	}
	cpu, err := cpuFlag(bindCPU)
	if err != nil {
		return "", err
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		if _, serr := os.Stat(fmt.Sprintf("/proc/%d", pid)); serr != nil {
			return "", fmt.Errorf("attach: no process %d", pid)
		}
		return "", fmt.Errorf("attach to %d: %w", pid, err)
	}
	p, err := reserveTrace(out, filepath.Base(strings.TrimSuffix(exe, " (deleted)")))
	if err != nil {
		return "", traceFailed(err)
	}
	defer p.Discard()
	opts := record.Options{Attach: pid, Duration: duration, Output: p.Path(), Trace: p, CPU: cpu}
	for _, f := range set {
		f(&opts)
	}
	opts.Attached = func(a record.AttachInfo) {
		fmt.Fprintf(os.Stderr, "rewind: attached to process %d (%s): %d threads, %.1f MiB snapshot, paused %v; Ctrl-C detaches\n",
			pid, filepath.Base(exe), a.Threads, float64(a.Bytes)/(1<<20), a.Pause.Round(time.Millisecond))
	}
	res, err := record.Record(opts)
	switch {
	case res == nil && !errors.Is(err, trace.ErrWrite):
		return "", err // could not attach
	case err != nil:
		return "", traceFailed(err)
	}
	how := "the process ended"
	if res.Detached {
		how = "detached; the process runs on"
	}
	fmt.Fprintf(os.Stderr, "rewind: recorded %d events to %s (%s)\n", res.Events, displayPath(p.Path()), how)
	return p.Path(), nil
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
// prints why and returns an *exitError of exitTraceFailed. set adjusts the
// recording's options (chaos mode).
func runRecord(out string, bindCPU int, args []string, set ...func(*record.Options)) (int, string, error) {
	path, err := record.ResolveProgram(args[0])
	if err != nil {
		return 0, "", err
	}
	cpu, err := cpuFlag(bindCPU)
	if err != nil {
		return 0, "", err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return 0, "", err
	}
	p, err := reserveTrace(out, filepath.Base(path))
	if err != nil {
		return 0, "", traceFailed(err)
	}
	defer p.Discard()
	opts := record.Options{
		Path: path, Args: args, Env: os.Environ(), Dir: cwd, Output: p.Path(), Trace: p, CPU: cpu,
	}
	for _, f := range set {
		f(&opts)
	}
	res, err := record.Record(opts)
	switch {
	case res == nil && !errors.Is(err, trace.ErrWrite):
		return 0, "", err // the program could not be started
	case err != nil:
		return 0, "", traceFailed(err)
	}
	if res.Interrupted != 0 {
		fmt.Fprintf(os.Stderr, "rewind: recorded %d events to %s (stopped by %s; the program was killed)\n",
			res.Events, displayPath(p.Path()), unix.SignalName(res.Interrupted))
		return res.ExitCode(), p.Path(), nil
	}
	fmt.Fprintf(os.Stderr, "rewind: recorded %d events to %s\n", res.Events, displayPath(p.Path()))
	if hint := goTestHint(args, os.Getenv("GOFLAGS")); hint != "" {
		fmt.Fprintln(os.Stderr, hint)
	}
	return res.ExitCode(), p.Path(), nil
}

// traceFailed reports a recording without a complete trace.
func traceFailed(err error) error {
	fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(err.Error()))
	return &exitError{exitTraceFailed}
}

// maxTraceNumber bounds the search for a free default name.
const maxTraceNumber = 1 << 20

// reserveTrace prepares the trace file: out if given (replaced at the end
// if it exists), else ./PROG-N.rwd with the first N free. Each default name
// is claimed with O_EXCL, so that concurrent recordings of one program in
// one directory get distinct names.
func reserveTrace(out, prog string) (*trace.Pending, error) {
	if out != "" {
		abs, err := filepath.Abs(out)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", trace.ErrWrite, out, err)
		}
		return trace.Reserve(abs, false)
	}
	var p *trace.Pending
	_, err := firstFree(prog, func(abs string) error {
		var err error
		p, err = trace.Reserve(abs, true)
		return err
	})
	return p, err
}

// traceDirEnv names the directory where recordings go when -o does not
// say (default: the working directory): one directory for every test
// binary a CI job records (go test -exec, ctest's emulator).
const traceDirEnv = "REWIND_TRACE_DIR"

// firstFree claims the first free PREFIX-N.rwd of the working directory
// (or of $REWIND_TRACE_DIR) with claim, which fails with fs.ErrExist where
// the name is taken (never replacing a file), and returns its absolute
// path.
func firstFree(prefix string, claim func(abs string) error) (string, error) {
	if dir := os.Getenv(traceDirEnv); dir != "" && filepath.Dir(prefix) == "." {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("%w: $%s=%s is not a directory", trace.ErrWrite, traceDirEnv, dir)
		}
		prefix = filepath.Join(dir, prefix)
	}
	for n := 1; n <= maxTraceNumber; n++ {
		abs, err := filepath.Abs(prefix + "-" + strconv.Itoa(n) + ".rwd")
		if err != nil {
			return "", fmt.Errorf("%w: %w", trace.ErrWrite, err)
		}
		if err := claim(abs); !errors.Is(err, fs.ErrExist) {
			return abs, err
		}
	}
	return "", fmt.Errorf("%w: %s-1.rwd to %s-%d.rwd all exist", trace.ErrWrite, prefix, prefix, maxTraceNumber)
}

// displayPath shows a path relative to the working directory when shorter.
func displayPath(p string) string {
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, p); err == nil && len(rel) < len(p) && !filepath.IsAbs(rel) && rel[0] != '.' {
			return rel
		}
	}
	return p
}
