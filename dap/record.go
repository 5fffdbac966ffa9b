package dap

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// record records launch's program, its output sent to the client's
// console, and returns the trace and what removes it: a recording made
// without "output" lives as long as the session.
func (sv *server) record(a launchArgs) (string, func(), error) {
	prog, err := record.ResolveProgram(a.Program)
	if err != nil {
		return "", nil, fmt.Errorf("launch: %w", err)
	}
	dir := a.Cwd
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return "", nil, fmt.Errorf("launch: %w", err)
		}
	}
	out, cleanup := a.Output, func() {}
	if out == "" {
		tmp, err := os.MkdirTemp("", "rewind-dap-")
		if err != nil {
			return "", nil, fmt.Errorf("launch: %w", err)
		}
		out, cleanup = filepath.Join(tmp, filepath.Base(prog)+".rwd"), func() { os.RemoveAll(tmp) }
	} else if !filepath.IsAbs(out) {
		out = filepath.Join(dir, out)
	}
	p, err := trace.Reserve(out, false)
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("launch: %w", err)
	}
	defer p.Discard()
	var copying sync.WaitGroup
	stdout, err := sv.pipeOutput("stdout", &copying)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	stderr, err := sv.pipeOutput("stderr", &copying)
	if err != nil {
		stdout.Close()
		cleanup()
		return "", nil, err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		stdout.Close()
		stderr.Close()
		cleanup()
		return "", nil, fmt.Errorf("launch: %w", err)
	}
	args := append([]string{a.Program}, a.Args...)
	res, err := record.Record(record.Options{Path: prog, Args: args, Env: os.Environ(), Dir: dir, Output: out, Trace: p,
		Stdin: devnull, Stdout: stdout, Stderr: stderr, Warn: stderr})
	devnull.Close()
	stdout.Close()
	stderr.Close()
	// The program's last lines reach the console before what follows.
	copying.Wait()
	if res == nil || err != nil {
		cleanup()
		return "", nil, fmt.Errorf("launch: recording %s: %w", a.Program, err)
	}
	sv.output("console", fmt.Sprintf("rewind: recorded %d events to %s (%s)", res.Events, out, exitWord(res.ExitCode())))
	return out, cleanup, nil
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
