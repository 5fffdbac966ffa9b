package replay

import (
	"os"
	"syscall"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// analyses seeds the images replay patches with what an earlier recording
// or replay of the same file found (patch.Analysis, kept in the user's
// cache), and keeps what this replay finds: replay makes the recorder's
// decisions again, and the layout of a large program's file (cc1) was most
// of the work of its first exec. An exec'd file is named by its identity,
// as the recorder names it; the trace's copy of a library by its contents,
// since the file it came from may have changed.
type analyses struct {
	store *patch.AnalysisStore
	names map[*patch.Image]string // "" for an image not kept
}

// seed gives im, the first time it is met, the analysis kept under the
// name name returns ("": none).
func (a *analyses) seed(im *patch.Image, name func() string) *patch.Image {
	if a.store == nil || im == nil {
		return im
	}
	if _, seen := a.names[im]; seen {
		return im
	}
	if a.names == nil {
		a.names = map[*patch.Image]string{}
	}
	n := name()
	a.names[im] = n
	if an, ok := a.store.Load(n); n != "" && ok {
		im.Seed(an)
	}
	return im
}

// save keeps the analyses that learned something.
func (a *analyses) save() {
	for im, n := range a.names {
		if an, learned := im.Analysis(); n != "" && learned {
			a.store.Save(n, an)
		}
	}
}

// fileName names the analysis of the file at path as the recorder does.
func fileName(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return patch.FileKeyName(trace.FileKey{Dev: sys.Dev, Ino: sys.Ino, Size: sys.Size, Mtime: sys.Mtim.Nano(), Ctime: sys.Ctim.Nano()})
}

// blobName names the analysis of the trace's blob id by its contents.
func (s *Session) blobName(id uint32) string {
	data, err := s.blob(id)
	if err != nil {
		return ""
	}
	return patch.ContentKeyName(data)
}
