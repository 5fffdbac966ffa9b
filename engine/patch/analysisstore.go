package patch

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// AnalysisStore keeps the analyses of code files (Analysis) in the user's
// cache, one JSON file each, shared by recordings and replays: a file is
// named by its identity (trace.FileKey.Name), which stat gives for free;
// a replay names the trace's copy of a library by its contents
// (ContentKeyName), as the file it came from may be gone or changed. A
// store serves one recording or replay: it follows the images it seeds
// (Follow) and keeps what they learned (SaveLearned).
type AnalysisStore struct {
	dir      string
	followed map[*Image]func() string
}

// maxAnalyses bounds the store: past it, the least recently written go.
const maxAnalyses = 4096

// DefaultAnalysisStore is the analyses directory of trace.CacheDir; nil
// when the caches are off.
func DefaultAnalysisStore() *AnalysisStore {
	base := trace.CacheDir()
	if base == "" {
		return nil
	}
	return &AnalysisStore{dir: filepath.Join(base, "analyses")}
}

// Follow has im, the first time it is met, seeded with the analysis kept
// under the name name returns ("": none) when its analysis is first looked
// at (Image.SeedLater): only then is the name worked out, which may cost a
// hash of the file. SaveLearned keeps what im learns under that name. A
// nil store follows nothing.
func (s *AnalysisStore) Follow(im *Image, name func() string) *Image {
	if s == nil || im == nil {
		return im
	}
	if _, seen := s.followed[im]; seen {
		return im
	}
	if s.followed == nil {
		s.followed = map[*Image]func() string{}
	}
	once := sync.OnceValue(name)
	s.followed[im] = once
	im.SeedLater(func() (Analysis, bool) {
		if n := once(); n != "" {
			return s.Load(n)
		}
		return Analysis{}, false
	})
	return im
}

// SaveLearned keeps the analyses of the followed images that learned
// something.
func (s *AnalysisStore) SaveLearned() {
	if s == nil {
		return
	}
	for im, name := range s.followed {
		if a, learned := im.Analysis(); learned {
			if n := name(); n != "" {
				s.Save(n, a)
			}
		}
	}
}

// ContentKeyName names the analysis of a file holding data: its length and
// two CRC-32s of it (Castagnoli and IEEE, both in hardware here; SHA-256
// cost a replay of python's imports 27 ms for 37 MB of libraries). The
// CRCs tell files apart by accident, not against an adversary, who could
// only make a replay of their own trace diverge: what is kept is checked
// against memory before use.
func ContentKeyName(data []byte) string {
	return fmt.Sprintf("crc-%x-%08x-%08x", len(data), crc32.Checksum(data, castagnoli), crc32.ChecksumIEEE(data))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *AnalysisStore) path(name string) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s.p%d-a%d.json", name, Version, AnalysisVersion))
}

// Load returns the analysis kept under name; false when there is none, or
// it is unreadable (the store only saves work).
func (s *AnalysisStore) Load(name string) (Analysis, bool) {
	var a Analysis
	data, err := os.ReadFile(s.path(name))
	if err != nil || json.Unmarshal(data, &a) != nil || a.Version != AnalysisVersion || a.Patch != Version {
		return Analysis{}, false
	}
	return a, true
}

// Save keeps a under name.
func (s *AnalysisStore) Save(name string, a Analysis) {
	data, err := json.Marshal(a)
	if err != nil || os.MkdirAll(s.dir, 0o755) != nil {
		return
	}
	if trace.WriteCacheFile(s.path(name), data) == nil {
		trace.TrimCacheFiles(s.dir, maxAnalyses)
	}
}
