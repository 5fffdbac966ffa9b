package debugger

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rewind-debugger/rewind/debugger/expr"
	"github.com/rewind-debugger/rewind/dwarf"
)

// errNotRaw says a watch argument is not a raw `*(TYPE *)ADDR`: it is
// then evaluated as an expression.
var errNotRaw = errors.New("not a raw address")

// typeSizes are the C types a raw watch expression may cast to without
// debug information.
var typeSizes = map[string]int{
	"char": 1, "unsigned char": 1, "signed char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1, "_Bool": 1,
	"short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2,
	"int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4, "float": 4,
	"long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8, "int64_t": 8, "uint64_t": 8,
	"size_t": 8, "ssize_t": 8, "double": 8, "void*": 8, "uintptr_t": 8,
}

// sizedTypes name a C scalar of each size a watchpoint covers: the
// location of a watch -l whose type has no name to write back.
var sizedTypes = map[int]string{1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long"}

// parseLocation reads `*ADDR`, `*(TYPE*)ADDR` or `*(TYPE *)ADDR` into an
// address and a size (8 without a cast). A TYPE that is no C scalar is
// looked up in the program's debug information, whose type is returned:
// reading nothing at ADDR, it holds at any moment, before the memory is
// mapped too (a watch -l reopened at the start of the recording).
func (s *Session) parseLocation(src string) (uint64, int, *dwarf.Type, error) {
	e := strings.TrimSpace(src)
	rest, ok := strings.CutPrefix(e, "*")
	if !ok {
		return 0, 0, nil, errNotRaw
	}
	rest = strings.TrimSpace(rest)
	size := 8
	var typ *dwarf.Type
	if strings.HasPrefix(rest, "(") {
		end := strings.Index(rest, ")")
		if end < 0 {
			return 0, 0, nil, fmt.Errorf("bad cast in %q", src)
		}
		name := strings.TrimSpace(rest[1:end])
		name = strings.TrimSpace(strings.TrimSuffix(name, "*"))
		n := castSize(name)
		if n < 0 {
			typ, n = s.namedType(name)
		}
		if n <= 0 {
			return 0, 0, nil, fmt.Errorf("unknown type %q (raw watches know the C scalar types and the program's own)", name)
		}
		size = n
		rest = strings.TrimSpace(rest[end+1:])
	} else if v, err := expr.Eval(rest, s.newScope()); err == nil && expr.IsPointer(v.Type) {
		// *p of a pointer p is an expression of the language, whose
		// type says the size (4 bytes for an int *, not 8).
		return 0, 0, nil, errNotRaw
	}
	addr, err := s.evalAddress(rest)
	return addr, size, typ, err
}

// castSize is the size of a C scalar or pointer type named in a raw
// watch, -1 for a name it does not know.
func castSize(name string) int {
	if n, ok := typeSizes[strings.Join(strings.Fields(name), " ")]; ok {
		return n
	}
	if strings.HasSuffix(name, "*") {
		return 8
	}
	return -1
}

// namedType finds a type of the program by name (a typedef, an enum, a
// struct), with its size; 0 when there is none.
func (s *Session) namedType(name string) (*dwarf.Type, int) {
	t, err := s.symbols().TypeByName(name)
	if err != nil || t == nil || t.Size <= 0 {
		return nil, 0
	}
	return t, int(t.Size)
}

// locationOf is what a watch -l of typ at wp re-creates anywhere: the
// bytes it watches as `*(TYPE *)ADDR`, TYPE its own type where that name
// reads back as the same size, else an unsigned scalar of that size (an
// anonymous struct, a type the raw form does not read as the program
// does, Go's 8-byte int). The expression is not kept: its variables may
// not exist where the recording is reopened.
func (s *Session) locationOf(typ *dwarf.Type, addr uint64, size int) string {
	if typ != nil && typ.Name != "" {
		loc := fmt.Sprintf("*(%s *)%#x", typ.Name, addr)
		if a, n, _, err := s.parseLocation(loc); err == nil && a == addr && n == size {
			return loc
		}
	}
	if name, ok := sizedTypes[size]; ok {
		return fmt.Sprintf("*(%s *)%#x", name, addr)
	}
	return ""
}

// relabelWatch gives a watchpoint restored from its location the
// expression the user made it with, so that it is listed, and saved
// again, as it was; its values keep the location's type.
func (s *Session) relabelWatch(id int, expr, location string) {
	for _, w := range s.watches {
		if w.id != id {
			continue
		}
		w.expr, w.location = expr, location
		if _, _, typ, err := s.parseLocation(location); err == nil && typ != nil {
			w.typ = typ
		}
	}
}
