package dwarf

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// VarKind says where a variable is declared.
type VarKind int

// Variable kinds.
const (
	VarLocal VarKind = iota
	VarArg
	VarGlobal
)

// Variable is a variable with its value at a frame.
type Variable struct {
	Value
	Kind     VarKind
	DeclLine int
	// Entry is a parameter's value when its function was entered, found
	// through the caller's call site (DW_AT_call_value) when the
	// parameter was in a register there; nil when unknown. gdb shows it
	// as NAME@entry.
	Entry *Value
}

// frameScope is what reading variables of one frame needs.
type frameScope struct {
	t      *Table
	frames []Frame
	level  int
	mem    Memory
	img    *Image
	dw     *dwarf.Data
	cu     *dwarf.Entry
	look   uint64 // pc used for block and location-list lookup
	ctx    LocContext
	// caller is the physical frame that called this one (nil: none).
	caller *Frame
}

// newFrameScope prepares the location context of frames[level].
func (t *Table) newFrameScope(frames []Frame, level int, mem Memory) (*frameScope, error) {
	f := frames[level]
	if f.Function == nil {
		return nil, fmt.Errorf("no debug information for frame %d", level)
	}
	img := f.Function.image
	dw, err := img.DWARF()
	if err != nil {
		return nil, err
	}
	cuInfo := img.funcIndex().cus[dwarf.Offset(f.Function.cu)]
	if cuInfo == nil {
		return nil, fmt.Errorf("no compilation unit for %s", f.Function.Name)
	}
	look := f.PC
	if level > 0 && !frames[level-1].Inlined || (level > 0 && f.PC == frames[level-1].PC && !frames[level-1].Inlined) {
		look = f.PC - 1
	}
	if level > 0 {
		// Callers (physical ones) are at a return address: their blocks and
		// location lists are those of the call instruction.
		p := level
		for p > 0 && frames[p-1].Inlined && frames[p-1].PC == f.PC {
			p--
		}
		if p > 0 {
			look = f.PC - 1
		} else {
			look = f.PC
		}
	}
	ctx, err := img.UnitContext(cuInfo.entry)
	if err != nil {
		return nil, err
	}
	regs := f.Regs
	ctx.Regs = &regs
	ctx.CFA = f.CFA
	ctx.Mem = mem
	// The frame base is the concrete function's, also for inlined frames.
	concrete := img.concreteAt(look)
	ctx.FrameBase = func() (uint64, error) {
		if concrete == nil {
			return 0, errors.New("no frame base")
		}
		r := dw.Reader()
		r.Seek(dwarf.Offset(concrete.offset))
		e, err := r.Next()
		if err != nil || e == nil {
			return 0, fmt.Errorf("frame base of %s: %v", concrete.Name, err)
		}
		fld := e.AttrField(dwarf.AttrFrameBase)
		if fld == nil {
			return 0, fmt.Errorf("%s has no frame base", concrete.Name)
		}
		expr, err := img.LocationExpr(fld, cuInfo.entry, look)
		if err != nil {
			return 0, err
		}
		inner := ctx
		inner.FrameBase = nil
		return EvalAddress(expr, &inner)
	}
	var caller *Frame
	for j := level + 1; j < len(frames); j++ {
		if !frames[j-1].Inlined {
			caller = &frames[j]
			break
		}
	}
	if caller != nil {
		ctx.EntryValue = t.EntryValueResolver(atCall(frames, level, caller), mem)
	}
	sc := &frameScope{t: t, frames: frames, level: level, mem: mem, img: img, dw: dw, cu: cuInfo.entry, look: look, ctx: ctx, caller: caller}
	sc.ctx.TLSBase = func() (uint64, error) { return t.TLSBlock(img, regs.FSBase, mem) }
	return sc, nil
}

// readVar reads one variable DIE in the scope.
func (sc *frameScope) readVar(e *dwarf.Entry) Variable {
	v := Variable{}
	if name, _ := attrVia(sc.dw, e, dwarf.AttrName); name != nil {
		v.Name, _ = name.(string)
	}
	if l, _ := attrVia(sc.dw, e, dwarf.AttrDeclLine); l != nil {
		if n, ok := l.(int64); ok {
			v.DeclLine = int(n)
		}
	}
	if e.Tag == dwarf.TagFormalParameter {
		v.Kind = VarArg
	}
	if to, _ := attrVia(sc.dw, e, dwarf.AttrType); to != nil {
		if off, ok := to.(dwarf.Offset); ok {
			typ, err := sc.img.TypeAt(off)
			if err != nil {
				v.Err = err
				return v
			}
			v.Type = typ
		}
	}
	var expr []byte
	v.Value, expr = sc.locate(e, v.Value)
	if v.Kind == VarArg {
		v.Entry = sc.entryOf(e, v.Type)
		if v.Entry == nil && !v.Optimized && v.Err == nil && len(expr) > 0 && (expr[0] == opEntryValue || expr[0] == opGNUEntryValue) {
			// Its value here is its value at the entry, by its location.
			entry := v.Value
			v.Entry = &entry
		}
	}
	return v
}

// atCall returns the caller frame as it was at the call, as far as known:
// while the callee (the physical frame level belongs to) stands at its
// first instruction and is the innermost physical frame, the caller's
// scratch registers, which no CFI restores, still hold what they held at
// the call, so the callee's values are the caller's (as gdb takes them
// there; later they may have changed, and nothing is said of them).
func atCall(frames []Frame, level int, caller *Frame) *Frame {
	p := level
	for p < len(frames)-1 && frames[p].Inlined {
		p++
	}
	for i := 0; i < p; i++ {
		if !frames[i].Inlined {
			return caller
		}
	}
	f := frames[p]
	if f.Function == nil || f.PC != f.Function.Low {
		return caller
	}
	c := *caller
	for r := 0; r < NumRegs; r++ {
		if !c.Regs.Valid[r] && f.Regs.Valid[r] {
			c.Regs.Set(r, f.Regs.R[r])
		}
	}
	return &c
}

// entryOf is the value parameter e had at its function's entry: its
// location there is a general or SSE register, whose value at the call the
// caller's call-site information gives (the resolver of DW_OP_entry_value).
// nil when any of it is unknown. In an inlined call it is, as gdb takes it,
// the register's value at the entry of the function the call is inlined
// into, where the parameter is in that register where the inlined code
// starts: gdb shows it only where it equals the value now (NAME@entry), as
// for a parameter of an inlined call at the start of its caller.
func (sc *frameScope) entryOf(e *dwarf.Entry, typ *Type) *Value {
	f := sc.frames[sc.level]
	if sc.ctx.EntryValue == nil || f.Function == nil || typ == nil || typ.Size <= 0 || typ.Size > 8 {
		return nil
	}
	fld := e.AttrField(dwarf.AttrLocation)
	if fld == nil {
		return nil
	}
	expr, err := sc.img.LocationExpr(fld, sc.cu, f.Function.Low)
	if err != nil || len(expr) != 1 || expr[0] < opReg0 || expr[0] > opReg31 ||
		(expr[0] > opReg0+RegR15 && expr[0] < opReg0+RegXMM0) {
		return nil // a general register, or an SSE one (a float argument)
	}
	raw, err := sc.ctx.EntryValue(expr)
	if err != nil {
		return nil
	}
	b := binary.LittleEndian.AppendUint64(nil, raw)
	return &Value{Name: "", Type: typ, Bytes: b[:typ.Size]}
}

// locate fills a value from a DIE's DW_AT_location or DW_AT_const_value,
// and returns the location expression it evaluated (nil: none).
func (sc *frameScope) locate(e *dwarf.Entry, v Value) (Value, []byte) {
	size := int64(0)
	if v.Type != nil {
		size = v.Type.Size
	}
	if cv := e.Val(dwarf.AttrConstValue); cv != nil {
		v.Bytes = constBytes(cv, size)
		return v, nil
	}
	loc, expr, err := sc.location(e)
	if err != nil {
		// An entry value the caller does not pass is gdb's <optimized out>.
		if errors.Is(err, ErrOptimizedOut) {
			v.Optimized = true
		} else {
			v.Err = err
		}
		return v, expr
	}
	r := ReadLocation(loc, size, sc.mem, sc.ctx.Regs)
	r.Name, r.Type = v.Name, v.Type
	if r.Synthetic != nil {
		// Dereferencing it later reads its target in this frame.
		r.Synthetic.scope = sc
	}
	return r, expr
}

// constBytes is the contents of a DW_AT_const_value: an integer in size
// bytes (sign-extended past 8), or a block as it is.
func constBytes(cv any, size int64) []byte {
	switch c := cv.(type) {
	case int64:
		b := make([]byte, max(size, 8))
		for i := range b {
			b[i] = byte(uint64(c) >> (8 * (i % 8)))
			if i >= 8 && c < 0 {
				b[i] = 0xff
			}
		}
		return b[:max(size, 1)]
	case []byte:
		return c
	}
	return nil
}

// location evaluates a DIE's DW_AT_location at the scope's pc. It returns
// the expression evaluated (nil: none), and ErrOptimizedOut when the DIE
// has no location there.
func (sc *frameScope) location(e *dwarf.Entry) (Location, []byte, error) {
	fld := e.AttrField(dwarf.AttrLocation)
	if fld == nil {
		return Location{}, nil, ErrOptimizedOut
	}
	expr, err := sc.img.LocationExpr(fld, sc.cu, sc.look)
	if err != nil {
		return Location{}, nil, err
	}
	if len(expr) == 0 {
		return Location{}, expr, ErrOptimizedOut
	}
	loc, err := EvalLocation(expr, &sc.ctx)
	if err != nil {
		return Location{}, nil, err
	}
	return loc, expr, nil
}

// FrameVariables returns the arguments and the locals of frames[level] at
// its pc: locals of the innermost enclosing block first, as gdb's
// `info locals`. Nested inlined calls are frames of their own and are not
// entered.
func (t *Table) FrameVariables(frames []Frame, level int, mem Memory) (args, locals []Variable, err error) {
	sc, err := t.newFrameScope(frames, level, mem)
	if err != nil {
		return nil, nil, err
	}
	fn := frames[level].Function
	r := sc.dw.Reader()
	r.Seek(dwarf.Offset(fn.offset))
	top, err := r.Next()
	if err != nil || top == nil {
		return nil, nil, fmt.Errorf("variables of %s: %v", fn.Name, err)
	}
	if !top.Children {
		return nil, nil, nil
	}
	lpc := sc.look - sc.img.Bias
	var byDepth [][]Variable
	seen := map[dwarf.Offset]bool{} // the abstract parameters the instance has
	depth := 1
	for depth > 0 {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		switch e.Tag {
		case 0:
			depth--
		case dwarf.TagFormalParameter:
			// A parameter without a name (C's `int f(int)`, a Rust
			// closure's environment) is no symbol to gdb: not shown.
			if depth == 1 {
				if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
					seen[o] = true
				}
				if v := sc.readVar(e); v.Name != "" {
					args = append(args, v)
				}
			}
		case dwarf.TagVariable:
			for len(byDepth) < depth {
				byDepth = append(byDepth, nil)
			}
			if v := sc.readVar(e); v.Name != "" {
				byDepth[depth-1] = append(byDepth[depth-1], v)
			}
		case dwarf.TagLexDwarfBlock:
			rs, _ := codeRanges(sc.dw, e)
			in := len(rs) == 0
			for _, rg := range rs {
				if lpc >= rg[0] && lpc < rg[1] {
					in = true
				}
			}
			if e.Children {
				if in {
					depth++
				} else {
					r.SkipChildren()
				}
			}
		default:
			if e.Children {
				r.SkipChildren()
			}
		}
	}
	for d := len(byDepth) - 1; d >= 0; d-- {
		locals = append(locals, byDepth[d]...)
	}
	return append(args, sc.abstractOnly(top, seen)...), locals, nil
}

// abstractOnly returns the parameters of an instance's abstract function
// (DW_AT_abstract_origin: an inlined call, or an out-of-line copy of a
// function inlined elsewhere) that the instance does not list: optimized
// out entirely. gdb adds them after the instance's own (its
// inherit_abstract_dies), as <optimized out>.
func (sc *frameScope) abstractOnly(top *dwarf.Entry, seen map[dwarf.Offset]bool) []Variable {
	o, ok := top.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
	if !ok {
		return nil
	}
	r := sc.dw.Reader()
	r.Seek(o)
	abs, err := r.Next()
	if err != nil || abs == nil || !abs.Children {
		return nil
	}
	var out []Variable
	for {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			break
		}
		if e.Tag == dwarf.TagFormalParameter && !seen[e.Offset] {
			if v := sc.readVar(e); v.Name != "" {
				out = append(out, v) // no location: <optimized out>
			}
		}
		if e.Children {
			r.SkipChildren()
		}
	}
	return out
}

// globalIndex maps names of variables with static storage to their DIEs.
type globalIndex struct {
	byName map[string][]globalRef
}

type globalRef struct {
	off dwarf.Offset
	cu  *dwarf.Entry
}

// globals indexes the image's top-level and namespace-level variables:
// "counter", "ns::var", "main.x", "crate::NAME".
func (img *Image) globals() *globalIndex {
	img.globalsOnce.Do(func() { img.globalsIdx = buildGlobals(img) })
	return img.globalsIdx
}

func buildGlobals(img *Image) *globalIndex {
	gi := &globalIndex{byName: map[string][]globalRef{}}
	dw, err := img.DWARF()
	if err != nil {
		return gi
	}
	r := dw.Reader()
	var cu *dwarf.Entry
	var scope []string // namespace names by depth
	depth := 0
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == 0 {
			depth--
			if depth >= 0 && depth < len(scope) {
				scope = scope[:depth]
			}
			continue
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			cu, scope, depth = e, nil, 0
		case dwarf.TagNamespace, dwarf.TagModule:
			name, _ := e.Val(dwarf.AttrName).(string)
			for len(scope) < depth {
				scope = append(scope, "")
			}
			scope = append(scope[:depth], name)
		case dwarf.TagVariable:
			if e.Val(dwarf.AttrLocation) != nil || e.Val(dwarf.AttrConstValue) != nil {
				name, _ := attrVia(dw, e, dwarf.AttrName)
				if s, ok := name.(string); ok && s != "" {
					var parts []string
					for _, p := range scope {
						if p != "" {
							parts = append(parts, p)
						}
					}
					full := strings.Join(append(parts, s), "::")
					ref := globalRef{e.Offset, cu}
					gi.byName[full] = append(gi.byName[full], ref)
					if full != s {
						gi.byName[s] = append(gi.byName[s], ref)
					}
				}
			}
		default:
			if e.Tag != dwarf.TagCompileUnit && e.Children && e.Tag != dwarf.TagNamespace && e.Tag != dwarf.TagModule {
				r.SkipChildren()
				continue
			}
		}
		if e.Children {
			depth++
		}
	}
	return gi
}

// Global reads a variable with static storage by name: file-level,
// namespace-qualified (C++, Rust) or package-qualified (Go). regs gives the
// thread pointer for thread-local variables.
func (t *Table) Global(name string, regs *Regs, mem Memory) (Variable, bool) {
	for _, img := range t.Images {
		refs := img.globals().byName[name]
		if len(refs) == 0 {
			continue
		}
		// Prefer a definition with a location over a declaration.
		sort.SliceStable(refs, func(i, j int) bool { return refs[i].off < refs[j].off })
		ref := refs[0]
		dw, _ := img.DWARF()
		r := dw.Reader()
		r.Seek(ref.off)
		e, err := r.Next()
		if err != nil || e == nil {
			continue
		}
		ctx, err := img.UnitContext(ref.cu)
		if err != nil {
			continue
		}
		rg := Regs{}
		if regs != nil {
			rg = *regs
		}
		ctx.Regs, ctx.Mem = &rg, mem
		ctx.TLSBase = func() (uint64, error) { return t.TLSBlock(img, rg.FSBase, mem) }
		sc := &frameScope{t: t, mem: mem, img: img, dw: dw, cu: ref.cu, ctx: ctx}
		v := sc.readVar(e)
		v.Kind = VarGlobal
		return v, true
	}
	return Variable{}, false
}
