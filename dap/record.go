package dap

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/internal/frontend"
)

// record records launch's program, its output sent to the client's
// console, and returns the trace and what removes it: a recording made
// without "output" lives as long as the session.
func (sv *server) record(a launchArgs) (string, func(), error) {
	dir := a.Cwd
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return "", nil, fmt.Errorf("launch: %w", err)
		}
	}
	var copying sync.WaitGroup
	stdout, err := sv.pipeOutput("stdout", &copying)
	if err != nil {
		return "", nil, err
	}
	stderr, err := sv.pipeOutput("stderr", &copying)
	if err != nil {
		stdout.Close()
		return "", nil, err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		stdout.Close()
		stderr.Close()
		return "", nil, fmt.Errorf("launch: %w", err)
	}
	rec, err := frontend.Record(frontend.RecordOptions{
		Recorder:    record.Options{Stdin: devnull, Stdout: stdout, Stderr: stderr, Warn: stderr},
		Args:        append([]string{a.Program}, a.Args...),
		Dir:         dir,
		Output:      a.Output,
		TempPattern: "rewind-dap-",
	})
	devnull.Close()
	stdout.Close()
	stderr.Close()
	// The program's last lines reach the console before what follows.
	copying.Wait()
	var re *frontend.RecordError
	switch {
	case errors.As(err, &re) && re.Recording:
		return "", nil, fmt.Errorf("launch: recording %s: %w", a.Program, re.Err)
	case err != nil:
		return "", nil, fmt.Errorf("launch: %w", err)
	}
	sv.output("console", fmt.Sprintf("rewind: recorded %d events to %s (%s)", rec.Events, rec.Trace, exitWord(rec.ExitCode())))
	return rec.Trace, rec.Remove, nil
}

// exitWord says how the recorded program ended.
func exitWord(code int) string {
	if code > 128 {
		return fmt.Sprintf("killed by signal %d", code-128)
	}
	return fmt.Sprintf("exit status %d", code)
}

// pipeOutput returns the write end of a pipe whose lines go to the
// client's console in category (stdout, stderr) until it is closed (then
// copying is done).
func (sv *server) pipeOutput(category string, copying *sync.WaitGroup) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	copying.Add(1)
	go func() {
		defer copying.Done()
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			sv.output(category, sc.Text())
		}
	}()
	return w, nil
}
