package patch

import (
	"bytes"
	"fmt"
	"slices"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// Memory is the tracee memory the patcher reads and writes (ptrace.Mem).
type Memory interface {
	ReadAt(p []byte, addr uint64) (int, error)
	WriteAt(p []byte, addr uint64) (int, error)
}

// Mapping is memory that an exec or an mmap made.
type Mapping struct {
	Addr, Len uint64
	Prot      int // PROT_* bits
	Shared    bool
	// Image is the file mapped (nil: anonymous memory) and Offset the file
	// offset of Addr.
	Image  *Image
	Offset uint64
	// Fresh says the memory holds the file's bytes as the mmap put them
	// there (a new mapping, not one a snapshot found), so what one scan of
	// Image at Offset found serves every later fresh mapping of it: the
	// libraries every process of a tree maps are read and searched once.
	Fresh bool
}

// region is a mapping the patcher remembers: a file's (for its layout when
// part of it is made executable later) or a shared one (never patched: the
// write would reach the file or the other processes).
type region struct {
	start, end uint64
	offset     uint64
	image      *Image
	shared     bool
}

// Space is the patched code of one address space: the sites replaced by
// traps and the mappings they were found in. Its methods follow the
// address space's changes in recording and replay alike.
type Space struct {
	// Cpuid: cpuid instructions are trapped too (a recording made where
	// the CPU cannot fault on them, and its replay). Xgetbv: xgetbv
	// instructions are (recordings since trace.Header.Xgetbv).
	Cpuid   bool
	Xgetbv  bool
	sites   []*Site  // by address
	regions []region // by address, apart
	// span is the longest Orig of a site added: a site overlapping an
	// address starts at most span bytes before it (forget).
	span uint64
}

// ops are the instructions s traps beyond rdrand and rdseed.
func (s *Space) ops() ops {
	var o ops
	if s.Cpuid {
		o |= opsCpuid
	}
	if s.Xgetbv {
		o |= opsXgetbv
	}
	return o
}

// Remember notes code patched outside this package (a hook site), whose
// original bytes Original gives back, forgotten as the mapping goes.
func (s *Space) Remember(addr uint64, orig []byte) {
	if s == nil {
		return
	}
	if site, ok := s.Site(addr); ok && site.Op == HookSite {
		return
	}
	s.addSite(&Site{Addr: addr, Orig: append([]byte(nil), orig...), Op: HookSite})
}

// Reset forgets everything: a new program image (exec).
func (s *Space) Reset() {
	s.sites, s.regions = nil, nil
}

// Clone returns a copy that changes independently (for checkpoints).
func (s *Space) Clone() *Space {
	if s == nil {
		return nil
	}
	return &Space{Cpuid: s.Cpuid, Xgetbv: s.Xgetbv, sites: append([]*Site(nil), s.sites...), regions: append([]region(nil), s.regions...), span: s.span}
}

// Len returns how many sites are patched.
func (s *Space) Len() int {
	if s == nil {
		return 0
	}
	return len(s.sites)
}

// Sites returns the patched sites by address.
func (s *Space) Sites() []*Site { return append([]*Site(nil), s.sites...) }

// Site returns the site patched at addr.
func (s *Space) Site(addr uint64) (*Site, bool) {
	if s == nil {
		return nil, false
	}
	i := sort.Search(len(s.sites), func(i int) bool { return s.sites[i].Addr >= addr })
	if i < len(s.sites) && s.sites[i].Addr == addr {
		return s.sites[i], true
	}
	return nil, false
}

// Original puts the original bytes of the sites back into buf, a copy of
// the memory at addr: what the debugger shows is the program's code, not
// the traps.
func (s *Space) Original(buf []byte, addr uint64) {
	if s == nil {
		return
	}
	end := addr + uint64(len(buf))
	i := sort.Search(len(s.sites), func(i int) bool { return s.sites[i].Addr+uint64(len(s.sites[i].Orig)) > addr })
	for ; i < len(s.sites) && s.sites[i].Addr < end; i++ {
		site := s.sites[i]
		for j, b := range site.Orig {
			if a := site.Addr + uint64(j); a >= addr && a < end {
				buf[a-addr] = b
			}
		}
	}
}

// Map follows an exec's or an mmap's new mapping, and patches it if it is
// executable. The returned warnings say what could not be patched.
func (s *Space) Map(m Memory, mp Mapping) []string {
	if mp.Len == 0 {
		return nil
	}
	s.forget(mp.Addr, mp.Addr+mp.Len)
	if mp.Image != nil || mp.Shared {
		s.addRegion(region{start: mp.Addr, end: mp.Addr + mp.Len, offset: mp.Offset, image: mp.Image, shared: mp.Shared})
	}
	if mp.Prot&unix.PROT_EXEC == 0 {
		return nil
	}
	warns := writableCode(mp.Addr, mp.Addr+mp.Len, mp.Prot)
	if mp.Fresh && mp.Image != nil {
		key := scanKey{offset: mp.Offset, length: mp.Len, cpuid: s.Cpuid, xgetbv: s.Xgetbv}
		found, ok := mp.Image.scanned(key)
		if ok && !mp.Image.wasHeld(key) {
			if holds(m, found, mp.Addr) {
				mp.Image.hold(key)
			} else {
				ok = false // not the bytes the scan was of: scan again
			}
		}
		if !ok {
			r := s.regionAt(mp.Addr)
			found = s.find(m, mp.Addr, mp.Addr+mp.Len, &r)
			for i := range found {
				found[i].Addr -= mp.Addr
			}
			mp.Image.remember(key, found)
		}
		return append(warns, s.patchFound(m, found, mp.Addr, mp.Shared)...)
	}
	return append(warns, s.scan(m, mp.Addr, mp.Addr+mp.Len)...)
}

// holds says whether memory holds the instructions of sites (their
// addresses offset by base): a scan's result kept from another process, or
// another recording, is used only where it describes the bytes there.
// Memory that reads many places at once (ptrace.Mem) reads them so: the
// loader has ~40 sites.
func holds(m Memory, sites []Site, base uint64) bool {
	bufs := make([][]byte, len(sites))
	addrs := make([]uint64, len(sites))
	for i, site := range sites {
		bufs[i], addrs[i] = make([]byte, len(site.Orig)), site.Addr+base
	}
	if r, ok := m.(manyReader); ok {
		if r.ReadMany(bufs, addrs) != nil {
			return false
		}
	} else {
		for i, b := range bufs {
			if n, err := m.ReadAt(b, addrs[i]); err != nil || n != len(b) {
				return false
			}
		}
	}
	for i, site := range sites {
		if !bytes.Equal(bufs[i], site.Orig) {
			return false
		}
	}
	return true
}

// manyReader is Memory that reads many places at once (ptrace.Mem).
type manyReader interface {
	ReadMany(bufs [][]byte, addrs []uint64) error
}

// regionAt returns the region that starts at addr, which Map just added.
func (s *Space) regionAt(addr uint64) region {
	i := sort.Search(len(s.regions), func(i int) bool { return s.regions[i].start >= addr })
	return s.regions[i]
}

// Protect follows an mprotect: memory made executable is patched.
func (s *Space) Protect(m Memory, addr, length uint64, prot int) []string {
	if prot&unix.PROT_EXEC == 0 || length == 0 {
		return nil
	}
	return append(writableCode(addr, addr+length, prot), s.scan(m, addr, addr+length)...)
}

// Unmap follows a munmap: its sites and regions are gone.
func (s *Space) Unmap(addr, length uint64) {
	s.forget(addr, addr+length)
}

// Remap follows a successful mremap from old (oldLen bytes) to addr
// (newLen bytes): the sites and the file's layout move with the pages.
func (s *Space) Remap(old, oldLen, addr, newLen uint64) {
	keep := min(oldLen, newLen)
	var sites []*Site
	for _, site := range s.sites {
		if site.Addr >= old && site.Addr+uint64(len(site.Orig)) <= old+keep {
			moved := *site
			moved.Addr = site.Addr - old + addr
			sites = append(sites, &moved)
		}
	}
	var regs []region
	for _, r := range s.regions {
		if lo, hi := max(r.start, old), min(r.end, old+keep); lo < hi {
			r.offset += lo - r.start
			r.start, r.end = lo-old+addr, hi-old+addr
			regs = append(regs, r)
		}
	}
	if oldLen != 0 { // 0: a second mapping of shared pages, the old one stays
		s.forget(old, old+oldLen)
	}
	s.forget(addr, addr+newLen)
	for _, r := range regs {
		s.addRegion(r)
	}
	for _, site := range sites {
		s.addSite(site)
	}
}

// writableCode warns about memory both writable and executable: code
// written there after this point (a JIT) is not scanned.
func writableCode(lo, hi uint64, prot int) []string {
	if prot&unix.PROT_WRITE == 0 {
		return nil
	}
	return []string{fmt.Sprintf("memory at %#x-%#x is writable and executable: an rdrand or rdseed the program "+
		"writes there later is not patched, and its replay would diverge", lo, hi)}
}

// forget drops the sites and cuts the regions within [lo, hi).
func (s *Space) forget(lo, hi uint64) {
	// Both lists are sorted: only the entries around [lo, hi) are looked
	// at (git maps and unmaps each object it reads, thousands of calls,
	// each of which went over every site and copied every region).
	i := sort.Search(len(s.sites), func(i int) bool { return s.sites[i].Addr+s.span >= lo })
	kept := i
	j := i
	for ; j < len(s.sites) && s.sites[j].Addr < hi; j++ {
		if site := s.sites[j]; site.Addr+uint64(len(site.Orig)) <= lo {
			s.sites[kept] = site
			kept++
		}
	}
	if kept < j {
		s.sites = slices.Delete(s.sites, kept, j)
	}
	i = sort.Search(len(s.regions), func(i int) bool { return s.regions[i].end > lo })
	j = i
	for j < len(s.regions) && s.regions[j].start < hi {
		j++
	}
	if i == j {
		return
	}
	var parts []region
	if r := s.regions[i]; r.start < lo {
		r.end = lo
		parts = append(parts, r)
	}
	if r := s.regions[j-1]; r.end > hi {
		r.offset += hi - r.start
		r.start = hi
		parts = append(parts, r)
	}
	s.regions = slices.Replace(s.regions, i, j, parts...)
}

func (s *Space) addRegion(r region) {
	i := sort.Search(len(s.regions), func(i int) bool { return s.regions[i].start >= r.start })
	s.regions = append(s.regions, region{})
	copy(s.regions[i+1:], s.regions[i:])
	s.regions[i] = r
}

func (s *Space) addSite(site *Site) {
	s.span = max(s.span, uint64(len(site.Orig)))
	i := sort.Search(len(s.sites), func(i int) bool { return s.sites[i].Addr >= site.Addr })
	if i < len(s.sites) && s.sites[i].Addr == site.Addr {
		return
	}
	s.sites = append(s.sites, nil)
	copy(s.sites[i+1:], s.sites[i:])
	s.sites[i] = site
}

// maxScan bounds the code read for one scan: the largest executables have
// a few hundred megabytes of it.
const maxScan = 1 << 30

// scan patches the rdrand and rdseed instructions of the executable memory
// [lo, hi). Parts inside a file's mapping are decoded with the file's
// layout (functions and code sections); other memory is swept from lo.
func (s *Space) scan(m Memory, lo, hi uint64) []string {
	var warns []string
	pos := lo
	for _, r := range s.regions {
		if r.end <= pos || r.start >= hi {
			continue
		}
		if r.start > pos {
			warns = append(warns, s.scanPiece(m, pos, r.start, nil)...)
		}
		warns = append(warns, s.scanPiece(m, max(pos, r.start), min(hi, r.end), &r)...)
		pos = min(hi, r.end)
	}
	if pos < hi {
		warns = append(warns, s.scanPiece(m, pos, hi, nil)...)
	}
	return warns
}

// scanPiece patches [lo, hi), which lies in region r (nil: anonymous
// private memory).
func (s *Space) scanPiece(m Memory, lo, hi uint64, r *region) []string {
	rlo, rhi := lo, hi
	if r != nil {
		rlo, rhi = r.start, r.end
	}
	if rhi-rlo > maxScan {
		return []string{fmt.Sprintf("executable memory at %#x-%#x is too large to scan for rdrand and rdseed: "+
			"if it has any, their replay diverges", lo, hi)}
	}
	return s.patchFound(m, s.find(m, lo, hi, r), 0, r != nil && r.shared)
}

// find returns the rdrand and rdseed instructions of [lo, hi), which lies
// in region r (nil: anonymous private memory), by address.
func (s *Space) find(m Memory, lo, hi uint64, r *region) []Site {
	// Decoding may have to start before lo, at a function's start: read
	// the whole region.
	rlo, rhi := lo, hi
	if r != nil {
		rlo, rhi = r.start, r.end
	}
	if rhi-rlo > maxScan {
		return nil
	}
	code := make([]byte, rhi-rlo)
	n, _ := m.ReadAt(code, rlo)
	code = code[:n]
	cands := candidates(code, s.ops())
	inside := false
	for _, c := range cands {
		if a := rlo + uint64(c); a >= lo && a < hi {
			inside = true
			break
		}
	}
	if !inside {
		return nil
	}
	var plan []span
	var layout *Layout
	if r != nil && r.image != nil {
		layout = r.image.Layout()
	}
	if layout != nil {
		plan = layout.sweepPlan(r.start, r.offset, r.end-r.start)
	} else {
		plan = []span{{start: lo, end: rlo + uint64(len(code))}}
	}
	var out []Site
	for a, site := range findSites(code, rlo, plan, cands, s.ops()) {
		if a >= lo && a < hi {
			out = append(out, site)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out
}

// patchFound writes the traps of the sites found (their addresses offset
// by base) not yet patched; in shared memory it only warns. Memory that
// gathers writes (ptrace.Mem) takes them in one batch: an exec of sh
// traps ~60 sites of the loader, a write to /proc/PID/mem each.
func (s *Space) patchFound(m Memory, found []Site, base uint64, shared bool) []string {
	var warns []string
	var todo []Site
	for _, site := range found {
		site.Addr += base
		a := site.Addr
		if _, ok := s.Site(a); ok {
			continue
		}
		if shared {
			warns = append(warns, fmt.Sprintf("%s at %#x is in shared memory, which cannot be patched: "+
				"its results are not recorded, and its replay would diverge", site.Op, a))
			continue
		}
		todo = append(todo, site)
	}
	if b, ok := m.(batcher); ok && len(todo) > 1 {
		w := b.Writes()
		for i := range todo {
			w.Add(todo[i].Addr, todo[i].Trap())
		}
		if w.Flush() == nil {
			for i := range todo {
				s.addSite(&todo[i])
			}
			return warns
		}
		// One at a time, to say which cannot be written.
	}
	for i := range todo {
		site := &todo[i]
		if _, err := m.WriteAt(site.Trap(), site.Addr); err != nil {
			warns = append(warns, fmt.Sprintf("%s at %#x cannot be patched (%v): its results are not "+
				"recorded, and its replay would diverge", site.Op, site.Addr, err))
			continue
		}
		s.addSite(site)
	}
	return warns
}

// batcher is Memory that gathers writes until a flush (ptrace.Mem).
type batcher interface {
	Writes() *ptrace.Writes
}

// pageSize rounds the lengths of the memory calls: the kernel acts on whole
// pages.
const pageSize = 4096

func pageUp(n uint64) uint64 { return (n + pageSize - 1) &^ (pageSize - 1) }

// AfterSyscall follows a successful system call that changed the address
// space (nr with args returned ret), in recording and replay alike: the
// decision uses only the call, its result and the memory. image returns the
// file an mmap mapped (nil for anonymous memory, or when the trace holds no
// copy of it); it is asked for executable mappings only, and the layout of a
// file mapped without PROT_EXEC is not used later either.
func (s *Space) AfterSyscall(m Memory, nr int, args [6]uint64, ret uint64, image func() *Image) []string {
	if int64(ret) < 0 && int64(ret) >= -4095 {
		return nil
	}
	switch nr {
	case unix.SYS_MMAP:
		prot := int(args[2])
		mp := Mapping{Addr: ret, Len: pageUp(args[1]), Prot: prot, Offset: args[5],
			Shared: args[3]&unix.MAP_TYPE != unix.MAP_PRIVATE}
		if prot&unix.PROT_EXEC != 0 && args[3]&unix.MAP_ANONYMOUS == 0 && image != nil {
			mp.Image, mp.Fresh = image(), true
		}
		return s.Map(m, mp)
	case unix.SYS_MPROTECT, unix.SYS_PKEY_MPROTECT:
		return s.Protect(m, args[0], pageUp(args[1]), int(args[2]))
	case unix.SYS_MUNMAP:
		s.Unmap(args[0], pageUp(args[1]))
	case unix.SYS_MREMAP:
		s.Remap(args[0], pageUp(args[1]), ret, pageUp(args[2]))
	}
	return nil
}

// kcmpVM is KCMP_VM: kcmp compares two processes' address spaces.
const kcmpVM = 1

// SharedMemory tells whether processes a and b share one address space (a
// vfork child and its parent, clone with CLONE_VM): they then share one
// Space, as a write to one's code is the other's.
func SharedMemory(a, b int) (bool, error) {
	r, _, e := unix.Syscall6(unix.SYS_KCMP, uintptr(a), uintptr(b), kcmpVM, 0, 0, 0)
	if e != 0 {
		return false, fmt.Errorf("kcmp %d %d: %w", a, b, e)
	}
	return r == 0, nil
}

// FileRegion is memory that maps a file the patcher knows (an executable
// mapping's Image), from Offset in the file.
type FileRegion struct {
	Start, End, Offset uint64
	Image              *Image
}

// Files returns the private mappings of files with an Image that meet
// [lo, hi), by address.
func (s *Space) Files(lo, hi uint64) []FileRegion {
	if s == nil {
		return nil
	}
	var out []FileRegion
	for _, r := range s.regions {
		if r.image != nil && !r.shared && r.end > lo && r.start < hi {
			out = append(out, FileRegion{Start: r.start, End: r.end, Offset: r.offset, Image: r.image})
		}
	}
	return out
}

// Untrap puts back the instruction of the trapped site at addr and forgets
// the site: a cpuid the recorder patched further, with the code around it,
// into a jump to the hook (which needs the instruction there), in replay
// alike. It returns the site, to trap again with Retrap where that patch
// could not be made.
func (s *Space) Untrap(m Memory, addr uint64) (Site, bool) {
	site, ok := s.Site(addr)
	if !ok || site.Op == HookSite {
		return Site{}, false
	}
	if _, err := m.WriteAt(site.Orig, addr); err != nil {
		return Site{}, false
	}
	s.Forget(addr)
	return *site, true
}

// Forget forgets the trapped site at addr without putting its instruction
// back: what Untrap does to s, where the instruction is written back
// otherwise (the recorder's patch plans write what an Untrap wrote once).
func (s *Space) Forget(addr uint64) {
	if _, ok := s.Site(addr); !ok {
		return
	}
	i := sort.Search(len(s.sites), func(i int) bool { return s.sites[i].Addr >= addr })
	s.sites = append(s.sites[:i], s.sites[i+1:]...)
}

// SitesIn calls f with the address and kind of each site in [lo, hi), in
// order.
func (s *Space) SitesIn(lo, hi uint64, f func(addr uint64, op Op)) {
	if s == nil {
		return
	}
	i := sort.Search(len(s.sites), func(i int) bool { return s.sites[i].Addr >= lo })
	for ; i < len(s.sites) && s.sites[i].Addr < hi; i++ {
		f(s.sites[i].Addr, s.sites[i].Op)
	}
}

// Retrap traps a site Untrap gave back again.
func (s *Space) Retrap(m Memory, site Site) []string {
	return s.patchFound(m, []Site{site}, 0, false)
}

// Trapped says whether a trapped site (not a hook site) lies in [lo, hi):
// code copied from there elsewhere would trap where no site is known.
func (s *Space) Trapped(lo, hi uint64) bool {
	if s == nil {
		return false
	}
	i := sort.Search(len(s.sites), func(i int) bool { return s.sites[i].Addr+uint64(len(s.sites[i].Orig)) > lo })
	for ; i < len(s.sites) && s.sites[i].Addr < hi; i++ {
		if s.sites[i].Op != HookSite {
			return true
		}
	}
	return false
}
