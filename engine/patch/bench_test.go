package patch

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkMapLibrary measures what patching costs when a library's code
// is mapped (at every exec and dlopen, in recording and in replay): the
// byte search for candidates, and for libstdc++, which has rdrand and
// rdseed, parsing its symbols and unwind tables and decoding the functions
// that hold one.
//
//	go test -run XXX -bench MapLibrary ./engine/patch
func BenchmarkMapLibrary(b *testing.B) {
	for _, lib := range []string{"libc.so.6", "libstdc++.so.6"} {
		out, err := exec.Command("gcc", "-print-file-name="+lib).Output()
		path := strings.TrimSpace(string(out))
		if err != nil || !filepath.IsAbs(path) {
			b.Logf("gcc does not find %s", lib)
			continue
		}
		data, f := readELF(b, path)
		var text *elf.Prog
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
				text = p
			}
		}
		addr, off := text.Vaddr&^0xfff, text.Off&^0xfff
		length := pageUp(text.Vaddr + text.Filesz - addr)
		orig := make([]byte, addr+length)
		copy(orig[addr:], data[off:])
		m := &fakeMem{data: make([]byte, len(orig))}
		b.Run(lib, func(b *testing.B) {
			b.SetBytes(int64(length))
			sites := 0
			for b.Loop() {
				copy(m.data, orig)
				var s Space
				im := NewImage(func() ([]byte, error) { return data, nil })
				s.Map(m, Mapping{Addr: addr, Len: length, Prot: unix.PROT_READ | unix.PROT_EXEC, Image: im, Offset: off})
				sites = len(s.Sites())
			}
			b.ReportMetric(float64(sites), "sites")
		})
	}
}

// BenchmarkScanJumps measures the scan for where direct jumps and calls
// land, made once per image at its first patched window: for gcc's cc1
// (25 MB of code) it was most of what a make under record spent.
//
//	go test -run XXX -bench ScanJumps ./engine/patch
func BenchmarkScanJumps(b *testing.B) {
	out, err := exec.Command("gcc", "-print-prog-name=cc1").Output()
	path := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(path) {
		b.Skip("gcc does not find cc1")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	l := ParseLayout(data)
	if l == nil {
		b.Fatal("no layout")
	}
	var size uint64
	for _, s := range l.sections {
		size += s.size
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		scanJumps(l, data)
	}
}
