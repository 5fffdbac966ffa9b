package cli

import (
	"path/filepath"
	"slices"
	"strings"
)

// goTestHint returns a one-line note when args is a `go test` that will link
// its test binary without symbols: go test passes -s -w to the linker unless
// told otherwise, so the recorded test binary could be replayed but not
// debugged at the source level. goflags is $GOFLAGS. Empty: nothing to say.
func goTestHint(args []string, goflags string) string {
	if len(args) < 2 || filepath.Base(args[0]) != "go" {
		return ""
	}
	i := slices.IndexFunc(args[1:], func(a string) bool { return !strings.HasPrefix(a, "-") })
	if i < 0 || args[1+i] != "test" {
		return ""
	}
	all := append(slices.Clone(args), strings.Fields(goflags)...)
	for _, a := range all {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if strings.Contains(a, "-w=false") || a == "-c" || a == "--c" || name == "-o" || name == "o" {
			return "" // symbols kept, or the binary is built but not run here
		}
	}
	return "rewind: note: go test links the test binary without symbols (-s -w); to debug it, record " +
		"go test -ldflags='-s=false -w=false' -gcflags='all=-N -l' …, then rewind ps and rewind replay -p PID"
}
