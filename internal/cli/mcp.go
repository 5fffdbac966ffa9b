package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/internal/frontend"
	"github.com/rewind-debugger/rewind/mcpserver"
)

// mcpOptions are mcp's flags.
type mcpOptions struct {
	process int32 // -p
	session bool  // --session
}

func newMCPCmd() *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp [-p PID] TRACE",
		Short: "Serve a recording to coding agents over MCP on stdio",
		Long: `Serves the recording TRACE over the Model Context Protocol on stdin/stdout,
for coding agents: run_command (any debugger command), get_events, get_stack,
get_locals, read_memory, watch_history and goto. Nothing but the protocol is
written to stdout. For Claude Code:

  claude mcp add rewind -- rewind mcp TRACE`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error { return runMCP(args[0], &o) },
	}
	cmd.Flags().Int32VarP(&o.process, "process", "p", 0, "the recorded pid of the process to serve (rewind ps lists them)")
	cmd.Flags().BoolVar(&o.session, "session", false, "set up the breakpoints and watchpoints of the recording's session file (TRACE.session) first")
	return cmd
}

// runMCP serves the recording at trace over the Model Context Protocol on
// stdin/stdout until the client disconnects, SIGINT or SIGTERM.
func runMCP(trace string, o *mcpOptions) error {
	// The warnings go to the client's log; the model is told in the
	// protocol.
	s, err := frontend.Open(trace, frontend.OpenOptions{Options: debugger.Options{Process: o.process}, Warn: warnLine})
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	defer s.Close()
	if o.session {
		restoreSession(s, trace)
	}
	protocol, err := reserveStdout()
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	defer protocol.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return mcpserver.Run(ctx, s, record.Version, &mcpserver.Transport{Reader: os.Stdin, Writer: protocol})
}
