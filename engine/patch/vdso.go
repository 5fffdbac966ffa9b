package patch

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// maxVDSO bounds the vDSO image read from a process (it is two pages today).
const maxVDSO = 1 << 20

// VDSOFunc is a function the vDSO exports.
type VDSOFunc struct {
	Name   string // as exported (__vdso_clock_gettime, clock_gettime…)
	Offset uint64 // from the image's start
	Size   uint64
}

// VDSOImage is a parsed vDSO.
type VDSOImage struct {
	Data  []byte
	Funcs []VDSOFunc // by offset, then name
}

// SHA256 is the hex digest of the image: two kernels with the same vDSO
// bytes have the same one.
func (v *VDSOImage) SHA256() string {
	sum := sha256.Sum256(v.Data)
	return hex.EncodeToString(sum[:])
}

// lastVDSO is the vDSO ReadVDSO parsed last: every process of a recording
// maps the same one, which is then read in one go and compared rather than
// read piece by piece and parsed again at each exec.
var lastVDSO atomic.Pointer[VDSOImage]

// ReadVDSO reads and parses the vDSO mapped at base: its ELF header says
// how far its loaded segments reach. The image returned may be shared
// with other callers: it is not to be changed.
func ReadVDSO(m Memory, base uint64) (*VDSOImage, error) {
	if last := lastVDSO.Load(); last != nil {
		data := make([]byte, len(last.Data))
		if n, err := m.ReadAt(data, base); err == nil && n == len(data) && bytes.Equal(data, last.Data) {
			return last, nil
		}
	}
	v, err := readVDSO(m, base)
	if err == nil {
		lastVDSO.Store(v)
	}
	return v, err
}

// readVDSO is ReadVDSO without the last image.
func readVDSO(m Memory, base uint64) (*VDSOImage, error) {
	var eh [64]byte
	if _, err := m.ReadAt(eh[:], base); err != nil {
		return nil, fmt.Errorf("read the vDSO's ELF header: %w", err)
	}
	if !bytes.HasPrefix(eh[:], []byte(elf.ELFMAG)) || elf.Class(eh[elf.EI_CLASS]) != elf.ELFCLASS64 {
		return nil, errors.New("the vDSO is not a 64-bit ELF image")
	}
	phoff := binary.LittleEndian.Uint64(eh[32:])
	phentsize := uint64(binary.LittleEndian.Uint16(eh[54:]))
	phnum := uint64(binary.LittleEndian.Uint16(eh[56:]))
	if phentsize < 56 || phnum == 0 || phnum > 64 || phoff > maxVDSO {
		return nil, errors.New("the vDSO's program headers are malformed")
	}
	ph := make([]byte, phentsize*phnum)
	if _, err := m.ReadAt(ph, base+phoff); err != nil {
		return nil, fmt.Errorf("read the vDSO's program headers: %w", err)
	}
	// The image is linked at its first segment's address: its size is
	// where the last loaded segment ends, and the section headers (which
	// debug/elf needs for the symbols) lie within it.
	var first, end uint64
	haveFirst := false
	for i := uint64(0); i < phnum; i++ {
		p := ph[i*phentsize:]
		if elf.ProgType(binary.LittleEndian.Uint32(p)) != elf.PT_LOAD {
			continue
		}
		vaddr, filesz := binary.LittleEndian.Uint64(p[16:]), binary.LittleEndian.Uint64(p[32:])
		if !haveFirst {
			first, haveFirst = vaddr, true
		}
		end = max(end, vaddr+filesz)
	}
	shoff := binary.LittleEndian.Uint64(eh[40:])
	shentsize, shnum := uint64(binary.LittleEndian.Uint16(eh[58:])), uint64(binary.LittleEndian.Uint16(eh[60:]))
	size := max(end-first, shoff+shentsize*shnum)
	if !haveFirst || size > maxVDSO || size == 0 {
		return nil, errors.New("the vDSO has no loadable segment of a sensible size")
	}
	data := make([]byte, size)
	if _, err := m.ReadAt(data, base); err != nil {
		return nil, fmt.Errorf("read the vDSO: %w", err)
	}
	return ParseVDSO(data)
}

// ParseVDSO reads the functions a vDSO image exports.
func ParseVDSO(data []byte) (*VDSOImage, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("parse the vDSO: %w", err)
	}
	defer f.Close()
	var first uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			first = p.Vaddr
			break
		}
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("the vDSO's symbols: %w", err)
	}
	v := &VDSOImage{Data: data}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || s.Value < first {
			continue
		}
		v.Funcs = append(v.Funcs, VDSOFunc{Name: s.Name, Offset: s.Value - first, Size: s.Size})
	}
	if len(v.Funcs) == 0 {
		return nil, errors.New("the vDSO exports no function")
	}
	sort.Slice(v.Funcs, func(i, j int) bool {
		if v.Funcs[i].Offset != v.Funcs[j].Offset {
			return v.Funcs[i].Offset < v.Funcs[j].Offset
		}
		return v.Funcs[i].Name < v.Funcs[j].Name
	})
	return v, nil
}

// vdsoCalls maps a vDSO function (without its __vdso_ or __kernel_ prefix)
// to the system call that does the same with the same arguments. Others get
// a stub that returns -ENOSYS.
var vdsoCalls = map[string]int{
	"clock_gettime": unix.SYS_CLOCK_GETTIME,
	"gettimeofday":  unix.SYS_GETTIMEOFDAY,
	"time":          unix.SYS_TIME,
	"getcpu":        unix.SYS_GETCPU,
	"clock_getres":  unix.SYS_CLOCK_GETRES,
}

// vdsoNoSys are the functions known to have no system call equivalent that
// their callers need: they return -ENOSYS and the callers fall back.
// getrandom's first call asks for the size of its per-thread state, and a
// failure there makes glibc and the Go runtime use the getrandom system call;
// sgx_enter_enclave fails as on a machine without SGX.
var vdsoNoSys = map[string]bool{"getrandom": true, "sgx_enter_enclave": true}

// BaseName strips the prefix the vDSO's exports have on some architectures.
func BaseName(name string) string {
	for _, p := range []string{"__vdso_", "__kernel_"} {
		if n, ok := strings.CutPrefix(name, p); ok {
			return n
		}
	}
	return name
}

// Stub is code written over a vDSO function.
type Stub struct {
	Addr uint64
	Code []byte
	Func string // the base name
}

// Stub code: mov $nr, %eax; syscall; ret — and mov $-ENOSYS, %rax; ret.
// Both are 8 bytes, smaller than any vDSO function. stubCallEnd is the
// offset after the syscall instruction (a VDSOSite's RIP).
const stubCallEnd = 7

func syscallStub(nr int) []byte {
	b := []byte{0xb8, 0, 0, 0, 0, 0x0f, 0x05, 0xc3}
	binary.LittleEndian.PutUint32(b[1:], uint32(nr))
	return b
}

var enosysStub = []byte{0x48, 0xc7, 0xc0, 0xda, 0xff, 0xff, 0xff, 0xc3} // -38

// Stubs returns the code to write over each exported function of the vDSO
// mapped at base, one per address (aliases share it), and the names of the
// functions it does not know (stubbed with -ENOSYS). It depends only on the
// symbols' names and addresses, never on the functions' code, so that a
// replay on another kernel patches its own vDSO the same way.
func (v *VDSOImage) Stubs(base uint64) (stubs []Stub, unknown []string, err error) {
	done := map[uint64]bool{}
	for _, f := range v.Funcs {
		name := BaseName(f.Name)
		nr, isCall := vdsoCalls[name]
		if !isCall && !vdsoNoSys[name] && !done[f.Offset] {
			unknown = append(unknown, f.Name)
		}
		if done[f.Offset] {
			continue
		}
		code := enosysStub
		if isCall {
			code = syscallStub(nr)
		}
		if f.Size < uint64(len(code)) || f.Offset+uint64(len(code)) > uint64(len(v.Data)) {
			return nil, nil, fmt.Errorf("the vDSO's %s is %d bytes, too small for a %d-byte stub", f.Name, f.Size, len(code))
		}
		done[f.Offset] = true
		stubs = append(stubs, Stub{Addr: base + f.Offset, Code: code, Func: name})
	}
	return stubs, unknown, nil
}

// VDSOSite is a system call a stub of PatchVDSO's makes: the address
// after its syscall instruction and the call's number. Each is a site of
// the shape the hook serves (mov $nr,%eax; syscall), which the recorder
// patches at the exec's exit, before the program's first clock read.
type VDSOSite struct {
	RIP uint64
	Nr  uint32
}

// PatchVDSO replaces every function of the vDSO mapped at base with a
// stub making the real system call, so that the recorder sees clock reads.
// The stubs are not sites: the debugger shows them, as they are what runs.
// It returns the system calls the stubs make, and the functions it did not
// know (their stubs return -ENOSYS).
func PatchVDSO(m Memory, base uint64) (sites []VDSOSite, unknown []string, err error) {
	v, err := ReadVDSO(m, base)
	if err != nil {
		return nil, nil, err
	}
	stubs, unknown, err := v.Stubs(base)
	if err != nil {
		return nil, nil, err
	}
	for _, st := range stubs {
		if nr, ok := vdsoCalls[st.Func]; ok {
			sites = append(sites, VDSOSite{RIP: st.Addr + stubCallEnd, Nr: uint32(nr)})
		}
	}
	if b, ok := m.(batcher); ok {
		// A write for the page or two of them rather than one a stub.
		w := b.Writes()
		for _, st := range stubs {
			w.Add(st.Addr, st.Code)
		}
		if err := w.Flush(); err != nil {
			return nil, nil, fmt.Errorf("patch the vDSO: %w", err)
		}
		return sites, unknown, nil
	}
	for _, st := range stubs {
		if _, err := m.WriteAt(st.Code, st.Addr); err != nil {
			return nil, nil, fmt.Errorf("patch the vDSO's %s: %w", st.Func, err)
		}
	}
	return sites, unknown, nil
}
