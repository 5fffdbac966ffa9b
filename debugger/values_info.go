package debugger

import "encoding/json"

// The typed values of info's subcommands and of the listings beside them
// (events, list, x/i, disassemble, thread, checkpoint, finish). As in
// values.go, fields are in the order of their JSON keys, which were the
// sorted keys of maps.

// MappingItem is one mapping of info mappings.
type MappingItem struct {
	End    string `json:"end"`
	Offset string `json:"offset"`
	Path   string `json:"path"`
	Perms  string `json:"perms"`
	Start  string `json:"start"`
}

// EventLine is one event of the events listing.
type EventLine struct {
	Event  int64  `json:"event"`
	Text   string `json:"text"`
	Thread int32  `json:"thread"`
}

// InstructionLine is one instruction of x/i and disassemble; Current
// marks the one at the pc.
type InstructionLine struct {
	Address string `json:"address"`
	Current bool   `json:"current"`
	Text    string `json:"text"`
}

// FinishValue is what finish adds to its stop: the value returned.
type FinishValue struct {
	Returned string `json:"returned"`
}

// FrameDetail is info frame's value: the selected frame's level,
// addresses and what links it to the frames around it.
type FrameDetail struct {
	CallerCFA   string `json:"caller_cfa,omitempty"`
	CFA         string `json:"cfa"`
	Function    string `json:"function"`
	InlinedInto int    `json:"inlined_into,omitempty"`
	Language    string `json:"language,omitempty"`
	Level       int    `json:"level"`
	PC          string `json:"pc"`
	SavedRIP    string `json:"saved_rip,omitempty"`
}

// SymbolInfo is info symbol's value: the symbol an address is in.
type SymbolInfo struct {
	Address string `json:"address"`
	File    string `json:"file"`
	Offset  uint64 `json:"offset"`
	Section string `json:"section"`
	Symbol  string `json:"symbol"`
}

// LibraryItem is one library of info sharedlibrary. Origin is "local" or
// "recording" (the recording's copy of the file); a library whose debug
// file is the recording's (rewind pack) has DebugFile and DebugOrigin.
type LibraryItem struct {
	Debug       bool   `json:"debug"`
	DebugFile   string `json:"debug_file,omitempty"`
	DebugOrigin string `json:"debug_origin,omitempty"`
	From        string `json:"from,omitempty"`
	Origin      string `json:"origin"`
	Path        string `json:"path"`
	To          string `json:"to,omitempty"`
}

// SignalItem is one signal of info signals: what a replay does with it.
type SignalItem struct {
	Description string `json:"description"`
	Pass        bool   `json:"pass"`
	Print       bool   `json:"print"`
	Signal      string `json:"signal"`
	Stop        bool   `json:"stop"`
}

// InferiorItem is the debugged process as info inferiors lists it.
type InferiorItem struct {
	Current    bool   `json:"current"`
	Executable string `json:"executable"`
	ID         int    `json:"id"`
	Killed     bool   `json:"killed"`
	Pid        int32  `json:"pid"`
}

// FullFrame is one frame of bt full: the frame, and its locals when its
// function is known (HasLocals; a frame without symbols has no locals
// key, one with no locals has "locals":null, as the schema).
type FullFrame struct {
	Frame     FrameInfo
	Locals    []VarInfo
	HasLocals bool
}

// MarshalJSON writes the frame's keys as the schema has them.
func (f FullFrame) MarshalJSON() ([]byte, error) {
	if !f.HasLocals {
		return json.Marshal(struct {
			Frame FrameInfo `json:"frame"`
		}{f.Frame})
	}
	return json.Marshal(struct {
		Frame  FrameInfo `json:"frame"`
		Locals []VarInfo `json:"locals"`
	}{f.Frame, f.Locals})
}

// SourceListing is list's value: the lines listed of a file, and where
// the text came from (SourceFile.Origin).
type SourceListing struct {
	File   string       `json:"file"`
	Lines  []SourceLine `json:"lines"`
	Origin string       `json:"origin"`
}

// SourceLine is one line of a listing.
type SourceLine struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// SourceSummary is info source's value: the current file, its length in
// lines, its language ("" when unknown) and where its text came from.
type SourceSummary struct {
	File     string `json:"file"`
	Language string `json:"language"`
	Lines    int    `json:"lines"`
	Origin   string `json:"origin"`
}

// LineRange is info line's value: a source line's addresses [Start, End).
type LineRange struct {
	End   string `json:"end"`
	File  string `json:"file"`
	Line  int    `json:"line"`
	Start string `json:"start"`
}

// ThreadSelected is thread's value: gdb's number (ID) and the recorded
// thread id.
type ThreadSelected struct {
	ID  int   `json:"id"`
	Tid int32 `json:"tid"`
}

// ThreadItem is one thread of info threads: ID is the recorded thread id
// (as stops' "thread"), Num gdb's number.
type ThreadItem struct {
	Current  bool   `json:"current"`
	Frame    string `json:"frame"`
	Function string `json:"function"`
	ID       int32  `json:"id"`
	Num      int    `json:"num"`
	PC       string `json:"pc"`
	Target   string `json:"target"`
}

// CheckpointMade is checkpoint's value: the checkpoint's number and
// moment.
type CheckpointMade struct {
	Event  int64  `json:"event"`
	ID     int    `json:"id"`
	Moment string `json:"moment"`
}

// CheckpointItem is one checkpoint of info checkpoints, with its place.
type CheckpointItem struct {
	Event  int64  `json:"event"`
	ID     int    `json:"id"`
	Moment string `json:"moment"`
	Where  string `json:"where"`
}

// DisplayItem is one display of info display.
type DisplayItem struct {
	Enabled bool   `json:"enabled"`
	Expr    string `json:"expr"`
	Format  string `json:"format"`
	ID      int    `json:"id"`
}

// ProcessItem is one process of info processes.
type ProcessItem struct {
	Args       []string `json:"args"`
	Current    bool     `json:"current"`
	Exit       string   `json:"exit"`
	FirstEvent int64    `json:"first_event"`
	LastEvent  int64    `json:"last_event"`
	Pid        int32    `json:"pid"`
	PPid       int32    `json:"ppid"`
}
