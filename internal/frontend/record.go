package frontend

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// RecordOptions say what to record and where the trace goes.
type RecordOptions struct {
	// Recorder is the recorder's options: what the front end sets
	// (chaos, CPU, output streams, Attach…). Record fills in Path, Args,
	// Dir (from the fields below), Env (this process's, when nil), Output
	// and Trace.
	Recorder record.Options
	// Args is the program and its arguments, the program looked up as a
	// shell would (record.ResolveProgram); empty with Recorder.Attach.
	Args []string
	// Name names the default trace (NAME-N.rwd) of a process attached to
	// (its executable's name); a program's is its file name.
	Name string
	// Dir is the program's working directory ("": this process's), which
	// a relative Output and the default name are in.
	Dir string
	// Output is the trace to write; one that exists is replaced once the
	// recording is complete. Empty: see TempPattern.
	Output string
	// TempPattern, when Output is empty, puts the trace in a new
	// temporary directory (os.MkdirTemp's pattern), which Recorded.Remove
	// deletes; empty: the first free NAME-N.rwd.
	TempPattern string
}

// Recorded is a recording made.
type Recorded struct {
	*record.Result
	// Trace is the trace's absolute path.
	Trace string
	// Remove deletes a trace made in a temporary directory
	// (RecordOptions.TempPattern) with its directory; for others, nothing.
	Remove func()
}

// RecordError is a recording that failed, with how far it got: the front
// ends tell these apart (record's status 125 is for a trace that could
// not be written, the DAP names the program once it ran).
type RecordError struct {
	// Err is what failed, in the words the front ends show.
	Err error
	// Recording: the recorder ran, and could not start the program (or
	// attach to the process), or write the trace as it went.
	Recording bool
	// TraceFailed: the trace could not be reserved or written whole,
	// whatever the program did: rewind's own failure.
	TraceFailed bool
}

// Error is the error's, unchanged: the front ends show it as it is.
func (e *RecordError) Error() string { return e.Err.Error() }

// Unwrap gives the error.
func (e *RecordError) Unwrap() error { return e.Err }

// Record records o.Args (or the process of o.Recorder.Attach) into a new
// trace. Its errors are *RecordError.
func Record(o RecordOptions) (*Recorded, error) {
	ro := o.Recorder
	name := o.Name
	if ro.Attach == 0 {
		if len(o.Args) == 0 {
			return nil, &RecordError{Err: errors.New("no program to record")}
		}
		path, err := record.ResolveProgram(o.Args[0])
		if err != nil {
			return nil, &RecordError{Err: err}
		}
		ro.Path, ro.Args, ro.Dir, name = path, o.Args, o.Dir, filepath.Base(path)
		if ro.Dir == "" {
			if ro.Dir, err = os.Getwd(); err != nil {
				return nil, &RecordError{Err: err}
			}
		}
		if ro.Env == nil {
			ro.Env = os.Environ()
		}
	}
	p, remove, err := reserveTrace(&o, name)
	if err != nil {
		return nil, &RecordError{Err: err, TraceFailed: true}
	}
	defer p.Discard()
	ro.Output, ro.Trace = p.Path(), p
	res, err := record.Record(ro)
	switch {
	case res == nil && !errors.Is(err, trace.ErrWrite):
		remove()
		return nil, &RecordError{Err: err, Recording: true} // the program could not be started
	case err != nil:
		remove()
		return nil, &RecordError{Err: err, Recording: true, TraceFailed: true}
	}
	return &Recorded{Result: res, Trace: p.Path(), Remove: remove}, nil
}
