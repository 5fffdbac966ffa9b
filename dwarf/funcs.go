package dwarf

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// cuInfo is what later lookups need to know about a compilation unit.
type cuInfo struct {
	entry *dwarf.Entry
	lang  Lang
	// optimized is set for gcc units built with -O1 and above: gdb does not
	// skip prologues there, the line table is trusted as is.
	optimized bool
	files     []string // the line table's file names, for DW_AT_decl_file and call_file
}

// fnRange maps a link-time address range to its concrete function.
type fnRange struct {
	lo, hi uint64
	fn     *Function
}

// funcIndex is the concrete (out-of-line) functions of an image.
type funcIndex struct {
	ranges []fnRange
	byName map[string][]*Function
	cus    map[dwarf.Offset]*cuInfo
	// scopes is, in Rust units, the scope gdb qualifies a name with
	// ("core::num::{impl#9}", "names::Counter") of each subprogram
	// without code: the declarations and abstract instances that
	// concrete functions and inlined calls point to. In DIE order (by
	// offset), which the walk appends in.
	scopes []declScope
	// rust is the concrete functions of Rust units, for the names gdb
	// does not know them by (FindRustAlias, FindRustSuffix).
	rust []*Function
	// main is the function marked DW_AT_main_subprogram (a Rust crate's
	// fn main), if any.
	main      *Function
	aliasOnce sync.Once
	aliases   map[string][]*Function
}

// langOf maps DW_AT_language to a Lang.
func langOf(v int64) Lang {
	switch v {
	case 0x1, 0x2, 0xc, 0x1d, 0x2c: // C89, C, C99, C11, C17
		return LangC
	case 0x4, 0x1a, 0x21, 0x2b: // C++, C++03, C++11, C++14 (and 0x2a? see default)
		return LangCPlusPlus
	case 0x1c:
		return LangRust
	case 0x16:
		return LangGo
	}
	if v >= 0x21 && v <= 0x2b {
		return LangCPlusPlus
	}
	return LangOther
}

// funcIndex reads every subprogram with code once. Function bodies are
// skipped; the scopes around them (namespaces, structures) are followed
// for the qualified names of Rust functions.
func (img *Image) funcIndex() *funcIndex {
	img.funcsOnce.Do(func() {
		fi := &funcIndex{byName: map[string][]*Function{}, cus: map[dwarf.Offset]*cuInfo{}}
		img.funcs = fi
		dw, err := img.DWARF()
		if err != nil {
			return
		}
		r := dw.Reader()
		var cu *cuInfo
		var cuOff dwarf.Offset
		// scopes is the qualified name of each entry being read the
		// children of (Rust units; "" elsewhere).
		var scopes []string
		top := func() string {
			if n := len(scopes); n > 0 {
				return scopes[n-1]
			}
			return ""
		}
		// A Rust function declared elsewhere (a method, in its
		// structure) is named once every declaration has been seen.
		type pendingName struct {
			fn   *Function
			decl dwarf.Offset
			own  string
		}
		var pending []pendingName
		var fns []*Function
		for {
			e, err := r.Next()
			if err != nil || e == nil {
				break
			}
			if e.Tag == 0 {
				if n := len(scopes); n > 0 {
					scopes = scopes[:n-1]
				}
				continue
			}
			switch e.Tag {
			case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
				scopes = scopes[:0]
				if e.Children {
					scopes = append(scopes, "")
				}
				cu = &cuInfo{entry: e}
				cuOff = e.Offset
				if v, ok := e.Val(dwarf.AttrLanguage).(int64); ok {
					cu.lang = langOf(v)
				}
				if p, ok := e.Val(dwarf.AttrProducer).(string); ok {
					cu.optimized = optimizedBy(p)
				}
				if lr, err := dw.LineReader(e); err == nil && lr != nil {
					for _, f := range lr.Files() {
						if f == nil {
							cu.files = append(cu.files, "")
						} else {
							cu.files = append(cu.files, absFile(e, f.Name))
						}
					}
				}
				fi.cus[e.Offset] = cu
			case dwarf.TagSubprogram:
				// Nested subprograms (Go closures are top level; C has
				// none; Rust's closures are in a namespace named after
				// their function): inlined calls are read on demand.
				if e.Children {
					r.SkipChildren()
				}
				if cu == nil {
					continue
				}
				rust := cu.lang == LangRust
				rs, err := codeRanges(dw, e)
				if err != nil || len(rs) == 0 || rs[0][0] == 0 {
					if rust {
						fi.scopes = append(fi.scopes, declScope{e.Offset, top()})
					}
					continue
				}
				name, own, decl, later := "", "", dwarf.Offset(0), false
				if rust {
					own, decl, later = rustDecl(dw, e)
					switch {
					case own == "":
						name, later = functionName(dw, e), false
					case !later:
						name = joinScope(top(), own)
					}
				} else {
					name = functionName(dw, e)
				}
				fn := img.newFunction(dw, cu, cuOff, e, rs, name)
				for _, rg := range rs {
					fi.ranges = append(fi.ranges, fnRange{rg[0], rg[1], fn})
				}
				fns = append(fns, fn)
				if m, _ := e.Val(dwarf.AttrMainSubprogram).(bool); m && fi.main == nil {
					fi.main = fn
				}
				if rust {
					fi.rust = append(fi.rust, fn)
				}
				if later {
					pending = append(pending, pendingName{fn, decl, own})
				}
			default:
				if e.Children {
					scope := top()
					if cu != nil && cu.lang == LangRust {
						scope = rustScope(e, scope)
					}
					scopes = append(scopes, scope)
				}
			}
		}
		for _, p := range pending {
			if scope, ok := fi.scopeOf(p.decl); ok {
				p.fn.Name = joinScope(scope, p.own)
			} else {
				p.fn.Name = p.own // declared out of every unit read
			}
		}
		for _, fn := range fns {
			fi.byName[fn.Name] = append(fi.byName[fn.Name], fn)
			if fi.cus[dwarf.Offset(fn.cu)].lang != LangRust {
				if short := shortName(fn.Name); short != fn.Name {
					fi.byName[short] = append(fi.byName[short], fn)
				}
			}
		}
		sort.Slice(fi.ranges, func(i, j int) bool { return fi.ranges[i].lo < fi.ranges[j].lo })
		for _, rg := range fi.ranges {
			rg.fn.Entry = img.prologueEnd(rg.fn)
		}
	})
	return img.funcs
}

// codeRanges returns the address ranges of a DIE that hold code: gcc
// writes empty ones (start == end) for an inlined call whose code moved
// away, which gdb drops, so that the call's entry is its first non-empty
// range.
func codeRanges(dw *dwarf.Data, e *dwarf.Entry) ([][2]uint64, error) {
	rs, err := dw.Ranges(e)
	if err != nil {
		return nil, fmt.Errorf("ranges of the entry at %#x: %w", e.Offset, err)
	}
	out := rs[:0]
	for _, r := range rs {
		if r[1] > r[0] {
			out = append(out, r)
		}
	}
	return out, nil
}

// shortName drops a C++ parameter list: "ns::fn<int>(int, int)" → "ns::fn<int>".
func shortName(name string) string {
	if i := strings.IndexByte(name, '('); i > 0 && !strings.HasPrefix(name, "(") {
		return name[:i]
	}
	return name
}

// attrVia reads an attribute of e, following DW_AT_abstract_origin and
// DW_AT_specification (out-of-line copies of inline functions, C++ member
// definitions) as gdb does.
func attrVia(dw *dwarf.Data, e *dwarf.Entry, a dwarf.Attr) (any, *dwarf.Entry) {
	for depth := 0; e != nil && depth < 8; depth++ {
		if v := e.Val(a); v != nil {
			return v, e
		}
		var next dwarf.Offset
		if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
			next = o
		} else if o, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
			next = o
		} else {
			return nil, nil
		}
		r := dw.Reader()
		r.Seek(next)
		ne, err := r.Next()
		if err != nil {
			return nil, nil
		}
		e = ne
	}
	return nil, nil
}

// functionName is the name gdb shows for C, C++ and Go: C++ demangled
// from the linkage name (with the parameter list), else DW_AT_name. Rust
// names come from DWARF's scopes (rustnames.go); this is their symbol's
// demangled form, which rewind's `break` also accepts.
func functionName(dw *dwarf.Data, e *dwarf.Entry) string {
	for _, a := range []dwarf.Attr{dwarf.AttrLinkageName, 0x2007 /* DW_AT_MIPS_linkage_name */} {
		if v, _ := attrVia(dw, e, a); v != nil {
			if s, ok := v.(string); ok && s != "" {
				return Demangle(s)
			}
		}
	}
	if s := ownName(dw, e); s != "" {
		return s
	}
	return "??"
}

// ownName is DW_AT_name of e or of the entry it completes.
func ownName(dw *dwarf.Data, e *dwarf.Entry) string {
	if v, _ := attrVia(dw, e, dwarf.AttrName); v != nil {
		if s, ok := v.(string); ok {
			return s
		}
	}
	return ""
}

func (img *Image) newFunction(dw *dwarf.Data, cu *cuInfo, cuOff dwarf.Offset, e *dwarf.Entry, rs [][2]uint64, name string) *Function {
	fn := &Function{Name: name, image: img, offset: uint64(e.Offset), cu: uint64(cuOff), optimized: cu.optimized}
	for _, rg := range rs {
		fn.Ranges = append(fn.Ranges, [2]uint64{rg[0] + img.Bias, rg[1] + img.Bias})
	}
	fn.Low, fn.High = fn.Ranges[0][0], fn.Ranges[0][1]
	if v, _ := e.Val(dwarf.AttrLowpc).(uint64); v != 0 {
		fn.Low = v + img.Bias // the entry, even when ranges are not in order
	}
	if v, _ := attrVia(dw, e, dwarf.AttrDeclFile); v != nil {
		if i, ok := v.(int64); ok && int(i) < len(cu.files) && i >= 0 {
			fn.DeclFile = cu.files[i]
		}
	}
	if v, _ := attrVia(dw, e, dwarf.AttrDeclLine); v != nil {
		if i, ok := v.(int64); ok {
			fn.DeclLine = int(i)
		}
	}
	return fn
}

// optimizedBy reports whether a compiler's DW_AT_producer (its options)
// says the unit was optimized: the last -O option counts, as for gcc ("-O0
// ... -O2" optimizes).
func optimizedBy(producer string) bool {
	last := ""
	for _, f := range strings.Fields(producer) {
		if strings.HasPrefix(f, "-O") {
			last = f
		}
	}
	return last != "" && last != "-O0"
}

// prologueEnd finds where `break FUNC` stops: the row marked prologue_end,
// else the second statement row of the function, as gdb's
// skip_prologue_using_sal.
func (img *Image) prologueEnd(fn *Function) uint64 {
	lt := img.lineTable()
	lo, hi := fn.Low-img.Bias, fn.High-img.Bias
	optimized := fn.optimized
	i := sort.Search(len(lt.rows), func(i int) bool { return lt.rows[i].addr >= lo })
	second := uint64(0)
	firstLine := int32(-1)
	for j := i; j < len(lt.rows) && lt.rows[j].addr < hi; j++ {
		r := lt.rows[j]
		if r.end {
			if r.addr == lo {
				continue // the previous sequence ends where this one starts
			}
			break
		}
		if r.prologueEnd {
			return r.addr + img.Bias
		}
		if firstLine < 0 {
			firstLine = r.line
			continue
		}
		if second == 0 && r.stmt && r.addr > lo && r.line != 0 {
			second = r.addr
		}
	}
	if second == 0 || optimized {
		return fn.Low
	}
	return second + img.Bias
}

// concreteAt returns the out-of-line function containing a run-time pc.
func (img *Image) concreteAt(pc uint64) *Function {
	fi := img.funcIndex()
	lpc := pc - img.Bias
	i := sort.Search(len(fi.ranges), func(i int) bool { return fi.ranges[i].lo > lpc }) - 1
	// Ranges do not overlap, except in the rare case of nested ones: look
	// back a few.
	for k := 0; i >= 0 && k < 4; i, k = i-1, k+1 {
		if rg := fi.ranges[i]; lpc >= rg.lo && lpc < rg.hi {
			return rg.fn
		}
	}
	return nil
}

// inlineChain returns the functions at a run-time pc, innermost first:
// inlined calls, then the concrete function. Empty without debug info.
func (t *Table) inlineChain(img *Image, pc uint64) []*Function {
	fn := img.concreteAt(pc)
	if fn == nil {
		return nil
	}
	dw, _ := img.DWARF()
	cu := img.funcIndex().cus[dwarf.Offset(fn.cu)]
	var chain []*Function
	lpc := pc - img.Bias
	// Walk down the tree: at each level, enter the inlined subroutine (or
	// lexical block) whose ranges contain pc.
	walkBody(dw, dwarf.Offset(fn.offset), func(e *dwarf.Entry) bool {
		if e.Tag != dwarf.TagInlinedSubroutine && e.Tag != dwarf.TagLexDwarfBlock {
			return false
		}
		rs, _ := codeRanges(dw, e)
		if !inRanges(rs, lpc) {
			return false
		}
		if e.Tag == dwarf.TagInlinedSubroutine {
			chain = append(chain, img.newInlined(dw, cu, dwarf.Offset(fn.cu), e, rs))
		}
		return true
	})
	out := []*Function{}
	for i := len(chain) - 1; i >= 0; i-- {
		out = append(out, chain[i])
	}
	return append(out, fn)
}

// FunctionsAt returns the functions at a run-time pc, innermost inlined
// call first and the concrete function last; nil without debug info.
func (t *Table) FunctionsAt(pc uint64) []*Function {
	img := t.ImageAt(pc)
	if img == nil {
		return nil
	}
	return t.inlineChain(img, pc)
}

// FunctionAt returns the concrete function containing a run-time pc.
func (t *Table) FunctionAt(pc uint64) *Function {
	img := t.ImageAt(pc)
	if img == nil {
		return nil
	}
	return img.concreteAt(pc)
}

// FindFunction returns the functions named name: "main", "ns::fn<int>",
// "ns::fn<int>(int, int)", "main.main", "crate::module::fn".
func (t *Table) FindFunction(name string) []*Function {
	var out []*Function
	for _, img := range t.Images {
		out = append(out, img.funcIndex().byName[name]...)
	}
	return out
}

// MainSubprogram returns the function the executable's debug information
// marks as the program's main (DW_AT_main_subprogram, which rustc sets on
// a crate's fn main), nil when none is.
func (t *Table) MainSubprogram() *Function {
	if len(t.Images) == 0 {
		return nil
	}
	return t.Images[0].funcIndex().main
}

// Lang returns the source language of a function's compilation unit.
func (fn *Function) Lang() Lang {
	if fn == nil || fn.image == nil {
		return LangOther
	}
	if cu := fn.image.funcIndex().cus[dwarf.Offset(fn.cu)]; cu != nil {
		return cu.lang
	}
	return LangOther
}

// Image returns the image the function belongs to.
func (fn *Function) Image() *Image { return fn.image }

// Contains says whether a run-time pc is inside the function's ranges.
func (fn *Function) Contains(pc uint64) bool {
	for _, r := range fn.Ranges {
		if pc >= r[0] && pc < r[1] {
			return true
		}
	}
	return false
}

// ReturnType returns the type a function returns, nil for void.
func (t *Table) ReturnType(fn *Function) (*Type, error) {
	if fn == nil || fn.image == nil {
		return nil, nil
	}
	dw, err := fn.image.DWARF()
	if err != nil {
		return nil, err
	}
	r := dw.Reader()
	r.Seek(dwarf.Offset(fn.offset))
	e, err := r.Next()
	if err != nil || e == nil {
		return nil, err
	}
	v, _ := attrVia(dw, e, dwarf.AttrType)
	off, ok := v.(dwarf.Offset)
	if !ok {
		return nil, nil
	}
	return fn.image.TypeAt(off)
}

// FunctionType returns the type of a function, as the value of its name
// has in C: "int (const void *, const void *)". Parameters come from the
// DIE that declares them (an out-of-line or inlined instance points to it
// with DW_AT_abstract_origin or DW_AT_specification).
func (t *Table) FunctionType(fn *Function) (*Type, error) {
	if fn == nil || fn.image == nil {
		return nil, errors.New("no debug information for the function")
	}
	dw, err := fn.image.DWARF()
	if err != nil {
		return nil, err
	}
	res, err := t.ReturnType(fn)
	if err != nil {
		return nil, err
	}
	ft := &Type{Kind: KindFunc, Size: 1, Result: res, Lang: fn.Lang()}
	r := dw.Reader()
	r.Seek(dwarf.Offset(fn.offset))
	e, err := r.Next()
	if err != nil || e == nil {
		return nil, fmt.Errorf("reading the function %s: %w", fn.Name, err)
	}
	// The declaration with the parameters: the first DIE along the
	// origin/specification chain whose formal parameters have types.
	for depth := 0; depth < 8; depth++ {
		if hasParams(dw, e) {
			break
		}
		o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			o, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		if !ok {
			break
		}
		r.Seek(o)
		if e, err = r.Next(); err != nil || e == nil {
			return nil, fmt.Errorf("reading the declaration of %s: %w", fn.Name, err)
		}
	}
	proto, _ := e.Val(dwarf.AttrPrototyped).(bool)
	variadic := false
	if e.Children {
		for {
			k, err := r.Next()
			if err != nil || k == nil || k.Tag == 0 {
				break
			}
			switch k.Tag {
			case dwarf.TagFormalParameter:
				v, _ := attrVia(dw, k, dwarf.AttrType)
				if off, ok := v.(dwarf.Offset); ok {
					p, err := fn.image.TypeAt(off)
					if err != nil {
						return nil, err
					}
					ft.Params = append(ft.Params, p)
				}
			case dwarf.TagUnspecifiedParameters:
				variadic = true
			}
			if k.Children {
				r.SkipChildren()
			}
		}
	}
	ft.Variadic = variadic
	ft.Name = funcName(ft, "", variadic, proto || ft.Lang != LangC)
	if ft.Lang == LangRust && !variadic {
		ft.Name = rustFuncName(ft)
	}
	return ft, nil
}

// hasParams says whether a subprogram DIE lists formal parameters (or
// has no origin to take them from).
func hasParams(dw *dwarf.Data, e *dwarf.Entry) bool {
	if e.Val(dwarf.AttrAbstractOrigin) == nil && e.Val(dwarf.AttrSpecification) == nil {
		return true
	}
	if !e.Children {
		return false
	}
	r := dw.Reader()
	r.Seek(e.Offset)
	r.Next()
	for {
		k, err := r.Next()
		if err != nil || k == nil || k.Tag == 0 {
			return false
		}
		if k.Tag == dwarf.TagFormalParameter {
			_, hasType := k.Val(dwarf.AttrType).(dwarf.Offset)
			return hasType
		}
		if k.Children {
			r.SkipChildren()
		}
	}
}
