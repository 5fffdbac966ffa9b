package dwarf

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestImageNeeds lists the sources a program's line tables name and its
// separate debug file, and loads the DWARF of a stripped program from a
// debug file given by a DebugLookup (a recording's), as from a local one.
func TestImageNeeds(t *testing.T) {
	src, err := filepath.Abs("../testdata/source/corrupt.c")
	if err != nil {
		t.Fatal(err)
	}
	exe := buildC(t, src, "-O0", "-Wl,--build-id")
	dir := t.TempDir()
	debug := filepath.Join(dir, "corrupt.debug")
	stripped := filepath.Join(dir, "corrupt")
	linked := filepath.Join(t.TempDir(), "corrupt")
	for _, args := range [][]string{
		{"--only-keep-debug", exe, debug},
		{"--strip-debug", exe, stripped},
		{"--add-gnu-debuglink=" + debug, stripped, linked},
	} {
		if out, err := exec.Command("objcopy", args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, out)
		}
	}
	nextToIt := filepath.Join(filepath.Dir(linked), "corrupt.debug")
	data, err := os.ReadFile(debug)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(nextToIt, data, 0o644)

	saved := DebugRoots
	defer func() { DebugRoots = saved }()
	DebugRoots = []string{t.TempDir()}
	for _, c := range []struct {
		name, exe, wantDebug string
		wantSource           bool
	}{
		{"inline DWARF", exe, "", true},
		{"debuglink", linked, nextToIt, true},
		{"stripped", stripped, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := ImageNeeds(c.exe, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n.DebugFile != c.wantDebug || len(n.BuildID) < 8 {
				t.Errorf("needs %+v, want debug file %q and a build-id", n, c.wantDebug)
			}
			if slices.Contains(n.Sources, src) != c.wantSource {
				t.Errorf("sources %q: %s there = %v, want %v", n.Sources, src, !c.wantSource, c.wantSource)
			}
			for _, s := range n.Sources {
				if !filepath.IsAbs(s) {
					t.Errorf("relative source %q", s)
				}
			}
		})
	}

	// The stripped program with its debug file from a recording.
	id := ""
	if n, err := ImageNeeds(stripped, nil); err == nil {
		id = n.BuildID
	}
	var asked []string
	lookup := func(image, buildID string) ([]byte, string, bool) {
		asked = append(asked, image+" "+buildID)
		if buildID != id {
			return nil, "", false
		}
		return data, "/recorded/corrupt.debug", true
	}
	img, err := LoadImageWith(stripped, nil, 0, lookup)
	if err != nil {
		t.Fatal(err)
	}
	tab := &Table{Images: []*Image{img}}
	defer tab.Close()
	if !img.DebugPacked || img.DebugPath != "/recorded/corrupt.debug" || !slices.Equal(asked, []string{stripped + " " + id}) {
		t.Fatalf("debug %q packed %v, asked %q", img.DebugPath, img.DebugPacked, asked)
	}
	if !slices.Contains(img.SourceFiles(), src) {
		t.Errorf("sources of the packed debug file: %q", img.SourceFiles())
	}
	// A local debug file wins: the lookup is not asked.
	asked = nil
	img2, err := LoadImageWith(linked, nil, 0, lookup)
	if err != nil {
		t.Fatal(err)
	}
	defer img2.Close()
	if img2.DebugPacked || img2.DebugPath != nextToIt || asked != nil {
		t.Errorf("with a local debug file: %q packed %v, asked %q", img2.DebugPath, img2.DebugPacked, asked)
	}
}
