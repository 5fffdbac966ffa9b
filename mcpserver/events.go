package mcpserver

import (
	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// readEvents calls f with each event from..to (inclusive; to < 0: the end)
// that passes the filter, without keeping them: a window may be the whole
// recording, of which get_events lists only the first ones but counts all.
// It returns the trace's truncation notice.
func readEvents(path string, from, to int64, filter debugger.EventFilter, f func(debugger.EventInfo)) (string, error) {
	// The exit of a call that blocked is described with its entry, which
	// may come before the window: entries are followed from the start.
	entries := map[int32]*trace.Event{}
	return debugger.ReadEvents(path, 0, to, func(i int64, e *trace.Event, _ string) {
		if i >= from {
			info := debugger.EventRecord(i, e, entries[e.Tid])
			if filter.Match(&info) {
				f(info)
			}
		}
		if e.Kind == trace.KindSyscallEntry {
			entries[e.Tid] = e
		}
	})
}
