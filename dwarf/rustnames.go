package dwarf

import (
	"debug/dwarf"
	"sort"
	"strings"
)

// Rust functions are named as gdb names them (gdb/dwarf2/read.c:
// dwarf2_physname leaves Rust's linkage names aside and takes
// dwarf2_compute_name, the DW_AT_name qualified by determine_prefix):
// the names of the enclosing namespaces and types joined with "::", then
// the function's own DW_AT_name, which rustc writes with the generic
// arguments: "names::main::{closure#0}", "core::num::{impl#9}::wrapping_mul",
// "core::iter::range::{impl#6}::next<u64>". A function declared elsewhere
// (DW_AT_specification: a method, declared in its structure) or an
// instance of an abstract one (DW_AT_abstract_origin: inlined calls)
// takes the scope of that declaration.

// rustScope is the scope the children of e are in, inside parent
// (determine_prefix): a namespace adds its name, a named structure, union
// or class its name (an anonymous one starts over, as its members need no
// prefix), an enum only when it is an enum class; other entries (lexical
// blocks, functions) add nothing.
func rustScope(e *dwarf.Entry, parent string) string {
	name, _ := e.Val(dwarf.AttrName).(string)
	switch e.Tag {
	case dwarf.TagNamespace:
		if name == "" {
			name = "(anonymous namespace)"
		}
		return joinScope(parent, name)
	case dwarf.TagClassType, dwarf.TagInterfaceType, dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagModule:
		if name == "" || strings.HasPrefix(name, "._") || strings.HasPrefix(name, "<anonymous") {
			return ""
		}
		return joinScope(parent, name)
	case dwarf.TagEnumerationType:
		if class, _ := e.Val(dwarf.AttrEnumClass).(bool); class {
			if name == "" {
				return ""
			}
			return joinScope(parent, name)
		}
	}
	return parent
}

// declScope is the scope of a Rust subprogram without code.
type declScope struct {
	off   dwarf.Offset
	scope string
}

// scopeOf is the scope of the Rust subprogram without code at off.
func (fi *funcIndex) scopeOf(off dwarf.Offset) (string, bool) {
	i := sort.Search(len(fi.scopes), func(i int) bool { return fi.scopes[i].off >= off })
	if i < len(fi.scopes) && fi.scopes[i].off == off {
		return fi.scopes[i].scope, true
	}
	return "", false
}

// joinScope is gdb's typename_concat for Rust.
func joinScope(scope, name string) string {
	if scope == "" || name == "" {
		return scope + name
	}
	return scope + "::" + name
}

// rustDecl reads what names a Rust subprogram or inlined call e: its own
// DW_AT_name, from e or the entries it completes, and the entry whose
// scope qualifies it (gdb's die_specification): the DW_AT_specification
// of e or of the entries it completes, else its abstract origin. One walk
// along DW_AT_abstract_origin and DW_AT_specification serves both.
func rustDecl(dw *dwarf.Data, e *dwarf.Entry) (own string, decl dwarf.Offset, declared bool) {
	origin, hasOrigin := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
	for depth := 0; e != nil && depth < 8; depth++ {
		if own == "" {
			own, _ = e.Val(dwarf.AttrName).(string)
		}
		spec, hasSpec := e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		if hasSpec && !declared {
			decl, declared = spec, true
		}
		if own != "" && declared {
			break
		}
		next, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			next, ok = spec, hasSpec
		}
		if !ok {
			break
		}
		r := dw.Reader()
		r.Seek(next)
		ne, err := r.Next()
		if err != nil {
			break
		}
		e = ne
	}
	if !declared && hasOrigin {
		decl, declared = origin, true
	}
	return own, decl, declared
}

// calleeName names a subprogram or inlined call read after the index: as
// functionName, as gdb for Rust.
func (img *Image) calleeName(dw *dwarf.Data, cu *cuInfo, e *dwarf.Entry) string {
	if cu == nil || cu.lang != LangRust {
		return functionName(dw, e)
	}
	own, decl, declared := rustDecl(dw, e)
	if own == "" {
		return functionName(dw, e)
	}
	if declared {
		if scope, ok := img.funcIndex().scopeOf(decl); ok {
			return joinScope(scope, own)
		}
	}
	return own
}

// The names rewind's `break` takes for a Rust function besides gdb's
// (which needs the whole path, generic arguments included): the
// demangled symbol name rewind showed before it took DWARF's names, and
// the end of the path.

// rustAliases maps the demangled symbol names of Rust functions that
// differ from gdb's names ("symm::main::{{closure}}" for
// "symm::main::{closure#0}") to the functions. Built on the first name
// that needs it.
func (img *Image) rustAliases() map[string][]*Function {
	fi := img.funcIndex()
	fi.aliasOnce.Do(func() {
		fi.aliases = map[string][]*Function{}
		dw, err := img.DWARF()
		if err != nil {
			return
		}
		r := dw.Reader()
		for _, fn := range fi.rust {
			r.Seek(dwarf.Offset(fn.offset))
			e, err := r.Next()
			if err != nil || e == nil {
				continue
			}
			if alias := functionName(dw, e); alias != fn.Name && alias != "??" {
				fi.aliases[alias] = append(fi.aliases[alias], fn)
			}
		}
	})
	return fi.aliases
}

// FindRustAlias returns the Rust functions, out-of-line copies and
// inlined instances by address, whose symbol demangles to name where gdb
// names them otherwise: "symm::main::{{closure}}", "<u64>::wrapping_mul".
func (t *Table) FindRustAlias(name string) []*Function {
	var out []*Function
	for _, img := range t.Images {
		out = append(out, img.rustAliases()[name]...)
		out = append(out, img.inlinedFuncs(img.inlinedAliases()[name])...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Low < out[j].Low })
	return out
}

// FindRustSuffix returns the Rust functions, out-of-line copies and
// inlined instances by address, whose gdb name ends with name after a
// "::" (gdb's wild matching of C++ names, which it does not do for
// Rust's): "add" and "Acc::add" for "symm::Acc::add", "wrapping_mul" for
// "core::num::{impl#9}::wrapping_mul"; generic arguments may be left out
// ("largest" for "names::largest<u32>").
func (t *Table) FindRustSuffix(name string) []*Function {
	if name == "" {
		return nil
	}
	var out []*Function
	for _, img := range t.Images {
		for _, fn := range img.funcIndex().rust {
			if rustSuffixMatch(fn.Name, name) {
				out = append(out, fn)
			}
		}
		ix := img.inlinedIdx()
		var refs []inlinedRef
		for full := range ix.rust {
			if rustSuffixMatch(full, name) {
				refs = append(refs, ix.byName[full]...)
			}
		}
		out = append(out, img.inlinedFuncs(refs)...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Low < out[j].Low })
	return out
}

// rustSuffixMatch says whether spec names the end of the path full, with
// or without its generic arguments.
func rustSuffixMatch(full, spec string) bool {
	for _, name := range []string{full, stripGenerics(full)} {
		if name == spec || strings.HasSuffix(name, spec) && strings.HasSuffix(name[:len(name)-len(spec)], "::") {
			return true
		}
	}
	return false
}

// stripGenerics drops the generic arguments of every component of a path:
// "core::iter::range::{impl#6}::next<u64>" is "core::iter::range::{impl#6}::next".
func stripGenerics(name string) string {
	if !strings.Contains(name, "<") {
		return name
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '<':
			depth++
		case c == '>' && depth > 0 && name[i-1] != '-': // not fn() -> T
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// NamedBy says whether `break spec` names the function: its name, or for
// Rust the other names FindRustAlias and FindRustSuffix take.
func (fn *Function) NamedBy(spec string) bool {
	if fn.Name == spec {
		return true
	}
	if fn.Lang() != LangRust {
		return false
	}
	if rustSuffixMatch(fn.Name, spec) {
		return true
	}
	dw, err := fn.image.DWARF()
	if err != nil {
		return false
	}
	r := dw.Reader()
	r.Seek(dwarf.Offset(fn.offset))
	e, err := r.Next()
	return err == nil && e != nil && functionName(dw, e) == spec
}
