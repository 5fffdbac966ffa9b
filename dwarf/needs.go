package dwarf

import (
	"encoding/hex"
	"io"
	"path/filepath"
)

// Needs is what debugging an ELF file takes beyond the file itself: the
// separate debug file this machine has for it and the source files its
// debug information names. rewind pack stores them in a recording.
type Needs struct {
	// BuildID is the file's GNU build-id in hex ("" when it has none).
	BuildID string
	// DebugFile is the separate debug file found on this machine, by the
	// lookup the debugger uses ("" when the DWARF is in the file itself,
	// or there is none).
	DebugFile string
	// Sources are the absolute paths of the source files the line tables
	// name, in the order they first appear; whether they exist is not
	// checked. A relative name (no compilation directory) is left out:
	// what it names depends on where the program was built.
	Sources []string
}

// ImageNeeds reads what the ELF file that was at path needs (r holds its
// contents; nil: read path). A file without debug information needs
// nothing, which is not an error.
func ImageNeeds(path string, r io.ReaderAt) (Needs, error) {
	img, err := LoadImageWith(path, r, 0, nil)
	if err != nil {
		return Needs{}, err
	}
	defer img.Close()
	n := Needs{BuildID: hex.EncodeToString(buildID(img.file))}
	if img.DebugPath != "" && img.DebugPath != path {
		n.DebugFile = img.DebugPath
	}
	n.Sources = img.SourceFiles()
	return n, nil
}

// SourceFiles returns the absolute paths of the source files the image's
// line tables name.
func (img *Image) SourceFiles() []string {
	var out []string
	for _, f := range img.lineTable().files {
		if filepath.IsAbs(f) {
			out = append(out, f)
		}
	}
	return out
}
