package mcpserver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/rewind-debugger/rewind/tracediff"
)

// DiffInput is the input of diff_traces.
type DiffInput struct {
	Other string `json:"other" jsonschema:"path of another recording of the same program (absolute, or relative to the server's working directory); the served recording is A, this one B"`
	// NoStacks leaves out the stacks of the first difference, which take
	// a replay of each recording up to it.
	NoStacks bool `json:"no_stacks,omitempty" jsonschema:"leave out the stack and source line of each side of the first difference (they take a replay of both recordings up to it)"`
}

// diffStackTimeout bounds each replay for the stacks of a diff: an agent
// waits for the answer.
const diffStackTimeout = time.Minute

// diffTraces compares the served recording (A) with another one (B).
func (sv *server) diffTraces(_ context.Context, in DiffInput) (*tracediff.Report, string, error) {
	other := strings.TrimSpace(in.Other)
	if other == "" {
		return nil, "", errors.New("other: the path of another recording is needed")
	}
	rep, err := tracediff.Diff(sv.s.Path(), other, tracediff.Options{Stacks: !in.NoStacks, StackTimeout: diffStackTimeout})
	if err != nil {
		return nil, "", err
	}
	var b strings.Builder
	tracediff.Render(&b, rep, 0)
	return rep, b.String(), nil
}
