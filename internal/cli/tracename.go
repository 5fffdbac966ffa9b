package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// maxTraceNumber bounds the search for a free default name.
const maxTraceNumber = 1 << 20

// reserveTrace prepares the trace file: out if given (replaced at the end
// if it exists), else ./PROG-N.rwd with the first N free. Each default name
// is claimed with O_EXCL, so that concurrent recordings of one program in
// one directory get distinct names.
func reserveTrace(out, prog string) (*trace.Pending, error) {
	if out != "" {
		abs, err := filepath.Abs(out)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", trace.ErrWrite, out, err)
		}
		return trace.Reserve(abs, false)
	}
	var p *trace.Pending
	_, err := firstFree(prog, func(abs string) error {
		var err error
		p, err = trace.Reserve(abs, true)
		return err
	})
	return p, err
}

// traceDirEnv names the directory where recordings go when -o does not
// say (default: the working directory): one directory for every test
// binary a CI job records (go test -exec, ctest's emulator).
const traceDirEnv = "REWIND_TRACE_DIR"

// firstFree claims the first free PREFIX-N.rwd of the working directory
// (or of $REWIND_TRACE_DIR) with claim, which fails with fs.ErrExist where
// the name is taken (never replacing a file), and returns its absolute
// path.
func firstFree(prefix string, claim func(abs string) error) (string, error) {
	if dir := os.Getenv(traceDirEnv); dir != "" && filepath.Dir(prefix) == "." {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("%w: $%s=%s is not a directory", trace.ErrWrite, traceDirEnv, dir)
		}
		prefix = filepath.Join(dir, prefix)
	}
	for n := 1; n <= maxTraceNumber; n++ {
		abs, err := filepath.Abs(prefix + "-" + strconv.Itoa(n) + ".rwd")
		if err != nil {
			return "", fmt.Errorf("%w: %w", trace.ErrWrite, err)
		}
		if err := claim(abs); !errors.Is(err, fs.ErrExist) {
			return abs, err
		}
	}
	return "", fmt.Errorf("%w: %s-1.rwd to %s-%d.rwd all exist", trace.ErrWrite, prefix, prefix, maxTraceNumber)
}
