package patch

// Analysis is what the analysis of an image found: the rdrand and rdseed
// of the fresh mappings it scanned (Space.Map) and the windows around its
// trapping instructions (FindWindow). Both depend only on the file's bytes
// and on this package's code, and finding them takes a layout of the whole
// file, most of the recorder's work at the first exec of a large program
// (gcc's cc1: ~130 ms of each `gcc -c`): a recorder keeps them across
// recordings by the file's identity and seeds the image with them.
// Nothing else is trusted: a window is patched only where memory holds its
// bytes (TrapWindow), a site only where it holds the instruction.
type Analysis struct {
	// Version is AnalysisVersion and Patch the patching algorithm's
	// Version when it was made: another one's is not seeded.
	Version, Patch int
	Scans          []ScanResult
	Windows        []WindowResult
}

// AnalysisVersion changes whenever what the analysis finds in a file may
// change and Version does not: an analysis kept by another version is
// thrown away.
const AnalysisVersion = 2

// ScanResult is what the scan of a fresh mapping of Length bytes of the
// file from Offset found: its sites, their addresses relative to the
// mapping's start.
type ScanResult struct {
	Offset, Length uint64
	// Cpuid, Xgetbv: cpuid and xgetbv instructions were looked for too
	// (Space.Cpuid, Space.Xgetbv).
	Cpuid  bool `json:",omitempty"`
	Xgetbv bool `json:",omitempty"`
	Sites  []Site
}

// WindowResult is the window around the trapping instruction at file
// offset Offset, at link-time address Site: Window (link-time addresses)
// when OK, none otherwise.
type WindowResult struct {
	Offset, Site uint64
	Window       Window
	OK           bool
}

// Analysis returns what the image's analysis found so far, and whether
// some of it is new: not given by Seed.
func (im *Image) Analysis() (Analysis, bool) {
	// (An image never looked at was not seeded, and found nothing.)
	im.mu.Lock()
	defer im.mu.Unlock()
	a := Analysis{Version: AnalysisVersion, Patch: Version}
	for k, sites := range im.scans {
		a.Scans = append(a.Scans, ScanResult{Offset: k.offset, Length: k.length, Cpuid: k.cpuid, Xgetbv: k.xgetbv, Sites: sites})
	}
	for off, c := range im.windows {
		a.Windows = append(a.Windows, WindowResult{Offset: off, Site: c.site, Window: c.Window, OK: c.ok})
	}
	return a, im.learned
}

// SeedLater has the image seeded with what kept returns (Seed) the first
// time its analysis is looked at: naming an analysis may cost a hash of
// the file, which most images (data files mapped, libraries never
// scanned) never need.
func (im *Image) SeedLater(kept func() (Analysis, bool)) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.seeder = kept
}

// seedNow runs the seeder SeedLater set, once.
func (im *Image) seedNow() {
	im.mu.Lock()
	kept := im.seeder
	im.seeder = nil
	im.mu.Unlock()
	if kept != nil {
		if a, ok := kept(); ok {
			im.Seed(a)
		}
	}
}

// Seed gives the image what an earlier analysis of the same file found
// (Analysis), unless it is of another version. What the image found
// itself stays.
func (im *Image) Seed(a Analysis) {
	if a.Version != AnalysisVersion || a.Patch != Version {
		return
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	for _, s := range a.Scans {
		if im.scans == nil {
			im.scans = map[scanKey][]Site{}
		}
		k := scanKey{offset: s.Offset, length: s.Length, cpuid: s.Cpuid, xgetbv: s.Xgetbv}
		if _, ok := im.scans[k]; !ok {
			im.scans[k] = s.Sites
		}
	}
	for _, w := range a.Windows {
		if im.windows == nil {
			im.windows = map[uint64]cachedWindow{}
		}
		if _, ok := im.windows[w.Offset]; !ok {
			im.windows[w.Offset] = cachedWindow{Window: w.Window, site: w.Site, ok: w.OK}
		}
	}
}
