package patch

import (
	"encoding/binary"
	"sort"
)

// Windows: the code a jump to a stub may replace around a short trapping
// instruction (cpuid: two bytes, where a jump takes five). The jump covers
// whole instructions, the trapping one among them; the stub runs the others
// where they were (before or after it) and comes back after the window.
// That is only right when nothing jumps into the window but to its first
// instruction, which a sweep of every function of the file tells for
// direct jumps; a function with an indirect jump (a switch's table) could
// go anywhere in itself, and gets no window. The others in a window must
// run the same anywhere: no branch, call or return, nothing addressed
// relative to rip, no other trapping instruction.

// windowJump is the length of the jump that replaces a window.
const windowJump = 5

// maxWindowInsns bounds the instructions a window takes on either side of
// the trapping one.
const maxWindowInsns = 3

// flow is what a sweep of an image's functions tells about jumps: the
// link-time addresses direct jumps and calls go to, and the functions that
// jump indirectly or could not be decoded (whose code gets no window).
type flow struct {
	data    []byte
	targets map[uint64]bool
	opaque  []span
}

// Window is the code a patch replaces around a trapping instruction, with
// what the stub needs to run it elsewhere.
type Window struct {
	Start uint64 // the runtime address of its first instruction
	Code  []byte // its bytes
	Trap  int    // the offset of the trapping instruction in Code
	Len   int    // the trapping instruction's length
}

// End is the address after the window.
func (w Window) End() uint64 { return w.Start + uint64(len(w.Code)) }

// flowOf sweeps the image's functions once.
func (im *Image) flowOf() *flow {
	im.flowOnce.Do(func() {
		l := im.Layout()
		if l == nil || im.data == nil {
			return
		}
		data, err := im.data()
		if err != nil {
			return
		}
		f := &flow{data: data, targets: map[uint64]bool{}}
		for _, fn := range l.funcs {
			code, ok := l.bytes(data, fn.start, fn.end)
			if !ok || !f.sweep(code, fn.start) {
				f.opaque = append(f.opaque, fn)
			}
		}
		im.flow = f
	})
	return im.flow
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
// direct jumps and calls go; false when it jumps indirectly or could not be
// decoded to its end.
func (f *flow) sweep(code []byte, at uint64) bool {
	for i := 0; i < len(code); {
		n, err := insnLen(code[i:])
		if err != nil {
			return false
		}
		in := code[i : i+n]
		next := at + uint64(i+n)
		switch k, rel := branchOf(in); k {
		case branchDirect:
			f.targets[next+uint64(rel)] = true
		case branchIndirect:
			return false
		}
		i += n
	}
	return true
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

// movable says whether instruction in runs the same at another address:
// no control transfer, no operand relative to rip, nothing the recorder
// traps or that reads where it is; plain one- and two-byte opcodes only.
func movable(in []byte) bool {
	if k, _ := branchOf(in); k != branchNone {
		return false
	}
	i := opcode(in)
	op := in[i]
	var flags uint8
	switch {
	case op == 0xc4 || op == 0xc5 || op == 0x62 || op == 0x8f:
		return false // VEX, EVEX, XOP (and pop r/m): left alone
	case op == 0x0f:
		if i+1 >= len(in) {
			return false
		}
		switch in[i+1] {
		case 0x01, 0x05, 0x0b, 0x31, 0x34, 0x38, 0x3a, 0xa2, 0xc7:
			// System instructions, syscall, ud2, rdtsc, sysenter, the
			// three-byte maps, cpuid, rdrand/rdseed.
			return false
		}
		flags = twoByte[in[i+1]]
		i++
	default:
		flags = oneByte[op]
	}
	if flags&invalid != 0 {
		return false
	}
	if flags&hasModRM != 0 {
		if i+1 >= len(in) {
			return false
		}
		if m := in[i+1]; m>>6 == 0 && m&7 == 5 {
			return false // rip-relative
		}
	}
	return true
}

// FindWindow returns the window to patch around the trapping instruction of
// length n at rip, in a mapping of the image that starts at start and holds
// the file from offset; false when there is none.
func (im *Image) FindWindow(start, offset, rip uint64, n int) (Window, bool) {
	l := im.Layout()
	f := im.flowOf()
	if l == nil || f == nil {
		return Window{}, false
	}
	fileOff := rip - start + offset
	var site uint64
	found := false
	for _, s := range l.sections {
		if fileOff >= s.offset && fileOff < s.offset+s.size {
			site, found = s.vaddr+(fileOff-s.offset), true
			break
		}
	}
	if !found {
		return Window{}, false
	}
	fn, ok := l.funcAt(site)
	if !ok {
		return Window{}, false
	}
	for _, o := range f.opaque {
		if o.start < fn.end && fn.start < o.end {
			return Window{}, false
		}
	}
	code, ok := l.bytes(f.data, fn.start, fn.end)
	if !ok {
		return Window{}, false
	}
	lo, hi, ok := pickWindow(code, fn.start, site, n, f.targets)
	if !ok {
		return Window{}, false
	}
	return Window{
		Start: rip - (site - (fn.start + uint64(lo))),
		Code:  append([]byte(nil), code[lo:hi]...),
		Trap:  int(site-fn.start) - lo,
		Len:   n,
	}, true
}

// pickWindow returns the smallest window [lo, hi) of the function code,
// at link-time address at, around the instruction of length n at site
// (that one first when lengths tie), none of whose instructions but the
// first is one of targets.
func pickWindow(code []byte, at, site uint64, n int, targets map[uint64]bool) (lo, hi int, ok bool) {
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
		if i < k && (!movable(insn(i)) || target(i+1)) {
			break
		}
		for j := k; j < len(starts)-1 && j <= k+maxWindowInsns; j++ {
			if j > k && (!movable(insn(j)) || target(j)) {
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
