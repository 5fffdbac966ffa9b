package testprog

import (
	"io"
	"os/exec"
)

// StartPiped starts cmd with a pipe to its standard input and one from its
// standard output, for a test that talks to it line by line; it fails the
// test when it cannot. The caller closes stdin and waits for cmd.
func StartPiped(t TB, cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err = cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}
