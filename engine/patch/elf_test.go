package patch

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/internal/testprog/cc"
	"golang.org/x/sys/unix"
)

// randSource has rdrand and rdseed at each size in functions of each kind
// (static, exported, main), and unless NO_TABLE a constant table in .text
// (as OpenSSL's assembly has) holding rdrand's and rdseed's encodings.
const randSource = `
#include <immintrin.h>
static __attribute__((noinline)) unsigned long long r64(void) {
	unsigned long long v;
	while (!_rdrand64_step(&v))
		;
	return v;
}
static __attribute__((noinline)) unsigned s32(void) {
	unsigned v;
	while (!_rdseed32_step(&v))
		;
	return v;
}
__attribute__((noinline)) unsigned short r16(void) {
	unsigned short v;
	_rdrand16_step(&v);
	return v;
}
#ifndef NO_TABLE
__asm__(".text\n.balign 16\n.type text_table,@object\ntext_table:\n"
	".byte 0xff,0xff,0xff,0xff,0x0f,0xc7,0xf0,0x48,0x0f,0xc7,0xf8,0x0f,0xc7,0xf1\n.size text_table,14\n.balign 16\n");
#endif
int main(void) {
	unsigned long long x;
	_rdrand64_step(&x);
	return (int)(r64() + s32() + r16() + x);
}
`

// compileRand builds randSource with flags, and returns the binary and the
// addresses of its rdrand and rdseed instructions (objdump's, outside the
// data object).
func compileRand(t *testing.T, name string, flags ...string) (string, []uint64) {
	key := name + " " + strings.Join(flags, " ")
	if c, ok := compiled[key]; ok {
		return c.bin, c.sites
	}
	bin, sites := compileRandOnce(t, name, flags...)
	compiled[key] = compiledRand{bin, sites}
	return bin, sites
}

// compiled caches compileRand's binaries for the package's tests (in a
// directory of their own: t.TempDir's goes with its test).
var compiled = map[string]compiledRand{}

type compiledRand struct {
	bin   string
	sites []uint64
}

func compileRandOnce(t *testing.T, name string, flags ...string) (string, []uint64) {
	for _, tool := range []string{"gcc", "objdump", "strip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	dir, err := os.MkdirTemp("", "rewind-patch-test")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "rand.c")
	if err := os.WriteFile(src, []byte(randSource), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	cc.Build(t, src, bin, append([]string{"-O2", "-mrdrnd", "-mrdseed"}, flags...)...)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var table [2]uint64
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == "text_table" {
			table = [2]uint64{s.Value, s.Value + s.Size}
		}
	}
	out, err := exec.Command("objdump", "-d", "-w", "-j", ".text", bin).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	var want []uint64
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "\trdrand") && !strings.Contains(line, "\trdseed") {
			continue
		}
		a, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		addr, err := strconv.ParseUint(a, 16, 64)
		if err != nil {
			t.Fatalf("objdump line %q", line)
		}
		if addr < table[0] || addr >= table[1] {
			want = append(want, addr)
		}
	}
	if len(want) < 4 {
		t.Fatalf("objdump lists %d rdrand/rdseed in the compiled code:\n%s", len(want), out)
	}
	return bin, want
}

// readELF reads the ELF file at path: its bytes, and what they say.
func readELF(t testing.TB, path string) ([]byte, *elf.File) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data, f
}

// mapText puts the executable segment of the file at its link address in a
// fake address space and patches it as an mmap of the file would.
func mapText(t *testing.T, path string) (*fakeMem, *Space, []byte) {
	data, f := readELF(t, path)
	m := newFakeMem(len(data) + 0x10000)
	var s Space
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 {
			continue
		}
		addr, off := p.Vaddr&^0xfff, p.Off&^0xfff
		length := pageUp(p.Vaddr + p.Filesz - addr)
		copy(m.data[addr:addr+length], data[off:])
		im := NewImage(func() ([]byte, error) { return data, nil })
		if w := s.Map(m, Mapping{Addr: addr, Len: length, Prot: unix.PROT_READ | unix.PROT_EXEC, Image: im, Offset: off}); len(w) > 0 {
			t.Errorf("warnings: %q", w)
		}
	}
	return m, &s, data
}

func siteAddrs(s *Space) []uint64 {
	var out []uint64
	for _, site := range s.Sites() {
		out = append(out, site.Addr)
	}
	return out
}

// TestSitesInCompiledCode patches exactly the rdrand and rdseed the compiler
// emitted, found through the symbol table, through the unwind tables of a
// stripped binary, and in a binary with neither (only the C runtime's start
// code has unwind tables: the rest is swept, as valid code throughout); a
// constant table in .text holding their encodings is left alone, as a data
// object where it has a symbol, as bytes that are not all valid code where
// it has none.
func TestSitesInCompiledCode(t *testing.T) {
	bin, want := compileRand(t, "rand")
	stripped := bin + ".stripped"
	if out, err := exec.Command("strip", "--strip-all", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	bare, bareWant := compileRand(t, "bare", "-DNO_TABLE", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-s")
	for _, c := range []struct {
		name string
		path string
		want []uint64
	}{
		{"symbols", bin, want},
		{"stripped (unwind tables)", stripped, want},
		{"no symbols, no unwind tables (linear sweep)", bare, bareWant},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, s, data := mapText(t, c.path)
			if got := siteAddrs(s); !slices.Equal(got, c.want) {
				t.Errorf("sites %#x, want %#x", got, c.want)
			}
			// The memory holds traps; the debugger's view, the program's code.
			for _, site := range s.Sites() {
				if !bytes.Equal(m.data[site.Addr:site.Addr+2], ud2[:]) {
					t.Errorf("%#x: % x, not a ud2", site.Addr, m.data[site.Addr:site.Addr+4])
				}
			}
			f, _ := elf.NewFile(bytes.NewReader(data))
			text := f.Section(".text")
			orig, _ := text.Data()
			view := append([]byte(nil), m.data[text.Addr:text.Addr+text.Size]...)
			s.Original(view, text.Addr)
			if !bytes.Equal(view, orig) {
				t.Error("Original does not give back the file's .text")
			}
		})
	}
}

// TestFDERanges: the unwind tables give every compiled function's exact
// bounds, which is what a stripped binary has left.
func TestFDERanges(t *testing.T) {
	bin, _ := compileRand(t, "rand")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	eh := f.Section(".eh_frame")
	data, err := eh.Data()
	if err != nil {
		t.Fatal(err)
	}
	fdes, err := fdeRanges(data, eh.Addr)
	if err != nil {
		t.Fatalf("fdeRanges: %v (%d read)", err, len(fdes))
	}
	syms, _ := f.Symbols()
	for _, name := range []string{"r64", "s32", "r16", "main"} {
		found := false
		for _, s := range syms {
			if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				found = slices.Contains(fdes, span{start: s.Value, end: s.Value + s.Size})
				if !found {
					t.Errorf("%s [%#x, %#x) has no FDE of its bounds; FDEs %+v", name, s.Value, s.Value+s.Size, fdes)
				}
			}
		}
		if !found {
			t.Errorf("no function %s with an FDE", name)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, c := range compiled {
		os.RemoveAll(filepath.Dir(c.bin))
	}
	os.Exit(code)
}
