package dwarf

import (
	"debug/elf"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// uwObjdumpInst is one instruction of objdump -d.
type uwObjdumpInst struct {
	addr   uint64 // link-time
	mnem   string
	ops    string // operands without the trailing "# ..." comment
	target string // the symbol in "<...>", offsets made decimal as gdb
	to     uint64 // the link-time branch target before "<...>"
}

var (
	uwObjdumpLine = regexp.MustCompile(`^\s*([0-9a-f]+):\t(.*)$`)
	uwHexOffset   = regexp.MustCompile(`\+0x([0-9a-f]+)$`)
)

// uwObjdump disassembles a file with objdump: its instructions by
// link-time address.
func uwObjdump(t *testing.T, file string) map[uint64]uwObjdumpInst {
	t.Helper()
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump is not installed")
	}
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", file).Output()
	if err != nil {
		t.Fatalf("objdump %s: %v", file, err)
	}
	insts := map[uint64]uwObjdumpInst{}
	for _, l := range strings.Split(string(out), "\n") {
		m := uwObjdumpLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		in := uwObjdumpInst{addr: addr}
		text := m[2]
		if i := strings.Index(text, "#"); i >= 0 {
			text = text[:i]
		}
		if i := strings.Index(text, "<"); i >= 0 {
			in.target = strings.TrimSuffix(strings.TrimSpace(text[i+1:]), ">")
			if h := uwHexOffset.FindStringSubmatch(in.target); h != nil {
				n, _ := strconv.ParseUint(h[1], 16, 64)
				in.target = in.target[:len(in.target)-len(h[0])] + "+" + strconv.FormatUint(n, 10)
			}
			text = text[:i]
			f := strings.Fields(text)
			in.to, _ = strconv.ParseUint(f[len(f)-1], 16, 64)
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		for len(f) > 1 && prefixWords[f[0]] {
			f = f[1:]
		}
		in.mnem = f[0]
		in.ops = strings.Join(f[1:], " ")
		insts[addr] = in
	}
	return insts
}

// uwSplit returns the mnemonic and operands of one of our instructions,
// without prefixes and annotations.
func uwSplit(text string) (string, string) {
	if i := strings.Index(text, "#"); i >= 0 {
		text = text[:i]
	}
	if i := strings.Index(text, "<"); i >= 0 {
		text = text[:i]
	}
	f := strings.Fields(text)
	for len(f) > 1 && prefixWords[f[0]] {
		f = f[1:]
	}
	return f[0], strings.Join(f[1:], " ")
}

// uwLibc returns the C library mapped into the stopped process.
func uwLibc(t *testing.T, p *uwStopped) *Image {
	t.Helper()
	var libc *Image
	for _, img := range p.table.Images {
		if strings.Contains(img.Path, "libc.so") {
			libc = img
		}
	}
	if libc == nil {
		t.Fatal("libc is not mapped")
	}
	return libc
}

// TestDisasMatchesObjdump disassembles functions of the live chain
// program and of libc and compares instruction boundaries, mnemonics,
// operands and branch targets with objdump.
func TestDisasMatchesObjdump(t *testing.T) {
	bin := uwBuildC(t, "chain.c", "-g", "-O2", "-fomit-frame-pointer")
	p := uwRunStopped(t, bin)
	exe := p.table.Images[0]
	libc := uwLibc(t, p)
	ours := uwObjdump(t, bin)
	theirs := uwObjdump(t, libc.Path)
	dumps := map[*Image]map[uint64]uwObjdumpInst{exe: ours, libc: theirs}
	tests := []struct {
		img *Image
		fn  string
	}{
		{exe, "main"}, {exe, "a"}, {exe, "b"}, {exe, "c"}, {exe, "handler"},
		{libc, "raise"}, {libc, "pthread_kill"}, {libc, "__libc_start_main"}, {libc, "fflush"},
		// Vector code: VEX and EVEX encodings.
		{libc, "__memmove_avx_unaligned_erms"}, {libc, "__strlen_avx2"}, {libc, "__memset_evex_unaligned_erms"},
	}
	for _, tc := range tests {
		t.Run(tc.fn, func(t *testing.T) {
			sym, ok := tc.img.Lookup(tc.fn)
			if !ok || sym.Size == 0 {
				t.Skipf("%s has no sized symbol %s", tc.img.Path, tc.fn)
			}
			// objdump's instructions of the function, in order.
			var want []uwObjdumpInst
			for a := sym.Addr - tc.img.Bias; a < sym.Addr-tc.img.Bias+sym.Size; a++ {
				if in, ok := dumps[tc.img][a]; ok {
					want = append(want, in)
				}
			}
			if len(want) == 0 {
				t.Fatalf("objdump shows nothing at %s", tc.fn)
			}
			start := want[0].addr + tc.img.Bias
			got, err := p.table.Disassemble(p.mem, start, len(want))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d instructions, objdump %d", len(got), len(want))
			}
			for i, w := range want {
				g := got[i]
				mnem, ops := uwSplit(g.Text)
				if g.Addr != w.addr+tc.img.Bias {
					t.Fatalf("instruction %d at %#x, objdump at %#x: boundaries differ", i, g.Addr-tc.img.Bias, w.addr)
				}
				if mnem != w.mnem {
					t.Errorf("%#x: %q, objdump %s %s", w.addr, g.Text, w.mnem, w.ops)
					continue
				}
				if w.target != "" && g.Target != 0 && !strings.HasPrefix(ops, "*") && !strings.Contains(ops, "(") {
					// A branch: objdump writes the link-time target, and
					// names it by the executable's symbols (libc's local
					// symbols are only in its debug file).
					if g.Target != w.to+tc.img.Bias {
						t.Errorf("%#x: target %#x, objdump %#x", w.addr, g.Target-tc.img.Bias, w.to)
					}
					if tc.img == exe && g.TargetName != w.target {
						t.Errorf("%#x: target %q, objdump <%s>", w.addr, g.TargetName, w.target)
					}
					continue
				}
				if ops != w.ops {
					t.Errorf("%#x: %q, objdump %s %s", w.addr, g.Text, w.mnem, w.ops)
				}
			}
		})
	}
}

// TestDisasLibcSample compares one libc function in eight, whole, with
// objdump: boundaries, mnemonics and operands (branch targets by
// address) of tens of thousands of instructions, SSE, AVX2 and AVX-512
// included.
func TestDisasLibcSample(t *testing.T) {
	bin := uwBuildC(t, "chain.c", "-O0")
	p := uwRunStopped(t, bin)
	libc := uwLibc(t, p)
	want := uwObjdump(t, libc.Path)
	text := libc.file.Section(".text")
	total, funcs := 0, 0
	for k, s := range libc.Symbols() {
		link := s.Addr - libc.Bias
		if k%8 != 0 || !s.Func || s.Size == 0 || link < text.Addr || link >= text.Addr+text.Size {
			continue
		}
		var w []uwObjdumpInst
		for a := link; a < link+s.Size; a++ {
			if in, ok := want[a]; ok {
				w = append(w, in)
			}
		}
		if len(w) == 0 || w[0].addr != link {
			continue // objdump resynchronised elsewhere: not comparable
		}
		funcs++
		got, err := p.table.Disassemble(p.mem, s.Addr, len(w))
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		for i := range w {
			total++
			if i >= len(got) || got[i].Addr != w[i].addr+libc.Bias {
				t.Errorf("%s: instruction %d at %#x: boundaries differ from objdump", s.Name, i, w[i].addr)
				break
			}
			mnem, ops := uwSplit(got[i].Text)
			if mnem != w[i].mnem || w[i].target == "" && ops != w[i].ops || w[i].target != "" && got[i].Target != 0 && got[i].Target != w[i].to+libc.Bias && !strings.Contains(ops, "(") {
				t.Errorf("%s %#x: %q, objdump %s %s (% x)", s.Name, w[i].addr, got[i].Text, w[i].mnem, w[i].ops, got[i].Bytes)
			}
		}
	}
	t.Logf("%d instructions of %d functions", total, funcs)
	if funcs < 100 {
		t.Errorf("only %d functions compared", funcs)
	}
}

// TestDisasSymbolizes checks gdb's annotations of calls and rip-relative
// operands, and the end of a listing at unreadable memory.
func TestDisasSymbolizes(t *testing.T) {
	bin := uwBuildC(t, "chain.c", "-g", "-O0")
	p := uwRunStopped(t, bin)
	b, _ := p.table.Lookup("b")
	ins, err := p.table.Disassemble(p.mem, b.Addr, 64)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := p.table.Lookup("c")
	var call, sq bool
	for _, in := range ins {
		if in.Target == c.Addr {
			call = true
			if in.TargetName != "c" || !strings.HasSuffix(in.Text, "<c>") || !strings.HasPrefix(in.Text, "call   0x") {
				t.Errorf("call of c: %q (target %q)", in.Text, in.TargetName)
			}
		}
		if in.TargetName == "sq" {
			sq = true
		}
	}
	if !call || !sq {
		t.Errorf("b's calls of sq and c not found in %v", ins)
	}

	// c reads counter rip-relatively and calls printf through the PLT.
	ins, err = p.table.Disassemble(p.mem, c.Addr, int(c.Size))
	if err != nil {
		t.Fatal(err)
	}
	counter, _ := p.table.Lookup("counter")
	tests := []struct {
		name  string
		match func(Instruction) bool
		text  string // suffix of the text
	}{
		{"rip-relative global", func(in Instruction) bool { return in.Target == counter.Addr && strings.Contains(in.Text, "(%rip)") },
			"        # " + "0x" + strconv.FormatUint(counter.Addr, 16) + " <counter>"},
		{"PLT call", func(in Instruction) bool { return in.TargetName == "printf@plt" }, " <printf@plt>"},
		{"PLT call of raise", func(in Instruction) bool { return in.TargetName == "raise@plt" }, " <raise@plt>"},
	}
	for _, tc := range tests {
		found := false
		for _, in := range ins {
			if tc.match(in) {
				found = true
				if !strings.HasSuffix(in.Text, tc.text) {
					t.Errorf("%s: %q, want suffix %q", tc.name, in.Text, tc.text)
				}
			}
		}
		if !found {
			t.Errorf("%s: no instruction in c", tc.name)
		}
	}

	// A listing running off the end of mapped memory stops there.
	mem := uwSliceMem{base: 0x1000, b: []byte{0x55, 0x48, 0x89, 0xe5, 0xc3, 0x48}}
	got, err := p.table.Disassemble(mem, 0x1000, 10)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, in := range got {
		texts = append(texts, in.Text)
	}
	if strings.Join(texts, ";") != "push   %rbp;mov    %rsp,%rbp;ret" {
		t.Errorf("listing of a short buffer: %q", texts)
	}
	if _, err := p.table.Disassemble(mem, 0x9000, 1); err == nil {
		t.Error("no error for unreadable memory")
	}
	// Undecodable bytes are "(bad)", one at a time, as in gdb.
	mem = uwSliceMem{base: 0x1000, b: append([]byte{0x06, 0xf3, 0x0f, 0x1e, 0xfa}, make([]byte, 16)...)}
	got, _ = p.table.Disassemble(mem, 0x1000, 2)
	if len(got) != 2 || got[0].Text != "(bad)" || got[0].Len != 1 || got[1].Text != "endbr64" {
		t.Errorf("bad byte and endbr64: %+v", got)
	}
}

// uwFileMem reads an ELF file's loaded segments at their link addresses.
type uwFileMem struct{ f *elf.File }

func (m uwFileMem) ReadAt(p []byte, addr uint64) (int, error) {
	for _, s := range m.f.Progs {
		if s.Type == elf.PT_LOAD && addr >= s.Vaddr && addr < s.Vaddr+s.Filesz {
			n := len(p)
			if rest := s.Vaddr + s.Filesz - addr; uint64(n) > rest {
				n = int(rest)
			}
			k, err := s.ReadAt(p[:n], int64(addr-s.Vaddr))
			if err == nil && k < len(p) {
				err = io.EOF
			}
			return k, err
		}
	}
	return 0, fmt.Errorf("%#x is not in a loaded segment", addr)
}

// TestDisasMatchesGDB compares our listing of whole functions with gdb's
// "disassemble", line for line: the text of every instruction with its
// symbolic annotations.
func TestDisasMatchesGDB(t *testing.T) {
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb is not installed")
	}
	line := regexp.MustCompile(`^\s+0x([0-9a-f]+) <\+\d+>:\t(.*)$`)
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			bin := uwBuildC(t, "chain.c", "-g", opt)
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			img, err := LoadImage(bin, 0) // a PIE at its link addresses, as gdb shows it
			if err != nil {
				t.Fatal(err)
			}
			defer img.Close()
			tab := &Table{Images: []*Image{img}}
			for _, fn := range []string{"main", "a", "b", "c", "handler"} {
				out, err := exec.Command("gdb", "-nx", "-batch", "-ex", "disassemble "+fn, bin).CombinedOutput()
				if err != nil {
					t.Fatalf("gdb: %v\n%s", err, out)
				}
				var want []string
				var start uint64
				for _, l := range strings.Split(string(out), "\n") {
					if m := line.FindStringSubmatch(l); m != nil {
						if start == 0 {
							start, _ = strconv.ParseUint(m[1], 16, 64)
						}
						want = append(want, strings.TrimRight(m[2], " "))
					}
				}
				if len(want) == 0 {
					t.Fatalf("gdb disassembled nothing of %s:\n%s", fn, out)
				}
				got, err := tab.Disassemble(uwFileMem{f}, start, len(want))
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if i >= len(got) || got[i].Text != want[i] {
						g := ""
						if i < len(got) {
							g = got[i].Text
						}
						t.Errorf("%s instruction %d: %q, gdb %q", fn, i, g, want[i])
					}
				}
			}
		})
	}
}
