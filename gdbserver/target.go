package gdbserver

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// regThread is the thread register reads are for.
func (sv *Server) regThread() int32 {
	if sv.gThread > 0 && sv.threadAlive(sv.gThread) {
		return sv.gThread
	}
	return sv.currentThread()
}

// regSource reads what registers of thread tid come from.
func (sv *Server) regSource(tid int32) (*regSource, error) {
	live := sv.s.Timeline().Session()
	gp, err := live.Regs(tid)
	if err != nil {
		return nil, err
	}
	src := &regSource{gp: gp}
	// Without the FPU state the general registers are still worth
	// showing: the x87/SSE ones read as zeros.
	if fx, err := live.FPRegs(tid); err == nil {
		src.fx = fx
	}
	if sv.avx {
		if xs, err := live.XState(tid); err == nil {
			src.xsave = xs
		}
	}
	return src, nil
}

// hasAVX says whether the machine gives the AVX state of the replay's
// threads (the XSAVE area has room for the ymm upper halves).
func (sv *Server) hasAVX() bool {
	xs, err := sv.s.Timeline().Session().XState(sv.currentThread())
	return err == nil && len(xs) >= xsaveAVXOffset+16*16
}

// readAllRegisters is g: every register in regnum order, in hex.
func (sv *Server) readAllRegisters() string {
	src, err := sv.regSource(sv.regThread())
	if err != nil {
		sv.logf("g: %v", err)
		return "E01"
	}
	var b strings.Builder
	for _, r := range registers(sv.avx) {
		b.WriteString(hex.EncodeToString(r.value(src)))
	}
	return b.String()
}

// readRegister is p N.
func (sv *Server) readRegister(p string) string {
	n, err := strconv.ParseUint(p, 16, 16)
	regs := registers(sv.avx)
	if err != nil || n >= uint64(len(regs)) {
		return "E01"
	}
	src, err := sv.regSource(sv.regThread())
	if err != nil {
		sv.logf("p: %v", err)
		return "E01"
	}
	return hex.EncodeToString(regs[n].value(src))
}

// readMemory is m ADDR,LEN: what can be read of the range (gdb asks again
// for the rest), or E01 when nothing can.
func (sv *Server) readMemory(p string) string {
	addr, n, ok := parseAddrLen(p)
	if !ok {
		return "E01"
	}
	n = min(n, MaxPacket/2)
	b, err := sv.s.Timeline().Session().ReadMem(addr, int(n))
	if len(b) == 0 && (err != nil || n > 0) {
		return "E01"
	}
	return hex.EncodeToString(b)
}

// Auxiliary vector entries the library list needs.
const (
	atPHDR  = 3
	atPHNUM = 5
	atEntry = 9
)

// auxv is the replaying process's auxiliary vector: the same program with
// the same layout (no ASLR) as in the recording.
func (sv *Server) auxv() ([]byte, error) {
	real, ok := sv.realTid(sv.currentThread())
	if !ok {
		return nil, errors.New("no thread")
	}
	return os.ReadFile(fmt.Sprintf("/proc/%d/auxv", real))
}

// auxvEntry finds an entry of the auxiliary vector.
func auxvEntry(auxv []byte, key uint64) (uint64, bool) {
	for i := 0; i+16 <= len(auxv); i += 16 {
		if k := binary.LittleEndian.Uint64(auxv[i:]); k == key {
			return binary.LittleEndian.Uint64(auxv[i+8:]), true
		} else if k == 0 {
			break
		}
	}
	return 0, false
}

// readWord reads a little-endian word of the replay's memory.
func (sv *Server) readWord(addr uint64) (uint64, error) {
	b, err := sv.s.Timeline().Session().ReadMem(addr, 8)
	if len(b) < 8 {
		if err == nil {
			err = errors.New("short read")
		}
		return 0, fmt.Errorf("reading %#x: %w", addr, err)
	}
	return binary.LittleEndian.Uint64(b), nil
}

// readString reads a NUL-terminated string of at most 4096 bytes.
func (sv *Server) readString(addr uint64) string {
	b, _ := sv.s.Timeline().Session().ReadMem(addr, 4096)
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// rDebug finds the dynamic loader's r_debug through the executable's
// DT_DEBUG entry: program headers at AT_PHDR, the load bias from PT_PHDR,
// the dynamic section from PT_DYNAMIC. 0 when the loader has not filled it
// in yet (or the program is static).
func (sv *Server) rDebug(auxv []byte) (uint64, error) {
	phdr, ok1 := auxvEntry(auxv, atPHDR)
	phnum, ok2 := auxvEntry(auxv, atPHNUM)
	if !ok1 || !ok2 || phnum > 256 {
		return 0, errors.New("no program headers in the auxiliary vector")
	}
	hdrs, err := sv.s.Timeline().Session().ReadMem(phdr, int(phnum)*56)
	if len(hdrs) < int(phnum)*56 {
		return 0, fmt.Errorf("reading the program headers: %w", err)
	}
	var bias, dyn uint64
	for i := range int(phnum) {
		h := hdrs[i*56:]
		switch binary.LittleEndian.Uint32(h) {
		case 6: // PT_PHDR
			bias = phdr - binary.LittleEndian.Uint64(h[16:])
		case 2: // PT_DYNAMIC
			dyn = binary.LittleEndian.Uint64(h[16:])
		}
	}
	if dyn == 0 {
		return 0, nil
	}
	for a := bias + dyn; ; a += 16 {
		tag, err := sv.readWord(a)
		if err != nil || tag == 0 {
			return 0, err
		}
		if tag == 21 { // DT_DEBUG
			return sv.readWord(a + 8)
		}
	}
}

// librariesSVR4 lists the loaded libraries from the loader's link map, as
// gdbserver does: gdb then reads their symbols at their load addresses.
// The first entry is the executable (main-lm).
func (sv *Server) librariesSVR4() ([]byte, error) {
	auxv, err := sv.auxv()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	r, err := sv.rDebug(auxv)
	if err != nil {
		return nil, err
	}
	var lm uint64
	if r != 0 {
		if lm, err = sv.readWord(r + 8); err != nil {
			return nil, err
		}
	}
	if lm == 0 {
		return []byte("<library-list-svr4 version=\"1.0\"/>"), nil
	}
	fmt.Fprintf(&b, "<library-list-svr4 version=\"1.0\" main-lm=\"%#x\">\n", lm)
	first := true
	for n := 0; lm != 0 && n < 4096; n++ {
		var f [4]uint64 // l_addr, l_name, l_ld, l_next
		for i := range f {
			if f[i], err = sv.readWord(lm + 8*uint64(i)); err != nil {
				return nil, err
			}
		}
		if name := sv.readString(f[1]); !first && name != "" {
			fmt.Fprintf(&b, "<library name=\"%s\" lm=\"%#x\" lmid=\"0x0\" l_addr=\"%#x\" l_ld=\"%#x\"/>\n", xmlEscape(name), lm, f[0], f[2])
		}
		first = false
		lm = f[3]
	}
	b.WriteString("</library-list-svr4>\n")
	return []byte(b.String()), nil
}

// execFile is the path of the running program: the file of the mapping
// that holds the entry point, as recorded (an exec'd program's own), else
// the recorded program.
func (sv *Server) execFile() ([]byte, error) {
	live := sv.s.Timeline().Session()
	if auxv, err := sv.auxv(); err == nil {
		if entry, ok := auxvEntry(auxv, atEntry); ok {
			maps, _ := live.Mappings()
			for _, m := range maps {
				if m.Start <= entry && entry < m.End && m.Path != "" {
					return []byte(m.Path), nil
				}
			}
		}
	}
	return []byte(sv.s.Header().Program), nil
}
