package patch

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestPickWindow: the window a cpuid's patch replaces is the smallest run
// of whole instructions around it as long as a jump, none of which but the
// first is a jump's target, and only instructions that run the same
// anywhere besides the cpuid.
func TestPickWindow(t *testing.T) {
	mov4 := []byte{0xb8, 0x04, 0x00, 0x00, 0x00} // mov $4,%eax
	xor := []byte{0x31, 0xc9}                    // xor %ecx,%ecx
	cpuid := []byte{0x0f, 0xa2}
	and := []byte{0x83, 0xe0, 0x1f}                     // and $0x1f,%eax
	store := []byte{0x89, 0x05, 0x10, 0x00, 0x00, 0x00} // mov %eax,0x10(%rip)
	je := []byte{0x74, 0x02}                            // je +2
	ret := []byte{0xc3}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	const at = 0x1000
	site := uint64(at + len(mov4) + len(xor))
	tests := []struct {
		name    string
		code    []byte
		targets []uint64
		want    []byte // the window's bytes; nil: none
	}{
		{"the cpuid and what follows", cat(mov4, xor, cpuid, and, ret), nil, cat(cpuid, and)},
		{"what follows is a target", cat(mov4, xor, cpuid, and, ret), []uint64{site + 2}, cat(mov4, xor, cpuid)},
		{"the cpuid is a target", cat(mov4, xor, cpuid, and, ret), []uint64{site}, cat(cpuid, and)},
		{"the cpuid and the xor are targets", cat(mov4, xor, cpuid, and, ret), []uint64{site, site - 2, site + 2}, nil},
		{"rip-relative after", cat(mov4, xor, cpuid, store, ret), nil, cat(cpuid, store)},
		{"a branch after, a target before", cat(mov4, xor, cpuid, je, ret), []uint64{site - 2}, nil},
		{"a branch after", cat(mov4, xor, cpuid, je, ret), nil, cat(mov4, xor, cpuid)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			targets := map[uint64]bool{}
			for _, a := range tc.targets {
				targets[a] = true
			}
			lo, hi, ok := pickWindow(tc.code, at, site, 2, false, targets)
			switch {
			case tc.want == nil && ok:
				t.Errorf("window % x, want none", tc.code[lo:hi])
			case tc.want != nil && !ok:
				t.Errorf("no window, want % x", tc.want)
			case ok && !bytes.Equal(tc.code[lo:hi], tc.want):
				t.Errorf("window % x, want % x", tc.code[lo:hi], tc.want)
			}
		})
	}
}

// TestWindowMove: a window's code copied elsewhere reaches the same
// targets relative to rip, or says it cannot.
func TestWindowMove(t *testing.T) {
	w := Window{Start: 0x1000, Code: []byte{0x0f, 0xa2, 0x89, 0x05, 0x10, 0x00, 0x00, 0x00}, Trap: 0, Len: 2, Rel: []int{4}}
	b, ok := w.Move(2, 8, 0x3000)
	// mov %eax,0x10(%rip) at 0x1002 writes 0x1018; at 0x3000, 0x1018 is
	// 0x1018-0x3006 away.
	if !ok || !bytes.Equal(b, []byte{0x89, 0x05, 0x12, 0xe0, 0xff, 0xff}) {
		t.Errorf("moved to 0x3000: % x, %v", b, ok)
	}
	if _, ok := w.Move(2, 8, 0x1000+1<<32); ok {
		t.Errorf("moved 4 GiB away: the displacement cannot reach")
	}
}

// TestSwitchCases: the sweep of a function with a switch counts its cases
// (the table's entries, bounded by a cmp and ja or by an and) as targets,
// with the table's lea by the jump or earlier; an indirect jump it cannot
// read makes the function opaque.
func TestSwitchCases(t *testing.T) {
	const code, table = 0x1000, 0x2000
	le := binary.LittleEndian
	lea := func(next uint64) []byte { // lea table(%rip),%rdx
		return le.AppendUint32([]byte{0x48, 0x8d, 0x15}, uint32(table-next))
	}
	cmp := []byte{0x83, 0xf8, 0x02}                                      // cmp $2,%eax
	jump := []byte{0x48, 0x63, 0x04, 0x82, 0x48, 0x01, 0xd0, 0xff, 0xe0} // movslq (%rdx,%rax,4),%rax; add %rdx,%rax; jmp *%rax
	tests := []struct {
		name  string
		build func() []byte
		ok    bool
	}{
		{"lea by the jump", func() []byte {
			b := append([]byte{}, cmp...)
			b = append(b, 0x77, 0x13) // ja default
			b = append(b, lea(code+uint64(len(b))+7)...)
			return b
		}, true},
		{"lea before", func() []byte {
			b := lea(code + 7)
			b = append(b, cmp...)
			b = append(b, 0x77, 0x0c)
			return b
		}, true},
		{"and bound", func() []byte { // lea; shr $0,%eax; and $2,%eax
			b := lea(code + 7)
			return append(b, 0xc1, 0xe8, 0x00, 0x83, 0xe0, 0x02)
		}, true},
		{"and bound by the jump", func() []byte { // and $2,%eax; lea
			b := []byte{0x83, 0xe0, 0x02}
			return append(b, lea(code+uint64(len(b))+7)...)
		}, true},
		{"and of a byte register", func() []byte { // lea; and $2,%al
			b := lea(code + 7)
			return append(b, 0x24, 0x02)
		}, false},
		{"no bound", func() []byte {
			b := []byte{0x90, 0x90, 0x90, 0x90, 0x90}
			return append(b, lea(code+uint64(len(b))+7)...)
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := append(tc.build(), jump...)
			cases := code + uint64(len(b))
			b = append(b, 0x90, 0x90, 0x90, 0xc3) // the cases, the default
			data := make([]byte, 0x1100)
			copy(data, b)
			for i := range 3 {
				le.PutUint32(data[0x1000+4*i:], uint32(int32(int64(cases)+int64(i)-table)))
			}
			l := &Layout{sections: []codeSection{{code, 0, uint64(len(b))}},
				segments: []codeSection{{code, 0, uint64(len(b))}, {table, 0x1000, 0x100}}}
			f := &flow{data: data, targets: map[uint64]bool{}}
			ok := f.sweep(b, code, l)
			if ok != tc.ok {
				t.Fatalf("sweep: %v, want %v", ok, tc.ok)
			}
			for i := range 3 {
				if ok && !f.targets[cases+uint64(i)] {
					t.Errorf("case %d at %#x is no target: %v", i, cases+uint64(i), f.targets)
				}
			}
		})
	}
}

// TestExternalTargets: the jumps from outside a function that land inside
// it are found wherever a rel32 comes from, and from the bytes just before
// and after it for a rel8, both ends of a rel8's reach included.
func TestExternalTargets(t *testing.T) {
	const base, size = 0x1000, 0x1000
	fn := span{start: base + 0x800, end: base + 0x810}
	tests := []struct {
		name string
		at   uint64 // where the jump is
		code []byte
		want uint64 // the target inside fn; 0: none
	}{
		{"call from afar", base + 0x10, rel32(0xe8, base+0x10, fn.start+4), fn.start + 4},
		{"jne from afar", base + 0x20, append([]byte{0x0f}, rel32(0x85, base+0x21, fn.start+6)...), fn.start + 6},
		{"jmp8 from farthest before", fn.start + 1 - 2 - 127, []byte{0xeb, 0x7f}, fn.start + 1},
		{"jmp8 from farthest after", fn.end - 1 - 2 + 128, []byte{0xeb, 0x80}, fn.end - 1},
		{"je8 just out of reach", fn.start - 130, []byte{0x74, 0x7f}, 0},
		{"a call to the function's start", base + 0x30, rel32(0xe8, base+0x30, fn.start), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := make([]byte, size)
			for i := range data {
				data[i] = 0x90 // nop
			}
			copy(data[tc.at-base:], tc.code)
			l := &Layout{sections: []codeSection{{vaddr: base, offset: 0, size: size}}}
			f := &flow{data: data, targets: map[uint64]bool{}}
			f.external(scanJumps(l, data), l, fn)
			var got []uint64
			for a := range f.targets {
				got = append(got, a)
			}
			if tc.want == 0 && len(got) != 0 || tc.want != 0 && (len(got) != 1 || got[0] != tc.want) {
				t.Errorf("targets %#x, want %#x", got, tc.want)
			}
		})
	}
}

// rel32 is the bytes of a rel32 jump or call with opcode op at address at
// to target (op is the instruction's last opcode byte, at its address).
func rel32(op byte, at, target uint64) []byte {
	b := []byte{op, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(b[1:], uint32(int32(int64(target)-int64(at+5))))
	return b
}

// TestScanJumpsEveryByte: the scan for rel32 jumps and calls finds, in
// real code (the loader, libc, a Go program, gcc's cc1 where there is
// one) and at the very ends of a section, what a test of every byte
// finds.
func TestScanJumpsEveryByte(t *testing.T) {
	paths := []string{"/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/sh"}
	if exe, err := os.Executable(); err == nil {
		paths = append(paths, exe)
	}
	if out, err := exec.Command("gcc", "-print-prog-name=cc1").Output(); err == nil && filepath.IsAbs(strings.TrimSpace(string(out))) {
		paths = append(paths, strings.TrimSpace(string(out)))
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // not on this system
		}
		l := ParseLayout(data)
		if l == nil {
			t.Fatalf("%s: no layout", path)
		}
		if got, want := scanJumps(l, data), scanEveryByte(l, data); !slices.Equal(got.bits, want.bits) || got.base != want.base {
			t.Errorf("%s: the scan finds other jump targets than a test of every byte", path)
		}
	}
	// Opcodes at both ends of a section: a call in its last five bytes, a
	// conditional jump in its last six, a 0x0f with no room after it.
	code := []byte{0xe8, 1, 0, 0, 0, 0x90, 0x0f, 0x84, 2, 0, 0, 0, 0x0f, 0x85, 3, 0, 0, 0, 0xe9, 4, 0, 0, 0, 0x0f}
	l := &Layout{sections: []codeSection{{vaddr: 0x1000, offset: 0, size: uint64(len(code))}}}
	if got, want := scanJumps(l, code), scanEveryByte(l, code); !slices.Equal(got.bits, want.bits) {
		t.Errorf("section ends: %x, want %x", got.bits, want.bits)
	}
}

// scanEveryByte is scanJumps by a test of every byte.
func scanEveryByte(l *Layout, data []byte) *jumpSet {
	j, note := newJumpSet(l)
	le := binary.LittleEndian
	for _, sec := range l.sections {
		b, ok := l.bytes(data, sec.vaddr, sec.vaddr+sec.size)
		if !ok {
			continue
		}
		for i := 0; i+6 <= len(b); i++ {
			switch b[i] {
			case 0xe8, 0xe9:
				note(sec.vaddr + uint64(i+5) + uint64(int64(int32(le.Uint32(b[i+1:])))))
			case 0x0f:
				if b[i+1]&0xf0 == 0x80 {
					note(sec.vaddr + uint64(i+6) + uint64(int64(int32(le.Uint32(b[i+2:])))))
				}
			}
		}
		if n := len(b); n >= 5 && (b[n-5] == 0xe8 || b[n-5] == 0xe9) {
			note(sec.vaddr + uint64(n) + uint64(int64(int32(le.Uint32(b[n-4:])))))
		}
	}
	return j
}

// TestWindowsFromLoadedBytes: the windows of a file's trapping
// instructions are the same whether found in the whole file read into
// memory or in its loaded segments alone (an image of a file by its path,
// which leaves debug information and symbol tables unread): in a Go
// program (the runtime's cpuid and rdtsc) and in libc.
func TestWindowsFromLoadedBytes(t *testing.T) {
	paths := []string{"/lib/x86_64-linux-gnu/libc.so.6"}
	if exe, err := os.Executable(); err == nil {
		paths = append(paths, exe)
	}
	found := 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		whole := NewImage(func() ([]byte, error) { return data, nil })
		var images Images
		loaded := images.Path(path)
		l := whole.Layout()
		if l == nil || loaded.Layout() == nil {
			t.Fatalf("%s: no layout", path)
		}
		for _, sec := range l.sections {
			code := data[sec.offset : sec.offset+sec.size]
			for _, insn := range [][]byte{{0x0f, 0xa2}, {0x0f, 0x31}} {
				for i := 0; ; i++ {
					k := bytes.Index(code[i:], insn)
					if k < 0 {
						break
					}
					i += k
					off := sec.offset + uint64(i)
					w1, ok1 := whole.FindWindow(0, 0, off, len(insn), false)
					w2, ok2 := loaded.FindWindow(0, 0, off, len(insn), false)
					if ok1 != ok2 || !reflect.DeepEqual(w1, w2) {
						t.Errorf("%s at %#x: window %+v %v from the whole file, %+v %v from its loaded segments", path, off, w1, ok1, w2, ok2)
					}
					found += btoi(ok1)
				}
			}
		}
	}
	if found == 0 {
		t.Error("no window found to compare")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
