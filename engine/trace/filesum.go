package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// sumCacheMin is the size from which FileSHA256 keeps sums: a smaller
// file is hashed in under a millisecond.
const sumCacheMin = 1 << 20

// maxSums bounds the sums kept (a few hundred bytes of disk each).
const maxSums = 4096

// FileSHA256 returns the SHA-256 of the open file f, hex-encoded. The sum
// of a large file is kept in the cache (CacheDir's sums/) under the file's
// identity (FileKey), the way the blob cache keeps its contents: a
// recording and each replay of a program hashed all of it (a 30 MB Go
// binary: ~25 ms each time).
func FileSHA256(f *os.File) (string, error) {
	var path string
	if st, err := f.Stat(); err == nil && st.Size() >= sumCacheMin {
		if k, ok := FileKeyOf(st); ok {
			if dir := CacheDir(); dir != "" {
				path = filepath.Join(dir, "sums", k.Name())
			}
		}
	}
	if path != "" {
		if b, err := os.ReadFile(path); err == nil && len(b) == 2*sha256.Size {
			if _, err := hex.DecodeString(string(b)); err == nil {
				return string(b), nil
			}
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return "", fmt.Errorf("read %s: %w", f.Name(), err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if path != "" {
		if os.MkdirAll(filepath.Dir(path), 0o755) == nil && WriteCacheFile(path, []byte(sum)) == nil {
			TrimCacheFiles(filepath.Dir(path), maxSums)
		}
	}
	return sum, nil
}
