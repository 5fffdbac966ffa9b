package replay_test

import (
	"path/filepath"
	"testing"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestLibraryAnalyses: a replay patches the libraries a program maps from
// the files themselves while they are the ones recorded, using the
// analyses the recorder kept under their identities, and keeps no
// analysis of the trace's copies; a trace that cannot name its libraries'
// files (as if made elsewhere) is patched from its copies, whose analyses
// replay keeps under their contents for the next replay.
func TestLibraryAnalyses(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("REWIND_CACHE", cache)
	prog := buildC(t, "buffered_memory")
	path, printed, _ := recordProg(t, prog, "3")
	byContents := func() int {
		kept, _ := filepath.Glob(filepath.Join(cache, "analyses", "crc-*.json"))
		return len(kept)
	}
	if got, err := replayAll(t, path); err != nil || got != printed {
		t.Fatalf("replay: err %v, output %q want %q", err, got, printed)
	}
	if n := byContents(); n != 0 {
		t.Errorf("the replay of unchanged libraries kept %d analyses of the trace's copies", n)
	}
	// A rewritten trace has no Footer.Sources.
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.rwd")
	rewrite(t, path, elsewhere, func(int, *trace.Event) {})
	for i := range 2 {
		if got, err := replayAll(t, elsewhere); err != nil || got != printed {
			t.Fatalf("replay %d from the trace's copies: err %v, output %q want %q", i+1, err, got, printed)
		}
		if byContents() == 0 {
			t.Fatalf("replay %d from the trace's copies kept no analysis of them", i+1)
		}
	}
}
