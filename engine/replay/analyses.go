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
	names map[*patch.Image]func() string // "" for an image not kept
}

// seed has im, the first time it is met, seeded with the analysis kept
// under the name name returns ("": none) when its analysis is first
// looked at: only then is the name worked out.
func (a *analyses) seed(im *patch.Image, name func() string) *patch.Image {
	if a.store == nil || im == nil {
		return im
	}
	if _, seen := a.names[im]; seen {
		return im
	}
	if a.names == nil {
		a.names = map[*patch.Image]func() string{}
	}
	var n string
	named := false
	once := func() string {
		if !named {
			n, named = name(), true
		}
		return n
	}
	a.names[im] = once
	im.SeedLater(func() (patch.Analysis, bool) {
		if n := once(); n != "" {
			return a.store.Load(n)
		}
		return patch.Analysis{}, false
	})
	return im
}

// save keeps the analyses that learned something.
func (a *analyses) save() {
	for im, name := range a.names {
		if an, learned := im.Analysis(); learned {
			if n := name(); n != "" {
				a.store.Save(n, an)
			}
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
