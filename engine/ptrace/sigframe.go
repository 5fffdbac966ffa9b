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
