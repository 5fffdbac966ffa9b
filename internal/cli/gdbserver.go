package cli

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/rewind-debugger/rewind/gdbserver"
)

// runGDBServer implements replay --gdbserver: one gdb connection, on stdio
// (--gdbserver -, what `target remote | rewind replay --gdbserver - TRACE`
// runs) or on a TCP port (the address it listens on goes to stderr, so
// that port 0 is usable). It returns when gdb detaches, kills the
// target or goes away.
func runGDBServer(path string, o *replayOptions) error {
	addr := o.gdbAddr
	var ln net.Listener
	if addr != "-" {
		if !strings.Contains(addr, ":") {
			// A bare port listens on this machine only: the server
			// shows the program's memory to whoever connects.
			addr = "127.0.0.1:" + addr
		}
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("--gdbserver: %w", err)
		}
		defer ln.Close()
	}
	// The recording opens before gdb is told where to connect: a bad
	// trace fails first.
	s, err := openSession(path, o.sessionOptions(), warnLine)
	if err != nil {
		return err
	}
	defer s.Close()
	var conn io.ReadWriter = stdio{}
	if ln != nil {
		fmt.Fprintf(os.Stderr, "rewind: gdbserver listening on %s (gdb: target remote %s)\n", ln.Addr(), ln.Addr())
		c, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("--gdbserver: %w", err)
		}
		defer c.Close()
		conn = c
	}
	sv := gdbserver.New(s)
	sv.Log = os.Stderr
	return sv.Serve(conn)
}
