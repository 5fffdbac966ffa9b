package patch

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// AnalysisStore keeps the analyses of code files (Analysis) in the user's
// cache, one JSON file each, shared by recordings and replays: a recorder
// names a file by its identity (FileKeyName), which stat gives for free; a
// replay names the trace's copy of a library by its contents
// (ContentKeyName), as the file it came from may be gone or changed.
type AnalysisStore struct {
	dir string
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

// FileKeyName names the analysis of the file whose identity is k.
func FileKeyName(k trace.FileKey) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", k.Dev, k.Ino, k.Size, k.Mtime, k.Ctime)
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
