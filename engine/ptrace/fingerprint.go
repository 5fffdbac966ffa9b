package ptrace

import (
	"bytes"
	"debug/elf"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The fingerprint of a point in user code, beyond the general registers and
// the stack window (StackHash): the FPU/SSE registers, where compilers keep
// floating-point loop variables, and the program's global data (the
// executable's writable segments and the brk heap), where programs keep the
// globals that a loop polls or counts in. Two passes of a
// loop at one pc with equal general registers and stack window (a counter
// kept in memory) differ there; with both equal too, the state is the same as
// far as the program's own data goes, and stopping at either is equivalent.

// FPHash hashes the thread's x87 and SSE registers (the FXSAVE area minus
// the last-instruction pointers, which some CPUs save only with a pending
// exception, and the reserved bytes). It is never 0.
func FPHash(tid int) (uint64, error) {
	fx, err := GetFPRegs(tid)
	if err != nil {
		return 0, err
	}
	h := fnv.New64a()
	h.Write(fx[0:5])   // control, status, abridged tag words
	h.Write(fx[24:28]) // MXCSR
	for i := 0; i < 8; i++ {
		h.Write(fx[32+16*i : 32+16*i+10]) // ST0-7 (80 bits each)
	}
	h.Write(fx[160:416]) // XMM0-15
	return h.Sum64() | 1, nil
}

// Range is an address range [Addr, Addr+Len).
type Range struct {
	Addr, Len uint64
}

// maxDataHashed caps how much data DataHash reads.
const maxDataHashed = 1 << 20

// DataRanges returns where the process of thread tid keeps its global data: the writable
// segments (initialised data and bss) of its main executable, then its brk
// heap, up to 1 MiB in all. The executable's are computed from its ELF
// program headers and its first mapping, the heap from its [heap] mapping:
// all of them are the same in recording and replay (ASLR is off, brk is
// replayed), unlike the kernel's view of the other mappings, since replay
// maps files as anonymous memory. tid is any thread of the process: the
// main thread's /proc entries lose the executable once it has exited while
// others live (pthread_exit in main).
func DataRanges(tid int) ([]Range, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", tid))
	if err != nil {
		return nil, fmt.Errorf("data ranges: %w", err)
	}
	img, err := imageOf(exe)
	if err != nil {
		return nil, err
	}
	base, heap, err := scanMaps(tid, exe)
	if err != nil {
		return nil, err
	}
	return img.ranges(base, heap), nil
}

// DataRangesAt is DataRanges for a process whose executable is not the
// file /proc/PID/exe names (replay rebuilt it from the trace): its ELF
// is elfData, mapped from base; key names it in the cache.
func DataRangesAt(tid int, base uint64, key string, elfData []byte) ([]Range, error) {
	img, err := imageFrom(key, elfData)
	if err != nil {
		return nil, err
	}
	_, heap, _ := scanMaps(tid, "")
	return img.ranges(base, heap), nil
}

// ranges places the image's writable segments where it is mapped from
// base, then the heap.
func (img *image) ranges(base uint64, heap Range) []Range {
	var bias uint64
	if img.pie {
		bias = base - img.low
	}
	var out []Range
	var total uint64
	add := func(r Range) {
		if n := min(r.Len, maxDataHashed-total); n > 0 {
			out = append(out, Range{Addr: r.Addr, Len: n})
			total += n
		}
	}
	for _, r := range img.data {
		add(Range{Addr: bias + r.Addr, Len: r.Len})
	}
	if heap.Len > 0 {
		add(heap)
	}
	return out
}

// image is what DataRanges needs of an executable: whether it is
// position-independent, its lowest load address and its writable segments.
type image struct {
	pie  bool
	low  uint64
	data []Range
	mod  time.Time
	size int64
}

// images caches image by path (and modification time): fingerprints are
// taken at every preemption.
var images = struct {
	sync.Mutex
	m map[string]*image
}{m: map[string]*image{}}

// imageOf reads (or recalls) the image of the executable at path.
func imageOf(path string) (*image, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("data ranges: %w", err)
	}
	images.Lock()
	defer images.Unlock()
	if img := images.m[path]; img != nil && img.mod.Equal(st.ModTime()) && img.size == st.Size() {
		return img, nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data ranges: %w", err)
	}
	defer f.Close()
	img := parseImage(f)
	img.mod, img.size = st.ModTime(), st.Size()
	images.m[path] = img
	return img, nil
}

// imageFrom reads (or recalls) the image of an executable held in data,
// cached under key.
func imageFrom(key string, data []byte) (*image, error) {
	images.Lock()
	defer images.Unlock()
	if img := images.m[key]; img != nil {
		return img, nil
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("data ranges: %s: %w", key, err)
	}
	img := parseImage(f)
	images.m[key] = img
	return img, nil
}

// parseImage reads what DataRanges needs of an ELF file.
func parseImage(f *elf.File) *image {
	img := &image{pie: f.Type == elf.ET_DYN, low: ^uint64(0)}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		img.low = min(img.low, p.Vaddr&^(pageSize-1))
		if p.Flags&elf.PF_W != 0 && p.Memsz > 0 {
			img.data = append(img.data, Range{Addr: p.Vaddr, Len: p.Memsz})
		}
	}
	return img
}

// pageSize is the page size: load segments start on page boundaries.
const pageSize = 4096

// scanMaps returns the start of the mapping of file path at offset 0, and
// the [heap] mapping (zero if none).
func scanMaps(pid int, path string) (base uint64, heap Range, err error) {
	maps, err := ReadMaps(pid)
	if err != nil {
		return 0, heap, fmt.Errorf("data ranges: %w", err)
	}
	found := path == ""
	for _, m := range maps {
		switch {
		case m.Path == "[heap]" && m.End > m.Start:
			heap = Range{Addr: m.Start, Len: m.End - m.Start}
		case !found && m.Path == path && m.Offset == 0:
			base, found = m.Start, true
		}
	}
	if !found {
		return 0, heap, fmt.Errorf("data ranges: %s is not mapped in %d", path, pid)
	}
	return base, heap, nil
}

// DataHash hashes the memory of the ranges (what cannot be read counts as
// absent) with FNV-1a, as traces made before DataSum hold it. It is never
// 0.
func (m *Mem) DataHash(ranges []Range) uint64 {
	h := fnv.New64a()
	m.readData(ranges, func(b []byte) { h.Write(b) })
	return h.Sum64() | 1
}

// DataSum is DataHash with the CRC-32C and the CRC-32 (IEEE) of the bytes
// instead of FNV-1a, which reads a byte at a time: both CRCs run in
// hardware, a tenth of the time on the megabyte of data a preemption
// point of a large program hashes (gcc's cc1: a millisecond a point, in
// recording and at each pass replay compares). It is never 0.
func (m *Mem) DataSum(ranges []Range) uint64 {
	var c, i uint32
	m.readData(ranges, func(b []byte) {
		c = crc32.Update(c, castagnoli, b)
		i = crc32.Update(i, crc32.IEEETable, b)
	})
	return (uint64(c)<<32 | uint64(i)) | 1
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readData gives each range's bytes (those that can be read) to use.
func (m *Mem) readData(ranges []Range, use func([]byte)) {
	var buf []byte
	for _, r := range ranges {
		if uint64(cap(buf)) < r.Len {
			buf = make([]byte, r.Len)
		}
		n, _ := m.ReadAt(buf[:r.Len], r.Addr)
		use(buf[:n])
	}
}

// StackWindow reads the stack window StackHash hashes, and returns its
// address.
func (m *Mem) StackWindow(rsp uint64) (uint64, []byte) {
	buf := make([]byte, stackBelow+stackAbove)
	n, _ := m.ReadAt(buf, rsp-stackBelow)
	return rsp - stackBelow, buf[:n]
}

// deepStack bounds how much of the stack above the window an approximate
// preemption's fingerprint takes too (DeepStackLen).
const deepStack = 4096

// DeepStackLen is how many bytes of the stack from rsp up a fingerprint
// takes, besides the window's hash: the window's part above rsp and the
// frames of the point's callers, which hold the counters of the loops
// around it (a qsort in a loop passes the same comparison with the same
// registers and stack window in every iteration); up to deepStack bytes
// past the window, within the mapping that ends at end, and short of
// fsBase: a pthread's control block (its tid, another one in replay) sits
// at the top of its stack. Kept whole, not hashed, so that replay can find
// the word that tells passes apart (replay's tell).
func DeepStackLen(rsp, end, fsBase uint64) int {
	hi := min(rsp+stackAbove+deepStack, end)
	if fsBase > rsp && fsBase < hi {
		hi = fsBase
	}
	if hi <= rsp {
		return 0
	}
	return int(hi - rsp)
}

// wideStack bounds how far from rsp the stack an approximate preemption's
// wide sum covers reaches (WideStack).
const wideStack = 64 << 10

// WideStack is the stack an approximate preemption's fingerprint sums
// beyond the words it keeps whole (DeepStackLen): from where those end up
// to wideStack bytes from rsp, within the mapping that ends at end and
// short of fsBase. The frames of callers further up tell apart passes of
// code run once per item of a loop far above it with the same registers
// and nearby stack: gdb's name parser, run for every symbol its worker
// threads index, passed one point dozens of times in a slice, and replay
// stopped its thread at the wrong one. Empty where the words kept whole
// reach the end already.
func WideStack(rsp, end, fsBase uint64) Range {
	lo := rsp + stackAbove + deepStack
	hi := min(rsp+wideStack, end)
	if fsBase > rsp && fsBase < hi {
		hi = fsBase
	}
	if hi <= lo {
		return Range{}
	}
	return Range{Addr: lo, Len: hi - lo}
}

// WideSum is the fingerprint word of the stack in r: its CRC-32C in the
// high half and its length in the low half, so that replay sums the same
// bytes without looking up the mapping (WideStackOf). 0 where r is empty
// or cannot be read whole.
func (m *Mem) WideSum(r Range) uint64 {
	if r.Len == 0 || r.Len > wideStack {
		return 0
	}
	buf := make([]byte, r.Len)
	if n, err := m.ReadAt(buf, r.Addr); err != nil || n != len(buf) {
		return 0
	}
	return uint64(crc32.Checksum(buf, castagnoli))<<32 | r.Len
}

// WideStackOf is the range a wide sum taken at rsp covers.
func WideStackOf(rsp, sum uint64) Range {
	return Range{Addr: rsp + stackAbove + deepStack, Len: sum & 0xffffffff}
}

// SigMask reads the blocked signal mask of a stopped tracee
// (PTRACE_GETSIGMASK: one system call, where BlockedMask reads and parses
// a /proc file, which the recorder would do at every held signal).
func SigMask(tid int) (uint64, error) {
	var mask uint64
	err := ptracePtr(unix.PTRACE_GETSIGMASK, tid, unsafe.Sizeof(mask), unsafe.Pointer(&mask))
	return mask, wrap("getsigmask", tid, err)
}
