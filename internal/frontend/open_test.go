package frontend

import (
	"slices"
	"testing"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestWarnings: the trace's line comes first, in the words every front end
// shows, and a nil header leaves the machine out.
func TestWarnings(t *testing.T) {
	if got := Warnings(trace.Status{}, nil); len(got) != 0 {
		t.Errorf("a complete trace, no header: %q, want nothing", got)
	}
	st := trace.Status{Message: "12 of 40 events usable: the recording was killed"}
	if got, want := Warnings(st, nil), []string{"rewind: " + st.Message}; !slices.Equal(got, want) {
		t.Errorf("Warnings = %q, want %q", got, want)
	}
}
