package ui

import (
	"fmt"
	"sync"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/views"
)

// engine runs debugger work off the UI goroutine, one operation at a
// time: the session is not safe for concurrent use, and the UI must never
// wait for a replay.
type engine struct {
	mu        sync.Mutex
	s         *debugger.Session
	cancelled atomic.Bool
	done      atomic.Int64
	total     atomic.Int64
	// evMu guards evr, the reader of event descriptions: it runs
	// alongside engine work (it reads the trace file on its own).
	evMu sync.Mutex
	evr  debugger.EventReader
	// pids maps every recorded thread to its process.
	pids map[int32]int32
	// fnMu guards fns, the function names of event addresses by process
	// and pc, found when the session is free (see functions).
	fnMu sync.Mutex
	fns  map[fnKey]string
}

// fnKey is an address in a process.
type fnKey struct {
	pid int32
	pc  uint64
}

func newEngine(s *debugger.Session) *engine {
	e := &engine{s: s, pids: map[int32]int32{}, fns: map[fnKey]string{}}
	for _, p := range s.ProcessInfos() {
		for _, t := range p.Tids {
			e.pids[t] = p.Pid
		}
	}
	s.SetProgress(func(done, total int64) bool {
		e.done.Store(done)
		e.total.Store(total)
		return !e.cancelled.Load()
	})
	return e
}

// Messages from engine work back to the model.
type (
	resultMsg struct {
		line string
		res  debugger.Result
		snap *debugger.Snapshot
		// notes and problems are said in the Console after the result
		// (what the session file restored, and what it could not); kept
		// is what it could not, kept in the file.
		notes, problems []string
		kept            *debugger.SessionFile
		// mainEvent, when > 0, is where main's first line is (the
		// events before it are folded in the Timeline).
		mainEvent int64
	}
	tickMsg struct{}
)

// command runs a command line and snapshots the moment it leaves.
func (e *engine) command(line string) tea.Cmd {
	e.cancelled.Store(false)
	e.done.Store(0)
	e.total.Store(0)
	return func() tea.Msg {
		e.mu.Lock()
		defer e.mu.Unlock()
		var res debugger.Result
		if line != "" {
			res = e.s.Execute(line)
		}
		return resultMsg{line: line, res: res, snap: e.s.Snapshot()}
	}
}

// memory reads memory for the Memory pane.
func (e *engine) memory(req views.RequestMemory) tea.Cmd {
	return func() tea.Msg {
		e.mu.Lock()
		defer e.mu.Unlock()
		addr, data, err := e.s.Memory(req.Expr, req.Len)
		return views.MemoryLoaded{Expr: req.Expr, Addr: addr, Data: data, Err: err}
	}
}

// history lists the writes to a watchpoint's location.
func (e *engine) history(req views.RequestHistory) tea.Cmd {
	return func() tea.Msg {
		e.mu.Lock()
		defer e.mu.Unlock()
		// By number: the watched location, not the expression re-evaluated
		// in whatever frame is selected now.
		res := e.s.Execute(fmt.Sprintf("history watchpoint %d", req.WatchID))
		out := views.HistoryLoaded{WatchID: req.WatchID}
		if !res.OK {
			out.Err = fmt.Errorf("%s", res.Error)
			return out
		}
		items, _ := res.Value.([]debugger.HistoryWrite)
		for _, it := range items {
			out.Writes = append(out.Writes, views.WriteItem{Event: it.Event, Moment: it.Moment, Hits: it.Hits, Old: it.Old, New: it.New,
				Function: it.Function, File: it.File, Line: it.Line, Syscall: it.Syscall})
		}
		return out
	}
}

// events describes events [from, to) of the recording. It reads the trace
// file on its own, so it runs alongside engine work.
func (e *engine) events(req views.RequestEvents) tea.Cmd {
	path := e.s.Path()
	return func() tea.Msg {
		out := views.EventsLoaded{From: req.From}
		e.evMu.Lock()
		defer e.evMu.Unlock()
		var pcs []uint64
		e.evr.Read(path, req.From, req.To-1, func(i int64, ev *trace.Event, text string) {
			out.Items = append(out.Items, views.EventItem{N: i, Tid: ev.Tid, Pid: e.pids[ev.Tid], Kind: debugger.EventRecord(i, ev, nil).Type, Text: text})
			pcs = append(pcs, ev.Regs[trace.RIP])
		})
		e.functions(out.Items, pcs)
		return out
	}
}

// functions names the function each event happened in, from a cache by
// address. Names are found with the session's symbols, of the debugged
// process only (another's addresses mean other code), and only when the
// session is free: the Timeline must not wait for a replay. An event left
// unnamed is named when it is loaded again.
func (e *engine) functions(items []views.EventItem, pcs []uint64) {
	e.fnMu.Lock()
	defer e.fnMu.Unlock()
	locked := false
	defer func() {
		if locked {
			e.mu.Unlock()
		}
	}()
	pid := int32(-1)
	for i := range items {
		k := fnKey{items[i].Pid, pcs[i]}
		if name, ok := e.fns[k]; ok {
			items[i].Function = name
			continue
		}
		if !locked {
			if !e.mu.TryLock() {
				return
			}
			locked, pid = true, e.s.Process()
		}
		if pid != 0 && k.pid != 0 && k.pid != pid {
			continue
		}
		name := e.s.FunctionAt(k.pc)
		if len(e.fns) > 100_000 {
			clear(e.fns) // bounded: names are cheap to find again
		}
		e.fns[k] = name
		items[i].Function = name
	}
}
