package patch

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"

	"golang.org/x/arch/x86/x86asm"
)

// Windows: the code a jump to a stub may replace around a short trapping
// instruction (cpuid: two bytes, where a jump takes five). The jump covers
// whole instructions, the trapping one among them; the stub runs the others
// where they were (before or after it) and comes back after the window.
// That is only right when nothing jumps into the window but to its first
// instruction, which a sweep of every function of the file tells for
// direct jumps, and for the switches whose tables it can read (switchOf);
// a function with any other indirect jump could go anywhere in itself, and
// gets no window. The others in a window must
// run the same anywhere: no branch, call or return, nothing addressed
// relative to rip, no other trapping instruction.

// windowJump is the length of the jump that replaces a window.
const windowJump = 5

// maxWindowInsns bounds the instructions a window takes on either side of
// the trapping one.
const maxWindowInsns = 3

// flow is what is known of the jumps into a function (flowOf): the
// link-time addresses that jumps and calls go to.
type flow struct {
	data    []byte
	targets map[uint64]bool
}

// Window is the code a patch replaces around a trapping instruction, with
// what the stub needs to run it elsewhere.
type Window struct {
	Start uint64 // the runtime address of its first instruction
	Code  []byte // its bytes
	Trap  int    // the offset of the trapping instruction in Code
	Len   int    // the trapping instruction's length
	// Rel are the offsets in Code of the 32-bit displacements of operands
	// relative to rip: a copy of the code elsewhere adds to each how far
	// it moved (Move).
	Rel []int
}

// Move returns the window's bytes from off to end, to run at addr instead
// of where they are: its displacements relative to rip adjusted. false
// when one no longer reaches its target.
func (w Window) Move(off, end int, addr uint64) ([]byte, bool) {
	b := append([]byte(nil), w.Code[off:end]...)
	delta := int64(w.Start+uint64(off)) - int64(addr)
	for _, r := range w.Rel {
		if r < off || r+4 > end {
			continue
		}
		d := int64(int32(binary.LittleEndian.Uint32(b[r-off:]))) + delta
		if d != int64(int32(d)) {
			return nil, false
		}
		binary.LittleEndian.PutUint32(b[r-off:], uint32(int32(d)))
	}
	return b, true
}

// End is the address after the window.
func (w Window) End() uint64 { return w.Start + uint64(len(w.Code)) }

// fileData returns the file's bytes, read once (for the images that have
// a window to find).
func (im *Image) fileData() []byte {
	im.dataOnce.Do(func() {
		l := im.Layout()
		if l == nil {
			return
		}
		if im.open != nil {
			if b, ok := l.readLoaded(im.open); ok {
				im.bytes = b
				return
			}
		}
		if im.data != nil {
			im.bytes, _ = im.data()
		}
	})
	return im.bytes
}

// flowOf returns what is known of the jumps into fn, a function of the
// image: its own (a sweep of its code, switch tables read), and every
// direct jump or call of the file's code that lands inside it (a scan of
// the bytes for rel32 jumps and calls, and for rel8 jumps next to it,
// which may take bytes inside other instructions for jumps: more targets
// than there are, which only costs windows). Nil when fn jumps indirectly
// otherwise, or cannot be decoded. Sweeping every function of a library
// instead costs tens of milliseconds (libc's 400k instructions).
func (im *Image) flowOf(l *Layout, data []byte, fn span) *flow {
	im.mu.Lock()
	f, ok := im.flows[fn.start]
	im.mu.Unlock()
	if ok {
		return f
	}
	f = &flow{data: data, targets: map[uint64]bool{}}
	if code, ok := l.bytes(data, fn.start, fn.end); !ok || !f.sweep(code, fn.start, l) {
		f = nil
	} else {
		f.external(im.jumpTargets(l, data), l, fn)
	}
	im.mu.Lock()
	if im.flows == nil {
		im.flows = map[uint64]*flow{}
	}
	im.flows[fn.start] = f
	im.mu.Unlock()
	return f
}

// external adds the targets inside fn of the jumps and calls elsewhere in
// the file's code (flowOf): rel32 ones from anywhere (j), rel8 ones from
// the bytes a rel8 reaches fn from.
func (f *flow) external(j *jumpSet, l *Layout, fn span) {
	for t := fn.start + 1; t < fn.end; t++ {
		if j.has(t) {
			f.targets[t] = true
		}
	}
	for _, sec := range l.sections {
		lo, hi := max(sec.vaddr, fn.start-min(fn.start, 129)), min(sec.vaddr+sec.size, fn.end+128)
		b, ok := l.bytes(f.data, lo, hi)
		if !ok {
			continue
		}
		for i := 0; i+2 <= len(b); i++ {
			if c := b[i]; c == 0xeb || c >= 0x70 && c <= 0x7f || c >= 0xe0 && c <= 0xe3 {
				if t := lo + uint64(i+2) + uint64(int64(int8(b[i+1]))); t > fn.start && t < fn.end {
					f.targets[t] = true
				}
			}
		}
	}
}

// jumpSet is where the direct rel32 jumps and calls of a file's code may
// land: a bit per address of its code sections, from a scan of their
// bytes (see flowOf), made once per image rather than once per function
// looked at.
type jumpSet struct {
	base uint64
	bits []uint64
}

func (j *jumpSet) has(t uint64) bool {
	i := t - j.base
	return t >= j.base && i/64 < uint64(len(j.bits)) && j.bits[i/64]&(1<<(i%64)) != 0
}

// jumpTargets returns the image's jumpSet, scanned on first use.
func (im *Image) jumpTargets(l *Layout, data []byte) *jumpSet {
	im.jumpsOnce.Do(func() { im.jumps = scanJumps(l, data) })
	return im.jumps
}

// newJumpSet returns an empty jumpSet for the code sections of l, and
// the function that notes a target in it (one outside them is no jump
// into code the set is asked about).
func newJumpSet(l *Layout) (*jumpSet, func(uint64)) {
	j := &jumpSet{}
	var hi uint64
	for i, sec := range l.sections {
		if i == 0 || sec.vaddr < j.base {
			j.base = sec.vaddr
		}
		hi = max(hi, sec.vaddr+sec.size)
	}
	if hi > j.base {
		j.bits = make([]uint64, (hi-j.base+63)/64)
	}
	return j, func(t uint64) {
		if k := t - j.base; t >= j.base && t < hi {
			j.bits[k/64] |= 1 << (k % 64)
		}
	}
}

// scanJumps scans the code sections of data for the bytes of rel32 calls
// and jumps, and notes where they would land. rel8 jumps are left to
// external, which looks at the few bytes around a function that reach it:
// checking every byte for their 21 opcodes doubled the scan (80 ms for
// cc1's 20 MB, at the first patched window of each recording).
func scanJumps(l *Layout, data []byte) *jumpSet {
	j, note := newJumpSet(l)
	le := binary.LittleEndian
	for _, sec := range l.sections {
		b, ok := l.bytes(data, sec.vaddr, sec.vaddr+sec.size)
		if !ok {
			continue
		}
		// Each opcode byte found by bytes.IndexByte (vector compares):
		// a test of every byte cost 3.4 ns a byte, mispredicted branches.
		if len(b) >= 6 {
			head := b[:len(b)-5] // a jump's opcode with its four bytes after
			for _, op := range []byte{0xe8, 0xe9, 0x0f} {
				for i := 0; ; i++ {
					k := bytes.IndexByte(head[i:], op)
					if k < 0 {
						break
					}
					i += k
					switch {
					case op != 0x0f:
						note(sec.vaddr + uint64(i+5) + uint64(int64(int32(le.Uint32(b[i+1:])))))
					case b[i+1]&0xf0 == 0x80:
						note(sec.vaddr + uint64(i+6) + uint64(int64(int32(le.Uint32(b[i+2:])))))
					}
				}
			}
		}
		if n := len(b); n >= 5 && (b[n-5] == 0xe8 || b[n-5] == 0xe9) {
			note(sec.vaddr + uint64(n) + uint64(int64(int32(le.Uint32(b[n-4:])))))
		}
	}
	return j
}

// bytes returns the file's bytes at link-time addresses [lo, hi), if one
// code section holds them.
func (l *Layout) bytes(data []byte, lo, hi uint64) ([]byte, bool) {
	for _, s := range l.sections {
		if lo >= s.vaddr && hi <= s.vaddr+s.size && hi > lo {
			off := s.offset + (lo - s.vaddr)
			if off+(hi-lo) <= uint64(len(data)) {
				return data[off : off+(hi-lo)], true
			}
		}
	}
	return nil, false
}

// sweep decodes a function's code at link-time address at, noting where its
// direct jumps and calls go, and the cases of its switches (switchOf);
// false when it could not be decoded to its end or jumps indirectly
// otherwise (a computed goto could go anywhere in it).
func (f *flow) sweep(code []byte, at uint64, l *Layout) bool {
	var starts []int             // the instructions' offsets, in order
	tables := map[int][]uint64{} // the addresses lea'd relative to rip, by register
	var switches []jumpTable
	var recent []int // the starts of the instructions before, the last last
	for i := 0; i < len(code); {
		n, err := insnLen(code[i:])
		if err != nil {
			return false
		}
		in := code[i : i+n]
		next := at + uint64(i+n)
		starts = append(starts, i)
		switch k, rel := branchOf(in); k {
		case branchDirect:
			f.targets[next+uint64(rel)] = true
		case branchIndirect:
			jt, ok := switchOf(code, at, recent, i)
			if !ok {
				return false
			}
			switches = append(switches, jt)
		case branchNone:
			if r, disp, ok := leaRIP(in); ok {
				tables[r] = append(tables[r], next+uint64(disp))
			}
		}
		if recent = append(recent, i); len(recent) > 8 {
			recent = recent[1:]
		}
		i += n
	}
	for _, jt := range switches {
		// The table the lea before the jump names, or, where the base
		// was loaded earlier, every table the function loads into that
		// register whose cases are all instructions of it.
		cands := tables[jt.base]
		if jt.table != 0 {
			cands = []uint64{jt.table}
		}
		found := false
		for _, t := range cands {
			cases, ok := jt.cases(t, l, f.data)
			for _, c := range cases {
				_, found := slices.BinarySearch(starts, int(c-at))
				ok = ok && c >= at && found
			}
			if !ok {
				continue
			}
			found = true
			for _, c := range cases {
				f.targets[c] = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// jumpTable is a switch's jump, as compilers emit it for position-
// independent code:
//
//	cmp $max, %idx; ja default
//	lea table(%rip), %base          (or earlier, out of a loop)
//	movslq (%base,%idx,4), %reg; add %base, %reg; jmp *%reg
//
// with nothing else changing idx on the way but a move to itself (which
// zero-extends it): its cases are table plus each of the n 32-bit entries.
// Or bounded by a mask instead (glibc's handle_amd, in the loader, asks
// cpuid there):
//
//	lea table(%rip), %base; shr $12, %idx; and $0xf, %idx
//	movslq (%base,%idx,4), %reg; add %base, %reg; jmp *%reg
type jumpTable struct {
	base  int    // the register (family) holding the table's address
	table uint64 // the table's address when the lea is right there
	n     uint64
}

// cases returns the addresses the switch jumps to with its table at t.
func (jt jumpTable) cases(t uint64, l *Layout, data []byte) ([]uint64, bool) {
	var out []uint64
	for c := uint64(0); c < jt.n; c++ {
		v, ok := l.read(data, t+4*c, 4)
		if !ok {
			return nil, false
		}
		out = append(out, t+uint64(int64(int32(binary.LittleEndian.Uint32(v)))))
	}
	return out, true
}

// switchOf reads the switch whose jump is at offset j of code (at
// link-time address at), recent the starts of the instructions before it;
// false for any other indirect jump.
func switchOf(code []byte, at uint64, recent []int, j int) (jumpTable, bool) {
	dec := func(off int) (x86asm.Inst, bool) {
		in, err := x86asm.Decode(code[off:], 64)
		return in, err == nil
	}
	jmp, ok := dec(j)
	if !ok || jmp.Op != x86asm.JMP {
		return jumpTable{}, false
	}
	reg, ok := jmp.Args[0].(x86asm.Reg)
	if !ok {
		return jumpTable{}, false
	}
	var jt jumpTable
	var base, idx x86asm.Reg
	const (
		wantAdd = iota
		wantMovslq
		wantLea // or the ja, the lea being earlier
		wantJa
		wantCmp
		done
		wantLeaOnly // past an and that bounds idx: the lea, if base keeps it
	)
	want := wantAdd
	for k := len(recent) - 1; k >= 0 && want != done; k-- {
		in, ok := dec(recent[k])
		if !ok {
			return jumpTable{}, false
		}
		r0, _ := in.Args[0].(x86asm.Reg)
		if want == wantLeaOnly {
			if m, isMem := in.Args[1].(x86asm.Mem); in.Op == x86asm.LEA && r0 == base && isMem && m.Base == x86asm.RIP && m.Index == 0 {
				jt.table = at + uint64(recent[k]+in.Len) + uint64(m.Disp)
				break
			}
			if r0 != 0 && family(r0) == jt.base && in.Op != x86asm.CMP && in.Op != x86asm.TEST && in.Op != x86asm.PUSH {
				break // base is set otherwise: any table it may hold (sweep)
			}
			continue
		}
		switch want {
		case wantAdd:
			b, isReg := in.Args[1].(x86asm.Reg)
			if in.Op != x86asm.ADD || r0 != reg || !isReg {
				return jumpTable{}, false
			}
			base = b
			jt.base = family(b)
		case wantMovslq:
			m, isMem := in.Args[1].(x86asm.Mem)
			if in.Op != x86asm.MOVSXD || r0 != reg || !isMem || m.Base != base || m.Scale != 4 || m.Disp != 0 || m.Segment != 0 {
				return jumpTable{}, false
			}
			idx = m.Index
		case wantLea:
			if m, isMem := in.Args[1].(x86asm.Mem); in.Op == x86asm.LEA && r0 == base && isMem && m.Base == x86asm.RIP && m.Index == 0 {
				jt.table = at + uint64(recent[k]+in.Len) + uint64(m.Disp)
				break
			}
			want++
			fallthrough
		case wantJa:
			if in.Op == x86asm.MOV && r0 != 0 && family(r0) == family(idx) {
				if r1, _ := in.Args[1].(x86asm.Reg); r1 == r0 {
					continue // mov %eax,%eax: zero-extends idx
				}
			}
			if imm, isImm := in.Args[1].(x86asm.Imm); in.Op == x86asm.AND && wide(r0) && family(r0) == family(idx) && isImm && imm >= 0 && imm <= 4096 {
				// and $mask, %idx: idx is at most mask (a 32-bit and
				// clears the upper half).
				jt.n = uint64(imm) + 1
				if jt.table == 0 {
					want = wantLeaOnly
					continue
				}
				want = done
				continue
			}
			if in.Op != x86asm.JA && in.Op != x86asm.JAE {
				return jumpTable{}, false
			}
			jt.n = 1 // ja: max is a case; jae: it is not
			if in.Op == x86asm.JAE {
				jt.n = 0
			}
		case wantCmp:
			imm, isImm := in.Args[1].(x86asm.Imm)
			if in.Op != x86asm.CMP || r0 == 0 || family(r0) != family(idx) || !isImm || imm < 0 || imm > 4096 {
				return jumpTable{}, false
			}
			jt.n += uint64(imm)
		}
		want++
	}
	return jt, (want == done || want == wantLeaOnly) && jt.base != 0
}

// wide says whether r is a 32- or 64-bit general-purpose register, whose
// writes leave none of the register's old bits.
func wide(r x86asm.Reg) bool {
	return r >= x86asm.EAX && r <= x86asm.R15L || r >= x86asm.RAX && r <= x86asm.R15
}

// leaRIP reads lea disp(%rip), %reg: the register's family and the
// displacement. Decoded by hand: the sweep meets a lea every few
// instructions, and x86asm would cost a library's sweep tens of ms.
func leaRIP(in []byte) (int, int32, bool) {
	i := opcode(in)
	if in[i] != 0x8d || i+6 > len(in) || in[i+1]>>6 != 0 || in[i+1]&7 != 5 {
		return 0, 0, false
	}
	reg := int(in[i+1]>>3) & 7
	for _, p := range in[:i] {
		if p&0xf0 == 0x40 && p&4 != 0 {
			reg += 8 // REX.R
		}
		if p == 0x66 || p == 0x67 {
			return 0, 0, false // a 16-bit register, a 32-bit address
		}
	}
	return reg + 1, int32(binary.LittleEndian.Uint32(in[i+2:])), true
}

// family names a general-purpose register whatever its width (al, ax, eax
// and rax are one), 0 for any other (ah, bh, ch and dh too).
func family(r x86asm.Reg) int {
	switch {
	case r >= x86asm.AL && r <= x86asm.BL:
		return int(r-x86asm.AL) + 1
	case r >= x86asm.SPB && r <= x86asm.R15B:
		return int(r-x86asm.SPB) + 5
	case r >= x86asm.AX && r <= x86asm.R15W:
		return int(r-x86asm.AX) + 1
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return int(r-x86asm.EAX) + 1
	case r >= x86asm.RAX && r <= x86asm.R15:
		return int(r-x86asm.RAX) + 1
	}
	return 0
}

// read returns n bytes of the file at link-time address a, if a loaded
// segment holds them.
func (l *Layout) read(data []byte, a uint64, n int) ([]byte, bool) {
	for _, s := range l.segments {
		if a >= s.vaddr && a+uint64(n) <= s.vaddr+s.size {
			off := s.offset + (a - s.vaddr)
			if off+uint64(n) <= uint64(len(data)) {
				return data[off : off+uint64(n)], true
			}
		}
	}
	return nil, false
}

// Kinds of branch (branchOf).
const (
	branchNone = iota
	branchDirect
	branchIndirect
	branchOther // returns, interrupts, far transfers: no target in the code
)

// opcode returns the offset of an instruction's opcode, past its legacy and
// REX prefixes.
func opcode(in []byte) int {
	i := 0
	for i < len(in)-1 && (isLegacyPrefix(in[i]) || in[i]&0xf0 == 0x40) {
		i++
	}
	return i
}

// branchOf says whether instruction in transfers control, and for a direct
// jump or call its displacement from the next instruction.
func branchOf(in []byte) (int, int64) {
	i := opcode(in)
	op := in[i]
	rest := in[i+1:]
	switch {
	case op >= 0x70 && op <= 0x7f, op >= 0xe0 && op <= 0xe3, op == 0xeb:
		if len(rest) < 1 {
			return branchOther, 0
		}
		return branchDirect, int64(int8(rest[0]))
	case op == 0xe8 || op == 0xe9:
		if len(rest) != 4 {
			return branchOther, 0 // a 16-bit displacement: not in compiled code
		}
		return branchDirect, int64(int32(binary.LittleEndian.Uint32(rest)))
	case op == 0x0f && len(rest) == 5 && rest[0] >= 0x80 && rest[0] <= 0x8f:
		return branchDirect, int64(int32(binary.LittleEndian.Uint32(rest[1:])))
	case op == 0xff && len(rest) >= 1:
		switch (rest[0] >> 3) & 7 {
		case 4, 5:
			return branchIndirect, 0
		case 2, 3:
			return branchOther, 0 // indirect calls go to functions' starts
		}
	case op == 0xc2 || op == 0xc3 || op == 0xca || op == 0xcb || op == 0xcc || op == 0xcd || op == 0xcf:
		return branchOther, 0
	}
	return branchNone, 0
}

// movable says whether instruction in runs the same at another address,
// and where in it the displacement of an operand relative to rip is (-1:
// none), which a copy elsewhere must adjust (Window.Rel): no control
// transfer, nothing the recorder traps or that reads where it is; plain
// one- and two-byte opcodes only.
func movable(in []byte) (bool, int) {
	if k, _ := branchOf(in); k != branchNone {
		return false, -1
	}
	i := opcode(in)
	op := in[i]
	var flags uint8
	switch {
	case op == 0xc4 || op == 0xc5 || op == 0x62 || op == 0x8f:
		return false, -1 // VEX, EVEX, XOP (and pop r/m): left alone
	case op == 0x0f:
		if i+1 >= len(in) {
			return false, -1
		}
		switch in[i+1] {
		case 0x01, 0x05, 0x0b, 0x31, 0x34, 0x38, 0x3a, 0xa2, 0xc7:
			// System instructions, syscall, ud2, rdtsc, sysenter, the
			// three-byte maps, cpuid, rdrand/rdseed.
			return false, -1
		}
		flags = twoByte[in[i+1]]
		i++
	default:
		flags = oneByte[op]
	}
	if flags&invalid != 0 {
		return false, -1
	}
	if flags&hasModRM != 0 {
		if i+1 >= len(in) {
			return false, -1
		}
		if m := in[i+1]; m>>6 == 0 && m&7 == 5 {
			if i+6 > len(in) {
				return false, -1
			}
			return true, i + 2 // rip-relative: the displacement follows ModRM
		}
	}
	return true, -1
}

// FindWindow returns the window to patch around the trapping instruction of
// length n at rip, in a mapping of the image that starts at start and holds
// the file from offset; false when there is none. With prev, the window
// holds the instruction before it too: the code reaches the trapping
// instruction only from that one (a window's instructions but its first
// are no jump's target).
func (im *Image) FindWindow(start, offset, rip uint64, n int, prev bool) (Window, bool) {
	fileOff := rip - start + offset
	// What was found before (in this recording or, through Seed, an
	// earlier one) needs neither the layout nor the file's bytes.
	if c, ok := im.cachedWindow(fileOff); ok && (!prev || !c.ok || c.Trap > 0) {
		return c.at(rip, c.site), c.ok
	}
	l := im.Layout()
	data := im.fileData()
	if l == nil || data == nil {
		return Window{}, false
	}
	site, found := l.linkAddr(fileOff)
	if !found {
		return Window{}, false
	}
	w, ok := im.findWindow(l, data, site, n, prev)
	im.cacheWindow(fileOff, cachedWindow{w, site, ok})
	return w.at(rip, site), ok
}

// linkAddr is the link-time address of file offset off, in a code
// section.
func (l *Layout) linkAddr(off uint64) (uint64, bool) {
	for _, s := range l.sections {
		if off >= s.offset && off < s.offset+s.size {
			return s.vaddr + (off - s.offset), true
		}
	}
	return 0, false
}

// at is the window w, found at link-time address site, for the trapping
// instruction at runtime address rip.
func (w Window) at(rip, site uint64) Window {
	w.Start = rip - (site - w.Start)
	return w
}

// cachedWindow returns the window found before around the trapping
// instruction at file offset off.
func (im *Image) cachedWindow(off uint64) (cachedWindow, bool) {
	im.seedNow()
	im.mu.Lock()
	defer im.mu.Unlock()
	c, ok := im.windows[off]
	return c, ok
}

// cacheWindow keeps what findWindow found around the trapping instruction
// at file offset off.
func (im *Image) cacheWindow(off uint64, c cachedWindow) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.windows == nil {
		im.windows = map[uint64]cachedWindow{}
	}
	if _, ok := im.windows[off]; !ok {
		im.learned = true
	}
	im.windows[off] = c
}

// cachedWindow is a window at link-time addresses around the trapping
// instruction at link-time address site, or none.
type cachedWindow struct {
	Window
	site uint64
	ok   bool
}

// findWindow finds the window around the trapping instruction of length n
// at link-time address site: its Start a link-time address too.
func (im *Image) findWindow(l *Layout, data []byte, site uint64, n int, prev bool) (Window, bool) {
	fn, ok := l.funcAt(site)
	if !ok {
		return Window{}, false
	}
	f := im.flowOf(l, data, fn)
	if f == nil {
		return Window{}, false
	}
	code, ok := l.bytes(data, fn.start, fn.end)
	if !ok {
		return Window{}, false
	}
	lo, hi, ok := pickWindow(code, fn.start, site, n, prev, f.targets)
	if !ok {
		return Window{}, false
	}
	w := Window{
		Start: fn.start + uint64(lo),
		Code:  append([]byte(nil), code[lo:hi]...),
		Trap:  int(site-fn.start) - lo,
		Len:   n,
	}
	for i := 0; i < len(w.Code); {
		m, _ := insnLen(w.Code[i:])
		if i != w.Trap {
			if _, rel := movable(w.Code[i : i+m]); rel >= 0 {
				w.Rel = append(w.Rel, i+rel)
			}
		}
		i += m
	}
	return w, true
}

// canMove says whether instruction in may be moved (movable).
func canMove(in []byte) bool {
	ok, _ := movable(in)
	return ok
}

// pickWindow returns the smallest window [lo, hi) of the function code,
// at link-time address at, around the instruction of length n at site
// (that one first when lengths tie; with prev, starting before it), none
// of whose instructions but the first is one of targets.
func pickWindow(code []byte, at, site uint64, n int, prev bool, targets map[uint64]bool) (lo, hi int, ok bool) {
	var starts []int
	k := -1
	for i := 0; i < len(code); {
		m, err := insnLen(code[i:])
		if err != nil {
			return 0, 0, false
		}
		if at+uint64(i) == site {
			k = len(starts)
		}
		starts = append(starts, i)
		i += m
	}
	starts = append(starts, len(code))
	if k < 0 || starts[k+1]-starts[k] != n {
		return 0, 0, false
	}
	insn := func(i int) []byte { return code[starts[i]:starts[i+1]] }
	target := func(i int) bool { return targets[at+uint64(starts[i])] }
	best := 0
	for i := k; i >= 0 && i >= k-maxWindowInsns; i-- {
		if i < k && (!canMove(insn(i)) || target(i+1)) {
			break
		}
		if prev && i == k {
			continue
		}
		for j := k; j < len(starts)-1 && j <= k+maxWindowInsns; j++ {
			if j > k && (!canMove(insn(j)) || target(j)) {
				break
			}
			if size := starts[j+1] - starts[i]; size >= windowJump {
				if best == 0 || size < best {
					best, lo, hi = size, starts[i], starts[j+1]
				}
				break
			}
		}
	}
	return lo, hi, best != 0
}

// funcAt returns the smallest known function holding link-time address a.
func (l *Layout) funcAt(a uint64) (span, bool) {
	var best span
	found := false
	i := sort.Search(len(l.funcs), func(i int) bool { return l.funcs[i].start > a })
	for j := i - 1; j >= 0 && j >= i-64; j-- {
		fn := l.funcs[j]
		if a >= fn.start && a < fn.end && (!found || fn.end-fn.start < best.end-best.start) {
			best, found = fn, true
		}
	}
	return best, found
}

// Lands says whether a direct jump or call of the file's code, or a case
// of a switch, may land at rip+off for one of offs, in the function that
// holds rip (a preemption point whose patch would cover those
// instructions: replay takes a stop at each such landing). known is false
// where the file or the function cannot be analyzed (an indirect jump
// other than a switch's could land anywhere in it).
func (s *Space) Lands(rip uint64, offs []int) (lands, known bool) {
	fs := s.Files(rip, rip+1)
	if len(fs) != 1 {
		return false, false
	}
	f := fs[0]
	im := f.Image
	l := im.Layout()
	data := im.fileData()
	if l == nil || data == nil {
		return false, false
	}
	site, found := l.linkAddr(rip - f.Start + f.Offset)
	if !found {
		return false, false
	}
	fn, ok := l.funcAt(site)
	if !ok {
		return false, false
	}
	fl := im.flowOf(l, data, fn)
	if fl == nil {
		return false, false
	}
	for _, o := range offs {
		a := site + uint64(o)
		if a >= fn.end {
			return false, false // the run goes on into another function
		}
		if fl.targets[a] {
			return true, true
		}
	}
	return false, true
}

// TrapWindow finds the window to patch around the trapping instruction of
// n bytes at rip (with prev, and the one before it: FindWindow) in the
// address space s describes, whose memory is m:
// inside one mapping of a file, its code still the file's (nothing patched
// it over). Record and replay both ask it, so that they patch alike.
func (s *Space) TrapWindow(m Memory, rip uint64, n int, prev bool) (Window, bool) {
	fs := s.Files(rip, rip+1)
	if len(fs) != 1 {
		return Window{}, false
	}
	f := fs[0]
	w, ok := f.Image.FindWindow(f.Start, f.Offset, rip, n, prev)
	if !ok || w.Start < f.Start || w.End() > f.End {
		return Window{}, false
	}
	code := make([]byte, len(w.Code))
	if _, err := m.ReadAt(code, w.Start); err != nil || !bytes.Equal(code, w.Code) {
		return Window{}, false
	}
	return w, true
}
