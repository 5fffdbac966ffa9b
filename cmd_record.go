package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

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
	cmd := &cobra.Command{
		Use:   "record [-o TRACE] [--] PROG [ARGS...]",
		Short: "Record one run of PROG",
		Long: `Runs PROG under recording with stdin, stdout and stderr passed through, then
exits with PROG's status (128+N when killed by signal N). The trace is written
atomically to TRACE (default ./PROG-N.rwd, the first N free; an existing TRACE
given with -o is replaced once the recording is complete).

If the trace cannot be written (-o names a directory, the directory is not
writable, the disk is full, an I/O error), rewind says why in one line and
exits with status 125: before the program starts when it can tell, else by
killing the program and keeping the trace up to its last good frame in
TRACE.NNNN.partial.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("chaos-seed") {
				chaos = true
			}
			code, _, err := runRecord(out, bindCPU, args, func(o *record.Options) { o.Chaos, o.Seed = chaos, seed })
			if err != nil {
				return err
			}
			return &exitError{code}
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVarP(&out, "output", "o", "", "trace file to write (default ./PROG-N.rwd)")
	cmd.Flags().IntVar(&bindCPU, "bind-to-cpu", -1, "bind the program to this CPU (default: the one rewind starts on); replay binds to it too")
	cmd.Flags().BoolVar(&chaos, "chaos", false, "randomise scheduling (which thread runs next, slice lengths, preemption points) to expose races; the seed is in the trace")
	cmd.Flags().Uint64Var(&seed, "chaos-seed", 0, "seed for --chaos (implies it; default: random)")
	return cmd
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
	var cpu *int
	if bindCPU >= 0 {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil || !set.IsSet(bindCPU) {
			return 0, "", fmt.Errorf("--bind-to-cpu %d: not a CPU this process may run on", bindCPU)
		}
		cpu = &bindCPU
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
	for n := 1; n <= maxTraceNumber; n++ {
		abs, err := filepath.Abs(prog + "-" + strconv.Itoa(n) + ".rwd")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", trace.ErrWrite, err)
		}
		p, err := trace.Reserve(abs, true)
		if !errors.Is(err, fs.ErrExist) {
			return p, err
		}
	}
	return nil, fmt.Errorf("%w: %s-1.rwd to %s-%d.rwd all exist", trace.ErrWrite, prog, prog, maxTraceNumber)
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
