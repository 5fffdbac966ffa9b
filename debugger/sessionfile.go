package debugger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// SessionFile is what a user set up over a recording and finds again when
// they (or a pair partner in the same tmux) reopen it: breakpoints,
// watchpoints, the Timeline's marks and filter, and the layout. It is kept
// beside the trace as TRACE.session (JSON), or under
// $XDG_STATE_HOME/rewind/ when the trace's directory is not writable.
// The UI loads it; batch mode and MCP only with --session, so that their
// output depends on their commands alone.
type SessionFile struct {
	Breakpoints []SavedBreakpoint `json:"breakpoints,omitempty"`
	Watchpoints []SavedWatch      `json:"watchpoints,omitempty"`
	Timeline    SavedTimeline     `json:"timeline"`
	Layout      SavedLayout       `json:"layout"`
}

// SavedBreakpoint is a breakpoint as the user gave it.
type SavedBreakpoint struct {
	Spec      string `json:"spec"`
	Condition string `json:"condition,omitempty"`
	Temporary bool   `json:"temporary,omitempty"`
	Disabled  bool   `json:"disabled,omitempty"`
}

// SavedWatch is a watchpoint as the user gave it; Access is a read/write
// one (rwatch, awatch).
type SavedWatch struct {
	Expr string `json:"expr"`
	// Location is the address a watch -l watches, as `*(TYPE *)ADDR`
	// (gdb's save breakpoints writes `watch -location EXPR`, which fails
	// where EXPR's variables do not exist): reopened at any moment, it
	// watches those bytes again, listed as Expr.
	Location string `json:"location,omitempty"`
	Access   bool   `json:"access,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
}

// SavedTimeline is the Timeline's state: its filter, whether the loader's
// and rdtsc/cpuid events are shown unfolded, and its marks.
type SavedTimeline struct {
	Filter   string      `json:"filter,omitempty"`
	Unfolded bool        `json:"unfolded,omitempty"`
	Marks    []SavedMark `json:"marks,omitempty"`
}

// SavedMark is a stop the user reached, marked on the Timeline.
type SavedMark struct {
	Event  int64  `json:"event"`
	Reason string `json:"reason"`
	Label  string `json:"label"`
}

// SavedLayout is the layout: the focused pane (by title), the zoom, and
// the arrangement the user chose with :layout (in the config's layout
// syntax; empty when it is the config's own, so that editing config.toml
// still takes effect).
type SavedLayout struct {
	Focus string `json:"focus,omitempty"`
	Zoom  bool   `json:"zoom,omitempty"`
	Spec  string `json:"spec,omitempty"`
}

// SessionPaths are where the session file of a trace may be: beside it
// first, then under the XDG state directory (a name made unique by the
// trace's absolute path).
func SessionPaths(trace string) []string {
	out := []string{trace + ".session"}
	abs, err := filepath.Abs(trace)
	if err != nil {
		abs = trace
	}
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return out
		}
		state = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(abs))
	name := filepath.Base(trace) + "-" + hex.EncodeToString(sum[:6]) + ".session"
	return append(out, filepath.Join(state, "rewind", name))
}

// LoadSessionFile reads the session file of a trace. A missing one is an
// empty session; a damaged one is an error of one line, which callers show
// as a warning and go on without it.
func LoadSessionFile(trace string) (*SessionFile, error) {
	for _, p := range SessionPaths(trace) {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return &SessionFile{}, fmt.Errorf("session file %s: %w", p, err)
		}
		var f SessionFile
		if err := json.Unmarshal(data, &f); err != nil {
			return &SessionFile{}, fmt.Errorf("session file %s is damaged, ignored: %s", p, strings.ReplaceAll(err.Error(), "\n", " "))
		}
		return &f, nil
	}
	return &SessionFile{}, nil
}

// Save writes the session file atomically (a temporary file renamed over
// it), beside the trace, else under the XDG state directory. It returns
// where it wrote.
func (f *SessionFile) Save(trace string) (string, error) {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", fmt.Errorf("session file: %w", err)
	}
	data = append(data, '\n')
	var errs []error
	for _, p := range SessionPaths(trace) {
		if err := writeAtomic(p, data); err != nil {
			errs = append(errs, err)
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("session file: %w", errors.Join(errs...))
}

// writeAtomic writes data to path through a temporary file in its
// directory, so that a reader never sees half a file.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return trace.WriteCacheFile(path, data)
}

// Restore sets the file's breakpoints and watchpoints up again in the
// session, in the order they were made, and says in one line per problem
// what could not be (a watch on a local of a function not running now, a
// function gone from a rebuilt program); the rest is restored. Those not
// restored are returned in kept, for the caller to keep in the file: the
// user may want them at another moment.
func (s *Session) Restore(f *SessionFile) (restored int, kept *SessionFile, problems []string) {
	kept = &SessionFile{}
	// try runs a line that makes a breakpoint or watchpoint, and returns
	// its id.
	try := func(line string, disabled bool) (int, bool) {
		res := s.Execute(line)
		if !res.OK {
			problems = append(problems, "session: "+line+": "+res.Error)
			return 0, false
		}
		restored++
		id := madeID(res)
		if disabled && id > 0 {
			s.Execute(fmt.Sprintf("disable %d", id))
		}
		return id, true
	}
	for _, b := range f.Breakpoints {
		c := "break "
		if b.Temporary {
			c = "tbreak "
		}
		c += b.Spec
		if b.Condition != "" {
			c += " if " + b.Condition
		}
		if _, ok := try(c, b.Disabled); !ok {
			kept.Breakpoints = append(kept.Breakpoints, b)
		}
	}
	for _, w := range f.Watchpoints {
		c := "watch "
		if w.Access {
			c = "awatch "
		}
		what := w.Expr
		if w.Location != "" {
			what = "-l " + w.Location
		}
		id, ok := try(c+what, w.Disabled)
		switch {
		case !ok:
			kept.Watchpoints = append(kept.Watchpoints, w)
		case w.Location != "":
			s.relabelWatch(id, w.Expr, w.Location)
		}
	}
	return restored, kept, problems
}

// SetStops fills the file's breakpoints and watchpoints from a snapshot's
// lists, then those of kept (not restored, see Restore) that the user did
// not make again.
func (f *SessionFile) SetStops(bps []BreakpointInfo, ws []WatchpointInfo, kept *SessionFile) {
	f.Breakpoints, f.Watchpoints = nil, nil
	for _, b := range bps {
		f.Breakpoints = append(f.Breakpoints, SavedBreakpoint{Spec: b.Spec, Condition: b.Condition, Temporary: b.Temporary, Disabled: b.Disabled})
	}
	for _, w := range ws {
		f.Watchpoints = append(f.Watchpoints, SavedWatch{Expr: w.Expr, Location: w.Location, Access: w.Access, Disabled: w.Disabled})
	}
	if kept == nil {
		return
	}
	for _, b := range kept.Breakpoints {
		if !slices.ContainsFunc(f.Breakpoints, func(x SavedBreakpoint) bool { return x.Spec == b.Spec }) {
			f.Breakpoints = append(f.Breakpoints, b)
		}
	}
	for _, w := range kept.Watchpoints {
		if !slices.ContainsFunc(f.Watchpoints, func(x SavedWatch) bool { return x.Expr == w.Expr }) {
			f.Watchpoints = append(f.Watchpoints, w)
		}
	}
}
