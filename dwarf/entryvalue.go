package dwarf

// DW_OP_entry_value asks for a value as it was on entry to the
// function; the callee no longer has it, so it is recovered as gdb
// does, from the caller's DW_TAG_call_site parameters at the return
// address.

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
)

// entryValue resolves DW_OP_entry_value. At the first instruction of a
// function the registers still hold their entry values, so the
// sub-expression is evaluated in place; elsewhere the caller's call site
// must tell.
func (e *evaluator) entryValue(sub []byte) (uint64, error) {
	if e.depth >= maxDepth {
		return 0, errors.New("entry values nest too deeply")
	}
	if e.atFunctionEntry() {
		return evalAddress(sub, e.ctx, nil, e.depth+1)
	}
	if e.ctx.EntryValue == nil {
		return 0, fmt.Errorf("no caller frame: %w", ErrOptimizedOut)
	}
	return e.ctx.EntryValue(sub)
}

// atFunctionEntry says whether the frame's pc is the first instruction of
// an ELF function (after an endbr64, which changes no register).
func (e *evaluator) atFunctionEntry() bool {
	if e.ctx.Regs == nil || !e.ctx.Regs.Valid[RegRIP] || e.ctx.Image == nil {
		return false
	}
	pc := e.ctx.Regs.PC()
	s, ok := e.ctx.Image.At(pc)
	if !ok || !s.Func {
		return false
	}
	if s.Addr == pc {
		return true
	}
	if pc == s.Addr+4 && e.ctx.Mem != nil {
		b, err := e.readMem(s.Addr, 4)
		return err == nil && string(b) == "\xf3\x0f\x1e\xfa"
	}
	return false
}

// EntryValueResolver returns a function resolving DW_OP_entry_value for
// the frame called by caller, as gdb does: it finds, in the caller's
// function, the call site whose return address is caller.PC, then the call
// site parameter for the register (or parameter DIE) the sub-expression
// names, and evaluates its DW_AT_call_value (DW_AT_call_data_value for a
// dereferenced register) in the caller's frame. Entry values of the
// caller's own parameters are resolved through the frame above it.
func (t *Table) EntryValueResolver(caller *Frame, mem Memory) func(expr []byte) (uint64, error) {
	return func(expr []byte) (uint64, error) { return t.entryValue(caller, mem, expr, 0) }
}

// entryKind is what an entry value's sub-expression asks for.
type entryKind int

const (
	entryReg      entryKind = iota // DW_OP_regN: the register's value
	entryRegDeref                  // DW_OP_bregN 0; DW_OP_deref(_size): memory it pointed to
	entryParamRef                  // DW_OP_GNU_parameter_ref: a parameter DIE
)

func parseEntryExpr(expr []byte) (kind entryKind, reg uint64, derefSize int, err error) {
	r := &exprReader{b: expr}
	op := r.u8()
	switch {
	case op >= opReg0 && op <= opReg31 && len(expr) == 1:
		return entryReg, uint64(op - opReg0), 0, nil
	case op == opRegx:
		reg = r.uleb()
		if r.err == nil && r.off == len(expr) {
			return entryReg, reg, 0, nil
		}
	case op >= opBreg0 && op <= opBreg31 || op == opBregx:
		reg = uint64(op - opBreg0)
		if op == opBregx {
			reg = r.uleb()
		}
		if r.sleb() != 0 {
			break
		}
		switch r.u8() {
		case opDeref:
			derefSize = 8
		case opDerefSize:
			derefSize = int(r.u8())
		default:
			return 0, 0, 0, fmt.Errorf("unsupported entry value expression % x", expr)
		}
		if r.err == nil && r.off == len(expr) {
			return entryRegDeref, reg, derefSize, nil
		}
	case op == opGNUParameterRef && len(expr) == 9:
		return entryParamRef, binary.LittleEndian.Uint64(expr[1:]), 0, nil
	}
	return 0, 0, 0, fmt.Errorf("unsupported entry value expression % x", expr)
}

func (t *Table) entryValue(caller *Frame, mem Memory, expr []byte, depth int) (uint64, error) {
	if caller == nil {
		return 0, fmt.Errorf("no caller frame: %w", ErrOptimizedOut)
	}
	if depth >= maxDepth {
		return 0, errors.New("entry values nest too deeply")
	}
	kind, reg, derefSize, err := parseEntryExpr(expr)
	if err != nil {
		return 0, err
	}
	img := t.ImageAt(caller.PC)
	if img == nil {
		return 0, fmt.Errorf("caller pc %#x is in no image: %w", caller.PC, ErrOptimizedOut)
	}
	site, err := img.findCallSite(caller.PC)
	if err != nil {
		return 0, err
	}
	var value []byte
	for _, p := range site.params {
		switch kind {
		case entryParamRef:
			if p.param != reg {
				continue
			}
			value = p.value
		default:
			pk, preg, _, err := parseEntryExpr(p.loc)
			if err != nil || pk != entryReg || preg != reg {
				continue
			}
			value = p.value
			if kind == entryRegDeref {
				value = p.dataValue
			}
		}
		break
	}
	if value == nil {
		return 0, fmt.Errorf("call site at %#x does not pass %s: %w", caller.PC, RegName(reg), ErrOptimizedOut)
	}
	ctx, err := img.UnitContext(site.cu)
	if err != nil {
		return 0, err
	}
	ctx.Regs, ctx.CFA, ctx.Mem = &caller.Regs, caller.CFA, mem
	ctx.FrameBase = frameBaseFunc(img, site.fn, site.cu, caller, &ctx)
	ctx.EntryValue = func(sub []byte) (uint64, error) {
		// The caller's own entry values come from the frame above it.
		up := t.unwind(caller.Regs, mem, 2, false)
		if len(up) < 2 {
			return 0, fmt.Errorf("no frame above the caller: %w", ErrOptimizedOut)
		}
		return t.entryValue(&up[1], mem, sub, depth+1)
	}
	v, err := evalAddress(value, &ctx, nil, depth+1)
	if err != nil {
		return 0, fmt.Errorf("call site value at %#x: %w", caller.PC, err)
	}
	if kind == entryRegDeref && derefSize < 8 {
		v &= 1<<(8*uint(derefSize)) - 1
	}
	return v, nil
}

// frameBaseFunc evaluates a function's DW_AT_frame_base lazily in frame f.
func frameBaseFunc(img *Image, fn, cu *dwarf.Entry, f *Frame, ctx *LocContext) func() (uint64, error) {
	return func() (uint64, error) {
		if fn == nil {
			return 0, errors.New("no function for the frame base")
		}
		field := fn.AttrField(dwarf.AttrFrameBase)
		if field == nil {
			return 0, fmt.Errorf("function at %#x has no frame base", fn.Offset)
		}
		pc := f.PC
		if f.Level > 0 && pc > 0 {
			pc-- // a return address may be past the caller's last range
		}
		expr, err := img.LocationExpr(field, cu, pc)
		if err != nil {
			return 0, fmt.Errorf("frame base: %w", err)
		}
		c := *ctx
		c.FrameBase = nil
		return EvalAddress(expr, &c)
	}
}

type callSiteParam struct {
	loc       []byte // DW_AT_location: the register the argument is passed in
	param     uint64 // DW_AT_call_parameter: the callee's parameter DIE
	value     []byte // DW_AT_call_value
	dataValue []byte // DW_AT_call_data_value
}

type callSite struct {
	cu, fn *dwarf.Entry
	params []callSiteParam
}

// foundCallSite is what findCallSite found for a return address.
type foundCallSite struct {
	site *callSite
	err  error
}

// findCallSite finds the DW_TAG_call_site (or DW_TAG_GNU_call_site)
// returning to the run-time address ret, once an address: each search
// walks the caller's unit, and a conditional breakpoint on a function
// whose parameters are entry values (Python's
// PyUnicode_DecodeUTF8Stateful, whose unit holds thousands of entries)
// asked it at each of ~10,000 hits, 20 ms each.
func (img *Image) findCallSite(ret uint64) (*callSite, error) {
	img.callSitesMu.Lock()
	defer img.callSitesMu.Unlock()
	if f, ok := img.callSites[ret]; ok {
		return f.site, f.err
	}
	site, err := img.scanCallSite(ret)
	if img.callSites == nil {
		img.callSites = map[uint64]foundCallSite{}
	}
	img.callSites[ret] = foundCallSite{site, err}
	return site, err
}

// scanCallSite is findCallSite's search of the unit holding ret.
func (img *Image) scanCallSite(ret uint64) (*callSite, error) {
	dw, err := img.DWARF()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrOptimizedOut)
	}
	link := ret - img.Bias
	r := dw.Reader()
	cu, err := r.SeekPC(link - 1)
	if err != nil {
		return nil, fmt.Errorf("no compilation unit at %#x: %w", ret, ErrOptimizedOut)
	}
	var fn *dwarf.Entry
	depth := 1
	for depth > 0 {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("reading the unit at %#x: %w", cu.Offset, err)
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			depth--
			continue
		}
		switch e.Tag {
		case dwarf.TagSubprogram:
			if depth == 1 || fn == nil {
				rs, _ := codeRanges(dw, e)
				if !inRanges(rs, link-1) {
					if e.Children {
						r.SkipChildren()
					}
					continue
				}
				fn = e
			}
		case dwarf.TagCallSite, tagGNUCallSite:
			rp, ok := e.Val(dwarf.AttrCallReturnPC).(uint64)
			if !ok {
				rp, ok = e.Val(dwarf.AttrLowpc).(uint64)
			}
			if ok && rp == link {
				site := &callSite{cu: cu, fn: fn}
				if e.Children {
					site.params = readCallSiteParams(r)
				}
				return site, nil
			}
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		if e.Children {
			depth++
		}
	}
	return nil, fmt.Errorf("no call site information for return address %#x: %w", ret, ErrOptimizedOut)
}

func inRanges(rs [][2]uint64, pc uint64) bool {
	for _, r := range rs {
		if pc >= r[0] && pc < r[1] {
			return true
		}
	}
	return false
}

func readCallSiteParams(r *dwarf.Reader) []callSiteParam {
	var out []callSiteParam
	for {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			return out
		}
		if e.Tag == dwarf.TagCallSiteParameter || e.Tag == tagGNUCallSiteParameter {
			p := callSiteParam{}
			p.loc, _ = e.Val(dwarf.AttrLocation).([]byte)
			for _, a := range []dwarf.Attr{dwarf.AttrCallParameter, dwarf.AttrAbstractOrigin} {
				if o, ok := e.Val(a).(dwarf.Offset); ok {
					p.param = uint64(o)
				}
			}
			for _, a := range []dwarf.Attr{dwarf.AttrCallValue, attrGNUCallSiteValue} {
				if v, ok := e.Val(a).([]byte); ok {
					p.value = v
				}
			}
			for _, a := range []dwarf.Attr{attrCallDataValue, attrGNUCallSiteDataVal} {
				if v, ok := e.Val(a).([]byte); ok {
					p.dataValue = v
				}
			}
			out = append(out, p)
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}
