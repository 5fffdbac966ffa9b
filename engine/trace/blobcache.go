package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"syscall"
	"time"
)

// BlobCache keeps the compressed contents of the files recordings store
// (the loader, libc, python's modules), by the file's identity, so that
// the next recording mapping the same file copies them into its trace
// instead of compressing them again: for short programs the compression of
// libc was a quarter of a recording's fixed cost, and most of the
// recorder's CPU for python's imports. A blob frame's payload may be
// several zstd frames (the format says so): the blob id's, then the cached
// ones.
//
// An entry made from a file whose last status change was already old
// (settleAge) is used on the file's key alone: any later change of its
// bytes sets a later ctime, so a file with that key still has those bytes,
// and the file need not be read (checking cc1's 30 MB against its entry
// was a tenth of the recorder's CPU in a make). Any other entry is used
// only if the file's bytes have the length and CRC-32C it was made from (a
// file rewritten in place within one tick of the clock that stamps its
// times keeps its key), and once so checked with an old ctime it is marked
// settled. Entries are files written whole then renamed, so recordings
// running at once share the cache; past its size, the least recently used
// go.
type BlobCache struct {
	dir  string
	max  int64
	hits atomic.Int64
}

// FileKey identifies the contents of a file: device, inode, size and the
// times of its last modification and status change, in nanoseconds.
type FileKey struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"`
	Ctime int64  `json:"ctime"`
}

// FileKeyOf is the key of the file fi describes (os.Stat's answer); false
// when it says too little.
func FileKeyOf(fi os.FileInfo) (FileKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileKey{}, false
	}
	return FileKey{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, true
}

// Name is the key as the caches name their files by it.
func (k FileKey) Name() string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", k.Dev, k.Ino, k.Size, k.Mtime, k.Ctime)
}

// CacheDir is the directory of this user's caches: $REWIND_CACHE, else
// $XDG_CACHE_HOME/rewind, else ~/.cache/rewind; "" when REWIND_CACHE is
// "off" or there is no home.
func CacheDir() string {
	base := os.Getenv("REWIND_CACHE")
	switch {
	case base == "off":
		return ""
	case base != "":
		return base
	case os.Getenv("XDG_CACHE_HOME") != "":
		return filepath.Join(os.Getenv("XDG_CACHE_HOME"), "rewind")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".cache", "rewind")
}

// DefaultBlobCache is the cache of this user: blobs in CacheDir; nil when
// there is none.
func DefaultBlobCache() *BlobCache {
	base := CacheDir()
	if base == "" {
		return nil
	}
	return NewBlobCache(filepath.Join(base, "blobs"), defaultCacheBytes)
}

// defaultCacheBytes bounds the default cache: a few hundred libraries.
const defaultCacheBytes = 512 << 20

// NewBlobCache returns a cache in dir (made when first written) holding at
// most max bytes.
func NewBlobCache(dir string, max int64) *BlobCache { return &BlobCache{dir: dir, max: max} }

// Hits says how many blobs the cache gave.
func (c *BlobCache) Hits() int64 { return c.hits.Load() }

// cacheMagic starts an entry: then the length and CRC-32C of the file's
// bytes, the length and CRC-32C of their zstd frames, then the frames.
// settledMagic starts one made from a settled file. (Entries of the first
// layout, RWBC and RWBS without the frames' length and CRC, are misses,
// made again.) The frames' CRC lets a trace take them without reading
// them (copyEntry, crcCombine).
var cacheMagic, settledMagic = []byte("RWC2"), []byte("RWS2")

const cacheHeader = 4 + 8 + 4 + 8 + 4

func (c *BlobCache) path(k FileKey) string {
	return filepath.Join(c.dir, k.Name()+".zst")
}

// settleAge is how old a file's last status change must be when an entry
// is made from its bytes for its key alone to vouch for them later. Changes
// within one tick of the clock a filesystem stamps times with (1–10 ms,
// seconds on some) may share a ctime; a later change cannot.
const settleAge = 3 * time.Second

// settled says whether the file k, whose bytes were read at (or after),
// had not changed for settleAge then.
func settled(k FileKey, at time.Time) bool {
	return at.UnixNano()-k.Ctime > int64(settleAge)
}

// cacheEntry is an entry of the cache as read.
type cacheEntry struct {
	size    uint64 // of the file's bytes
	sum     uint32 // their CRC-32C
	settled bool   // made from a settled file: its key alone vouches
	zlen    int64  // the length of their zstd frames
	zsum    uint32 // the frames' CRC-32C
	frames  []byte // the frames, when read (lookup; not open)
}

// parseEntry reads an entry's header, h; false when it is not one.
func parseEntry(h []byte) (cacheEntry, bool) {
	if len(h) < cacheHeader {
		return cacheEntry{}, false
	}
	e := cacheEntry{
		size:    binary.LittleEndian.Uint64(h[4:]),
		sum:     binary.LittleEndian.Uint32(h[12:]),
		settled: bytes.Equal(h[:4], settledMagic),
		zlen:    int64(binary.LittleEndian.Uint64(h[16:])),
		zsum:    binary.LittleEndian.Uint32(h[24:]),
	}
	if !e.settled && !bytes.Equal(h[:4], cacheMagic) || e.zlen < 0 {
		return cacheEntry{}, false
	}
	return e, true
}

// holds says whether the entry was made from data.
func (e cacheEntry) holds(data []byte) bool {
	return e.size == uint64(len(data)) && e.sum == crc32.Checksum(data, castagnoli)
}

// lookup reads the entry of the file k, whole.
func (c *BlobCache) lookup(k FileKey) (cacheEntry, bool) {
	if c == nil {
		return cacheEntry{}, false
	}
	b, err := os.ReadFile(c.path(k))
	if err != nil {
		return cacheEntry{}, false
	}
	e, ok := parseEntry(b)
	if !ok || int64(len(b)-cacheHeader) != e.zlen {
		return cacheEntry{}, false
	}
	e.frames = b[cacheHeader:]
	return e, true
}

// open opens the entry of the file k and reads its header: the frames
// follow it in the file returned, which the caller closes.
func (c *BlobCache) open(k FileKey) (*os.File, cacheEntry, bool) {
	if c == nil {
		return nil, cacheEntry{}, false
	}
	f, err := os.Open(c.path(k))
	if err != nil {
		return nil, cacheEntry{}, false
	}
	var h [cacheHeader]byte
	fi, err := f.Stat()
	if err == nil {
		_, err = f.ReadAt(h[:], 0)
	}
	e, ok := parseEntry(h[:])
	if err != nil || !ok || fi.Size()-cacheHeader != e.zlen {
		f.Close()
		return nil, cacheEntry{}, false
	}
	return f, e, true
}

// use counts a hit on the entry of k, and marks it recently used. An entry
// just checked against the file's bytes, read at, is marked settled when
// the file was.
func (c *BlobCache) use(k FileKey, e cacheEntry, checkedAt time.Time) {
	p := c.path(k)
	if !e.settled && !checkedAt.IsZero() && settled(k, checkedAt) {
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.WriteAt(settledMagic, 0) // 4 bytes: readers see either magic
			f.Close()
		}
	}
	now := time.Now()
	os.Chtimes(p, now, now) // recently used
	c.hits.Add(1)
}

// get returns the entry of data, the contents of the file k read at, its
// frames read, if the cache has them.
func (c *BlobCache) get(k FileKey, data []byte, at time.Time) (cacheEntry, bool) {
	e, ok := c.lookup(k)
	if !ok || !e.holds(data) {
		return cacheEntry{}, false
	}
	c.use(k, e, at)
	return e, true
}

// put keeps z, the compressed frames of data (the contents of the file k,
// read at). Failures are ignored: the cache only saves time.
func (c *BlobCache) put(k FileKey, data, z []byte, at time.Time) {
	if c == nil || int64(len(z)) > c.max/4 {
		return
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return
	}
	var h [cacheHeader]byte
	copy(h[:], cacheMagic)
	if settled(k, at) {
		copy(h[:], settledMagic)
	}
	binary.LittleEndian.PutUint64(h[4:], uint64(len(data)))
	binary.LittleEndian.PutUint32(h[12:], crc32.Checksum(data, castagnoli))
	binary.LittleEndian.PutUint64(h[16:], uint64(len(z)))
	binary.LittleEndian.PutUint32(h[24:], crc32.Checksum(z, castagnoli))
	if WriteCacheFile(c.path(k), h[:], z) == nil {
		c.trim()
	}
}

// WriteCacheFile writes the parts to path whole: to a new file in its
// directory, then renamed, so that recordings running at once share a
// cache and none reads half an entry.
func WriteCacheFile(path string, parts ...[]byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".new-*")
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err == nil {
			_, err = f.Write(p)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// TrimCacheFiles removes the least recently written files of a cache
// directory past limit of them, down to three quarters of limit.
func TrimCacheFiles(dir string, limit int) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) <= limit {
		return
	}
	type aged struct {
		name string
		mod  int64
	}
	var files []aged
	for _, e := range ents {
		if info, err := e.Info(); err == nil {
			files = append(files, aged{e.Name(), info.ModTime().UnixNano()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod < files[j].mod })
	for _, f := range files[:max(0, len(files)-limit*3/4)] {
		os.Remove(filepath.Join(dir, f.name))
	}
}

// trim removes the least recently used entries while the cache holds more
// than its size, down to three quarters of it.
func (c *BlobCache) trim() {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type entry struct {
		name string
		size int64
		used time.Time
	}
	var all []entry
	var total int64
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		all = append(all, entry{e.Name(), info.Size(), info.ModTime()})
		total += info.Size()
	}
	if total <= c.max {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used.Before(all[j].used) })
	for _, e := range all {
		if total <= c.max*3/4 {
			break
		}
		if os.Remove(filepath.Join(c.dir, e.name)) == nil {
			total -= e.size
		}
	}
}
