package patch

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// ownVDSO reads this process's vDSO (every process of the kernel has the same
// image) through /proc/self/mem.
func ownVDSO(t *testing.T) (*VDSOImage, uint64) {
	auxv, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		t.Fatal(err)
	}
	var base uint64
	for i := 0; i+16 <= len(auxv); i += 16 {
		if binary.LittleEndian.Uint64(auxv[i:]) == 33 { // AT_SYSINFO_EHDR
			base = binary.LittleEndian.Uint64(auxv[i+8:])
		}
	}
	if base == 0 {
		t.Skip("this kernel maps no vDSO")
	}
	f, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := ReadVDSO(fileMem{f}, base)
	if err != nil {
		t.Fatalf("read the vDSO: %v", err)
	}
	return v, base
}

type fileMem struct{ f *os.File }

func (m fileMem) ReadAt(p []byte, addr uint64) (int, error)  { return m.f.ReadAt(p, int64(addr)) }
func (m fileMem) WriteAt(p []byte, addr uint64) (int, error) { return 0, os.ErrPermission }

// TestVDSOStubs: each x86-64 vDSO function gets a stub making its system
// call (getrandom and unknown ones return -ENOSYS), aliases share one, and
// the stubs depend only on the symbols: patching a copy of the image in
// memory writes them at the functions' addresses.
func TestVDSOStubs(t *testing.T) {
	v, base := ownVDSO(t)
	stubs, unknown, err := v.Stubs(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(unknown) > 0 {
		t.Logf("functions this kernel's vDSO exports that rewind does not know: %v", unknown)
	}
	byFunc := map[string]Stub{}
	addrs := map[uint64]bool{}
	for _, st := range stubs {
		if addrs[st.Addr] {
			t.Errorf("two stubs at %#x", st.Addr)
		}
		addrs[st.Addr] = true
		byFunc[st.Func] = st
	}
	for name, nr := range map[string]int{"clock_gettime": unix.SYS_CLOCK_GETTIME, "gettimeofday": unix.SYS_GETTIMEOFDAY,
		"time": unix.SYS_TIME, "getcpu": unix.SYS_GETCPU, "clock_getres": unix.SYS_CLOCK_GETRES} {
		st, ok := byFunc[name]
		if !ok {
			t.Errorf("no stub for %s", name)
			continue
		}
		if want := syscallStub(nr); !bytes.Equal(st.Code, want) {
			t.Errorf("%s: stub % x, want % x (mov $%d,%%eax; syscall; ret)", name, st.Code, want, nr)
		}
	}
	if st, ok := byFunc["getrandom"]; ok && !bytes.Equal(st.Code, enosysStub) {
		t.Errorf("getrandom: stub % x, want -ENOSYS", st.Code)
	}

	// Patch a copy of the image placed at another address.
	const at = 0x100000
	m := newFakeMem(at + len(v.Data) + 0x1000)
	copy(m.data[at:], v.Data)
	if _, _, err := PatchVDSO(m, at); err != nil {
		t.Fatal(err)
	}
	for _, f := range v.Funcs {
		got := m.data[at+f.Offset : at+f.Offset+8]
		if name := BaseName(f.Name); vdsoCalls[name] != 0 && !bytes.Equal(got, syscallStub(vdsoCalls[name])) {
			t.Errorf("%s at +%#x: % x", f.Name, f.Offset, got)
		}
	}
}

// TestParseVDSOErrors: what is not a vDSO is refused with an error.
func TestParseVDSOErrors(t *testing.T) {
	m := newFakeMem(0x4000)
	if _, err := ReadVDSO(m, 0x1000); err == nil {
		t.Error("zeros read as a vDSO")
	}
	if _, err := ParseVDSO([]byte("\x7fELF garbage")); err == nil {
		t.Error("garbage parsed as a vDSO")
	}
}

// TestReadVDSOAgain: a vDSO read again is the image parsed before while its
// bytes are the same, wherever it is mapped, and parsed anew once they
// differ (another kernel's, a 32-bit process's): what the image says always
// comes from the bytes at hand.
func TestReadVDSOAgain(t *testing.T) {
	v, _ := ownVDSO(t)
	const at = 0x3000
	m := newFakeMem(at + len(v.Data) + 0x1000)
	copy(m.data[at:], v.Data)
	again, err := ReadVDSO(m, at)
	if err != nil {
		t.Fatal(err)
	}
	if again != v {
		t.Error("the same bytes were parsed again")
	}
	// A changed byte in an exported function's code: the old image must
	// not be given for it.
	f := v.Funcs[0]
	m.data[at+int(f.Offset)] ^= 0xff
	changed, err := ReadVDSO(m, at)
	if err != nil {
		t.Fatal(err)
	}
	if changed == v || !bytes.Equal(changed.Data, m.data[at:at+len(changed.Data)]) {
		t.Error("an image with other bytes was given the old one")
	}
	// Nothing at the address: refused, not the last image.
	if _, err := ReadVDSO(newFakeMem(0x4000), 0x1000); err == nil {
		t.Error("zeros read as a vDSO after a real one")
	}
}
