package replay

import (
	"os"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The analyses of the images replay patches (patch.Analysis) are kept in
// the user's cache and seeded from it (patch.AnalysisStore.Follow): replay
// makes the recorder's decisions again, and the layout of a large
// program's file (cc1) was most of the work of its first exec. An exec'd
// file is named by its identity, as the recorder names it; the trace's
// copy of a library by its contents, since the file it came from may have
// changed.

// fileName names the analysis of the file at path as the recorder does.
func fileName(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if k, ok := trace.FileKeyOf(st); ok {
		return k.Name()
	}
	return ""
}

// blobName names the analysis of the trace's blob id by its contents.
func (s *Session) blobName(id uint32) string {
	data, err := s.blob(id)
	if err != nil {
		return ""
	}
	return patch.ContentKeyName(data)
}
