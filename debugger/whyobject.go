package debugger

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
)

// objectRef names an address by the object DWARF says holds it: a local,
// an argument, a global, or what a pointer among those points to.
type objectRef struct {
	name string // the object: "n", "*p", "r"
	// path is the members from the object down to the address, outermost
	// first ("name", "[7]").
	path  []objMember
	deref bool // reached through a pointer: members are written ->
	lang  dwarf.Lang
}

// objMember is one step into an object: a field or an element.
type objMember struct {
	name       string
	start, end uint64 // its bytes
	typ        string
}

// String writes the reference as the language would (n->name[7]).
func (o objectRef) String() string { return o.upTo(len(o.path)) }

// upTo writes the reference down to the first n members.
func (o objectRef) upTo(n int) string {
	var b strings.Builder
	b.WriteString(o.name)
	for i, m := range o.path[:n] {
		switch {
		case strings.HasPrefix(m.name, "["):
		case i == 0 && o.deref && (o.lang == dwarf.LangC || o.lang == dwarf.LangCPlusPlus):
			b.WriteString("->")
		default:
			b.WriteString(".")
		}
		b.WriteString(m.name)
	}
	return b.String()
}

// nameAddress names addr for the chain: an object's objMember, or the
// address itself.
func (s *Session) nameAddress(tid int32, addr uint64) string {
	if o, ok := s.objectAt(tid, addr); ok {
		return o.String()
	}
	return fmt.Sprintf("*%#x", addr)
}

// objectAt finds the object holding addr at the current moment: the
// variables of thread tid's frames (in memory, or pointing to a struct or
// array that holds it), then the globals.
func (s *Session) objectAt(tid int32, addr uint64) (objectRef, bool) {
	t := s.symbols()
	frames, _ := s.stack(tid)
	var pointed *objectRef
	for level := range frames {
		if frames[level].Function == nil {
			continue
		}
		args, locals, err := t.FrameVariables(frames, level, s.mem())
		if err != nil {
			continue
		}
		for _, v := range append(args, locals...) {
			if v.Optimized || v.Type == nil {
				continue
			}
			lang := v.Type.Lang
			if v.InMem && addr >= v.Addr && addr < v.Addr+uint64(max(v.Type.Size, 0)) {
				return objectRef{name: v.Name, path: members(v.Type, v.Addr, addr), lang: lang}, true
			}
			if pointed != nil {
				continue
			}
			pt := resolveType(v.Type)
			if pt == nil || (pt.Kind != dwarf.KindPointer && pt.Kind != dwarf.KindReference) || pt.Elem == nil {
				continue
			}
			raw := v.Bytes
			if len(raw) < 8 && v.InMem {
				raw = make([]byte, 8)
				if n, _ := s.mem().ReadAt(raw, v.Addr); n < 8 {
					continue
				}
			}
			if len(raw) < 8 {
				continue
			}
			el := resolveType(pt.Elem)
			if el == nil || (el.Kind != dwarf.KindStruct && el.Kind != dwarf.KindArray) || el.Size <= 0 {
				continue
			}
			p := binary.LittleEndian.Uint64(raw)
			if addr >= p && addr < p+uint64(el.Size) {
				pointed = &objectRef{name: v.Name, path: members(pt.Elem, p, addr), deref: pt.Kind == dwarf.KindPointer, lang: lang}
			}
		}
	}
	if pointed != nil {
		return *pointed, true
	}
	if sym, _, ok := t.At(addr); ok && !sym.Func {
		if g, ok := t.Global(sym.Name, nil, s.mem()); ok && g.Type != nil && g.InMem &&
			addr >= g.Addr && addr < g.Addr+uint64(max(g.Type.Size, 0)) {
			return objectRef{name: sym.Name, path: members(g.Type, g.Addr, addr), lang: g.Type.Lang}, true
		}
	}
	return objectRef{}, false
}

// resolveType strips typedefs and qualifiers.
func resolveType(t *dwarf.Type) *dwarf.Type {
	for t != nil && (t.Kind == dwarf.KindTypedef || t.Kind == dwarf.KindQualified) {
		t = t.Elem
	}
	return t
}

// members descends from an object of type t at base to addr.
func members(t *dwarf.Type, base, addr uint64) []objMember {
	var out []objMember
	for depth := 0; depth < 16; depth++ {
		t = resolveType(t)
		if t == nil {
			break
		}
		switch t.Kind {
		case dwarf.KindStruct, dwarf.KindUnion:
			found := false
			for _, f := range t.Fields {
				ft := resolveType(f.Type)
				if ft == nil || ft.Size <= 0 || f.BitSize != 0 {
					continue
				}
				start := base + uint64(f.Offset)
				if addr >= start && addr < start+uint64(ft.Size) {
					out = append(out, objMember{name: f.Name, start: start, end: start + uint64(ft.Size), typ: f.Type.Name})
					t, base, found = f.Type, start, true
					break
				}
			}
			if !found {
				return out
			}
		case dwarf.KindArray:
			el := resolveType(t.Elem)
			if el == nil || el.Size <= 0 {
				return out
			}
			i := (addr - base) / uint64(el.Size)
			start := base + i*uint64(el.Size)
			out = append(out, objMember{name: fmt.Sprintf("[%d]", i), start: start, end: start + uint64(el.Size), typ: t.Elem.Name})
			t, base = t.Elem, start
		default:
			return out
		}
	}
	return out
}
