package debugger

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
)

// info frame, as gdb 13 writes it: the frame's identity (its CFA, which an
// inlined frame shares with the frame it is inlined into), where its
// caller resumes, its neighbours, gdb's frame base for the arguments and
// locals, and where the frame's code saved its caller's registers.

// gdbRegOrder is the DWARF numbers of the general registers in gdb's
// order (info registers, info frame).
var gdbRegOrder = []int{dwarf.RegRAX, dwarf.RegRBX, dwarf.RegRCX, dwarf.RegRDX, dwarf.RegRSI, dwarf.RegRDI,
	dwarf.RegRBP, dwarf.RegRSP, 8, 9, 10, 11, 12, 13, 14, dwarf.RegR15, dwarf.RegRIP}

// cmdInfoFrame describes the selected frame as gdb's info frame does.
func (s *Session) cmdInfoFrame(res *Result) error {
	f, frames, err := s.selectedFrame()
	if err != nil {
		return err
	}
	level := s.frame
	fi := s.frameInfo(frames, level)
	val := FrameDetail{Level: level, CFA: fmt.Sprintf("%#x", f.CFA), PC: fmt.Sprintf("%#x", f.PC), Function: fi.Function}
	var b strings.Builder
	fmt.Fprintf(&b, "Stack level %d, frame at %#x:\n", level, f.CFA)
	where := fi.Function
	if fi.FullName != "" {
		// gdb names the file as the line table does here.
		where += fmt.Sprintf(" (%s:%d)", fi.FullName, fi.Line)
	}
	fmt.Fprintf(&b, " rip = %#x in %s; saved rip = ", f.PC, where)
	// The caller of an inlined frame's code is that of the frame it is
	// inlined into.
	if ret, ok := s.savedPC(frames, physicalFrame(frames, level)); ok {
		fmt.Fprintf(&b, "%#x\n", ret)
		val.SavedRIP = fmt.Sprintf("%#x", ret)
	} else {
		b.WriteString("<not saved>\n")
	}
	var links []string
	switch {
	case level+1 >= len(frames):
		// gdb does not go past main, nor past the outermost frame.
	case f.Inlined:
		links = append(links, fmt.Sprintf(" inlined into frame %d", level+1))
		val.InlinedInto = level + 1
	default:
		links = append(links, fmt.Sprintf(" called by frame at %#x", frames[level+1].CFA))
		val.CallerCFA = fmt.Sprintf("%#x", frames[level+1].CFA)
	}
	if level > 0 {
		links = append(links, fmt.Sprintf(" caller of frame at %#x", frames[level-1].CFA))
	}
	if len(links) > 0 {
		b.WriteString(strings.Join(links, ",") + "\n")
	}
	if lang := langName(f.Function); lang != "" {
		fmt.Fprintf(&b, " source language %s.\n", lang)
		val.Language = lang
	}
	if base, ok := s.frameBase(frames, level); ok {
		var args []string
		for _, a := range fi.Args {
			args = append(args, argText(a))
		}
		fmt.Fprintf(&b, " Arglist at %#x, args: %s\n Locals at %#x,", base, strings.Join(args, ", "), base)
	} else {
		// An inlined call has no frame of its own to find them in.
		b.WriteString(" Arglist at unknown address.\n Locals at unknown address,")
	}
	saved, sp, ok := frameSaves(frames, level)
	if ok {
		fmt.Fprintf(&b, " Previous frame's sp is %#x", sp)
	} else {
		b.WriteString(" Previous frame's sp in rsp")
	}
	var at []string
	for _, n := range gdbRegOrder {
		if saved[n] != 0 && n != dwarf.RegRSP {
			at = append(at, fmt.Sprintf("%s at %#x", dwarf.RegName(uint64(n)), saved[n]))
		}
	}
	if len(at) > 0 {
		b.WriteString("\n Saved registers:\n  " + strings.Join(at, ", "))
	}
	res.Value, res.Text = val, b.String()
	return nil
}

// savedPC is where the physical frame at level returns to: the next
// frame's pc, or read where the frame saved it (main's caller, which the
// backtrace does not show).
func (s *Session) savedPC(frames []dwarf.Frame, level int) (uint64, bool) {
	if level+1 < len(frames) {
		return frames[level+1].PC, true
	}
	at := frames[level].Saved[dwarf.RegRIP]
	if at == 0 {
		return 0, false
	}
	ret, err := s.readWord(at)
	return ret, err == nil
}

// readWord reads 8 bytes of the replay's memory.
func (s *Session) readWord(addr uint64) (uint64, error) {
	var w [8]byte
	if _, err := s.mem().ReadAt(w[:], addr); err != nil {
		return 0, fmt.Errorf("reading %#x: %w", addr, err)
	}
	return binary.LittleEndian.Uint64(w[:]), nil
}

// frameSaves is where the caller's registers of the frame at level are
// saved, and the caller's sp; ok is false when they are the registers
// themselves. An inlined frame's caller registers are those of the frame
// below it, as gdb unwinds them (none below frame 0).
func frameSaves(frames []dwarf.Frame, level int) (saved [dwarf.NumRegs]uint64, sp uint64, ok bool) {
	for ; level >= 0; level-- {
		if !frames[level].Inlined {
			return frames[level].Saved, frames[level].CFA, true
		}
	}
	return saved, 0, false
}

// frameBase is gdb's base of a frame's arguments and locals on x86-64
// (amd64_frame_base): rbp once the function's prologue has set it up,
// else the frame's sp less 8 (plus 8 after a push of rbp). An inlined
// frame has none.
func (s *Session) frameBase(frames []dwarf.Frame, level int) (uint64, bool) {
	f := frames[level]
	if f.Inlined || !f.Regs.Valid[dwarf.RegRSP] {
		return 0, false
	}
	pushed, framed := s.prologueAt(s.frameEntry(f), f.PC)
	switch {
	case framed && f.Regs.Valid[dwarf.RegRBP]:
		return f.Regs.R[dwarf.RegRBP], true
	case pushed:
		return f.Regs.SP(), true
	}
	return f.Regs.SP() - 8, true
}

// prologueAt reads what the code of a function starting at start did
// before pc, as gdb's amd64_analyze_prologue: push %rbp (after an
// endbr64), then mov %rsp,%rbp.
func (s *Session) prologueAt(start, pc uint64) (pushed, framed bool) {
	if start == 0 || pc <= start {
		return false, false
	}
	var code [8]byte
	n, _ := s.mem().ReadAt(code[:], start)
	c := code[:n]
	if len(c) >= 4 && string(c[:4]) == "\xf3\x0f\x1e\xfa" { // endbr64
		c, start = c[4:], start+4
		if pc <= start {
			return false, false
		}
	}
	if len(c) == 0 || c[0] != 0x55 { // push %rbp
		return false, false
	}
	if pc <= start+1 || len(c) < 4 {
		return true, false
	}
	mov := string(c[1:4])
	framed = mov == "\x48\x89\xe5" || mov == "\x48\x8b\xec" || mov[:2] == "\x89\xe5" || mov[:2] == "\x8b\xec"
	return true, framed
}

// langName is gdb's name of a function's source language ("" unknown).
func langName(fn *dwarf.Function) string {
	if fn == nil {
		return ""
	}
	return map[dwarf.Lang]string{dwarf.LangC: "c", dwarf.LangCPlusPlus: "c++", dwarf.LangRust: "rust", dwarf.LangGo: "go"}[fn.Lang()]
}
