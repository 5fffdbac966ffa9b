package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/record"
)

func newRecordCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "record [-o TRACE] [--] PROG [ARGS...]",
		Short: "Record one run of PROG",
		Long: `Runs PROG under recording with stdin, stdout and stderr passed through, then
exits with PROG's status (128+N when killed by signal N). The trace is written
atomically to TRACE (default ./PROG-N.rwd).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			code, _, err := runRecord(out, args)
			if err != nil {
				return err
			}
			return &exitError{code}
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVarP(&out, "output", "o", "", "trace file to write (default ./PROG-N.rwd)")
	return cmd
}

// runRecord records args and returns the program's shell-style exit
// status and the trace written.
func runRecord(out string, args []string) (int, string, error) {
	path, err := record.ResolveProgram(args[0])
	if err != nil {
		return 0, "", err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return 0, "", err
	}
	if out == "" {
		out = defaultTraceName(filepath.Base(path))
	}
	if out, err = filepath.Abs(out); err != nil {
		return 0, "", err
	}
	res, err := record.Record(record.Options{
		Path: path, Args: args, Env: os.Environ(), Dir: cwd, Output: out,
	})
	if res == nil {
		return 0, "", err
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(err.Error()))
		return res.ExitCode(), out, nil
	}
	if res.Interrupted != 0 {
		fmt.Fprintf(os.Stderr, "rewind: recorded %d events to %s (stopped by %s; the program was killed)\n",
			res.Events, displayPath(out), unix.SignalName(res.Interrupted))
		return res.ExitCode(), out, nil
	}
	fmt.Fprintf(os.Stderr, "rewind: recorded %d events to %s\n", res.Events, displayPath(out))
	return res.ExitCode(), out, nil
}

// defaultTraceName picks ./PROG-N.rwd with the first N not taken.
func defaultTraceName(prog string) string {
	for n := 1; ; n++ {
		name := prog + "-" + strconv.Itoa(n) + ".rwd"
		if _, err := os.Lstat(name); os.IsNotExist(err) {
			if _, err := os.Lstat(name + ".partial"); os.IsNotExist(err) {
				return name
			}
		}
	}
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
