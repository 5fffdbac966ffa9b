package frontend

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

// traceDirEnv names the directory where recordings go when -o does not
// say (default: the working directory): one directory for every test
// binary a CI job records (go test -exec, ctest's emulator).
const traceDirEnv = "REWIND_TRACE_DIR"

// ClaimName claims the first free PREFIX-N.rwd of dir ("": the working
// directory), or of $REWIND_TRACE_DIR when set, with claim, which fails
// with fs.ErrExist where the name is taken (never replacing a file), and
// returns its absolute path. Each default name of a recording is claimed
// this way, so that concurrent recordings of one program in one directory
// get distinct names; rewind record --until-fail keeps its recordings
// under names found the same way.
func ClaimName(dir, prefix string, claim func(abs string) error) (string, error) {
	if env := os.Getenv(traceDirEnv); env != "" && filepath.Dir(prefix) == "." {
		if fi, err := os.Stat(env); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("%w: $%s=%s is not a directory", trace.ErrWrite, traceDirEnv, env)
		}
		dir = env
	}
	prefix = filepath.Join(dir, prefix)
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

// reserveTrace prepares the trace file of a recording: o.Output if given
// (relative to o.Dir, replaced at the end if it exists), else a file in a
// new temporary directory (o.TempPattern), else NAME-N.rwd with the first
// N free. It returns what removes the temporary directory (a no-op for the
// others).
func reserveTrace(o *RecordOptions, name string) (*trace.Pending, func(), error) {
	out := o.Output
	switch {
	case out == "" && o.TempPattern != "":
		tmp, err := os.MkdirTemp("", o.TempPattern)
		if err != nil {
			return nil, nil, err
		}
		remove := func() { os.RemoveAll(tmp) }
		p, err := trace.Reserve(filepath.Join(tmp, name+".rwd"), false)
		if err != nil {
			remove()
			return nil, nil, err
		}
		return p, remove, nil
	case out == "":
		var p *trace.Pending
		_, err := ClaimName(o.Dir, name, func(abs string) error {
			var err error
			p, err = trace.Reserve(abs, true)
			return err
		})
		return p, func() {}, err
	}
	if o.Dir != "" && !filepath.IsAbs(out) {
		out = filepath.Join(o.Dir, out)
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, nil, fmt.Errorf("%w %s: %w", trace.ErrWrite, o.Output, err)
	}
	p, err := trace.Reserve(abs, false)
	return p, func() {}, err
}
