package debugger

import (
	"encoding/json"
	"testing"
)

// TestValuesJSON: the typed values encode as the --json schema has them
// (the maps they replace wrote sorted keys, and some keys only sometimes).
func TestValuesJSON(t *testing.T) {
	no, yes := false, true
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"pending break", BreakpointSet{ID: 3, Pending: true}, `{"id":3,"pending":true,"temporary":false}`},
		{"pending tbreak with a condition", BreakpointSet{ID: 4, Pending: true, Temporary: true, Condition: "x"}, `{"id":4,"pending":true,"temporary":true}`},
		{"break", BreakpointSet{ID: 1, Address: "0x10", Function: "f", File: "a.c", Line: 3,
			Locations: []BreakpointLocation{{Address: "0x10", Function: "f", File: "a.c", Line: 3}}},
			`{"address":"0x10","file":"a.c","function":"f","id":1,"line":3,"locations":[{"address":"0x10","file":"a.c","function":"f","line":3}]}`},
		{"tbreak by address", BreakpointSet{ID: 2, Address: "0x10", Temporary: true, Condition: "i > 2", Locations: []BreakpointLocation{{Address: "0x10"}}},
			`{"address":"0x10","condition":"i \u003e 2","id":2,"locations":[{"address":"0x10"}],"temporary":true}`},
		{"watch -l", WatchpointSet{ID: 5, Expr: "p->n", Address: "0x20", Size: 8, Location: "*(int *)0x20"},
			`{"address":"0x20","expr":"p-\u003en","id":5,"location":"*(int *)0x20","size":8}`},
		{"info breakpoints: breakpoint", BreakpointItem{ID: 1, Type: "breakpoint", Location: "f", Enabled: true, Temporary: &no, Addresses: []string{"0x10"}},
			`{"addresses":["0x10"],"enabled":true,"id":1,"location":"f","temporary":false,"type":"breakpoint"}`},
		{"info breakpoints: pending", BreakpointItem{ID: 2, Type: "breakpoint", Location: "g", Temporary: &yes, Pending: true, Hits: 2},
			`{"enabled":false,"hits":2,"id":2,"location":"g","pending":true,"temporary":true,"type":"breakpoint"}`},
		{"info breakpoints: watchpoint", BreakpointItem{ID: 3, Type: "watchpoint", Expr: "x", Address: "0x30", Size: 4, Enabled: true},
			`{"address":"0x30","enabled":true,"expr":"x","id":3,"size":4,"type":"watchpoint"}`},
		{"history: system call", HistoryWrite{Index: 1, Event: 7, Moment: "#7", Thread: 9, PC: "0x1", Old: "0", New: "1", Syscall: true},
			`{"event":7,"index":1,"moment":"#7","new":"1","old":"0","pc":"0x1","syscall":true,"thread":9}`},
		{"bt full: no symbols", FullFrame{Frame: FrameInfo{Level: 1, PC: "0x1"}}, `{"frame":{"level":1,"pc":"0x1"}}`},
		{"bt full: no locals", FullFrame{Frame: FrameInfo{Level: 0, PC: "0x1", Function: "f"}, HasLocals: true},
			`{"frame":{"level":0,"pc":"0x1","function":"f"},"locals":null}`},
		{"checkpoint", CheckpointMade{ID: 1, Moment: "#3", Event: 3}, `{"event":3,"id":1,"moment":"#3"}`},
		{"info checkpoints", CheckpointItem{ID: 1, Moment: "#3", Event: 3}, `{"event":3,"id":1,"moment":"#3","where":""}`},
		{"info frame", FrameDetail{Level: 0, CFA: "0x8", PC: "0x1"}, `{"cfa":"0x8","function":"","level":0,"pc":"0x1"}`},
		{"info sharedlibrary", LibraryItem{Path: "/l.so", Origin: "local"}, `{"debug":false,"origin":"local","path":"/l.so"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.v)
		if err != nil || string(b) != tt.want {
			t.Errorf("%s: %s, %v\nwant %s", tt.name, b, err, tt.want)
		}
	}
}
