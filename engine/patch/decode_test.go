package patch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestInsnLen measures encodings of every shape: prefixes, REX, the 0f, 0f 38
// and 0f 3a maps, ModRM with SIB and displacements, rip-relative operands,
// each immediate size, VEX, EVEX and XOP, and the instructions x86asm gets
// wrong or rejects.
func TestInsnLen(t *testing.T) {
	for _, c := range []struct {
		name  string
		bytes []byte
		want  int // 0: undecodable
	}{
		{"ret", []byte{0xc3}, 1},
		{"push rbp", []byte{0x55}, 1},
		{"mov rbp,rsp", []byte{0x48, 0x89, 0xe5}, 3},
		{"mov eax,imm32", []byte{0xb8, 1, 0, 0, 0}, 5},
		{"movabs rax,imm64", []byte{0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 10},
		{"mov ax,imm16", []byte{0x66, 0xb8, 1, 2}, 4},
		{"add rsp,imm8", []byte{0x48, 0x83, 0xc4, 0x08}, 4},
		{"add rsp,imm32", []byte{0x48, 0x81, 0xc4, 0, 1, 0, 0}, 7},
		{"lea rcx,[rsp+0xc]", []byte{0x48, 0x8d, 0x4c, 0x24, 0x0c}, 5},
		{"mov eax,[rip+disp32]", []byte{0x8b, 0x05, 1, 2, 3, 4}, 6},
		{"mov eax,[rbx*4+disp32]", []byte{0x8b, 0x04, 0x9d, 1, 2, 3, 4}, 7},
		{"mov [rbp-8],imm32", []byte{0xc7, 0x45, 0xf8, 1, 0, 0, 0}, 7},
		{"mov word [rax],imm16", []byte{0x66, 0xc7, 0x00, 1, 0}, 5},
		{"test byte [rdi],imm8", []byte{0xf6, 0x07, 0x01}, 3},
		{"test eax,imm32", []byte{0xf7, 0xc0, 1, 0, 0, 0}, 6},
		{"neg eax", []byte{0xf7, 0xd8}, 2},
		{"call rel32", []byte{0xe8, 0, 0, 0, 0}, 5},
		{"jne rel32", []byte{0x0f, 0x85, 0, 0, 0, 0}, 6},
		{"jmp rel8", []byte{0xeb, 0x10}, 2},
		{"enter", []byte{0xc8, 0x10, 0, 0}, 4},
		{"ret imm16", []byte{0xc2, 8, 0}, 3},
		{"movabs al,moffs64", []byte{0xa0, 1, 2, 3, 4, 5, 6, 7, 8}, 9},
		{"endbr64", []byte{0xf3, 0x0f, 0x1e, 0xfa}, 4},
		{"nopw cs:[rax+rax]", []byte{0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}, 10},
		{"syscall", []byte{0x0f, 0x05}, 2},
		{"ud2", []byte{0x0f, 0x0b}, 2},
		{"cpuid", []byte{0x0f, 0xa2}, 2},
		{"rdtscp", []byte{0x0f, 0x01, 0xf9}, 3},
		{"rdpkru", []byte{0x0f, 0x01, 0xee}, 3},
		{"rdrand eax", []byte{0x0f, 0xc7, 0xf0}, 3},
		{"rdseed r9", []byte{0x49, 0x0f, 0xc7, 0xf9}, 4},
		{"rdpid rax", []byte{0xf3, 0x0f, 0xc7, 0xf8}, 4},
		{"cmpxchg16b [rdi]", []byte{0x48, 0x0f, 0xc7, 0x0f}, 4},
		{"bswap eax", []byte{0x0f, 0xc8}, 2},
		{"shld eax,ebx,imm8", []byte{0x0f, 0xa4, 0xd8, 4}, 4},
		{"pshufd xmm0,xmm1,imm8", []byte{0x66, 0x0f, 0x70, 0xc1, 0x1b}, 5},
		{"pshufb xmm0,xmm1", []byte{0x66, 0x0f, 0x38, 0x00, 0xc1}, 5},
		{"palignr xmm0,xmm1,imm8", []byte{0x66, 0x0f, 0x3a, 0x0f, 0xc1, 4}, 6},
		{"mov rax,cr0 with mod 0", []byte{0x0f, 0x20, 0x00}, 3},
		{"extrq xmm0,imm8,imm8", []byte{0x66, 0x0f, 0x78, 0xc0, 4, 8}, 6},
		{"vzeroupper", []byte{0xc5, 0xf8, 0x77, 0xc3}, 3},
		{"vmovdqu ymm0,[rsi]", []byte{0xc5, 0xfe, 0x6f, 0x06}, 4},
		{"vpshufd ymm0,ymm1,imm8", []byte{0xc5, 0xfd, 0x70, 0xc1, 0x1b}, 5},
		{"vpbroadcastb ymm0,xmm0", []byte{0xc4, 0xe2, 0x7d, 0x78, 0xc0}, 5},
		{"vpalignr ymm0,ymm1,ymm2,imm8", []byte{0xc4, 0xe3, 0x75, 0x0f, 0xc2, 4}, 6},
		{"vmovdqu64 zmm0,[rsi]", []byte{0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x06}, 6},
		{"vmovdqu64 zmm0,[rsi+0x40]", []byte{0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x46, 0x01}, 7},
		{"XOP vprotb xmm0,xmm1,imm8", []byte{0x8f, 0xe8, 0x78, 0xc0, 0xc1, 4}, 6},
		{"pop [rbp+8] (8f, not XOP)", []byte{0x8f, 0x45, 0x08}, 3},
		{"fwait", []byte{0x9b}, 1},
		{"fld qword [rax]", []byte{0xdd, 0x00}, 2},
		{"lock cmpxchg [rdi],esi", []byte{0xf0, 0x0f, 0xb1, 0x37}, 4},
		{"fs mov rax,[0]", []byte{0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0}, 9},
		{"invalid in 64-bit mode (push es)", []byte{0x06}, 0},
		{"invalid 0f 04", []byte{0x0f, 0x04}, 0},
		{"truncated", []byte{0x48, 0x8b}, 0},
		{"only prefixes", []byte{0x66, 0x66, 0x66}, 0},
	} {
		n, err := insnLen(c.bytes)
		if c.want == 0 {
			if err == nil {
				t.Errorf("%s (% x): length %d, want undecodable", c.name, c.bytes, n)
			}
			continue
		}
		if err != nil || n != c.want {
			t.Errorf("%s (% x): length %d (%v), want %d", c.name, c.bytes, n, err, c.want)
		}
	}
}

// codeFiles are real binaries to check the decoder on: the go command (Go
// code, AVX in its runtime; test binaries have no symbol table), the C
// library and the C++ runtime (endbr64 on every function, AVX2 and AVX-512
// string functions), as the C compiler finds them.
func codeFiles(t *testing.T) []string {
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	files := []string{filepath.Join(strings.TrimSpace(string(root)), "bin", "go")}
	for _, lib := range []string{"libc.so.6", "libstdc++.so.6"} {
		out, err := exec.Command("gcc", "-print-file-name="+lib).Output()
		if p := strings.TrimSpace(string(out)); err == nil && strings.HasPrefix(p, "/") {
			files = append(files, p)
		} else {
			t.Logf("gcc does not find %s: not checked", lib)
		}
	}
	return files
}

// TestInsnLenAgreesWithX86asm decodes every function of real binaries from
// its start with insnLen and compares each length with x86asm's, where
// x86asm decodes (it rejects endbr64 and others: those are skipped with
// insnLen's length, which the objdump test checks). x86asm's vzeroupper is
// one or two bytes too long (it reads a ModRM byte): that is its bug.
func TestInsnLenAgreesWithX86asm(t *testing.T) {
	for _, path := range codeFiles(t) {
		data, f := readELF(t, path)
		l := ParseLayout(data)
		if l == nil {
			t.Fatalf("%s: not an x86-64 ELF file", path)
		}
		text := f.Section(".text")
		code, err := text.Data()
		if err != nil {
			t.Fatal(err)
		}
		compared, skipped := 0, 0
		for _, fn := range l.funcs {
			if compared > 300000 {
				break // enough: x86asm is slow
			}
			if fn.start < text.Addr || fn.end > text.Addr+text.Size {
				continue
			}
			b := code[fn.start-text.Addr : fn.end-text.Addr]
			for i := 0; i < len(b); {
				n, err := insnLen(b[i:])
				if err != nil {
					t.Errorf("%s: %#x: insnLen cannot decode % x", path, fn.start+uint64(i), b[i:min(i+8, len(b))])
					break
				}
				in, xerr := x86asm.Decode(b[i:], 64)
				vzeroupper := n == 3 && b[i] == 0xc5 && b[i+2] == 0x77
				switch {
				case xerr != nil || in.Op == 0 || vzeroupper:
					skipped++
				case in.Len != n:
					t.Errorf("%s: %#x: % x: insnLen %d, x86asm %d (%v)", path, fn.start+uint64(i), b[i:i+max(n, in.Len)], n, in.Len, in)
				default:
					compared++
				}
				i += n
			}
		}
		t.Logf("%s: %d instructions compared, %d x86asm does not decode", path, compared, skipped)
		if compared < 10000 {
			t.Errorf("%s: only %d instructions compared", path, compared)
		}
	}
}

// TestInsnLenAgreesWithObjdump checks insnLen at every instruction objdump
// lists in the code of the C library and the C++ runtime (objdump sweeps
// linearly from each symbol, as the patcher does).
func TestInsnLenAgreesWithObjdump(t *testing.T) {
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("no objdump (binutils)")
	}
	for _, path := range codeFiles(t)[1:] {
		_, f := readELF(t, path)
		text := f.Section(".text")
		code, _ := text.Data()
		out, err := exec.Command("objdump", "-d", "-w", "-j", ".text", path).Output()
		if err != nil {
			t.Fatalf("objdump %s: %v", path, err)
		}
		checked, bad := 0, 0
		for _, line := range strings.Split(string(out), "\n") {
			// "  addr:\tbytes \tmnemonic operands"
			addr, rest, ok := strings.Cut(strings.TrimSpace(line), ":\t")
			if !ok || !strings.HasPrefix(line, "  ") {
				continue
			}
			a, err := parseHex(addr)
			raw, insn, _ := strings.Cut(rest, "\t")
			if err != nil || a < text.Addr || a >= text.Addr+text.Size || strings.HasPrefix(insn, "(bad)") {
				continue
			}
			want := len(strings.Fields(raw))
			off := a - text.Addr
			n, err := insnLen(code[off:min(off+maxInsnLen, uint64(len(code)))])
			checked++
			if err != nil || n != want {
				if bad++; bad <= 10 {
					t.Errorf("%s: %#x %s: insnLen %d (%v), objdump %d", path, a, insn, n, err, want)
				}
			}
		}
		t.Logf("%s: %d instructions checked", path, checked)
		if checked < 10000 || bad > 0 {
			t.Errorf("%s: %d of %d instructions disagree", path, bad, checked)
		}
	}
}

func parseHex(s string) (uint64, error) {
	var v uint64
	if s == "" {
		return 0, os.ErrInvalid
	}
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, os.ErrInvalid
		}
	}
	return v, nil
}
