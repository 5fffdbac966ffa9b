package trace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestBlobCache: a file stored in one trace is compressed into the cache;
// the next trace storing it takes the cache's frames, and both read back
// the file's bytes. A cache entry whose bytes do not match the file (it
// was rewritten keeping its identity, or the entry was damaged) is not
// used, and a file read short is never cached. A small file is read at
// once, a large one in the background. (The file's ctime is now: its key
// alone does not vouch for its bytes; TestBlobCacheSettled.)
func TestBlobCache(t *testing.T) {
	// (The largest is compressed in frames, on every CPU once the
	// writer closes: tailcompress.go.)
	for _, size := range []int{deferredRead / 4, 3 * deferredRead, 3*tailChunk + 4321} {
		t.Run(fmt.Sprint(size), func(t *testing.T) { testBlobCache(t, size) })
	}
}

func testBlobCache(t *testing.T, size int) {
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	file := filepath.Join(dir, "lib.so")
	contents := append(randBytes(rng, size/2), bytes.Repeat([]byte("text "), size/10)...)
	if err := os.WriteFile(file, contents, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := NewBlobCache(filepath.Join(dir, "cache"), 1<<30)
	now := time.Now().UnixNano()
	key := FileKey{Dev: 1, Ino: 2, Size: int64(len(contents)), Mtime: now, Ctime: now}
	record := func(name string, n int64, key FileKey) []byte {
		t.Helper()
		return recordFileBlob(t, file, filepath.Join(dir, name), n, key, cache)
	}
	tests := []struct {
		name     string
		n        int64
		key      FileKey
		damage   bool
		wantHits int64
	}{
		{"first", int64(len(contents)), key, false, 0},
		{"cached", int64(len(contents)), key, false, 1},
		{"short read", int64(len(contents)) + 10, FileKey{Ino: 9, Size: int64(len(contents)) + 10, Ctime: now}, false, 1},
		{"damaged entry", int64(len(contents)), key, true, 1},
		{"cached again", int64(len(contents)), key, false, 2},
	}
	for _, tt := range tests {
		if tt.damage {
			p := cache.path(key)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[12] ^= 1 // the CRC of the contents
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got := record(tt.name+".rwd", tt.n, tt.key)
		if !bytes.Equal(got, contents) {
			t.Errorf("%s: the blob read back is not the file (%d bytes, want %d)", tt.name, len(got), len(contents))
		}
		if cache.Hits() != tt.wantHits {
			t.Errorf("%s: %d cache hits, want %d", tt.name, cache.Hits(), tt.wantHits)
		}
	}
	if _, err := os.Stat(cache.path(FileKey{Ino: 9, Size: int64(len(contents)) + 10, Ctime: now})); err == nil {
		t.Errorf("a file read short was cached")
	}
	if e, ok := cache.lookup(key); !ok || e.settled {
		t.Errorf("the entry of a file changed just now: found %v, settled %v; want found, not settled", ok, e.settled)
	}
}

// TestBlobCacheSettled: an entry made from a file whose ctime was old is
// used on the file's key alone: a large file is then not read at all (its
// bytes changed on disk behind an unchanged key are not seen, which a real
// change, setting a new ctime, cannot do). An entry made from a file just
// changed becomes settled once checked against the file's bytes when old.
func TestBlobCacheSettled(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	file := filepath.Join(dir, "lib.so")
	size := 3 * deferredRead
	contents := randBytes(rng, size)
	if err := os.WriteFile(file, contents, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := NewBlobCache(filepath.Join(dir, "cache"), 1<<30)
	old := time.Now().Add(-time.Hour).UnixNano()
	key := FileKey{Dev: 1, Ino: 2, Size: int64(size), Mtime: old, Ctime: old}
	record := func(name string) []byte {
		t.Helper()
		return recordFileBlob(t, file, filepath.Join(dir, name), int64(size), key, cache)
	}
	if got := record("first.rwd"); !bytes.Equal(got, contents) {
		t.Fatal("the first blob read back is not the file")
	}
	if e, ok := cache.lookup(key); !ok || !e.settled {
		t.Fatalf("the entry of a settled file: found %v, settled %v; want both", ok, e.settled)
	}
	if err := os.WriteFile(file, randBytes(rng, size), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := record("second.rwd"); !bytes.Equal(got, contents) || cache.Hits() != 1 {
		t.Errorf("with the key unchanged: the blob is the entry's bytes %v, %d hits; want true, 1 (the file read)", bytes.Equal(got, contents), cache.Hits())
	}

	now := time.Now()
	fresh := FileKey{Dev: 1, Ino: 3, Size: int64(size), Mtime: now.UnixNano(), Ctime: now.UnixNano()}
	cache.put(fresh, contents, []byte("frames"), now)
	for _, tt := range []struct {
		name        string
		at          time.Time
		data        []byte
		want        bool
		wantSettled bool
	}{
		{"other bytes, later", now.Add(time.Hour), randBytes(rng, size), false, false},
		{"same bytes, soon after", now.Add(time.Second), contents, true, false},
		{"same bytes, later", now.Add(time.Hour), contents, true, true},
	} {
		_, used := cache.get(fresh, tt.data, tt.at)
		e, ok := cache.lookup(fresh)
		if used != tt.want || !ok || e.settled != tt.wantSettled {
			t.Errorf("%s: used %v, settled %v; want %v, %v", tt.name, used, e.settled, tt.want, tt.wantSettled)
		}
	}
}

// recordFileBlob writes a trace at path storing a blob, then n bytes of
// file (whose key is key) through cache, and returns what the trace reads
// back of the file's blob.
func recordFileBlob(t *testing.T, file, path string, n int64, key FileKey, cache *BlobCache) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := createTest(t, path)
	if _, err := w.AddBlob([]byte("first")); err != nil {
		t.Fatal(err)
	}
	id, err := w.ReadFileBlob(f, n, key, cache)
	if err != nil || id != 1 {
		t.Fatalf("ReadFileBlob: id %d, %v", id, err)
	}
	r := closeAndOpen(t, w, nil, path)
	defer r.Close()
	if first, err := r.Blob(0); err != nil || string(first) != "first" {
		t.Fatalf("blob 0: %q, %v", first, err)
	}
	got, err := r.Blob(1)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFaultSafe: a read of a mapping past the end of a file cut short
// after it was mapped (SIGBUS, which checkMapped risks) is a fault
// faultSafe reports, not the end of the process.
func TestFaultSafe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lib.so")
	if err := os.WriteFile(p, make([]byte, 4<<12), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := unix.Mmap(int(f.Fd()), 0, 4<<12, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(data)
	var sum byte
	read := func() {
		for _, b := range data {
			sum += b
		}
	}
	if faultSafe(read) {
		t.Fatal("reading the whole file faulted")
	}
	if err := os.Truncate(p, 1<<12); err != nil {
		t.Fatal(err)
	}
	if !faultSafe(read) {
		t.Error("reading past the end of the file cut short did not fault")
	}
}

// TestBlobCacheTrim: past its size the cache drops its least recently used
// entries.
func TestBlobCacheTrim(t *testing.T) {
	cache := NewBlobCache(t.TempDir(), 40000)
	data := bytes.Repeat([]byte{1}, 100)
	for i := 0; i < 8; i++ {
		cache.put(FileKey{Ino: uint64(i)}, data, make([]byte, 9000), time.Now())
	}
	ents, err := os.ReadDir(cache.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) == 0 || len(ents) > 4 {
		t.Errorf("%d entries of 9 kB in a cache of 40 kB, want 1 to 4", len(ents))
	}
}

// TestTrimCacheFiles: past its limit, a cache directory keeps the three
// quarters of it most recently written.
func TestTrimCacheFiles(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	for i := range 10 {
		p := filepath.Join(dir, fmt.Sprintf("f%d", i))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		at := now.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	TrimCacheFiles(dir, 10)
	if ents, _ := os.ReadDir(dir); len(ents) != 10 {
		t.Fatalf("at its limit: %d files left, want 10", len(ents))
	}
	TrimCacheFiles(dir, 8)
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"f4", "f5", "f6", "f7", "f8", "f9"}; !slices.Equal(names, want) {
		t.Errorf("left %v, want the six newest %v", names, want)
	}
}
