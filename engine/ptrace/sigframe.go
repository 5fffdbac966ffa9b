package ptrace

import (
	"encoding/binary"
	"fmt"
)

// The x86-64 signal frame (the kernel's struct rt_sigframe), as far as its
// size needs: the return address, the ucontext, the siginfo, and above
// them the FPU state the sigcontext points at, an XSAVE area whose
// software bytes say how long it is.
const (
	frameFPStateOff = 8 + 40 + 184 // pretcode, the ucontext's head, sigcontext.fpstate
	frameNoFPSize   = 8 + 304 + 128
	fxsaveSize      = 512
	fxSWBytesOff    = 464 // struct _fpx_sw_bytes in the fxsave area
	fpXstateMagic1  = 0x46505853
	maxFrameSize    = 64 << 10
)

// SignalFrame reads the signal frame the kernel built at rsp, where a
// thread stands at its handler's first instruction: the return address,
// the ucontext and siginfo, and the FPU state up to its end. Parts of it
// (the last fault's trapno, error code and cr2, the XSAVE header) differ
// from one run to the next; what a later function leaves uninitialized on
// the stack may read them.
func SignalFrame(m *Mem, rsp uint64) ([]byte, error) {
	b := make([]byte, frameFPStateOff+8)
	if _, err := m.ReadAt(b, rsp); err != nil {
		return nil, fmt.Errorf("signal frame at %#x: %w", rsp, err)
	}
	fp := binary.LittleEndian.Uint64(b[frameFPStateOff:])
	end := rsp + frameNoFPSize
	if fp != 0 {
		end = fp + fxsaveSize
		var sw [8]byte
		if _, err := m.ReadAt(sw[:], fp+fxSWBytesOff); err == nil && binary.LittleEndian.Uint32(sw[:]) == fpXstateMagic1 {
			end = fp + uint64(binary.LittleEndian.Uint32(sw[4:]))
		}
		if fp < rsp+frameNoFPSize || end-rsp > maxFrameSize {
			return nil, fmt.Errorf("signal frame at %#x: its FPU state at %#x (to %#x) is not above it", rsp, fp, end)
		}
	}
	b = make([]byte, end-rsp)
	if _, err := m.ReadAt(b, rsp); err != nil {
		return nil, fmt.Errorf("signal frame at %#x: %w", rsp, err)
	}
	return b, nil
}

// The FPU state of a signal frame: an fxsave area whose reserved tail
// holds the kernel's software bytes (struct _fpx_sw_bytes: magic, the
// state's length with the closing magic, the features saved, the XSAVE
// length), the XSAVE header (XSTATE_BV first), the components at the
// offsets of the standard format, and the closing magic.
const (
	fxSWExtendedOff   = fxSWBytesOff + 4
	fxSWXfeaturesOff  = fxSWBytesOff + 8
	fxSWXstateSizeOff = fxSWBytesOff + 16
	fxSWEnd           = fxSWBytesOff + 20
	xstateBVOff       = fxsaveSize
	xsaveHeaderEnd    = fxsaveSize + 64
	fpXstateMagic2    = 0x46505845
	xfeaturePKRU      = 9
	// FrameInfoOff and FrameUCOff are where a frame's siginfo and
	// ucontext lie (the handler's second and third arguments).
	FrameInfoOff = 8 + 304
	FrameUCOff   = 8
)

// FrameFPState returns the offset in b, a frame SignalFrame read at rsp,
// of its FPU state, which runs to b's end; false for a frame without one.
func FrameFPState(b []byte, rsp uint64) (int, bool) {
	if len(b) < frameFPStateOff+8 {
		return 0, false
	}
	fp := binary.LittleEndian.Uint64(b[frameFPStateOff:])
	if fp < rsp+frameNoFPSize || fp-rsp+fxsaveSize > uint64(len(b)) {
		return 0, false
	}
	return int(fp - rsp), true
}

// SameFPLayout says whether two frames' FPU states (from FrameFPState)
// were saved alike: same length, same features, so one CPU's restores the
// other's.
func SameFPLayout(a, b []byte) bool {
	return len(a) >= fxSWEnd && len(b) >= fxSWEnd && string(a[fxSWBytesOff:fxSWEnd]) == string(b[fxSWBytesOff:fxSWEnd])
}

// allZero says whether b holds only zeros.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// UserTop is the end of the user address space (4-level paging): the
// kernel's rt_sigreturn refuses an FPU state that does not end below it.
const UserTop = 0x7ffffffff000

// LowerFPState moves the FPU state of the signal frame at frame, which a
// thread is about to return from (rt_sigreturn), below the frame, where
// full bytes fit below UserTop: the kernel checks that its whole length
// (full) is user memory, and a frame placed by a CPU with a shorter state
// near the top of the stack leaves less. Below the frame is the stack the
// handler has left.
func LowerFPState(m *Mem, frame uint64, full int) error {
	var p [8]byte
	if _, err := m.ReadAt(p[:], frame+frameFPStateOff); err != nil {
		return fmt.Errorf("signal frame at %#x: %w", frame, err)
	}
	fp := binary.LittleEndian.Uint64(p[:])
	if fp == 0 || fp+uint64(full) <= UserTop {
		return nil
	}
	var sw [8]byte
	if _, err := m.ReadAt(sw[:], fp+fxSWBytesOff); err != nil || binary.LittleEndian.Uint32(sw[:]) != fpXstateMagic1 {
		return fmt.Errorf("signal frame at %#x: no XSAVE state at %#x", frame, fp)
	}
	st := make([]byte, binary.LittleEndian.Uint32(sw[4:]))
	if _, err := m.ReadAt(st, fp); err != nil {
		return fmt.Errorf("signal frame at %#x: %w", frame, err)
	}
	to := (frame - uint64(full)) &^ 63
	if _, err := m.WriteAt(st, to); err != nil {
		return fmt.Errorf("move the FPU state of the signal frame at %#x to %#x: %w", frame, to, err)
	}
	binary.LittleEndian.PutUint64(p[:], to)
	if _, err := m.WriteAt(p[:], frame+frameFPStateOff); err != nil {
		return fmt.Errorf("move the FPU state of the signal frame at %#x: %w", frame, err)
	}
	return nil
}

// FitFPState fits st, the FPU state this machine's kernel saved in a
// signal frame (its XSAVE layout), into room bytes: the length of the
// state in the recorded frame, which replay on a CPU of another layout
// puts this one's in, so that the frame lies where it was recorded and
// rt_sigreturn restores the registers. A longer state is cut after its
// last component in use (XSTATE_BV; XRSTOR initializes the rest from the
// features alone; one that holds zeros counts as unused), without PKRU if
// that is still too long (rt_sigreturn
// then leaves the key rights the handler ran with, the default ones). comp
// gives a component's offset and size in the standard format (cpuid leaf
// 0xd).
func FitFPState(st []byte, room int, comp func(i uint32) (off, size uint32)) ([]byte, error) {
	if len(st) <= room {
		return st, nil
	}
	if len(st) < xsaveHeaderEnd || binary.LittleEndian.Uint32(st[fxSWBytesOff:]) != fpXstateMagic1 {
		return nil, fmt.Errorf("an FPU state of %d bytes without XSAVE, for %d", len(st), room)
	}
	features := binary.LittleEndian.Uint64(st[fxSWXfeaturesOff:])
	inUse := binary.LittleEndian.Uint64(st[xstateBVOff:])
	need := func() int {
		n := xsaveHeaderEnd
		for i := uint32(2); i < 64; i++ {
			if inUse&(1<<i) != 0 {
				off, size := comp(i)
				n = max(n, int(off+size))
			}
		}
		return n
	}
	n := need()
	if n+4 > room {
		// A component in use that holds zeros holds its initial state
		// (AMD's CPUs say AVX-512's in use once the kernel touched them).
		for i := uint32(2); i < 64; i++ {
			if inUse&(1<<i) == 0 || i == xfeaturePKRU {
				continue
			}
			if off, size := comp(i); int(off+size) <= len(st) && allZero(st[off:off+size]) {
				inUse &^= 1 << i
			}
		}
		n = need()
	}
	if n+4 > room && inUse&(1<<xfeaturePKRU) != 0 {
		inUse &^= 1 << xfeaturePKRU
		features &^= 1 << xfeaturePKRU
		n = need()
	}
	if n+4 > room || n > len(st) {
		return nil, fmt.Errorf("the recorded frame has room for %d bytes of FPU state, this CPU's needs %d", room, n+4)
	}
	out := make([]byte, n+4)
	copy(out, st[:n])
	binary.LittleEndian.PutUint64(out[xstateBVOff:], inUse)
	binary.LittleEndian.PutUint64(out[fxSWXfeaturesOff:], features)
	binary.LittleEndian.PutUint32(out[fxSWXstateSizeOff:], uint32(n))
	binary.LittleEndian.PutUint32(out[fxSWExtendedOff:], uint32(n+4))
	binary.LittleEndian.PutUint32(out[n:], fpXstateMagic2)
	return out, nil
}
