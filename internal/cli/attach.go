package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/internal/frontend"
	"github.com/spf13/cobra"
)

// attachOptions are attach's flags.
type attachOptions struct {
	out      string        // -o
	bindCPU  int           // --bind-to-cpu (-1: the default)
	duration time.Duration // --duration
	keepLast time.Duration // --keep-last
}

func newAttachCmd() *cobra.Command {
	var o attachOptions
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
			if o.keepLast < 0 {
				return fmt.Errorf("--keep-last %v: must be positive", o.keepLast)
			}
			_, err = runAttach(o.out, o.bindCPU, pid, o.duration, record.Options{KeepLast: o.keepLast})
			return err
		},
	}
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "trace file to write (default ./PROG-N.rwd)")
	cmd.Flags().IntVar(&o.bindCPU, "bind-to-cpu", -1, "bind the process to this CPU while recording (default: the one rewind starts on)")
	cmd.Flags().DurationVar(&o.duration, "duration", 0, "detach after this long (e.g. 30s, 5m)")
	cmd.Flags().DurationVar(&o.keepLast, "keep-last", 0, "ring buffer: keep only about the last D of the run (between D and 1.5 D), on bounded disk")
	return cmd
}

// runAttach records the running process pid until rewind is told to stop,
// the duration ends or the process ends, and says where the trace is; it
// returns the trace's path. ro holds the recorder's options the flags set.
func runAttach(out string, bindCPU, pid int, duration time.Duration, ro record.Options) (string, error) {
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
	ro.Attach, ro.Duration, ro.CPU = pid, duration, cpu
	ro.Attached = func(a record.AttachInfo) {
		fmt.Fprintf(os.Stderr, "rewind: attached to process %d (%s): %d threads, %.1f MiB snapshot, paused %v; Ctrl-C detaches\n",
			pid, filepath.Base(exe), a.Threads, float64(a.Bytes)/(1<<20), a.Pause.Round(time.Millisecond))
	}
	rec, err := frontend.Record(frontend.RecordOptions{Recorder: ro, Name: filepath.Base(strings.TrimSuffix(exe, " (deleted)")), Output: out})
	if err != nil {
		return "", recordFailed(err)
	}
	how := "the process ended"
	if rec.Detached {
		how = "detached; the process runs on"
	}
	fmt.Fprintf(os.Stderr, "rewind: recorded %d events to %s (%s)\n", rec.Events, displayPath(rec.Trace), how)
	return rec.Trace, nil
}
