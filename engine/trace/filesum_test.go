package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestFileSHA256 hashes a small and a large file with the sums cache on:
// the large one's sum is kept and given again, a file changed since (a
// new identity) is hashed again, and a damaged entry is not believed.
func TestFileSHA256(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("REWIND_CACHE", cache)
	dir := t.TempDir()
	want := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	sum := func(path string) string {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := FileSHA256(f)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	kept := func() []string {
		m, _ := filepath.Glob(filepath.Join(cache, "sums", "*"))
		return m
	}
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("small"), 0o644)
	if got := sum(small); got != want([]byte("small")) || len(kept()) != 0 {
		t.Errorf("small file: %s, %d sums kept; want %s and none", got, len(kept()), want([]byte("small")))
	}

	big := filepath.Join(dir, "big")
	data := bytes.Repeat([]byte("rewind"), sumCacheMin/6+1)
	os.WriteFile(big, data, 0o644)
	for _, step := range []string{"first", "kept"} {
		if got := sum(big); got != want(data) || len(kept()) != 1 {
			t.Errorf("%s: %s, %d sums kept; want %s and one", step, got, len(kept()), want(data))
		}
	}
	os.WriteFile(kept()[0], bytes.Repeat([]byte("z"), 2*sha256.Size), 0o644) // not hex
	if got := sum(big); got != want(data) {
		t.Errorf("damaged entry believed: %s", got)
	}

	data[0] = 'R' // rebuilt, as a linker does: a new file renamed over
	os.WriteFile(big+".new", data, 0o644)
	if err := os.Rename(big+".new", big); err != nil {
		t.Fatal(err)
	}
	if got := sum(big); got != want(data) {
		t.Errorf("changed file: %s, want %s", got, want(data))
	}
}
