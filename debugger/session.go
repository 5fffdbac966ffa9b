// Package debugger is the debugging session on top of the time-travel
// engine, and the command language (gdb names and short forms) shared by
// batch mode, the TUI's prompt and MCP. Each command gives one Result, which
// renders as text or as the JSON object of docs/design.md, §4 "The
// command result (JSON)".
package debugger

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Options configure a session.
type Options struct {
	// CheckpointBudget bounds the memory of checkpoints in bytes (0: default).
	CheckpointBudget int64
	// NoCheckpoints turns checkpoints off: going back re-runs from the start.
	NoCheckpoints bool
	// Process is the recorded pid of the process to debug (0: the one that
	// crashed, else the last that exec'd the recorded program).
	Process int32
}

// breakpoint is a user breakpoint: a location spec and where it resolved.
type breakpoint struct {
	id   int
	spec string
	// place is the spec resolved again at each library load ("" for
	// *ADDR, fixed): a bare LINE becomes FILE:LINE of the file it was set
	// in, which later stops do not change.
	place string
	addrs []uint64 // empty while pending (a library not loaded yet)
	// gen is the exec generation of the process addrs are for; byGen
	// keeps those of the others: after an exec the program is another,
	// and going back before it brings its addresses back.
	gen   int
	byGen map[int][]uint64
	// cond is the condition of `break LOC if EXPR` ("" for none).
	cond string
	// temp marks a tbreak, deleted at its first stop; disabled ones
	// stay listed and are not armed.
	temp, disabled bool
	// hits counts the stops at it, ignored crossings included, in either
	// direction: what gdb's info breakpoints says it was "already hit".
	hits int
}

// countHit counts a stop at breakpoint id (0: none).
func (s *Session) countHit(id int) {
	for _, b := range s.bps {
		if b.id == id {
			b.hits++
		}
	}
}

// countWatchHit counts a stop of watchpoint id, for info breakpoints.
func (s *Session) countWatchHit(id int) {
	for _, w := range s.watches {
		if w.id == id {
			w.hits++
		}
	}
}

// watch is a user watchpoint.
type watch struct {
	id   int
	expr string
	// location is `*(TYPE *)ADDR` for a watch -l: what it watches
	// wherever the session reopens, not the expression (whose variables
	// may not exist there).
	location string
	wp       replay.Watchpoint
	typ      *dwarf.Type // the watched expression's type, for old/new values
	// disabled ones stay listed and are not armed.
	disabled bool
	hits     int // stops at it, as for breakpoints
	// scope is the frame whose locals the expression reads (nil for
	// globals and watch -l): the watch ends when that frame does.
	scope *watchScope
}

// Session is one debugging session over a recording.
type Session struct {
	path string
	// packed are the sources read from the recording (packed.go).
	packed packedFiles
	tl     *timeline.Timeline
	budget int64
	procs  []*trace.Process
	bps    []*breakpoint
	armed  []*watch // the enabled watchpoints, in the engine's order
	// stepFrame is the frame a line step was stepping when it stopped
	// (frameID's form), where it moved on the way; "" for other motions.
	stepFrame string
	// scopeEnded is the watchpoint whose frame ended the motion under way.
	scopeEnded *watch
	watches    []*watch
	nextID     int
	thread     int32 // selected thread (0: the one that runs next)
	syms       *dwarf.Table
	symsAt     int // number of mappings the table was built from
	// symsLive and symsEvent say where the table was last checked.
	symsLive  *replay.Session
	symsEvent int64
	// images caches loaded images by path and base, so that a new mapping
	// does not make the DWARF of every library be read again.
	images map[string]*dwarf.Image
	// frame is the selected frame (frame N, up, down); reset at each stop.
	frame int
	// printCount numbers print results ($1, $2, ...); values holds them.
	printCount int
	values     []dwarf.Value
	// goProgram caches isGo: 0 unknown, 1 yes, -1 no.
	goProgram int
	// condErr is why a breakpoint condition could not be evaluated during
	// the last motion (the stop is then shown with it).
	condErr string
	// lastStop is the last stop, for snapshots.
	lastStop *StopInfo
	// densityCache is the timeline bar, computed once.
	densityCache []uint32
	// moments maps the moments the session has shown (stops, history
	// writes) by their text, so that `goto MOMENT` returns to them exactly.
	moments map[string]timeline.Moment
	// origin is the location the last origin command followed.
	origin *originTarget
	// goroot is where a Go program's standard library sources are ("" when
	// none; read once: goRoot), for why to tell the program's code from it.
	goroot     string
	gorootRead bool
	// whyDeadline is when why's current search gives up (why.go).
	whyDeadline time.Time
	// lastList is where `list` without arguments continues.
	listFile string
	listLine int
	// listFirst is the first line the last list printed (for `list -`).
	listFirst int
	// inline is what the last stop hides of inlined calls starting at its
	// pc, and inlineNext what the motion in progress wants it to be
	// (inline.go).
	inline     inlineHide
	inlineNext *inlineHide
	// habits is the state of gdb's habits (habits.go): settings,
	// displays, ignore counts, checkpoints, a killed session.
	habits habitState
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
	pid, procs, err := chooseProcess(path, opts.Process)
	if err != nil {
		return nil, err
	}
	tl, err := timeline.Open(path, budget, pid)
	if err != nil {
		return nil, err
	}
	s := &Session{path: path, tl: tl, budget: budget, procs: procs, nextID: 1, moments: map[string]timeline.Moment{}}
	tl.SetResolver(s.breakpointsOf)
	return s, nil
}

// breakpointsOf returns the addresses of the unconditional breakpoints in
// the program of exec generation gen (timeline.Generation), resolving
// them again there: a library loaded since adds its locations (as gdb
// re-sets breakpoints at each load: `break opendir` set while only ld.so
// was mapped is also libc's opendir once libc is), a new program has
// others, a pending one may resolve.
func (s *Session) breakpointsOf(gen int) []uint64 {
	var out []uint64
	for _, b := range s.bps {
		b.toGeneration(gen)
		if b.place != "" {
			// A location not found now (a library unloaded, or not yet
			// loaded where a checkpoint put the replay) keeps the last
			// ones: planting at unmapped code is harmless.
			if a, err := s.resolve(b.place); err == nil && len(a) > 0 {
				b.addrs = a
			}
		}
		if !b.disabled {
			out = append(out, b.addrs...)
		}
	}
	return out
}

// toGeneration makes addrs those of generation gen (empty: to resolve).
func (b *breakpoint) toGeneration(gen int) {
	if b.gen == gen {
		return
	}
	if b.byGen == nil {
		b.byGen = map[int][]uint64{}
	}
	b.byGen[b.gen] = b.addrs
	b.addrs, b.gen = b.byGen[gen], gen
}

// DefaultCheckpointBudget is the memory checkpoints may use by default.
const DefaultCheckpointBudget = 1 << 30

// Close ends the session.
func (s *Session) Close() {
	s.tl.Close()
	for _, img := range s.images {
		img.Close()
	}
}

// TraceStatus says how many events of the recording are usable and, for
// an unfinished or damaged trace, why not all of them: what every entry
// point tells the user on open.
func (s *Session) TraceStatus() trace.Status { return s.tl.Index().TraceStatus() }

// MachineWarnings says how this machine differs from the recording's in
// ways that can make the replay diverge (machine.Warnings).
func (s *Session) MachineWarnings() []string { return machine.Warnings(s.Header()) }

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

// symbolize names an address: "func+0x12" or "".
func (s *Session) symbolize(addr uint64) (string, uint64) {
	name, off, ok := s.symbols().SymbolAt(addr)
	if !ok {
		return "", 0
	}
	return name, off
}

// resolve turns a location into addresses: *ADDR, FILE:LINE, LINE (in the
// current file), or a function (after its prologue; an ELF symbol when it
// has no debug information).
func (s *Session) resolve(loc string) ([]uint64, error) {
	if rest, ok := strings.CutPrefix(loc, "*"); ok {
		v, err := s.evalAddress(strings.TrimSpace(rest))
		if err != nil {
			return nil, fmt.Errorf("bad address %q", rest)
		}
		return []uint64{v}, nil
	}
	t := s.symbols()
	if i := strings.LastIndexByte(loc, ':'); (i > 0 && isDigits(loc[i+1:])) || isDigits(loc) {
		locs, err := s.resolveSource(loc)
		if err != nil {
			return nil, err
		}
		var out []uint64
		for _, l := range locs {
			out = append(out, l.Addr)
		}
		return out, nil
	}
	fns := append(t.FindFunction(loc), t.FindInlined(loc)...)
	if len(fns) == 0 {
		// A Rust function by the name its symbol demangles to, as rewind
		// named them before it took gdb's: "symm::main::{{closure}}".
		fns = t.FindRustAlias(loc)
	}
	out := entries(fns)
	// The ELF symbol of each image whose debug information has no such
	// function (a library without it, ld.so's own copy of a libc function).
	for _, sym := range t.LookupAll(loc) {
		if !slices.ContainsFunc(fns, func(fn *dwarf.Function) bool { return fn.Contains(sym.Addr) }) {
			out = append(out, sym.Addr)
		}
	}
	if len(out) > 0 {
		slices.Sort(out)
		return slices.Compact(out), nil
	}
	// The end of a Rust path ("add" for "symm::Acc::add"), which gdb
	// does not take: only when nothing else has the name (`break main`
	// is C's main, which std's runtime calls).
	if out := entries(t.FindRustSuffix(loc)); len(out) > 0 {
		return out, nil
	}
	return nil, fmt.Errorf("Function %q not defined in the program or its loaded libraries", loc)
}

// entries returns where `break` stops in functions, in address order.
func entries(fns []*dwarf.Function) []uint64 {
	var out []uint64
	for _, fn := range fns {
		out = append(out, fn.Entry)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// functionEntries returns where `break FUNC` stops, in address order: the
// entry of each out-of-line copy and the start of each inlined instance,
// as gdb sets a location on each.
func functionEntries(t *dwarf.Table, name string) []uint64 {
	return entries(append(t.FindFunction(name), t.FindInlined(name)...))
}

// syncBreakpoints gives the engine the addresses of the enabled
// breakpoints, resolving pending ones against libraries loaded since, and
// the test of their conditions, which every motion applies.
func (s *Session) syncBreakpoints() error {
	s.tl.SetBreakpointFilter(s.breakpointStops)
	return s.tl.SetBreakpoints(s.breakpointsOf(s.tl.Generation()))
}

// syncWatches gives the engine the enabled watchpoints; s.armed maps the
// engine's watchpoint index in a stop back to them.
func (s *Session) syncWatches() error {
	s.armed = s.armed[:0]
	var ws []replay.Watchpoint
	for _, w := range s.watches {
		if !w.disabled {
			s.armed = append(s.armed, w)
			ws = append(ws, w.wp)
		}
	}
	return s.tl.SetWatchpoints(ws)
}

// armedWatch is the watchpoint of a watch stop.
func (s *Session) armedWatch(st *timeline.Stop) *watch {
	if st.Watch < 0 || st.Watch >= len(s.armed) {
		return nil
	}
	return s.armed[st.Watch]
}
