package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/dap"
)

// dapOptions are dap's flags.
type dapOptions struct {
	listen string // --listen: a TCP address ("": stdio)
}

func newDAPCmd() *cobra.Command {
	var o dapOptions
	cmd := &cobra.Command{
		Use:   "dap [--listen ADDR]",
		Short: "Serve recordings to editors over the Debug Adapter Protocol",
		Long: `Speaks the Debug Adapter Protocol on stdin/stdout (or, with --listen, to one
client at a time on a TCP address), for VS Code, Neovim's nvim-dap and other
editors. The client's launch request names the recording:

  {"request": "launch", "trace": "prog-1.rwd"}

or a program to record first ("program", "args", "cwd"; "output" keeps the
trace). Reverse execution is stepBack and reverseContinue; gotoTargets offers
a line's previous and next arrivals; the debug console runs rewind's commands.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runDAP(&o) },
	}
	cmd.Flags().StringVar(&o.listen, "listen", "", "serve on this TCP address (HOST:PORT) instead of stdin/stdout")
	return cmd
}

// runDAP serves DAP on stdio, or on a TCP address until SIGINT or SIGTERM.
func runDAP(o *dapOptions) error {
	opts := dap.Options{Log: os.Stderr}
	if o.listen == "" {
		protocol, err := reserveStdout()
		if err != nil {
			return fmt.Errorf("dap: %w", err)
		}
		defer protocol.Close()
		return dap.Serve(os.Stdin, protocol, opts)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("dap: %w", err)
	}
	// Editors read the port from here when they start the server.
	fmt.Fprintf(os.Stderr, "rewind: DAP server listening at %s\n", ln.Addr())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		ln.Close()
	}()
	for {
		conn, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dap: %w", err)
		}
		// One client at a time: each has its own recording and session.
		if err := dap.Serve(conn, conn, opts); err != nil {
			fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(err.Error()))
		}
		conn.Close()
	}
}
