package dwarf

// This file unwinds the physical call stack with the call frame
// information of each image (.eh_frame and .debug_frame), falling back to
// frame pointers and prologue heuristics where there is none, and stepping
// through signal frames by reading the kernel's ucontext.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/frame"
)

// SignalFrameSymbol is the Symbol of the frame of the kernel's signal
// trampoline (glibc's __restore_rt), named as gdb shows it. The frame
// above it is the one the signal interrupted, at its exact pc.
const SignalFrameSymbol = "<signal handler called>"

// cfiTables is the call frame information of one image: its FDEs at
// run-time addresses, sorted by start address.
type cfiTables struct {
	eh    []*frame.FrameDescriptionEntry
	debug []*frame.FrameDescriptionEntry
	// errs records sections that could not be parsed, for diagnostics.
	errs []error
}

// cfiTables parses the image's .eh_frame and .debug_frame once.
func (img *Image) cfiTables() *cfiTables {
	img.cfiOnce.Do(func() {
		c := &cfiTables{}
		if data := img.Section(".eh_frame"); len(data) > 0 {
			// frame.Parse takes the section's link address to resolve
			// pc-relative pointers and adds the bias to every FDE.
			fdes, err := parseFrames(data, img.Bias, img.SectionAddr(".eh_frame"))
			if err != nil {
				c.errs = append(c.errs, fmt.Errorf(".eh_frame of %s: %w", img.Path, err))
			}
			c.eh = fdes
		}
		if data := img.Section(".debug_frame"); len(data) > 0 {
			fdes, err := parseFrames(data, img.Bias, 0)
			if err != nil {
				c.errs = append(c.errs, fmt.Errorf(".debug_frame of %s: %w", img.DebugPath, err))
			}
			c.debug = fdes
		}
		img.cfi = c
	})
	return img.cfi
}

func parseFrames(data []byte, bias, ehAddr uint64) (fdes []*frame.FrameDescriptionEntry, err error) {
	// delve's parser panics on truncated entries.
	defer func() {
		if r := recover(); r != nil {
			fdes, err = nil, fmt.Errorf("malformed call frame information: %v", r)
		}
	}()
	all, err := frame.Parse(data, binary.LittleEndian, bias, 8, ehAddr)
	if err != nil {
		return nil, err
	}
	for _, f := range all {
		if f.CIE != nil && f.End() > f.Begin() {
			fdes = append(fdes, f)
		}
	}
	sort.SliceStable(fdes, func(i, j int) bool { return fdes[i].Begin() < fdes[j].Begin() })
	return fdes, nil
}

// findFDE returns the FDE covering a run-time pc, .eh_frame first, and
// whether it comes from .eh_frame.
func (c *cfiTables) findFDE(pc uint64) (fde *frame.FrameDescriptionEntry, eh, ok bool) {
	for k, fdes := range [][]*frame.FrameDescriptionEntry{c.eh, c.debug} {
		i := sort.Search(len(fdes), func(i int) bool { return fdes[i].Begin() > pc })
		// FDEs may overlap (a zero-length one, or duplicates from linker
		// quirks): look at a few before the candidate.
		for j := i - 1; j >= 0 && j >= i-4; j-- {
			if fdes[j].Cover(pc) {
				return fdes[j], k == 0, true
			}
		}
	}
	return nil, false, false
}

// ruleKind is how a register of the caller is recovered.
type ruleKind uint8

const (
	ruleUnspecified ruleKind = iota
	ruleUndefined
	ruleSameValue
	ruleOffset        // saved at CFA+off
	ruleValOffset     // the value is CFA+off
	ruleRegister      // in register reg of this frame
	ruleExpression    // saved at the address expr computes
	ruleValExpression // the value expr computes
)

type regRule struct {
	kind ruleKind
	off  int64
	reg  uint64
	expr []byte
}

type cfaRule struct {
	reg  uint64
	off  int64
	expr []byte // DW_CFA_def_cfa_expression; nil for reg+off
}

// cfiRow is one row of the CFI table: how to find the CFA and the caller's
// registers. Registers beyond the general ones are parsed and ignored.
type cfiRow struct {
	cfa  cfaRule
	regs [NumRegs]regRule
}

// DW_CFA_* instructions.
const (
	cfaNop                  = 0x00
	cfaSetLoc               = 0x01
	cfaAdvanceLoc1          = 0x02
	cfaAdvanceLoc2          = 0x03
	cfaAdvanceLoc4          = 0x04
	cfaOffsetExtended       = 0x05
	cfaRestoreExtended      = 0x06
	cfaUndefined            = 0x07
	cfaSameValue            = 0x08
	cfaRegister             = 0x09
	cfaRememberState        = 0x0a
	cfaRestoreState         = 0x0b
	cfaDefCFA               = 0x0c
	cfaDefCFARegister       = 0x0d
	cfaDefCFAOffset         = 0x0e
	cfaDefCFAExpression     = 0x0f
	cfaExpression           = 0x10
	cfaOffsetExtendedSF     = 0x11
	cfaDefCFASF             = 0x12
	cfaDefCFAOffsetSF       = 0x13
	cfaValOffset            = 0x14
	cfaValOffsetSF          = 0x15
	cfaValExpression        = 0x16
	cfaGNUArgsSize          = 0x2e
	cfaGNUNegOffsetExtended = 0x2f
	cfaAdvanceLoc           = 0x40
	cfaOffset               = 0x80
	cfaRestore              = 0xc0
)

// opRule is the rule that each register-rule instruction sets: the
// "val" forms differ from the others only in it, not in their operands.
var opRule = map[byte]ruleKind{
	cfaOffsetExtended:   ruleOffset,
	cfaOffsetExtendedSF: ruleOffset,
	cfaValOffset:        ruleValOffset,
	cfaValOffsetSF:      ruleValOffset,
	cfaExpression:       ruleExpression,
	cfaValExpression:    ruleValExpression,
}

// cfiMachine runs CFA programs. delve's frame package interprets them too,
// but restores registers to "undefined" instead of the CIE's rule and does
// not scale DW_CFA_val_offset, so this is our own.
type cfiMachine struct {
	caf     uint64 // code alignment factor
	daf     int64  // data alignment factor
	bias    uint64
	loc     uint64
	row     cfiRow
	initial cfiRow
	stack   []cfiRow
}

func (m *cfiMachine) set(reg uint64, r regRule) {
	if reg < NumRegs {
		m.row.regs[reg] = r
	}
}

// run executes instructions; with limit it stops at the first row that
// starts after pc.
func (m *cfiMachine) run(ins []byte, pc uint64, limit, eh bool) error {
	r := &exprReader{b: ins}
	caf, daf := m.caf, m.daf
	for r.off < len(ins) && r.err == nil {
		op := r.u8()
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			m.loc += uint64(op&0x3f) * caf
			if limit && m.loc > pc {
				return nil
			}
			continue
		case cfaOffset:
			m.set(uint64(op&0x3f), regRule{kind: ruleOffset, off: int64(r.uleb()) * daf})
			continue
		case cfaRestore:
			reg := uint64(op & 0x3f)
			if reg < NumRegs {
				m.row.regs[reg] = m.initial.regs[reg]
			}
			continue
		}
		switch op {
		case cfaNop:
		case cfaSetLoc:
			if eh {
				// The operand uses the CIE's pointer encoding, which delve
				// keeps private; gcc and clang never emit this.
				return errors.New("DW_CFA_set_loc in .eh_frame is unsupported")
			}
			m.loc = r.uint(8) + m.bias
			if limit && m.loc > pc {
				return nil
			}
		case cfaAdvanceLoc1, cfaAdvanceLoc2, cfaAdvanceLoc4:
			n := map[byte]int{cfaAdvanceLoc1: 1, cfaAdvanceLoc2: 2, cfaAdvanceLoc4: 4}[op]
			m.loc += r.uint(n) * caf
			if limit && m.loc > pc {
				return nil
			}
		case cfaOffsetExtended, cfaValOffset:
			reg := r.uleb()
			m.set(reg, regRule{kind: opRule[op], off: int64(r.uleb()) * daf})
		case cfaOffsetExtendedSF, cfaValOffsetSF:
			reg := r.uleb()
			m.set(reg, regRule{kind: opRule[op], off: r.sleb() * daf})
		case cfaGNUNegOffsetExtended:
			reg := r.uleb()
			m.set(reg, regRule{kind: ruleOffset, off: -int64(r.uleb()) * daf})
		case cfaRestoreExtended:
			reg := r.uleb()
			if reg < NumRegs {
				m.row.regs[reg] = m.initial.regs[reg]
			}
		case cfaUndefined:
			m.set(r.uleb(), regRule{kind: ruleUndefined})
		case cfaSameValue:
			m.set(r.uleb(), regRule{kind: ruleSameValue})
		case cfaRegister:
			reg := r.uleb()
			m.set(reg, regRule{kind: ruleRegister, reg: r.uleb()})
		case cfaRememberState:
			m.stack = append(m.stack, m.row)
		case cfaRestoreState:
			if len(m.stack) == 0 {
				return errors.New("DW_CFA_restore_state without DW_CFA_remember_state")
			}
			// The CFA rule is part of the saved row too (DWARF 5 6.4.2.4).
			m.row = m.stack[len(m.stack)-1]
			m.stack = m.stack[:len(m.stack)-1]
		case cfaDefCFA:
			reg := r.uleb()
			m.row.cfa = cfaRule{reg: reg, off: int64(r.uleb())}
		case cfaDefCFASF:
			reg := r.uleb()
			m.row.cfa = cfaRule{reg: reg, off: r.sleb() * daf}
		case cfaDefCFARegister:
			m.row.cfa.reg, m.row.cfa.expr = r.uleb(), nil
		case cfaDefCFAOffset:
			m.row.cfa.off, m.row.cfa.expr = int64(r.uleb()), nil
		case cfaDefCFAOffsetSF:
			m.row.cfa.off, m.row.cfa.expr = r.sleb()*daf, nil
		case cfaDefCFAExpression:
			m.row.cfa = cfaRule{expr: r.bytes(r.uleb())}
		case cfaExpression, cfaValExpression:
			reg := r.uleb()
			m.set(reg, regRule{kind: opRule[op], expr: r.bytes(r.uleb())})
		case cfaGNUArgsSize:
			r.uleb()
		default:
			return fmt.Errorf("unsupported call frame instruction %#x", op)
		}
	}
	return r.err
}

// cieParams returns a CIE's alignment factors, return address column and
// initial instructions. delve's parser does not know the address_size and
// segment_selector_size fields of version 4 CIEs (clang's .debug_frame):
// it reads them as the alignment factors, and the real code alignment as
// the return address column, so those are decoded again here.
func cieParams(cie *frame.CommonInformationEntry) (caf uint64, daf int64, ra uint64, initial []byte, err error) {
	if cie.Version != 4 {
		return cie.CodeAlignmentFactor, cie.DataAlignmentFactor, cie.ReturnAddressRegister, cie.InitialInstructions, nil
	}
	if cie.CodeAlignmentFactor != 8 || cie.DataAlignmentFactor != 0 {
		return 0, 0, 0, nil, fmt.Errorf("CIE version 4 with address size %d and segment size %d", cie.CodeAlignmentFactor, cie.DataAlignmentFactor)
	}
	r := &exprReader{b: cie.InitialInstructions}
	caf = cie.ReturnAddressRegister
	daf = r.sleb()
	ra = r.uleb()
	return caf, daf, ra, cie.InitialInstructions[r.off:], r.err
}

// rowAt computes the CFI row of an FDE at pc and the return address
// column.
func rowAt(fde *frame.FrameDescriptionEntry, pc, bias uint64, eh bool) (cfiRow, uint64, error) {
	caf, daf, ra, initial, err := cieParams(fde.CIE)
	if err != nil {
		return cfiRow{}, 0, err
	}
	m := &cfiMachine{caf: caf, daf: daf, bias: bias}
	if err := m.run(initial, 0, false, eh); err != nil {
		return cfiRow{}, 0, fmt.Errorf("CIE instructions: %w", err)
	}
	m.initial = m.row
	m.stack = nil
	m.loc = fde.Begin()
	if err := m.run(fde.Instructions, pc, true, eh); err != nil {
		return cfiRow{}, 0, fmt.Errorf("FDE at %#x: %w", fde.Begin(), err)
	}
	return m.row, ra, nil
}

// Unwind returns the physical call stack from regs (frame 0 first): each
// frame with Level, PC, CFA, Regs (callee-saved registers recovered by the
// CFI rules, others invalid), Symbol (demangled "func" name from the ELF
// symbols, "" when unknown, SignalFrameSymbol for a signal trampoline). It
// stops at max frames, at a pc outside every image, at a zero or
// undefined return address, or when the CFA does not increase.
func (t *Table) Unwind(regs Regs, mem Memory, max int) []Frame {
	return t.unwind(regs, mem, max, true)
}

// unwind walks the stack; exact says whether the first frame's pc is
// where execution is (frame 0, or a frame a signal interrupted) rather
// than a return address.
func (t *Table) unwind(regs Regs, mem Memory, max int, exact bool) []Frame {
	var frames []Frame
	cur := regs
	var prevCFA uint64
	afterSignal := false
	for len(frames) < max && cur.Valid[RegRIP] {
		pc := cur.PC()
		img := t.ImageAt(pc)
		if img == nil && len(frames) > 0 {
			break
		}
		lookup := pc
		if !exact && pc > 0 {
			// A return address may be one past the end of a noreturn
			// call's function.
			lookup = pc - 1
		}
		f := Frame{Level: len(frames), PC: pc, Regs: cur}
		if s, _, ok := t.At(lookup); ok {
			f.Symbol = s.Name
		}
		var st unwindStep
		ok := false
		if img != nil {
			st, ok = t.step(img, &cur, mem, pc, lookup, exact)
		}
		f.CFA, f.Saved = st.cfa, st.saved
		if st.sigtramp {
			f.Symbol = SignalFrameSymbol
		}
		// A CFA that does not grow means a corrupt stack or a loop. Signal
		// frames may switch to an alternate stack and are exempt.
		if len(frames) > 0 && !afterSignal && !st.sigtramp && f.CFA != 0 && f.CFA <= prevCFA {
			break
		}
		frames = append(frames, f)
		if !ok || !st.caller.Valid[RegRIP] || st.caller.PC() == 0 {
			break
		}
		prevCFA, afterSignal, exact = f.CFA, st.signal || st.sigtramp, st.signal
		cur = st.caller
	}
	return frames
}

// unwindStep is the result of unwinding one frame.
type unwindStep struct {
	cfa    uint64
	caller Regs
	// sigtramp marks the kernel's signal trampoline frame.
	sigtramp bool
	// signal says that the caller was interrupted, not calling: its pc is
	// exact.
	signal bool
	// saved is where the frame saved the caller's registers (Frame.Saved).
	saved [NumRegs]uint64
}

func readU64(mem Memory, addr uint64) (uint64, error) {
	var b [8]byte
	if mem == nil {
		return 0, errors.New("no memory")
	}
	if _, err := mem.ReadAt(b[:], addr); err != nil {
		return 0, fmt.Errorf("read at %#x: %w", addr, err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// step unwinds one frame: the signal trampoline, then CFI, then the
// frame-pointer and prologue heuristics. exact says that pc is where the
// frame's execution is (frame 0, or a frame a signal interrupted), so that
// it may be at a function's first instruction.
func (t *Table) step(img *Image, cur *Regs, mem Memory, pc, lookup uint64, exact bool) (unwindStep, bool) {
	if isSigreturn(mem, pc) {
		return sigreturnStep(cur, mem)
	}
	c := img.cfiTables()
	if fde, eh, ok := c.findFDE(lookup); ok {
		if st, err := cfiStep(img, fde, cur, mem, lookup, eh); err == nil {
			return st, true
		}
	}
	return fallbackStep(img, cur, mem, pc, exact)
}

func cfiStep(img *Image, fde *frame.FrameDescriptionEntry, cur *Regs, mem Memory, pc uint64, eh bool) (unwindStep, error) {
	var st unwindStep
	row, ra, err := rowAt(fde, pc, img.Bias, eh)
	if err != nil {
		return st, err
	}
	ctx := &LocContext{Regs: cur, Mem: mem, Image: img}
	if row.cfa.expr != nil {
		st.cfa, err = evalAddress(row.cfa.expr, ctx, nil, 0)
		if err != nil {
			return st, fmt.Errorf("CFA expression: %w", err)
		}
	} else {
		v, err := readReg(cur, row.cfa.reg)
		if err != nil {
			return st, fmt.Errorf("CFA register: %w", err)
		}
		st.cfa = v + uint64(row.cfa.off)
	}
	ctx.CFA = st.cfa
	st.caller.FSBase = cur.FSBase
	st.caller.XMM, st.caller.HaveXMM = cur.XMM, cur.HaveXMM
	for r := uint64(0); r < NumRegs; r++ {
		rule := row.regs[r]
		var v uint64
		var err error
		switch rule.kind {
		case ruleUnspecified:
			switch {
			case r == RegRSP:
				v = st.cfa // the caller's sp before the call is the CFA
			case r != RegRIP && cur.Valid[r]:
				// gdb takes a register without a rule for the same in
				// the caller, the scratch ones too (a variable an outer
				// frame keeps in %rdi shows the inner frame's %rdi), as
				// it does the SSE registers.
				v = cur.R[r]
			default:
				continue
			}
		case ruleUndefined:
			continue
		case ruleSameValue:
			if !cur.Valid[r] {
				continue
			}
			v = cur.R[r]
		case ruleOffset:
			st.saved[r] = st.cfa + uint64(rule.off)
			v, err = readU64(mem, st.saved[r])
		case ruleValOffset:
			v = st.cfa + uint64(rule.off)
		case ruleRegister:
			v, err = readReg(cur, rule.reg)
		case ruleExpression:
			var addr uint64
			addr, err = evalAddress(rule.expr, ctx, []uint64{st.cfa}, 0)
			if err == nil {
				st.saved[r] = addr
				v, err = readU64(mem, addr)
			}
		case ruleValExpression:
			v, err = evalAddress(rule.expr, ctx, []uint64{st.cfa}, 0)
		}
		if err != nil {
			continue // the register is lost, not the whole frame
		}
		st.caller.Set(int(r), v)
	}
	if ra != RegRIP {
		// x86-64 CIEs name rip as the return address column; honour
		// another one by moving its value into rip.
		st.caller.Valid[RegRIP] = false
		if ra < NumRegs && st.caller.Valid[ra] {
			st.caller.Set(RegRIP, st.caller.R[ra])
		}
	}
	// 'S' marks the FDE of a signal trampoline: this frame is one, and
	// its caller was interrupted.
	st.signal = strings.ContainsRune(fde.CIE.Augmentation, 'S')
	st.sigtramp = st.signal
	return st, nil
}

// sigreturn trampolines: glibc's __restore_rt (mov $15,%rax; syscall) and
// the shorter form with a 32-bit move.
var sigreturnCode = [][]byte{
	{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05},
	{0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05},
}

func isSigreturn(mem Memory, pc uint64) bool {
	if mem == nil {
		return false
	}
	var b [9]byte
	n, _ := mem.ReadAt(b[:], pc)
	for _, code := range sigreturnCode {
		if n >= len(code) && string(b[:len(code)]) == string(code) {
			return true
		}
	}
	return false
}

// Layout of the kernel's x86-64 signal frame (arch/x86/include/asm/
// sigframe.h): the handler returns into the trampoline with rsp at the
// ucontext, whose uc_mcontext (struct sigcontext) follows uc_flags,
// uc_link and uc_stack.
const ucMcontext = 40

// sigcontextRegs is the DWARF register at each 8-byte slot of struct
// sigcontext: r8-r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
var sigcontextRegs = [...]int{8, 9, 10, 11, 12, 13, 14, 15, RegRDI, RegRSI, RegRBP, RegRBX, RegRDX, RegRAX, RegRCX, RegRSP, RegRIP}

func sigreturnStep(cur *Regs, mem Memory) (unwindStep, bool) {
	var st unwindStep
	st.sigtramp = true
	st.signal = true
	if !cur.Valid[RegRSP] {
		return st, false
	}
	buf := make([]byte, 8*len(sigcontextRegs))
	if _, err := mem.ReadAt(buf, cur.SP()+ucMcontext); err != nil {
		return st, false
	}
	for i, r := range sigcontextRegs {
		st.caller.Set(r, binary.LittleEndian.Uint64(buf[8*i:]))
		if r != RegRSP {
			st.saved[r] = cur.SP() + ucMcontext + uint64(8*i)
		}
	}
	st.caller.FSBase = cur.FSBase
	st.caller.XMM, st.caller.HaveXMM = cur.XMM, cur.HaveXMM
	// glibc's CFI for the trampoline defines its CFA as the interrupted sp.
	st.cfa = st.caller.SP()
	return st, true
}

// fallbackStep unwinds a frame without CFI: at a function's first
// instruction (or after its push %rbp, or at a ret) the return address is
// at the top of the stack; elsewhere the frame-pointer chain is followed.
func fallbackStep(img *Image, cur *Regs, mem Memory, pc uint64, exact bool) (unwindStep, bool) {
	var st unwindStep
	st.caller.FSBase = cur.FSBase
	st.caller.XMM, st.caller.HaveXMM = cur.XMM, cur.HaveXMM
	if !cur.Valid[RegRSP] {
		return st, false
	}
	sp := cur.SP()
	keep := func() {
		// As with CFI: what the frame does not save is the same in the
		// caller, for gdb.
		for r := 0; r < NumRegs; r++ {
			if r != RegRIP && r != RegRSP && cur.Valid[r] {
				st.caller.Set(r, cur.R[r])
			}
		}
	}
	finish := func(cfa, raAt uint64) (unwindStep, bool) {
		ra, err := readU64(mem, raAt)
		if err != nil {
			return st, false
		}
		st.cfa = cfa
		st.caller.Set(RegRSP, cfa)
		st.caller.Set(RegRIP, ra)
		st.saved[RegRIP] = raAt
		return st, true
	}
	if exact {
		if s, ok := img.At(pc); ok && s.Func {
			entry := s.Addr
			var code [5]byte
			n, _ := mem.ReadAt(code[:], entry)
			if n >= 4 && string(code[:4]) == "\xf3\x0f\x1e\xfa" { // endbr64
				entry += 4
			}
			if pc == s.Addr || pc == entry {
				keep()
				return finish(sp+8, sp)
			}
			if pc == entry+1 && n > int(entry-s.Addr) && code[entry-s.Addr] == 0x55 { // after push %rbp
				keep()
				if rbp, err := readU64(mem, sp); err == nil {
					st.caller.Set(RegRBP, rbp)
					st.saved[RegRBP] = sp
				}
				return finish(sp+16, sp+8)
			}
		}
		var b [1]byte
		if n, _ := mem.ReadAt(b[:], pc); n == 1 && b[0] == 0xc3 { // ret
			keep()
			return finish(sp+8, sp)
		}
	}
	if !cur.Valid[RegRBP] {
		return st, false
	}
	// Only follow rbp when it plausibly points into this stack, above sp.
	rbp := cur.R[RegRBP]
	if rbp%8 != 0 || rbp < sp || rbp-sp > 64<<20 {
		return st, false
	}
	saved, err := readU64(mem, rbp)
	if err != nil {
		return st, false
	}
	st.caller.Set(RegRBP, saved)
	st.saved[RegRBP] = rbp
	return finish(rbp+16, rbp+8)
}
