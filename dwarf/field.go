package dwarf

// Field lookup is shared by the formatter, the tree views and the
// expression evaluator, so that s.f finds the same member everywhere:
// through C++ base classes, anonymous structs and unions, Go embedded
// structs and the active variant of a Rust enum.

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// maxFieldDepth bounds the search through nested members, against a
// corrupt or cyclic type.
const maxFieldDepth = 16

// Field returns the named field of a struct/class/union value, searching
// as FieldOf does, and, for a pointer to struct, through the pointer.
func (t *Table) Field(v Value, name string, mem Memory) (Value, error) {
	if v.Type == nil {
		return Value{}, fmt.Errorf("field %s of a value without a type", name)
	}
	r := stripType(v.Type)
	if r.Kind == KindPointer || r.Kind == KindReference {
		d, err := t.Deref(v, mem)
		if err != nil {
			return Value{}, err
		}
		return t.Field(d, name, mem)
	}
	if r.Kind != KindStruct && r.Kind != KindUnion {
		return Value{}, fmt.Errorf("%s is of type %s, which has no fields", v.Name, v.Type.Name)
	}
	if fv, ok := FieldOf(v, name, mem); ok {
		return fv, nil
	}
	return Value{}, fmt.Errorf("there is no member named %s in %s", name, v.Type.Name)
}

// FieldOf finds a member of a struct, class or union value by name: a
// direct member, else one of a base class (C++), an anonymous struct or
// union, an embedded struct (Go, which names the member after its type)
// or the active variant of a Rust enum (memory tells which). A Rust tuple
// field may be written as its number ("0" for the member __0). A bitfield
// comes out as a computed value holding its bits. The member of a value
// that is optimized out or unreadable is so too; ok is false only when
// there is no such member.
func FieldOf(v Value, name string, mem Memory) (Value, bool) {
	r := stripType(v.Type)
	if r == nil || r.Kind != KindStruct && r.Kind != KindUnion {
		return Value{}, false
	}
	if fv, ok := findField(v, r, name, mem, 0); ok {
		return fv, true
	}
	if name != "" && '0' <= name[0] && name[0] <= '9' {
		return findField(v, r, "__"+name, mem, 0)
	}
	return Value{}, false
}

// findField is FieldOf's search of r (v's stripped type), bounded in
// depth against a cyclic or corrupt type.
func findField(v Value, r *Type, name string, mem Memory, depth int) (Value, bool) {
	if depth > maxFieldDepth {
		return Value{}, false
	}
	for _, fl := range r.Fields {
		if fl.Name == name && !fl.Base {
			return fieldValue(v, fl, mem), true
		}
	}
	// Base classes, anonymous members, and Go embedded structs (named as
	// their type) hold more fields.
	for _, fl := range r.Fields {
		ft := stripType(fl.Type)
		if ft.Kind != KindStruct && ft.Kind != KindUnion {
			continue
		}
		if fl.Base || fl.Name == "" || r.Lang == LangGo && strings.HasSuffix(ft.Name, "."+fl.Name) {
			if fv, ok := findField(subValue(v, fl.Name, fl.Type, fl.Offset), ft, name, mem, depth+1); ok {
				return fv, true
			}
		}
	}
	if r.Variants != nil {
		if _, payload, ok := rustVariant(v, r, mem); ok {
			pt := stripType(payload.Type)
			return findField(payload, pt, name, mem, depth+1)
		}
	}
	return Value{}, false
}

// deepField finds a member by name anywhere among nested members, not
// only through bases: libstdc++ keeps a vector's _M_start in _M_impl,
// and the layers between have changed across versions.
func deepField(v Value, name string, mem Memory, depth int) (Value, bool) {
	r := stripType(v.Type)
	if fv, ok := FieldOf(v, name, mem); ok {
		return fv, true
	}
	if depth > 6 {
		return Value{}, false
	}
	for _, fl := range r.Fields {
		if ft := stripType(fl.Type); ft.Kind == KindStruct || ft.Kind == KindUnion {
			if fv, ok := deepField(subValue(v, fl.Name, fl.Type, fl.Offset), name, mem, depth+1); ok {
				return fv, true
			}
		}
	}
	return Value{}, false
}

// fieldByName finds a direct field.
func fieldByName(r *Type, name string) (Field, bool) {
	for _, fl := range r.Fields {
		if fl.Name == name {
			return fl, true
		}
	}
	return Field{}, false
}

// fieldValue is a field of a struct value; a bitfield comes out as a
// computed value of the field's type holding the extracted bits.
func fieldValue(v Value, fl Field, mem Memory) Value {
	if fl.BitSize == 0 {
		return subValue(v, fl.Name, fl.Type, fl.Offset)
	}
	return bitfieldValue(v, fl, mem)
}

// bitfieldValue extracts a bitfield: BitOffset counts from the least
// significant bit of the storage at Offset and may pass its first byte,
// so the bits are read from the byte they start in, which may take nine
// bytes for a field of up to 64 bits.
func bitfieldValue(v Value, fl Field, mem Memory) Value {
	out := Value{Name: fl.Name, Type: fl.Type}
	if v.Optimized {
		out.Optimized = true
		return out
	}
	pos := fl.Offset*8 + fl.BitOffset
	first, shift := pos>>3, uint(pos&7)
	n := (int64(shift) + fl.BitSize + 7) / 8
	var b []byte
	switch {
	case v.Err != nil:
		out.Err = v.Err
		return out
	case v.InMem:
		var err error
		if b, err = readMem(mem, v.Addr+uint64(first), n); err != nil {
			out.Err = err
			return out
		}
	case first < 0 || first+n > int64(len(v.Bytes)):
		out.Err = fmt.Errorf("bitfield %s is outside the value's %d bytes", fl.Name, len(v.Bytes))
		return out
	default:
		b = v.Bytes[first : first+n]
	}
	x := leUint(b[:min(len(b), 8)]) >> shift
	if len(b) > 8 {
		x |= uint64(b[8]) << (64 - shift)
	}
	if fl.BitSize < 64 {
		x &= 1<<uint(fl.BitSize) - 1
		if signedInt(fl.Type) {
			x = uint64(signExtend(x, int(fl.BitSize)))
		}
	}
	size := stripType(fl.Type).Size
	if size <= 0 || size > 8 {
		size = 8
	}
	out.Bytes = make([]byte, size)
	var full [8]byte
	binary.LittleEndian.PutUint64(full[:], x)
	copy(out.Bytes, full[:])
	return out
}

// signedInt reports whether an integer type is signed. An enum follows
// its underlying type, or is signed when an enumerator is negative.
func signedInt(t *Type) bool {
	t = stripType(t)
	switch {
	case t == nil:
		return false
	case t.Kind == KindBase:
		return isSignedEnc(t.Encoding)
	case t.Kind == KindEnum && t.Elem != nil:
		return signedInt(t.Elem)
	case t.Kind == KindEnum:
		for _, en := range t.Enumerators {
			if en.Value < 0 {
				return true
			}
		}
	}
	return false
}
