package patch

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeMem is an address space of size bytes from 0.
type fakeMem struct {
	data     []byte
	readOnly bool
}

func newFakeMem(size int) *fakeMem { return &fakeMem{data: make([]byte, size)} }

func (m *fakeMem) ReadAt(p []byte, addr uint64) (int, error) {
	if addr >= uint64(len(m.data)) {
		return 0, errors.New("unmapped")
	}
	n := copy(p, m.data[addr:])
	if n < len(p) {
		return n, errors.New("short read")
	}
	return n, nil
}

func (m *fakeMem) WriteAt(p []byte, addr uint64) (int, error) {
	if m.readOnly {
		return 0, errors.New("write refused")
	}
	if addr+uint64(len(p)) > uint64(len(m.data)) {
		return 0, errors.New("unmapped")
	}
	return copy(m.data[addr:], p), nil
}

// sampleCode is a function with an rdrand retry loop, then a mov whose
// immediate holds rdrand's bytes (a candidate that is no instruction), then
// an rdseed into r9.
var sampleCode = []byte{
	0xf3, 0x0f, 0x1e, 0xfa, // endbr64
	0x55,             // push rbp
	0x48, 0x89, 0xe5, // mov rbp,rsp
	0x48, 0x0f, 0xc7, 0xf0, // 8: rdrand rax
	0x73, 0xfa, // jnc 8
	0xb8, 0x0f, 0xc7, 0xf0, 0x00, // mov eax,0x00f0c70f
	0x49, 0x0f, 0xc7, 0xf9, // 19: rdseed r9
	0x5d, // pop rbp
	0xc3, // ret
}

// TestSpaceFollowsTheAddressSpace patches executable memory as it appears
// (mmap, mprotect), moves the sites with mremap, forgets them at munmap,
// refuses shared memory, and shows the original bytes.
func TestSpaceFollowsTheAddressSpace(t *testing.T) {
	const base, moved = 0x10000, 0x30000
	m := newFakeMem(0x40000)
	copy(m.data[base:], sampleCode)
	var s Space

	if w := s.Map(m, Mapping{Addr: base, Len: 0x1000, Prot: unix.PROT_READ | unix.PROT_EXEC}); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	sites := s.Sites()
	if len(sites) != 2 || sites[0].Addr != base+8 || sites[0].Op != Rdrand || sites[1].Addr != base+19 || sites[1].Op != Rdseed {
		t.Fatalf("sites %+v, want rdrand at +8 and rdseed at +19", sites)
	}
	if !bytes.Equal(m.data[base+8:base+12], []byte{0x0f, 0x0b, 0x90, 0x90}) {
		t.Errorf("patched bytes % x, want ud2 and nops", m.data[base+8:base+12])
	}
	if !bytes.Equal(m.data[base+14:base+19], sampleCode[14:19]) {
		t.Errorf("the mov's immediate was changed: % x", m.data[base+14:base+19])
	}
	view := append([]byte(nil), m.data[base+4:base+30]...)
	s.Original(view, base+4)
	if !bytes.Equal(view[:len(sampleCode)-4], sampleCode[4:]) {
		t.Errorf("Original: % x, want % x", view[:len(sampleCode)-4], sampleCode[4:])
	}
	part := append([]byte(nil), m.data[base+10:base+21]...) // from inside one site into another
	s.Original(part, base+10)
	if !bytes.Equal(part, sampleCode[10:21]) {
		t.Errorf("Original of a part: % x, want % x", part, sampleCode[10:21])
	}

	// Scanning again (an mprotect of patched code) finds nothing new.
	s.Protect(m, base, 0x1000, unix.PROT_READ|unix.PROT_EXEC)
	if len(s.Sites()) != 2 {
		t.Errorf("after a second scan: %d sites", len(s.Sites()))
	}

	// mremap moves the pages and their sites.
	copy(m.data[moved:], m.data[base:base+0x1000])
	s.Remap(base, 0x1000, moved, 0x2000)
	if _, ok := s.Site(base + 8); ok {
		t.Error("a site stayed at the old address after mremap")
	}
	if site, ok := s.Site(moved + 19); !ok || site.Op != Rdseed {
		t.Errorf("the rdseed did not move: %v", s.Sites())
	}
	s.Unmap(moved, 0x2000)
	if len(s.Sites()) != 0 {
		t.Errorf("sites after munmap: %+v", s.Sites())
	}

	// Code written into memory made executable later (a JIT's mprotect).
	copy(m.data[0x20000:], sampleCode)
	s.AfterSyscall(m, unix.SYS_MMAP, [6]uint64{0, 0x1000, unix.PROT_READ | unix.PROT_WRITE, unix.MAP_PRIVATE | unix.MAP_ANONYMOUS}, 0x20000, nil)
	if len(s.Sites()) != 0 {
		t.Errorf("non-executable memory was patched")
	}
	if w := s.AfterSyscall(m, unix.SYS_MPROTECT, [6]uint64{0x20000, 100, unix.PROT_READ | unix.PROT_EXEC}, 0, nil); len(w) != 0 || len(s.Sites()) != 2 {
		t.Errorf("after mprotect(PROT_EXEC): sites %+v, warnings %q", s.Sites(), w)
	}
	// A failed call changes nothing.
	s.AfterSyscall(m, unix.SYS_MUNMAP, [6]uint64{0x20000, 0x1000}, errnoRet(unix.EINVAL), nil)
	if len(s.Sites()) != 2 {
		t.Errorf("a failed munmap dropped sites")
	}

	// Writable and executable memory is patched, with a warning.
	copy(m.data[0x22000:], sampleCode)
	w := s.Map(m, Mapping{Addr: 0x22000, Len: 0x1000, Prot: unix.PROT_READ | unix.PROT_WRITE | unix.PROT_EXEC})
	if len(w) != 1 || !strings.Contains(w[0], "writable and executable") || len(s.Sites()) != 4 {
		t.Errorf("W+X mapping: warnings %q, %d sites", w, len(s.Sites()))
	}

	// Shared memory is never written: the write would reach the file or
	// the other processes.
	copy(m.data[0x24000:], sampleCode)
	w = s.AfterSyscall(m, unix.SYS_MMAP, [6]uint64{0, 0x1000, unix.PROT_READ | unix.PROT_EXEC, unix.MAP_SHARED}, 0x24000, nil)
	if len(w) != 2 || !strings.Contains(w[0], "shared memory") || !bytes.Equal(m.data[0x24000:0x24000+len(sampleCode)], sampleCode) {
		t.Errorf("shared mapping: warnings %q, bytes % x", w, m.data[0x24000:0x24000+len(sampleCode)])
	}

	// A write the kernel refuses leaves the site out, with a warning.
	copy(m.data[0x26000:], sampleCode)
	m.readOnly = true
	w = s.Map(m, Mapping{Addr: 0x26000, Len: 0x1000, Prot: unix.PROT_READ | unix.PROT_EXEC})
	m.readOnly = false
	if len(w) != 2 || !strings.Contains(w[0], "cannot be patched") || len(s.Sites()) != 4 {
		t.Errorf("refused write: warnings %q, %d sites", w, len(s.Sites()))
	}

	// A checkpoint's copy is independent.
	c := s.Clone()
	s.Reset()
	if len(c.Sites()) != 4 || len(s.Sites()) != 0 {
		t.Errorf("clone %d sites, reset space %d", len(c.Sites()), len(s.Sites()))
	}
}

// TestSpaceSweepStopsAtUndecodableBytes: an anonymous mapping is swept from
// its start; bytes that do not decode end the sweep, so a later rdrand is
// missed rather than guessed.
func TestSpaceSweepStopsAtUndecodableBytes(t *testing.T) {
	m := newFakeMem(0x2000)
	code := append([]byte{0x06}, sampleCode...) // push es: invalid in 64-bit mode
	copy(m.data[0x1000:], code)
	var s Space
	s.Map(m, Mapping{Addr: 0x1000, Len: 0x1000, Prot: unix.PROT_EXEC})
	if len(s.Sites()) != 0 || !bytes.Equal(m.data[0x1000:0x1000+len(code)], code) {
		t.Errorf("sites %+v after undecodable bytes", s.Sites())
	}
}

// errnoRet is how a system call returns the error e.
func errnoRet(e unix.Errno) uint64 { return uint64(-int64(e)) }

// countingMem counts the bytes read from it.
type countingMem struct {
	*fakeMem
	read int
}

func (m *countingMem) ReadAt(p []byte, addr uint64) (int, error) {
	n, err := m.fakeMem.ReadAt(p, addr)
	m.read += n
	return n, err
}

// TestFreshMappingsScannedOnce: the second fresh mapping of an image (the
// next process's libc) is patched at the same offsets without being read
// again, not even the sites' own bytes (the scan was of the same file's);
// a mapping of another offset, or one not fresh, is read.
func TestFreshMappingsScannedOnce(t *testing.T) {
	const a, b, c = 0x10000, 0x20000, 0x30000
	m := &countingMem{fakeMem: newFakeMem(0x40000)}
	for _, base := range []int{a, b, c} {
		copy(m.data[base:], sampleCode)
	}
	im := NewImage(func() ([]byte, error) { return nil, errors.New("no file") })
	mapAt := func(s *Space, addr uint64, fresh bool) {
		t.Helper()
		if w := s.Map(m, Mapping{Addr: addr, Len: 0x1000, Prot: unix.PROT_READ | unix.PROT_EXEC, Image: im, Fresh: fresh}); len(w) != 0 {
			t.Errorf("warnings %q", w)
		}
	}
	var first, second, third Space
	mapAt(&first, a, true)
	if m.read == 0 {
		t.Fatal("the first mapping was not read")
	}
	m.read = 0
	mapAt(&second, b, true)
	if m.read != 0 {
		t.Errorf("the second fresh mapping read %d bytes, want none", m.read)
	}
	for i, s := range []*Space{&first, &second} {
		sites := s.Sites()
		base := uint64([]int{a, b}[i])
		if len(sites) != 2 || sites[0].Addr != base+8 || sites[1].Addr != base+19 {
			t.Errorf("mapping %d: sites %+v, want +8 and +19 from %#x", i, sites, base)
		}
		if !bytes.Equal(m.data[base+8:base+10], []byte{0x0f, 0x0b}) {
			t.Errorf("mapping %d not patched: % x", i, m.data[base+8:base+12])
		}
	}
	mapAt(&third, c, false)
	if m.read == 0 || third.Len() != 2 {
		t.Errorf("a mapping that is not fresh: read %d bytes, %d sites; want it read and 2 sites", m.read, third.Len())
	}
}

// cpuidCode asks cpuid, then holds its bytes in a mov's immediate (no
// instruction), then an rdrand.
var cpuidCode = []byte{
	0x53,       // push rbx
	0x31, 0xc0, // xor eax,eax
	0x0f, 0xa2, // 3: cpuid
	0xb8, 0x0f, 0xa2, 0x00, 0x00, // mov eax,0xa20f
	0x48, 0x0f, 0xc7, 0xf0, // 10: rdrand rax
	0x5b, // pop rbx
	0xc3, // ret
}

// TestSpaceTrapsCpuid: with Cpuid (a CPU without CPUID faulting), the
// cpuid instructions are trapped with the rdrands, not the bytes inside
// another instruction; without it, only the rdrand; Untrap puts one back
// and Retrap traps it again.
func TestSpaceTrapsCpuid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cpuid bool
		want  []uint64 // sites, from the code's start
	}{
		{"rdrand only", false, []uint64{10}},
		{"cpuid too", true, []uint64{3, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newFakeMem(0x2000)
			copy(m.data[0x1000:], cpuidCode)
			s := Space{Cpuid: tc.cpuid}
			s.Map(m, Mapping{Addr: 0x1000, Len: 0x1000, Prot: unix.PROT_EXEC})
			var got []uint64
			for _, site := range s.Sites() {
				got = append(got, site.Addr-0x1000)
			}
			if len(got) != len(tc.want) || got[0] != tc.want[0] || got[len(got)-1] != tc.want[len(tc.want)-1] {
				t.Fatalf("sites at %v, want %v", got, tc.want)
			}
			if !bytes.Equal(m.data[0x1005:0x100a], cpuidCode[5:10]) {
				t.Errorf("the mov's immediate was patched: % x", m.data[0x1005:0x100a])
			}
			if !tc.cpuid {
				return
			}
			if !bytes.Equal(m.data[0x1003:0x1005], []byte{0x0f, 0x0b}) {
				t.Errorf("cpuid not trapped: % x", m.data[0x1003:0x1005])
			}
			site, ok := s.Untrap(m, 0x1003)
			if !ok || site.Op != Cpuid || !bytes.Equal(m.data[0x1003:0x1005], []byte{0x0f, 0xa2}) || len(s.Sites()) != 1 {
				t.Fatalf("untrap: %v %+v, memory % x, %d sites", ok, site, m.data[0x1003:0x1005], len(s.Sites()))
			}
			s.Retrap(m, site)
			if _, ok := s.Site(0x1003); !ok || !bytes.Equal(m.data[0x1003:0x1005], []byte{0x0f, 0x0b}) {
				t.Errorf("retrap: memory % x", m.data[0x1003:0x1005])
			}
		})
	}
}

// xgetbvCode reads XCR0, then holds xgetbv's bytes in a mov's immediate.
var xgetbvCode = []byte{
	0x31, 0xc9, // xor ecx,ecx
	0x0f, 0x01, 0xd0, // 2: xgetbv
	0xb8, 0x0f, 0x01, 0xd0, 0x00, // mov eax,0xd0010f
	0x0f, 0xa2, // 10: cpuid
	0xc3, // ret
}

// TestSpaceTrapsXgetbv: with Xgetbv, xgetbv instructions are trapped
// (ud2 and a nop over its three bytes), not the bytes inside another
// instruction, whether cpuid is trapped too or not.
func TestSpaceTrapsXgetbv(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cpuid, xgetbv bool
		want          []uint64 // sites, from the code's start
	}{
		{"neither", false, false, nil},
		{"xgetbv", false, true, []uint64{2}},
		{"both", true, true, []uint64{2, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newFakeMem(0x2000)
			copy(m.data[0x1000:], xgetbvCode)
			s := Space{Cpuid: tc.cpuid, Xgetbv: tc.xgetbv}
			s.Map(m, Mapping{Addr: 0x1000, Len: 0x1000, Prot: unix.PROT_EXEC})
			var got []uint64
			for _, site := range s.Sites() {
				got = append(got, site.Addr-0x1000)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("sites at %v, want %v", got, tc.want)
			}
			if !bytes.Equal(m.data[0x1005:0x100a], xgetbvCode[5:10]) {
				t.Errorf("the mov's immediate was patched: % x", m.data[0x1005:0x100a])
			}
			if tc.xgetbv {
				if site, ok := s.Site(0x1002); !ok || site.Op != Xgetbv || !bytes.Equal(m.data[0x1002:0x1005], []byte{0x0f, 0x0b, 0x90}) {
					t.Errorf("xgetbv not trapped: %v, memory % x", ok, m.data[0x1002:0x1005])
				}
			}
		})
	}
}

// TestForget: forgetting a range drops the sites that overlap it (a long
// remembered window that starts before it too) and cuts the regions it
// covers, leaving their parts outside with their file offsets, as a
// plain pass over every site and region does.
func TestForget(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		s := &Space{}
		for range 40 {
			n := 2 + rng.IntN(3)
			if rng.IntN(8) == 0 {
				n = 30 // a remembered window
			}
			s.addSite(&Site{Addr: uint64(rng.IntN(4096)), Orig: make([]byte, n)})
		}
		for a := uint64(rng.IntN(64)); a < 4096; a += 64 + uint64(rng.IntN(256)) {
			n := 16 + uint64(rng.IntN(48))
			s.addRegion(region{start: a, end: a + n, offset: a * 3})
		}
		lo := uint64(rng.IntN(4096))
		hi := lo + uint64(rng.IntN(600))
		wantSites, wantRegions := forgetPlain(s, lo, hi)
		s.forget(lo, hi)
		if !slices.Equal(s.sites, wantSites) {
			t.Fatalf("round %d: forget(%d, %d) kept %d sites, want %d", round, lo, hi, len(s.sites), len(wantSites))
		}
		if !slices.Equal(s.regions, wantRegions) {
			t.Fatalf("round %d: forget(%d, %d) left regions %+v, want %+v", round, lo, hi, s.regions, wantRegions)
		}
	}
}

// forgetPlain is what forget leaves of s's sites and regions, computed
// with a pass over each.
func forgetPlain(s *Space, lo, hi uint64) ([]*Site, []region) {
	var sites []*Site
	for _, site := range s.sites {
		if site.Addr+uint64(len(site.Orig)) <= lo || site.Addr >= hi {
			sites = append(sites, site)
		}
	}
	var regs []region
	for _, r := range s.regions {
		if r.end <= lo || r.start >= hi {
			regs = append(regs, r)
			continue
		}
		if r.start < lo {
			left := r
			left.end = lo
			regs = append(regs, left)
		}
		if r.end > hi {
			right := r
			right.offset += hi - r.start
			right.start = hi
			regs = append(regs, right)
		}
	}
	return sites, regs
}
