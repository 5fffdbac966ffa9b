package trace

import (
	"encoding/json"
	"fmt"
)

// Image is the address space an exec left, before the program's first
// instruction: the executable's and the loader's segments (their files
// stored in the trace), the stack the kernel wrote (arguments,
// environment, auxiliary vector), the vDSO's bytes, and the layout the
// kernel keeps. Where the files of the replaying machine are not the
// recorded ones (another machine, a loader or a library since updated, a
// build output deleted), replay rebuilds the process from it rather than
// letting the kernel exec the local files: a recording then replays with
// nothing of the program on the machine.
type Image struct {
	// Regions are the mappings in address order, as /proc/PID/maps listed
	// them. A file's region has Stored (the trace's copy of the whole
	// file) and, for a writable one, Blobs and Runs with the bytes the
	// kernel changed (the zeroed tail of the data segment's last page);
	// [stack] and [vdso] have their bytes in Blobs and Runs; anonymous
	// memory (.bss) is Zero; the kernel's own pages are Skipped.
	Regions []Region `json:"regions"`
	Layout  MMLayout `json:"layout"`
	// Exe is the executable (/proc/PID/exe), Comm the name the exec gave
	// the process (/proc/PID/comm).
	Exe  string `json:"exe"`
	Comm string `json:"comm"`
	// Missing, when set, says why the image is not whole (a file that
	// could not be stored): replay can then only exec the local files.
	Missing string `json:"missing,omitempty"`
}

// ImageVersion is the first format version whose exec events have their
// Image.
const ImageVersion = 8

// DecodeImage reads the Image of a KindExec event, nil when it has none
// (a trace recorded before format version 8).
func DecodeImage(e *Event) (*Image, error) {
	if e.Kind != KindExec || len(e.Image) == 0 {
		return nil, nil
	}
	im := &Image{}
	if err := json.Unmarshal(e.Image, im); err != nil {
		return nil, fmt.Errorf("trace: exec image: %w", err)
	}
	return im, nil
}

// EncodeImage is the JSON an exec event's Image field holds; the regions'
// bytes must already be blobs.
func EncodeImage(im *Image) ([]byte, error) {
	b, err := json.Marshal(im)
	if err != nil {
		return nil, fmt.Errorf("trace: exec image: %w", err)
	}
	return b, nil
}
