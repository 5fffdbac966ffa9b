package debugger

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSessionFile: a session file written is read back the same, beside
// the trace or, when its directory cannot be written, under the XDG state
// directory; a damaged one is a one-line error and an empty session.
func TestSessionFile(t *testing.T) {
	full := &SessionFile{
		Breakpoints: []SavedBreakpoint{{Spec: "bump"}, {Spec: "corrupt.c:16", Condition: "i == 8", Disabled: true}, {Spec: "main", Temporary: true}},
		Watchpoints: []SavedWatch{{Expr: "counter"}, {Expr: "b->next", Access: true, Disabled: true}},
		Timeline:    SavedTimeline{Filter: "sys:write,pid:4242", Unfolded: true, Marks: []SavedMark{{Event: 38, Reason: "breakpoint", Label: "breakpoint 1"}}},
		Layout:      SavedLayout{Focus: "Timeline", Zoom: true},
	}
	tests := []struct {
		name string
		// trace returns the trace's path in dir.
		trace    func(t *testing.T, dir string) string
		file     *SessionFile
		inState  bool   // written under XDG_STATE_HOME
		damaged  string // written over the file before reading
		wantErr  string
		wantBack *SessionFile
	}{
		{"beside", func(t *testing.T, dir string) string { return filepath.Join(dir, "t.rwd") }, full, false, "", "", full},
		{"empty", func(t *testing.T, dir string) string { return filepath.Join(dir, "t.rwd") }, &SessionFile{}, false, "", "", &SessionFile{}},
		{"directory not writable", func(t *testing.T, dir string) string {
			// A file where the trace's directory should be: nothing can be
			// written beside it, whoever runs the test.
			f := filepath.Join(dir, "file")
			os.WriteFile(f, nil, 0o644)
			return filepath.Join(f, "t.rwd")
		}, full, true, "", "", full},
		{"damaged", func(t *testing.T, dir string) string { return filepath.Join(dir, "t.rwd") }, full, false, "{\"breakpoints\": [", "is damaged, ignored", &SessionFile{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			state := filepath.Join(dir, "state")
			t.Setenv("XDG_STATE_HOME", state)
			trace := tt.trace(t, dir)
			where, err := tt.file.Save(trace)
			if err != nil {
				t.Fatalf("save: %v", err)
			}
			if got := strings.HasPrefix(where, state); got != tt.inState {
				t.Fatalf("written to %s", where)
			}
			if tt.damaged != "" {
				os.WriteFile(where, []byte(tt.damaged), 0o644)
			}
			back, err := LoadSessionFile(trace)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("load: %v, want one line with %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("load: %v", err)
			}
			if !reflect.DeepEqual(back, tt.wantBack) {
				t.Fatalf("read back %+v, want %+v", back, tt.wantBack)
			}
			// Nothing but the file itself is left in its directory.
			entries, _ := os.ReadDir(filepath.Dir(where))
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("temporary file left: %s", e.Name())
				}
			}
		})
	}
}

// TestSessionFileSetStops: a snapshot's lists become the file's, with
// what could not be set up from it.
func TestSessionFileSetStops(t *testing.T) {
	var f SessionFile
	// Kept from the file, not set up: a watch of a local, a breakpoint
	// the user made again.
	kept := &SessionFile{Breakpoints: []SavedBreakpoint{{Spec: "bump"}}, Watchpoints: []SavedWatch{{Expr: "n->next"}}}
	f.SetStops([]BreakpointInfo{{ID: 1, Spec: "bump", Condition: "by > 2", Disabled: true}, {ID: 3, Spec: "main", Temporary: true}},
		[]WatchpointInfo{{ID: 2, Expr: "counter", Access: true}, {ID: 4, Expr: "p->x", Location: "*(int *)0x4010"}}, kept)
	want := SessionFile{
		Breakpoints: []SavedBreakpoint{{Spec: "bump", Condition: "by > 2", Disabled: true}, {Spec: "main", Temporary: true}},
		// A watch -l is kept with its location, which reopens anywhere.
		Watchpoints: []SavedWatch{{Expr: "counter", Access: true}, {Expr: "p->x", Location: "*(int *)0x4010"}, {Expr: "n->next"}},
	}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("%+v, want %+v", f, want)
	}
}
