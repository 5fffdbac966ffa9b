package dwarf

import (
	"debug/dwarf"
	"sort"
	"sync"
)

// The inlined instances of functions, by name: where `break FUNC` stops
// besides the out-of-line copy, as gdb sets one location on each (a
// function that exists only inlined has no other). Built on the first
// lookup: it walks every entry of the image, which the sessions that never
// ask should not pay for.

// inlinedRef is one DW_TAG_inlined_subroutine.
type inlinedRef struct {
	off, cu dwarf.Offset
}

// inlinedIndex maps a function's names (as funcIndex.byName) to its
// inlined instances.
type inlinedIndex struct {
	byName map[string][]inlinedRef
	// rust is the names of Rust functions in byName.
	rust map[string]bool
	// aliases are the instances of Rust functions by their symbol's
	// demangled name ("<u64>::wrapping_mul") where it is not gdb's:
	// made on the first name that needs them.
	aliasOnce sync.Once
	aliases   map[string][]inlinedRef
}

// inlinedIdx builds the index once.
func (img *Image) inlinedIdx() *inlinedIndex {
	img.inlinedOnce.Do(func() { img.inlined = buildInlined(img) })
	return img.inlined
}

func buildInlined(img *Image) *inlinedIndex {
	ix := &inlinedIndex{byName: map[string][]inlinedRef{}, rust: map[string]bool{}}
	dw, err := img.DWARF()
	if err != nil {
		return ix
	}
	cus := img.funcIndex().cus
	// Every instance of a function points to the same abstract DIE: name
	// each origin once.
	names := map[dwarf.Offset]string{}
	var cu dwarf.Offset
	rust := false
	r := dw.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			cu = e.Offset
			rust = cus[cu] != nil && cus[cu].lang == LangRust
		case dwarf.TagInlinedSubroutine:
			origin, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			if !ok {
				continue
			}
			name, ok := names[origin]
			if !ok {
				name = img.calleeName(dw, cus[cu], e)
				names[origin] = name
			}
			ref := inlinedRef{e.Offset, cu}
			ix.byName[name] = append(ix.byName[name], ref)
			if rust {
				ix.rust[name] = true
			} else if short := shortName(name); short != name {
				ix.byName[short] = append(ix.byName[short], ref)
			}
		}
	}
	return ix
}

// inlinedAliases maps the demangled symbol names of inlined Rust
// functions that differ from gdb's names to their instances.
func (img *Image) inlinedAliases() map[string][]inlinedRef {
	ix := img.inlinedIdx()
	ix.aliasOnce.Do(func() {
		ix.aliases = map[string][]inlinedRef{}
		dw, err := img.DWARF()
		if err != nil {
			return
		}
		r := dw.Reader()
		for name := range ix.rust {
			refs := ix.byName[name]
			r.Seek(refs[0].off)
			e, err := r.Next()
			if err != nil || e == nil {
				continue
			}
			if alias := functionName(dw, e); alias != name && alias != "??" {
				ix.aliases[alias] = append(ix.aliases[alias], refs...)
			}
		}
	})
	return ix.aliases
}

// newInlined makes the Function of an inlined instance e of unit cu, with
// its call site.
func (img *Image) newInlined(dw *dwarf.Data, cu *cuInfo, cuOff dwarf.Offset, e *dwarf.Entry, rs [][2]uint64) *Function {
	f := img.newFunction(dw, cu, cuOff, e, rs, img.calleeName(dw, cu, e))
	f.Inlined = true
	if i, ok := e.Val(dwarf.AttrCallFile).(int64); ok && int(i) < len(cu.files) && i >= 0 {
		f.CallFile = cu.files[i]
	}
	if i, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
		f.CallLine = int(i)
	}
	// gdb stops where the inlined code starts: it has no prologue.
	f.Entry = f.Low
	return f
}

// FindInlined returns the inlined instances of the functions named name
// (as FindFunction names them), by address. Instances without code (in
// code the compiler dropped) are left out.
func (t *Table) FindInlined(name string) []*Function {
	var out []*Function
	for _, img := range t.Images {
		out = append(out, img.inlinedFuncs(img.inlinedIdx().byName[name])...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Low < out[j].Low })
	return out
}

// inlinedFuncs makes the Functions of inlined instances, leaving out
// those without code.
func (img *Image) inlinedFuncs(refs []inlinedRef) []*Function {
	if len(refs) == 0 {
		return nil
	}
	dw, err := img.DWARF()
	if err != nil {
		return nil
	}
	cus := img.funcIndex().cus
	r := dw.Reader()
	var out []*Function
	for _, ref := range refs {
		cu := cus[ref.cu]
		r.Seek(ref.off)
		e, err := r.Next()
		if err != nil || e == nil || cu == nil {
			continue
		}
		rs, err := codeRanges(dw, e)
		if err != nil || len(rs) == 0 || rs[0][0] == 0 {
			continue
		}
		out = append(out, img.newInlined(dw, cu, ref.cu, e, rs))
	}
	return out
}

// InlinedStarts returns where the inlined calls in a concrete function
// start (their entries), at any depth: the places a step out of one of
// them may stop, at the call site of the next.
func (t *Table) InlinedStarts(fn *Function) []uint64 {
	if fn == nil || fn.image == nil || fn.Inlined {
		return nil
	}
	img := fn.image
	dw, err := img.DWARF()
	if err != nil {
		return nil
	}
	var out []uint64
	walkBody(dw, dwarf.Offset(fn.offset), func(e *dwarf.Entry) bool {
		if e.Tag == dwarf.TagInlinedSubroutine {
			if rs, err := codeRanges(dw, e); err == nil && len(rs) > 0 {
				low := rs[0][0]
				if v, ok := e.Val(dwarf.AttrLowpc).(uint64); ok && v != 0 {
					low = v
				}
				out = append(out, low+img.Bias)
			}
		}
		return true
	})
	return out
}

// walkBody visits the entries below the one at off, depth first, and
// goes into an entry's children only where visit returns true: the
// callers prune the subtrees that cannot hold what they look for. An
// entry without children, or one that cannot be read, visits nothing.
func walkBody(dw *dwarf.Data, off dwarf.Offset, visit func(e *dwarf.Entry) bool) {
	r := dw.Reader()
	r.Seek(off)
	top, err := r.Next()
	if err != nil || top == nil || !top.Children {
		return
	}
	for depth := 1; depth > 0; {
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		if e.Tag == 0 {
			depth--
			continue
		}
		enter := visit(e)
		if !e.Children {
			continue
		}
		if enter {
			depth++
		} else {
			r.SkipChildren()
		}
	}
}
