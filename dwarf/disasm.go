package dwarf

// This file disassembles x86-64 code in AT&T syntax, as gdb shows it by
// default, naming branch targets and rip-relative operands with the
// symbols of the process's images (PLT entries as "func@plt").

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// Instruction is one decoded instruction.
type Instruction struct {
	Addr  uint64
	Len   int
	Bytes []byte
	// Text is the instruction in AT&T syntax as gdb prints it, with the
	// symbolic target appended: "call   0x401136 <sum>",
	// "lea    0x2ec4(%rip),%rax        # 0x404010 <counter>".
	Text string
	// Target is the branch or call target, or the address of a
	// rip-relative operand; 0 if none.
	Target uint64
	// TargetName is the symbol of Target with a decimal offset as gdb
	// writes it ("main+26", "printf@plt"); "" when no symbol covers it.
	TargetName string
	// ripRel says Target comes from a rip-relative operand, not a branch.
	ripRel bool
}

// maxInstLen is the longest x86 instruction.
const maxInstLen = 15

// Disassemble decodes n instructions starting at addr, symbolising
// branch targets and rip-relative operands with the table's symbols (as
// gdb: "call   0x401136 <sum>", "lea    0x2ec4(%rip),%rax        #
// 0x404010 <counter>"). Bytes that do not decode are shown as "(bad)", one
// at a time, like gdb. A memory read error ends the listing with what was
// decoded; it is an error only when nothing was.
func (t *Table) Disassemble(mem Memory, addr uint64, n int) ([]Instruction, error) {
	if mem == nil {
		return nil, errors.New("disassemble: no memory")
	}
	var out []Instruction
	names := &symbolizer{t: t, mem: mem, plt: map[*Image]map[uint64]string{}}
	var buf []byte
	bufAddr := addr
	eof := false
	var readErr error
	pc := addr
	for len(out) < n {
		off := int(pc - bufAddr)
		if !eof && len(buf)-off < maxInstLen {
			// Refill: the listing may run into an unreadable page.
			want := (n-len(out))*8 + maxInstLen
			if want > 64<<10 {
				want = 64 << 10
			}
			var got []byte
			got, readErr = readCode(mem, pc, want)
			if len(got) < want {
				eof = true
			}
			buf, bufAddr, off = got, pc, 0
		}
		if off >= len(buf) {
			break
		}
		code := buf[off:]
		ins, ok := decodeOne(code, pc, eof)
		if !ok {
			break // truncated by the end of readable memory
		}
		names.annotate(&ins)
		out = append(out, ins)
		pc += uint64(ins.Len)
	}
	if len(out) == 0 {
		if readErr == nil {
			readErr = errors.New("no readable code")
		}
		return nil, fmt.Errorf("disassemble at %#x: %w", addr, readErr)
	}
	return out, nil
}

// readCode reads up to want bytes at addr, stopping at the first page that
// cannot be read.
func readCode(mem Memory, addr uint64, want int) ([]byte, error) {
	buf := make([]byte, want)
	got, err := mem.ReadAt(buf, addr)
	if err == nil {
		return buf[:want], nil
	}
	if got > 0 {
		return buf[:got], err
	}
	// Some Memory implementations fail a read that crosses into an
	// unmapped page without a partial count: read page by page.
	var out []byte
	for uint64(len(out)) < uint64(want) {
		at := addr + uint64(len(out))
		chunk := int((at | 0xfff) + 1 - at)
		if chunk > want-len(out) {
			chunk = want - len(out)
		}
		b := make([]byte, chunk)
		if n, e := mem.ReadAt(b, at); e != nil {
			out = append(out, b[:n]...)
			err = e
			break
		}
		out = append(out, b...)
	}
	return out, err
}

// decodeOne decodes the instruction at the start of code. ok is false
// when the bytes are a truncated instruction at the end of readable
// memory.
func decodeOne(code []byte, pc uint64, eof bool) (Instruction, bool) {
	ins := Instruction{Addr: pc}
	// x86asm does not know a few operand-less instructions, among them
	// the CET markers gcc puts at function entries.
	for _, f := range fixedInsts {
		if len(code) >= len(f.code) && string(code[:len(f.code)]) == f.code {
			ins.Len, ins.Text = len(f.code), f.text
			ins.Bytes = append([]byte(nil), code[:ins.Len]...)
			return ins, true
		}
	}
	if eof && len(code) < maxInstLen {
		// At the end of readable memory, an instruction that would be
		// longer with more bytes is cut off, not a short one.
		padded := append(append([]byte(nil), code...), make([]byte, maxInstLen)...)
		if full, err := x86asm.Decode(padded, 64); err == nil && full.Len > len(code) {
			return ins, false
		}
	}
	// x86asm gives vzeroupper and vzeroall a ModRM byte they do not have.
	if n := vzeroLen(code); n > 0 {
		ins.Len, ins.Text = n, "vzeroupper"
		if code[n-2]&4 != 0 { // VEX.L
			ins.Text = "vzeroall"
		}
		ins.Bytes = append([]byte(nil), code[:n]...)
		return ins, true
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		if errors.Is(err, x86asm.ErrTruncated) && len(code) < maxInstLen && eof {
			return ins, false
		}
		ins.Len, ins.Text = 1, "(bad)"
		ins.Bytes = append([]byte(nil), code[:1]...)
		return ins, true
	}
	ins.Len = inst.Len
	ins.Bytes = append([]byte(nil), code[:inst.Len]...)
	enc := memEncoding(code[:inst.Len])
	if enc.vex && !enc.segment {
		// x86asm's VEX/EVEX decoder takes payload bytes 0x26-0x65 for
		// segment prefixes.
		for i, p := range inst.Prefix {
			switch p &^ (x86asm.PrefixImplicit | x86asm.PrefixIgnored | x86asm.PrefixInvalid) {
			case x86asm.PrefixCS, x86asm.PrefixDS, x86asm.PrefixES, x86asm.PrefixSS, x86asm.PrefixFS, x86asm.PrefixGS:
				inst.Prefix[i] |= x86asm.PrefixImplicit
			}
		}
	}
	for i, a := range inst.Args {
		m, ok := a.(x86asm.Mem)
		if !ok {
			continue
		}
		// x86asm keeps 32-bit displacements zero-extended; objdump and
		// gdb print them signed ("-0x8(%rbp)").
		if m.Disp >= 1<<31 && m.Disp < 1<<32 && inst.AddrSize != 16 {
			m.Disp = int64(int32(m.Disp))
		}
		if enc.rip && m.Base == 0 && m.Index == 0 {
			m.Base = x86asm.RIP // lost by x86asm's VEX/EVEX decoder
		}
		if enc.vex && !enc.segment {
			m.Segment = 0
		}
		inst.Args[i] = m
		if m.Base == x86asm.RIP {
			ins.Target = pc + uint64(inst.Len) + uint64(m.Disp)
			ins.ripRel = true
		}
	}
	for _, a := range inst.Args {
		if r, ok := a.(x86asm.Rel); ok {
			ins.Target = pc + uint64(inst.Len) + uint64(int64(r))
		}
	}
	text := x86asm.GNUSyntax(inst, pc, nil)
	for _, a := range inst.Args {
		// libopcodes prints negative immediates unsigned in the operand
		// size ("$0xffffffff", "$0xfffffffffffffff0").
		if imm, ok := a.(x86asm.Imm); ok && imm < 0 && inst.DataSize >= 8 && inst.DataSize <= 64 {
			u := uint64(imm)
			if inst.DataSize < 64 {
				u &= 1<<uint(inst.DataSize) - 1
			}
			text = strings.Replace(text, fmt.Sprintf("$%#x", int64(imm)), fmt.Sprintf("$%#x", u), 1)
		}
	}
	if enc.mem {
		text = objdumpMem(text, enc.disp)
		if inst.Op == x86asm.NOP {
			text = objdumpNop(inst, text)
		}
	}
	if enc.x87 && enc.rm0 {
		text = objdumpST0(text, enc.opcode)
	}
	switch inst.Op {
	case x86asm.MOV:
		// 64-bit immediates and absolute addresses are "movabs".
		if op := enc.opcode; op >= 0xa0 && op <= 0xa3 || op >= 0xb8 && op <= 0xbf && inst.Len >= 9 {
			text = "movabs" + text[strings.IndexByte(text, ' '):]
		}
	}
	text = avx512Compare(text)
	switch inst.Op {
	case x86asm.ANDN, x86asm.BEXTR, x86asm.BLSI, x86asm.BLSMSK, x86asm.BLSR, x86asm.BZHI,
		x86asm.MULX, x86asm.PDEP, x86asm.PEXT, x86asm.RORX, x86asm.SARX, x86asm.SHLX, x86asm.SHRX:
		// binutils 2.37 dropped the size suffix of BMI instructions,
		// whose register operands tell the size.
		if i := strings.IndexByte(text, ' '); i > 1 && (text[i-1] == 'l' || text[i-1] == 'q') {
			text = text[:i-1] + text[i:]
		}
	}
	// AVX-512 masks follow their operand without a space in libopcodes.
	text = strings.ReplaceAll(text, " {", "{")
	if inst.Op == x86asm.NOP && inst.Len == 2 && code[0] == 0x66 {
		text = "xchg %ax,%ax" // libopcodes' name for the two-byte nop
	}
	ins.Text = gdbText(text)
	return ins, true
}

// fixedInsts are operand-less instructions x86asm does not decode.
var fixedInsts = []struct{ code, text string }{
	{"\xf3\x0f\x1e\xfa", "endbr64"},
	{"\xf3\x0f\x1e\xfb", "endbr32"},
	{"\x0f\x01\xee", "rdpkru"},
	{"\x0f\x01\xef", "wrpkru"},
	{"\x0f\x01\xe8", "serialize"},
	{"\x0f\x01\xca", "clac"},
	{"\x0f\x01\xcb", "stac"},
	{"\x0f\x01\xd5", "xend"},
	{"\x0f\x01\xd6", "xtest"},
}

// vzeroLen returns the length of a vzeroupper or vzeroall at the start of
// code (VEX opcode 0x77 of map 0F), 0 if there is none.
func vzeroLen(code []byte) int {
	switch {
	case len(code) >= 3 && code[0] == 0xc5 && code[2] == 0x77:
		return 3
	case len(code) >= 4 && code[0] == 0xc4 && code[1]&0x1f == 1 && code[3] == 0x77:
		return 4
	}
	return 0
}

// modrmInfo is what the encoding of an instruction says about its
// operands, beyond what x86asm reports.
type modrmInfo struct {
	opcode  byte // the first opcode byte after legacy prefixes and REX
	vex     bool // VEX or EVEX encoded
	segment bool // has a segment-override prefix
	mem     bool // has a ModRM memory operand
	disp    bool // its displacement is encoded (perhaps as zero)
	rip     bool // it is rip-relative
	x87     bool // an x87 register-register form (d8-df, mod 3)
	rm0     bool // whose ModRM register operand is %st(0)
}

// memEncoding scans the prefixes, opcode and ModRM of an instruction.
// x86asm drops a zero displacement and the scale of 1, which libopcodes
// prints ("0x0(%rax,%rax,1)"), and its VEX decoder loses rip-relative
// bases.
func memEncoding(code []byte) modrmInfo {
	var e modrmInfo
	i := 0
	for i < len(code) {
		switch code[i] {
		case 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65:
			e.segment = true
			i++
			continue
		case 0x66, 0x67, 0xf2, 0xf3, 0xf0:
			i++
			continue
		}
		break
	}
	if i < len(code) && code[i]&0xf0 == 0x40 { // REX
		i++
	}
	if i >= len(code) {
		return e
	}
	e.opcode = code[i]
	switch op := code[i]; {
	case op == 0xc5: // two-byte VEX: c5 P opcode modrm
		i += 3
		e.vex = true
	case op == 0xc4: // three-byte VEX: c4 P P opcode modrm
		i += 4
		e.vex = true
	case op == 0x62: // EVEX: 62 P P P opcode modrm
		i += 5
		e.vex = true
	case op == 0x0f:
		if i+1 < len(code) && (code[i+1] == 0x38 || code[i+1] == 0x3a) {
			i += 3
		} else {
			i += 2
		}
	case op >= 0xa0 && op <= 0xaf, op >= 0x6c && op <= 0x6f, op == 0xd7, op >= 0xb0 && op <= 0xbf,
		op >= 0x50 && op <= 0x5f, op >= 0x90 && op <= 0x9f, op >= 0x70 && op <= 0x7f, op == 0xe8, op == 0xe9, op == 0xeb, op == 0xc3, op == 0xc2:
		// No ModRM: moffs and immediate moves, string operations, pushes,
		// exchanges, branches.
		return e
	default:
		i++
	}
	if i >= len(code) {
		return e
	}
	modrm := code[i]
	mod, rm := modrm>>6, modrm&7
	if mod == 3 {
		e.x87 = e.opcode >= 0xd8 && e.opcode <= 0xdf && !e.vex
		e.rm0 = rm == 0
		return e
	}
	e.mem = true
	e.disp = mod == 1 || mod == 2 || mod == 0 && rm == 5
	e.rip = mod == 0 && rm == 5
	if rm == 4 && mod == 0 && i+1 < len(code) && code[i+1]&7 == 5 {
		e.disp = true
	}
	return e
}

var (
	memOperand = regexp.MustCompile(`((?:%[cdefgs]s:)?)(-?0x[0-9a-f]+)?\((%[a-z0-9]+)?(,%[a-z0-9]+)?(,[1248])?\)`)
	absOperand = regexp.MustCompile(`(%[cdefgs]s:)(,|$)`)
)

// objdumpMem rewrites x86asm's memory operand as libopcodes prints it.
func objdumpMem(text string, disp bool) string {
	if m := memOperand.FindStringSubmatchIndex(text); m != nil {
		seg, d := text[m[2]:m[3]], ""
		if m[4] >= 0 {
			d = text[m[4]:m[5]]
		}
		base, index, scale := "", "", ""
		if m[6] >= 0 {
			base = text[m[6]:m[7]]
		}
		if m[8] >= 0 {
			index = text[m[8]:m[9]]
		}
		if m[10] >= 0 {
			scale = text[m[10]:m[11]]
		}
		if d == "" && disp {
			d = "0x0"
		}
		if index == ",%riz" && (base == "%r12" || base == "%r12d" || base == "%rsp" || base == "%esp") {
			// A SIB byte is the only encoding of these bases.
			index, scale = "", ""
		}
		if index != "" && scale == "" {
			scale = ",1"
		}
		return text[:m[0]] + seg + d + "(" + base + index + scale + ")" + text[m[1]:]
	}
	if !disp {
		return text
	}
	// An absolute address of zero: x86asm prints nothing, or the segment
	// alone.
	text = absOperand.ReplaceAllString(text, "${1}0x0$2")
	switch {
	case strings.HasSuffix(text, ","):
		text += "0x0"
	case strings.Contains(text, " ,"):
		text = strings.Replace(text, " ,", " 0x0,", 1)
	case strings.Contains(text, ",,"):
		text = strings.Replace(text, ",,", ",0x0,", 1)
	}
	return text
}

// objdumpST0 names the explicit x87 register operand %st(0) as
// libopcodes does; x86asm writes "%st" for it and for the implicit one.
func objdumpST0(text string, opcode byte) string {
	i := strings.IndexByte(text, ' ')
	if i < 0 {
		return text
	}
	switch ops := text[i+1:]; {
	case ops == "%st":
		return text[:i+1] + "%st(0)"
	case ops == "%st,%st" && (opcode == 0xdc || opcode == 0xde):
		return text[:i+1] + "%st,%st(0)" // the destination is explicit
	case ops == "%st,%st":
		return text[:i+1] + "%st(0),%st"
	}
	return text
}

// avx512Predicates are the pseudo-op names libopcodes uses for
// vpcmp{,u}{b,w,d,q} with these comparison predicates.
var avx512Predicates = map[string]string{"0x0": "eq", "0x1": "lt", "0x2": "le", "0x4": "neq", "0x5": "nlt", "0x6": "nle"}

var avx512Compare1 = regexp.MustCompile(`^vpcmp(u?[bwdq]) \$(0x[0-9a-f]+),`)

func avx512Compare(text string) string {
	m := avx512Compare1.FindStringSubmatch(text)
	if m == nil {
		return text
	}
	p, ok := avx512Predicates[m[2]]
	if !ok {
		return text
	}
	return "vpcmp" + p + m[1] + " " + text[len(m[0]):]
}

// objdumpNop lays out a multi-byte nop as libopcodes does: segment
// overrides and extra operand-size prefixes are prefix words ("data16 cs
// nopw 0x0(%rax,%rax,1)").
func objdumpNop(inst x86asm.Inst, text string) string {
	var words []string
	n66 := 0
	var segs []string
	for _, p := range inst.Prefix {
		p &^= x86asm.PrefixImplicit | x86asm.PrefixIgnored | x86asm.PrefixInvalid
		switch p {
		case x86asm.PrefixDataSize, x86asm.PrefixData16, x86asm.PrefixData32:
			n66++
		default:
			if seg, ok := segmentWords[p]; ok {
				segs = append(segs, seg)
			}
		}
	}
	for i := 1; i < n66; i++ {
		words = append(words, "data16")
	}
	words = append(words, segs...)
	mnem := "nopl"
	if n66 > 0 {
		mnem = "nopw"
	}
	op := text[strings.LastIndexByte(text, ' ')+1:]
	if i := strings.Index(op, ":"); i >= 0 && strings.HasPrefix(op, "%") {
		op = op[i+1:]
	}
	return strings.Join(append(words, mnem, op), " ")
}

// segmentWords are the words libopcodes prints for segment overrides.
var segmentWords = map[x86asm.Prefix]string{
	x86asm.PrefixCS: "cs", x86asm.PrefixDS: "ds", x86asm.PrefixES: "es",
	x86asm.PrefixSS: "ss", x86asm.PrefixFS: "fs", x86asm.PrefixGS: "gs",
}

// prefixWords are instruction prefixes libopcodes prints as words before
// the mnemonic.
var prefixWords = map[string]bool{
	"rep": true, "repz": true, "repnz": true, "repe": true, "repne": true, "lock": true,
	"data16": true, "data32": true, "addr32": true, "cs": true, "ds": true, "es": true,
	"fs": true, "gs": true, "ss": true, "bnd": true, "notrack": true, "rex": true, "rex.W": true,
}

// Mnemonics x86asm spells as binutils did before 2.37, which dropped the
// redundant suffix in 64-bit mode.
var oldMnemonics = map[string]string{
	"callq": "call", "retq": "ret", "jmpq": "jmp", "leaveq": "leave",
	"pushq": "push", "popq": "pop", "pushfq": "pushf", "popfq": "popf",
	"xbeginq": "xbegin", "xbeginl": "xbegin",
	// AT&T names of the sign extensions x86asm spells the Intel way.
	"cbw": "cbtw", "cwde": "cwtl", "cdqe": "cltq", "cwd": "cwtd", "cdq": "cltd", "cqo": "cqto",
	"movsxd": "movslq",
}

// gdbText lays out x86asm's GNU syntax as gdb and objdump do: the
// mnemonic padded to six columns, then the operands.
func gdbText(s string) string {
	words := strings.SplitN(s, " ", 2)
	var prefixes []string
	for len(words) == 2 && prefixWords[words[0]] {
		prefixes = append(prefixes, words[0])
		words = strings.SplitN(words[1], " ", 2)
	}
	mnem := words[0]
	if m, ok := oldMnemonics[mnem]; ok {
		mnem = m
	}
	if mnem == "ret" && len(prefixes) == 1 && prefixes[0] == "rep" {
		prefixes[0] = "repz" // the "rep ret" of old AMD branch predictors
	}
	if len(prefixes) > 0 {
		words[0] = mnem
		return strings.Join(append(prefixes, words...), " ")
	}
	if len(words) == 1 {
		return mnem
	}
	return fmt.Sprintf("%-6s %s", mnem, words[1])
}

// symbolizer names addresses for the listing, caching PLT tables.
type symbolizer struct {
	t   *Table
	mem Memory
	plt map[*Image]map[uint64]string
}

func (s *symbolizer) annotate(ins *Instruction) {
	if ins.Target == 0 {
		return
	}
	ins.TargetName = s.name(ins.Target)
	switch {
	case !ins.ripRel && ins.TargetName != "":
		ins.Text += " <" + ins.TargetName + ">"
	case ins.ripRel:
		ins.Text += fmt.Sprintf("        # %#x", ins.Target)
		if ins.TargetName != "" {
			ins.Text += " <" + ins.TargetName + ">"
		}
	}
}

// name returns "func@plt", "sym" or "sym+off" (decimal, as gdb).
func (s *symbolizer) name(addr uint64) string {
	// PLT entries first: the symbol before .plt is often a sizeless _init
	// that would otherwise claim them.
	if img := s.t.ImageAt(addr); img != nil {
		tab, ok := s.plt[img]
		if !ok {
			tab = img.pltSymbols(s.mem)
			s.plt[img] = tab
		}
		if n, ok := tab[addr]; ok {
			return n
		}
	}
	sym, off, ok := s.t.At(addr)
	if !ok {
		return ""
	}
	img := s.t.ImageAt(sym.Addr)
	if img == nil {
		return ""
	}
	if sym.Size == 0 && !sameSection(img, sym.Addr, addr) {
		// A sizeless marker such as _fini does not extend into .rodata.
		return ""
	}
	name := displayName(img, sym)
	if off == 0 {
		return name
	}
	return fmt.Sprintf("%s+%d", name, off)
}

// displayName picks the name gdb shows among the symbols at sym's
// address: a reference to a symbol of a non-default version keeps it
// ("stdout@GLIBC_2.2.5", a copy relocation), a default version does not
// ("pthread_kill@@GLIBC_2.34" is pthread_kill).
func displayName(img *Image, sym Symbol) string {
	syms := img.Symbols()
	i := sort.Search(len(syms), func(i int) bool { return syms[i].Addr >= sym.Addr })
	for ; i < len(syms) && syms[i].Addr == sym.Addr; i++ {
		if r := syms[i].Raw; strings.Contains(r, "@") && !strings.Contains(r, "@@") {
			return r
		}
	}
	if i := strings.Index(sym.Name, "@@"); i > 0 {
		return sym.Name[:i]
	}
	return sym.Name
}

// sameSection says whether two run-time addresses of an image fall into
// the same ELF section.
func sameSection(img *Image, a, b uint64) bool {
	for _, sec := range img.file.Sections {
		if sec.Flags&elf.SHF_ALLOC == 0 || sec.Size == 0 {
			continue
		}
		lo, hi := sec.Addr+img.Bias, sec.Addr+img.Bias+sec.Size
		if a >= lo && a < hi {
			return b >= lo && b < hi
		}
	}
	return false
}

// pltSymbols names the entries of the image's PLT sections "func@plt",
// like gdb and objdump: each entry jumps through a GOT slot, and the
// dynamic relocation of that slot names the function.
func (img *Image) pltSymbols(mem Memory) map[uint64]string {
	f := img.file
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil
	}
	bySlot := map[uint64]string{}
	for _, name := range []string{".rela.plt", ".rela.dyn"} {
		sec := f.Section(name)
		if sec == nil || sec.Type != elf.SHT_RELA {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			continue
		}
		for i := 0; i+24 <= len(data); i += 24 {
			off := binary.LittleEndian.Uint64(data[i:])
			info := binary.LittleEndian.Uint64(data[i+8:])
			typ, idx := elf.R_X86_64(info&0xffffffff), info>>32
			if (typ != elf.R_X86_64_JMP_SLOT && typ != elf.R_X86_64_GLOB_DAT) || idx == 0 || idx > uint64(len(syms)) {
				continue
			}
			bySlot[off+img.Bias] = syms[idx-1].Name
		}
	}
	out := map[uint64]string{}
	for _, name := range []string{".plt", ".plt.sec", ".plt.got"} {
		sec := f.Section(name)
		if sec == nil {
			continue
		}
		start, end := sec.Addr+img.Bias, sec.Addr+img.Bias+sec.Size
		step := uint64(16)
		if name == ".plt.got" && sec.Entsize == 8 {
			step = 8
		}
		for at := start; at+step <= end; at += step {
			code := make([]byte, step)
			if n, _ := mem.ReadAt(code, at); n < len(code) {
				break
			}
			if slot, ok := gotSlot(code, at); ok {
				if sym, ok := bySlot[slot]; ok {
					out[at] = Demangle(sym) + "@plt"
				}
			}
		}
	}
	return out
}

// gotSlot finds the GOT slot a PLT entry jumps through: its first
// instructions are an optional endbr64 and "jmp *disp(%rip)".
func gotSlot(code []byte, at uint64) (uint64, bool) {
	for pos := 0; pos < len(code); {
		ins, ok := decodeOne(code[pos:], at+uint64(pos), true)
		if !ok || ins.Len == 0 {
			return 0, false
		}
		if ins.Text == "endbr64" {
			pos += ins.Len
			continue
		}
		inst, err := x86asm.Decode(code[pos:], 64)
		if err != nil || inst.Op != x86asm.JMP {
			return 0, false
		}
		if m, ok := inst.Args[0].(x86asm.Mem); ok && m.Base == x86asm.RIP {
			return ins.Target, true
		}
		return 0, false
	}
	return 0, false
}
