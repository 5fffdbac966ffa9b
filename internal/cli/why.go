package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/internal/frontend"
)

// whyOptions are why's flags.
type whyOptions struct {
	json    bool  // --json
	links   int   // --links
	process int32 // -p
}

func newWhyCmd() *cobra.Command {
	var o whyOptions
	cmd := &cobra.Command{
		Use:   "why [-p PID] [--json] [--links N] TRACE",
		Short: "Explain a failure: follow the bad value back to the write that caused it",
		Long: `Finds where the recorded program failed (a fault such as SIGSEGV or SIGFPE,
a failed assert, an abort whose message names a value, or a non-zero exit after
a message on stderr) and follows the bad value back: the register that held it,
the instruction that set it, the memory it was loaded from, the write that
stored it there, and so on, at most --links times. It stops at the first
suspicious write:
  - out of bounds: the instruction that wrote it wrote the byte before it too,
    past the end of another member or object (DWARF says where each ends);
  - use after free: into a heap block freed and not allocated again since;
  - below the stack pointer: into a stack frame that has returned;
  - a data race: by another thread than the one that failed, holding no mutex.
Each link has its source line and its moment, which goto reaches in replay
(the UI's :why shows the same). --json prints the explanation as one object.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWhy(args[0], &o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the explanation as one JSON object")
	cmd.Flags().IntVar(&o.links, "links", 12, "the most links to follow back")
	cmd.Flags().Int32VarP(&o.process, "process", "p", 0, "the recorded pid of the process to explain (default: the one that crashed)")
	return cmd
}

// runWhy explains the failure of the recording at path.
func runWhy(path string, o *whyOptions) error {
	if o.links < 1 {
		return fmt.Errorf("why: --links must be 1 or more, not %d", o.links)
	}
	s, err := frontend.Open(path, frontend.OpenOptions{Options: debugger.Options{Process: o.process}, Warn: warnLine})
	if err != nil {
		return err
	}
	defer s.Close()
	w, err := s.Why(o.links)
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(w)
	}
	_, err = os.Stdout.WriteString(w.Text() + "\n")
	return err
}
