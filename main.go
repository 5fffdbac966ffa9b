// Command rewind records one run of a Linux x86-64 program and replays it
// deterministically, forwards and backwards, in a terminal UI. The command
// line is package internal/cli; this package stays at the root so that
// go install . builds the rewind binary.
package main

//go:generate go test -run ^TestCLIDoc$ ./internal/cli -update-cli-doc

import "github.com/rewind-debugger/rewind/internal/cli"

func main() { cli.Main() }
