package debugger

import "encoding/json"

// The typed values of results (Result.Value). Their JSON is the --json
// schema that batch mode, MCP and the tests read: fields are declared in
// the order of their keys (the values were maps, which encoding/json
// writes sorted), and a key that was set only sometimes is omitempty.

// BreakpointSet is what break and tbreak made: the breakpoint's number
// and where it resolved, or Pending when nothing in the program or its
// libraries loaded so far matches yet.
type BreakpointSet struct {
	Address   string               `json:"address,omitempty"`
	Condition string               `json:"condition,omitempty"`
	File      string               `json:"file,omitempty"`
	Function  string               `json:"function,omitempty"`
	ID        int                  `json:"id"`
	Line      int                  `json:"line,omitempty"`
	Locations []BreakpointLocation `json:"locations,omitempty"`
	Pending   bool                 `json:"pending,omitempty"`
	Temporary bool                 `json:"temporary,omitempty"`
}

// MarshalJSON writes a pending breakpoint as the schema has it: its
// number, pending, and temporary even when false, nothing else.
func (b BreakpointSet) MarshalJSON() ([]byte, error) {
	type plain BreakpointSet // without this method
	if !b.Pending {
		return json.Marshal(plain(b))
	}
	return json.Marshal(struct {
		ID        int  `json:"id"`
		Pending   bool `json:"pending"`
		Temporary bool `json:"temporary"`
	}{b.ID, true, b.Temporary})
}

// BreakpointLocation is one address a breakpoint resolved to, with its
// place in the source when known.
type BreakpointLocation struct {
	Address  string `json:"address"`
	File     string `json:"file,omitempty"`
	Function string `json:"function,omitempty"`
	Line     int    `json:"line,omitempty"`
}

// WatchpointSet is what watch, rwatch and awatch made. Location is the
// raw location watch -l watches (*(TYPE *)ADDR).
type WatchpointSet struct {
	Address  string `json:"address"`
	Expr     string `json:"expr"`
	ID       int    `json:"id"`
	Location string `json:"location,omitempty"`
	Size     int    `json:"size"`
}

// HistoryWrite is one write of history's list, oldest first: its moment
// (for goto), the values before and after, and the writing instruction's
// place. A write the kernel made for a system call has Syscall and no
// place; Hits orders the others among the writes of their event.
type HistoryWrite struct {
	Event    int64  `json:"event"`
	File     string `json:"file,omitempty"`
	Function string `json:"function,omitempty"`
	Hits     int    `json:"hits,omitempty"`
	Index    int    `json:"index"`
	Line     int    `json:"line,omitempty"`
	Moment   string `json:"moment"`
	New      string `json:"new"`
	Old      string `json:"old"`
	PC       string `json:"pc"`
	Syscall  bool   `json:"syscall,omitempty"`
	Thread   int32  `json:"thread"`
}

// BreakpointItem is one row of info breakpoints (and info watchpoints):
// a breakpoint (Location, and Addresses or Pending) or a watchpoint
// (Expr, Address, Size), by Type. Temporary is set for breakpoints
// alone: the schema has it, true or false, on them and not on
// watchpoints. Hits counts the stops, in either direction.
type BreakpointItem struct {
	Address   string   `json:"address,omitempty"`
	Addresses []string `json:"addresses,omitempty"`
	Condition string   `json:"condition,omitempty"`
	Enabled   bool     `json:"enabled"`
	Expr      string   `json:"expr,omitempty"`
	Hits      int      `json:"hits,omitempty"`
	ID        int      `json:"id"`
	Location  string   `json:"location,omitempty"`
	Pending   bool     `json:"pending,omitempty"`
	Size      int      `json:"size,omitempty"`
	Temporary *bool    `json:"temporary,omitempty"`
	Type      string   `json:"type"`
}
