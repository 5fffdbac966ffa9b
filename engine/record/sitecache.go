package record

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Known sites across recordings. The sites the hook served in one
// recording (knownsites.go) are kept in the user's cache by the identity of
// their file, and the next recording patches them where the file is mapped,
// as it does for a later process of the same recording: a program's first
// process no longer stops at each first call and cpuid of its loader and
// libc (about 40 stops, a fifth of `rewind record /bin/true`). Nothing is
// taken on trust: a site is patched only where the code in memory has the
// shape the hook serves (hook.FindSite) or a window the image's analysis
// finds (TrapWindow), and the events list the patches for replay as before.

// siteCache is the directory of the sites files, one per file identity:
// lines of "offset-in-file number" (hex, decimal).
type siteCache struct {
	dir string
}

// maxSiteFiles bounds the cache: past it, the least recently written go.
const maxSiteFiles = 2048

// defaultSiteCache is the sites directory of trace.CacheDir; nil when the
// caches are off.
func defaultSiteCache() *siteCache {
	base := trace.CacheDir()
	if base == "" {
		return nil
	}
	return &siteCache{dir: filepath.Join(base, "sites")}
}

func (c *siteCache) path(k trace.FileKey) string {
	return filepath.Join(c.dir, k.Name()+".sites")
}

// load returns the sites kept for the file k (none when there are none or
// the file is unreadable: the cache only saves stops).
func (c *siteCache) load(k trace.FileKey) map[uint64]uint32 {
	data, err := os.ReadFile(c.path(k))
	if err != nil {
		return nil
	}
	sites := map[uint64]uint32{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		off, nr, ok := strings.Cut(sc.Text(), " ")
		o, err1 := strconv.ParseUint(off, 16, 64)
		n, err2 := strconv.ParseUint(nr, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil // not a file this rewind wrote
		}
		sites[o] = uint32(n)
	}
	return sites
}

// save keeps the sites of the file k.
func (c *siteCache) save(k trace.FileKey, sites map[uint64]uint32) {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return
	}
	offs := make([]uint64, 0, len(sites))
	for off := range sites {
		offs = append(offs, off)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	var b bytes.Buffer
	for _, off := range offs {
		fmt.Fprintf(&b, "%x %d\n", off, sites[off])
	}
	if trace.WriteCacheFile(c.path(k), b.Bytes()) == nil {
		trace.TrimCacheFiles(c.dir, maxSiteFiles)
	}
}

// loadKnown adds to the known sites those kept for the file of im, the
// first time a process maps it.
func (r *Recorder) loadKnown(im *patch.Image) {
	if _, seen := r.sitesLoaded[im]; r.sites == nil || im == nil || seen {
		return
	}
	if r.sitesLoaded == nil {
		r.sitesLoaded = map[*patch.Image]int{}
	}
	k, ok := r.code.keys[im]
	if !ok {
		r.sitesLoaded[im] = 0
		return
	}
	kept := r.sites.load(k)
	if r.known == nil {
		r.known = knownSites{}
	}
	if r.known[im] == nil {
		r.known[im] = map[uint64]uint32{}
	}
	for off, nr := range kept {
		if _, ok := r.known[im][off]; !ok {
			r.known[im][off] = nr
			r.knownGen++
		}
	}
	r.sitesLoaded[im] = len(r.known[im])
}

// saveKnown keeps the sites learned in files that have an identity, when
// the recording learned some.
func (r *Recorder) saveKnown() {
	if r.sites == nil {
		return
	}
	r.code.analyses.SaveLearned()
	for im := range r.known {
		k, ok := r.code.keys[im]
		if !ok {
			continue
		}
		r.loadKnown(im) // those kept already, if no process loaded them
		if sites := r.known[im]; len(sites) > r.sitesLoaded[im] {
			r.sites.save(k, sites)
		}
	}
}
