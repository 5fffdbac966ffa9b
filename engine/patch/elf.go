package patch

import (
	"bytes"
	"cmp"
	"debug/elf"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// span is a range of addresses [start, end). A strict span is code nothing
// vouches for (bytes between known functions): its sites count only if all
// of it decodes as valid instructions ending exactly at its end.
type span struct {
	start, end uint64
	strict     bool
}

// codeSection is a part of a file that holds code: where it is in the file
// and at what address it is linked.
type codeSection struct {
	vaddr, offset, size uint64
}

// Layout is what an ELF file says about where its instructions start: its
// code sections (or executable segments) and the bounds of its functions,
// from the symbol tables and the unwind tables (.eh_frame describes static
// functions too, which stripped libraries keep). Addresses are link-time
// ones.
type Layout struct {
	sections []codeSection
	segments []codeSection // every loaded segment's file bytes (switch tables live in them)
	funcs    []span
	objects  []span // data objects with symbols inside code sections
}

// ParseLayout reads the code layout of an x86-64 ELF file; nil when data is
// not one (then mappings of it are swept linearly).
func ParseLayout(data []byte) *Layout { return parseLayout(bytes.NewReader(data)) }

// parseLayout is ParseLayout of the file r reads: its headers, symbol
// tables and .eh_frame alone.
func parseLayout(r io.ReaderAt) *Layout {
	f, err := elf.NewFile(r)
	if err != nil || f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return nil
	}
	defer f.Close()
	l := &Layout{}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 && s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 {
			l.sections = append(l.sections, codeSection{s.Addr, s.Offset, s.Size})
		}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Filesz > 0 {
			l.segments = append(l.segments, codeSection{p.Vaddr, p.Off, p.Filesz})
		}
	}
	if len(l.sections) == 0 {
		// No section headers: the executable segments are the code.
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Filesz > 0 {
				l.sections = append(l.sections, codeSection{p.Vaddr, p.Off, p.Filesz})
			}
		}
	}
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			if s.Size == 0 || s.Value == 0 || s.Section == elf.SHN_UNDEF {
				continue
			}
			switch elf.ST_TYPE(s.Info) {
			case elf.STT_FUNC, elf.STT_GNU_IFUNC:
				l.funcs = append(l.funcs, span{start: s.Value, end: s.Value + s.Size})
			case elf.STT_OBJECT:
				l.objects = append(l.objects, span{start: s.Value, end: s.Value + s.Size})
			}
		}
	}
	if syms, err := f.Symbols(); err == nil {
		add(syms)
	}
	if syms, err := f.DynamicSymbols(); err == nil {
		add(syms)
	}
	if s := f.Section(".eh_frame"); s != nil && s.Type == elf.SHT_PROGBITS {
		if data, err := s.Data(); err == nil {
			fdes, _ := fdeRanges(data, s.Addr) // what was read before an error stands
			l.funcs = append(l.funcs, fdes...)
		}
	}
	l.funcs = sortSpans(l.funcs)
	l.objects = sortSpans(l.objects)
	return l
}

// sortSpans sorts by start then end and drops duplicates.
func sortSpans(s []span) []span {
	slices.SortFunc(s, func(a, b span) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(a.end, b.end)
	})
	return compactSpans(s)
}

// compactSpans drops duplicates from a sorted list.
func compactSpans(s []span) []span {
	out := s[:0]
	for i, x := range s {
		if i > 0 && x == s[i-1] {
			continue
		}
		out = append(out, x)
	}
	return out
}

// Image is a mapped file whose layout is parsed the first time a mapping of
// it holds a candidate instruction (most never do).
type Image struct {
	load func() ([]byte, error)
	// open, when set, opens the file for its layout, which reads its
	// headers, symbol tables and .eh_frame alone: an executable built
	// since the last recording was read whole (26 MB of Go binary: 20–45
	// ms of the program's start) for a layout that needs a few MB.
	open   func() (*os.File, error)
	once   sync.Once
	layout *Layout

	mu    sync.Mutex
	scans map[scanKey][]Site
	// held are the scans found to describe the bytes of a fresh mapping
	// (holds, or a scan of them), under mu: every fresh mapping of the
	// file holds the same bytes, so they are read once a recording (the
	// loader's ~40 sites at each exec: a tenth of an exec's stop).
	held map[scanKey]bool

	// data reads the file again for the windows of its trapping
	// instructions (FindWindow), which only some files need.
	data      func() ([]byte, error)
	dataOnce  sync.Once
	bytes     []byte
	flows     map[uint64]*flow // by function start (flowOf), under mu
	jumps     *jumpSet         // where the file's direct jumps land (jumpTargets)
	jumpsOnce sync.Once
	windows   map[uint64]cachedWindow // by file offset (FindWindow), under mu
	// learned says that scans or windows were found that Seed did not
	// give (analysis.go), under mu.
	learned bool
	// seeder gives the kept analysis when first needed (SeedLater).
	seeder func() (Analysis, bool)
}

// scanKey names a fresh mapping of an image: its file offset and length,
// and whether cpuid and xgetbv were looked for too (Space.Cpuid, Xgetbv).
type scanKey struct {
	offset, length uint64
	cpuid, xgetbv  bool
}

// scanned returns the sites found in a fresh mapping of the image (their
// addresses relative to its start), if one was scanned.
func (im *Image) scanned(k scanKey) ([]Site, bool) {
	im.seedNow()
	im.mu.Lock()
	defer im.mu.Unlock()
	found, ok := im.scans[k]
	return found, ok
}

// remember keeps what the scan of a fresh mapping found.
func (im *Image) remember(k scanKey, found []Site) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.scans == nil {
		im.scans = map[scanKey][]Site{}
	}
	if _, ok := im.scans[k]; !ok {
		im.learned = true
	}
	im.scans[k] = found
	im.holdLocked(k)
}

// wasHeld says whether scan k described the bytes of a fresh mapping.
func (im *Image) wasHeld(k scanKey) bool {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.held[k]
}

// hold notes that scan k describes the bytes of a fresh mapping.
func (im *Image) hold(k scanKey) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.holdLocked(k)
}

func (im *Image) holdLocked(k scanKey) {
	if im.held == nil {
		im.held = map[scanKey]bool{}
	}
	im.held[k] = true
}

// NewImage returns an image whose bytes load returns when first needed.
func NewImage(load func() ([]byte, error)) *Image {
	return &Image{load: load}
}

// Layout returns the file's layout, nil if it is not an ELF file or cannot
// be read.
func (im *Image) Layout() *Layout {
	if im == nil {
		return nil
	}
	im.once.Do(func() {
		if im.open != nil {
			if f, err := im.open(); err == nil {
				im.layout = parseLayout(f)
				f.Close()
			}
		} else if data, err := im.load(); err == nil {
			im.layout = ParseLayout(data)
		}
		im.data, im.load = im.load, nil
	})
	return im.layout
}

// sweepPlan returns where decoding may start in a mapping of the file at
// addr, holding the file's bytes from offset for length bytes. Each known
// function is decoded from its start to its end. A code section in which no
// function is known is swept linearly from its start. In a section with
// functions, the bytes no function covers (padding, code without symbols or
// unwind tables, but also jump tables and constants: OpenSSL keeps tables in
// .text) are strict spans, from a function's end to the next start, around
// data objects: a sweep through data can take its bytes for an rdrand and
// corrupt it, which the recording would not show (a missed rdrand shows, as
// a divergence), so their sites count only if the whole span is valid code.
// Parts of sections this mapping does not hold are left out.
func (l *Layout) sweepPlan(addr, offset, length uint64) []span {
	var plan []span
	for _, sec := range l.sections {
		// Where the section's bytes are in this mapping, if they are.
		lo, hi := max(sec.offset, offset), min(sec.offset+sec.size, offset+length)
		if lo >= hi {
			continue
		}
		bias := addr + (sec.offset - offset) - sec.vaddr // runtime = link + bias
		vlo, vhi := sec.vaddr+(lo-sec.offset), sec.vaddr+(hi-sec.offset)
		first := sort.Search(len(l.funcs), func(i int) bool { return l.funcs[i].start >= sec.vaddr })
		if first == len(l.funcs) || l.funcs[first].start >= sec.vaddr+sec.size {
			// No function known in the section: sweep it, from its start.
			if lo == sec.offset {
				plan = append(plan, span{start: vlo + bias, end: vhi + bias})
			}
			continue
		}
		// Functions, and the gaps between them. cover is how far the
		// functions reach; known says that cover is an instruction
		// boundary (a function's end, or the section's start).
		gap := func(from, to uint64) {
			for _, p := range l.withoutObjects(from, to) {
				plan = append(plan, span{start: p.start + bias, end: p.end + bias, strict: true})
			}
		}
		cover, known := vlo, lo == sec.offset
		for i := sort.Search(len(l.funcs), func(i int) bool { return l.funcs[i].start >= vlo }); i < len(l.funcs) && l.funcs[i].start < vhi; i++ {
			f := l.funcs[i]
			if f.start > cover && known {
				gap(cover, f.start)
			}
			plan = append(plan, span{start: f.start + bias, end: min(f.end, vhi) + bias})
			if f.end > cover {
				cover, known = f.end, true
			}
		}
		if cover < vhi && known {
			gap(cover, vhi)
		}
	}
	return plan
}

// withoutObjects cuts [lo, hi) around the data objects in it.
func (l *Layout) withoutObjects(lo, hi uint64) []span {
	var out []span
	i := sort.Search(len(l.objects), func(i int) bool { return l.objects[i].end > lo })
	for ; i < len(l.objects) && l.objects[i].start < hi && lo < hi; i++ {
		o := l.objects[i]
		if o.start > lo {
			out = append(out, span{start: lo, end: o.start})
		}
		lo = max(lo, o.end)
	}
	if lo < hi {
		out = append(out, span{start: lo, end: hi})
	}
	return out
}

// Images caches the images of the files a recording or a replay maps, by
// path and by the trace blob that stores them, so that each file is read
// and parsed once however often it is mapped.
type Images struct {
	paths map[string]*Image
	blobs map[uint32]*Image
	files map[fileID]*Image
}

// fileID tells files apart by what stat says of them.
type fileID struct {
	dev, ino, size uint64
	mtime          int64
}

// Exec returns the image of the file at path as it is now (an exec'd
// file: the executable, its interpreter), told apart from another file at
// that path by device, inode, size and time, so that what was learned of
// one (the sites a scan found, the system call sites patched) is never
// applied to another. Nil when path cannot be read, or is a deleted file's
// ("... (deleted)" in /proc/PID/maps).
func (c *Images) Exec(path string) *Image {
	if strings.HasSuffix(path, " (deleted)") {
		return nil
	}
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return nil
	}
	id := fileID{st.Dev, st.Ino, uint64(st.Size), st.Mtim.Nano()}
	return fileImage(&c.files, id, path)
}

// Path returns the image of the file at path, read when first needed; nil
// for a deleted file's.
func (c *Images) Path(path string) *Image {
	if strings.HasSuffix(path, " (deleted)") {
		return nil
	}
	return fileImage(&c.paths, path, path)
}

// Cached returns the image of blob if it has one (nil otherwise).
func (c *Images) Cached(blob uint32) *Image { return c.blobs[blob] }

// Blob returns the image of blob, whose bytes load returns when first
// needed (load is not kept when the image is already cached).
func (c *Images) Blob(blob uint32, load func() ([]byte, error)) *Image {
	return cachedImage(&c.blobs, blob, load, nil)
}

// readLoaded reads the file open opens as fileData needs it: its loaded
// segments and code sections at their offsets, in a buffer of the file's
// size whose other pages (debug information, symbol tables: most of a
// debug build, a third of a Go binary) are never touched, so cost no page
// fault. false where the file cannot be read so.
func (l *Layout) readLoaded(open func() (*os.File, error)) ([]byte, bool) {
	if len(l.segments) == 0 {
		return nil, false
	}
	f, err := open()
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false
	}
	var rs []span // file offsets, merged
	for _, r := range slices.Concat(l.segments, l.sections) {
		rs = append(rs, span{start: r.offset, end: r.offset + r.size})
	}
	slices.SortFunc(rs, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	b := make([]byte, st.Size())
	for i := 0; i < len(rs); {
		lo, hi := rs[i].start, rs[i].end
		for i++; i < len(rs) && rs[i].start <= hi; i++ {
			hi = max(hi, rs[i].end)
		}
		if hi > uint64(len(b)) {
			return nil, false
		}
		if _, err := f.ReadAt(b[lo:hi], int64(lo)); err != nil {
			return nil, false
		}
	}
	return b, true
}

// fileImage is cachedImage of the file at path, whose layout is read from
// the file itself (Image.open).
func fileImage[K comparable](cache *map[K]*Image, key K, path string) *Image {
	return cachedImage(cache, key, func() ([]byte, error) { return os.ReadFile(path) },
		func() (*os.File, error) { return os.Open(path) })
}

// cachedImage returns the image *cache keeps under key, or else keeps and
// returns a new one whose bytes load returns when first needed (and whose
// file open opens, if not nil: Image.open).
func cachedImage[K comparable](cache *map[K]*Image, key K, load func() ([]byte, error), open func() (*os.File, error)) *Image {
	if im, ok := (*cache)[key]; ok {
		return im
	}
	if *cache == nil {
		*cache = map[K]*Image{}
	}
	im := NewImage(load)
	im.open = open
	(*cache)[key] = im
	return im
}
