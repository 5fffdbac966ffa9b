// Package debugger is the debugging session on top of the time-travel
// engine, and the command language (gdb names and short forms) shared by
// batch mode, the TUI's prompt and MCP. Each command gives one Result, which
// renders as text or as the JSON object of DESIGN.md §4.
package debugger

import (
	"fmt"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

// Options configure a session.
type Options struct {
	// CheckpointBudget bounds the memory of checkpoints in bytes (0: default).
	CheckpointBudget int64
	// NoCheckpoints turns checkpoints off: going back re-runs from the start.
	NoCheckpoints bool
}

// breakpoint is a user breakpoint: a location spec and where it resolved.
type breakpoint struct {
	id   int
	spec string
	addr uint64 // 0 while pending (a symbol in a library not loaded yet)
}

// watch is a user watchpoint.
type watch struct {
	id   int
	expr string
	wp   replay.Watchpoint
}

// Session is one debugging session over a recording.
type Session struct {
	path    string
	tl      *timeline.Timeline
	bps     []*breakpoint
	watches []*watch
	nextID  int
	thread  int32 // selected thread (0: the one that runs next)
	syms    *dwarf.Table
	symsAt  int // number of mappings the table was built from
}

// Open starts a session on the trace at path, at the start of the recording.
func Open(path string, opts Options) (*Session, error) {
	budget := opts.CheckpointBudget
	if budget == 0 {
		budget = DefaultCheckpointBudget
	}
	if opts.NoCheckpoints {
		budget = 0
	}
	tl, err := timeline.Open(path, budget)
	if err != nil {
		return nil, err
	}
	s := &Session{path: path, tl: tl, nextID: 1}
	tl.SetResolver(s.resolvePending)
	return s, nil
}

// resolvePending resolves breakpoints waiting for a library to be loaded.
func (s *Session) resolvePending() []uint64 {
	var out []uint64
	for _, b := range s.bps {
		if b.addr == 0 {
			if a, err := s.resolve(b.spec); err == nil {
				b.addr = a
				out = append(out, a)
			}
		}
	}
	return out
}

// DefaultCheckpointBudget is the memory checkpoints may use by default.
const DefaultCheckpointBudget = 1 << 30

// Close ends the session.
func (s *Session) Close() { s.tl.Close() }

// Timeline exposes the engine, for views that need more than commands.
func (s *Session) Timeline() *timeline.Timeline { return s.tl }

// currentThread is the thread commands inspect.
func (s *Session) currentThread() int32 {
	if s.thread != 0 {
		for _, t := range s.tl.Session().Threads() {
			if t.Tid == s.thread {
				return s.thread
			}
		}
	}
	if tid := s.tl.Now().Tid; tid != 0 {
		return tid
	}
	return s.tl.Session().NextThread()
}

// symbols returns the symbol table of the process as it is mapped now.
func (s *Session) symbols() *dwarf.Table {
	maps, err := s.tl.Session().Mappings()
	if err != nil {
		return &dwarf.Table{}
	}
	if s.syms != nil && s.symsAt == len(maps) {
		return s.syms
	}
	t := &dwarf.Table{}
	seen := map[string]bool{}
	exe := s.tl.Session().Header().Program
	order := []string{exe}
	base := map[string]uint64{}
	for _, m := range maps {
		if m.Path == "" || strings.HasPrefix(m.Path, "[") {
			continue
		}
		if _, ok := base[m.Path]; !ok && m.Offset == 0 {
			base[m.Path] = m.Start
			if m.Path != exe {
				order = append(order, m.Path)
			}
		}
	}
	for _, p := range order {
		b, ok := base[p]
		if !ok || seen[p] {
			continue
		}
		seen[p] = true
		if img, err := dwarf.LoadImage(p, b); err == nil {
			t.Images = append(t.Images, img)
		}
	}
	s.syms, s.symsAt = t, len(maps)
	return t
}

// symbolize names an address: "func+0x12" or "".
func (s *Session) symbolize(addr uint64) (string, uint64) {
	sym, off, ok := s.symbols().At(addr)
	if !ok {
		return "", 0
	}
	return sym.Name, off
}

// resolve turns a location into an address: *ADDR or a symbol name.
func (s *Session) resolve(loc string) (uint64, error) {
	if rest, ok := strings.CutPrefix(loc, "*"); ok {
		v, err := parseNumber(strings.TrimSpace(rest))
		if err != nil {
			return 0, fmt.Errorf("bad address %q", rest)
		}
		return v, nil
	}
	if sym, ok := s.symbols().Lookup(loc); ok {
		return sym.Addr, nil
	}
	return 0, fmt.Errorf("no symbol %q in the program or its loaded libraries", loc)
}

// syncBreakpoints gives the engine the resolved breakpoint addresses,
// resolving pending ones against libraries loaded since.
func (s *Session) syncBreakpoints() error {
	var addrs []uint64
	for _, b := range s.bps {
		if b.addr == 0 {
			if a, err := s.resolve(b.spec); err == nil {
				b.addr = a
			}
		}
		if b.addr != 0 {
			addrs = append(addrs, b.addr)
		}
	}
	return s.tl.SetBreakpoints(addrs)
}

func (s *Session) syncWatches() error {
	ws := make([]replay.Watchpoint, len(s.watches))
	for i, w := range s.watches {
		ws[i] = w.wp
	}
	return s.tl.SetWatchpoints(ws)
}
