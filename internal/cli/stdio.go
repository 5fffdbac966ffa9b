package cli

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// reserveStdout keeps standard output for the protocol: it returns a copy
// of descriptor 1 for the server, and points descriptor 1 at standard
// error, so that nothing else the process or its children print (os.Stdout
// included) can corrupt the stream of messages.
func reserveStdout() (*os.File, error) {
	fd, err := unix.FcntlInt(uintptr(1), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("duplicating standard output: %w", err)
	}
	protocol := os.NewFile(uintptr(fd), "mcp-stdout")
	if err := unix.Dup3(2, 1, 0); err != nil {
		protocol.Close()
		return nil, fmt.Errorf("redirecting standard output to standard error: %w", err)
	}
	return protocol, nil
}

// stdio is the connection of --gdbserver -: gdb's pipe on stdin and stdout.
type stdio struct{}

func (stdio) Read(p []byte) (int, error) { return os.Stdin.Read(p) }

func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
