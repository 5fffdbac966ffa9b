package dwarf

// Go maps are hash tables in the runtime's layout, which changed with
// Go 1.24's Swiss tables; this file walks both layouts for their
// entries, and looks a key up by comparing it with each.

import (
	"bytes"
	"fmt"
	"math"
)

// goMapEntries calls fn for up to limit entries of a Go map and returns
// the map's length. It reads both layouts from the binary's own DWARF:
// the swiss tables of Go 1.24+ (internal/runtime/maps.Map: a small map's
// dirPtr is one group, a large one's a directory of tables of groups) and
// the hmap buckets before.
func (t *Table) goMapEntries(v Value, mem Memory, limit int, fn func(k, val Value) bool) (int64, error) {
	r := stripType(v.Type)
	addr, err := uintValue(v, mem)
	if err != nil {
		return 0, err
	}
	if addr == 0 {
		return 0, nil
	}
	if r.Kind != KindPointer {
		return 0, fmt.Errorf("map type %s is not a pointer", v.Type.Name)
	}
	hdr := stripType(r.Elem)
	hv := atAddr("", hdr, addr)
	field := func(sv Value, name string) (Value, bool) {
		st := stripType(sv.Type)
		fd, ok := fieldByName(st, name)
		if !ok {
			return Value{}, false
		}
		return subValue(sv, name, fd.Type, fd.Offset), true
	}
	uintField := func(sv Value, name string) (uint64, error) {
		fv, ok := field(sv, name)
		if !ok {
			return 0, fmt.Errorf("map layout %s has no field %s", stripType(sv.Type).Name, name)
		}
		return uintValue(fv, mem)
	}
	// uintFields reads several fields of the map's header.
	uintFields := func(names ...string) ([]uint64, error) {
		out := make([]uint64, len(names))
		for i, name := range names {
			var err error
			if out[i], err = uintField(hv, name); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	keyType, elemType := mapKeyElem(v.Type)
	// A key or element too large for a slot is stored behind a pointer.
	indirect := func(x Value, want *Type) Value {
		xt := stripType(x.Type)
		if want != nil && xt.Kind == KindPointer && GoKindOf(want) != GoKindPointer && stripType(want).Kind != KindPointer {
			p, err := uintValue(x, mem)
			if err != nil {
				return Value{Type: want, Err: err}
			}
			return atAddr(x.Name, want, p)
		}
		if want != nil {
			x.Type = want
		}
		return x
	}
	emitted := 0
	emit := func(k, val Value) bool {
		if emitted >= limit {
			return false
		}
		emitted++
		return fn(indirect(k, keyType), indirect(val, elemType))
	}

	if _, ok := fieldByName(hdr, "dirPtr"); ok {
		hdrFields, err := uintFields("used", "dirPtr", "dirLen")
		if err != nil {
			return 0, err
		}
		used, dirPtr, dirLen := hdrFields[0], hdrFields[1], hdrFields[2]
		dpf, _ := fieldByName(hdr, "dirPtr")
		// dirPtr is declared **table; the table type leads to the group.
		tablePtr := stripType(stripType(dpf.Type).Elem)
		table := stripType(tablePtr.Elem)
		gf, ok := fieldByName(table, "groups")
		if !ok {
			return 0, fmt.Errorf("map table type %s has no groups", table.Name)
		}
		groupsRef := stripType(gf.Type)
		dataF, ok1 := fieldByName(groupsRef, "data")
		if !ok1 {
			return 0, fmt.Errorf("map groups type %s has no data", groupsRef.Name)
		}
		group := stripType(stripType(dataF.Type).Elem)
		if group.Size <= 0 {
			return int64(used), fmt.Errorf("map group type %s has no size", group.Name)
		}
		// visit walks the slots of one group; it returns false to stop.
		visit := func(gaddr uint64) (bool, error) {
			gv := atAddr("", group, gaddr)
			ctrl, err := uintField(gv, "ctrl")
			if err != nil {
				return false, err
			}
			slots, hasSlots := field(gv, "slots")
			keys, hasKeys := field(gv, "keys")
			elems, _ := field(gv, "elems")
			for i := int64(0); i < 8; i++ {
				if byte(ctrl>>(8*i))&0x80 != 0 {
					continue // empty or deleted
				}
				var k, e Value
				switch {
				case hasSlots:
					st := stripType(slots.Type)
					slotT := stripType(st.Elem)
					sv := subValue(slots, "", slotT, i*slotT.Size)
					kf, ok1 := fieldByName(slotT, "key")
					ef, ok2 := fieldByName(slotT, "elem")
					if !ok1 || !ok2 {
						return false, fmt.Errorf("map slot type %s lacks key/elem", slotT.Name)
					}
					k, e = subValue(sv, "key", kf.Type, kf.Offset), subValue(sv, "elem", ef.Type, ef.Offset)
				case hasKeys:
					kt, et := stripType(stripType(keys.Type).Elem), stripType(stripType(elems.Type).Elem)
					k, e = subValue(keys, "", kt, i*kt.Size), subValue(elems, "", et, i*et.Size)
				default:
					return false, fmt.Errorf("map group type %s has no slots", group.Name)
				}
				if !emit(k, e) {
					return false, nil
				}
			}
			return true, nil
		}
		if dirLen == 0 {
			if dirPtr == 0 {
				return int64(used), nil
			}
			_, err := visit(dirPtr)
			return int64(used), err
		}
		if dirLen > 1<<20 {
			return int64(used), fmt.Errorf("corrupt map directory of %d tables", dirLen)
		}
		var last uint64
		for i := uint64(0); i < dirLen; i++ {
			tb, err := readMem(mem, dirPtr+8*i, 8)
			if err != nil {
				return int64(used), err
			}
			tp := leUint(tb)
			// Several directory entries share a table until it splits.
			if tp == 0 || tp == last {
				continue
			}
			last = tp
			tv := atAddr("", table, tp)
			gv, _ := field(tv, "groups")
			data, err := uintField(gv, "data")
			if err != nil {
				return int64(used), err
			}
			mask, err := uintField(gv, "lengthMask")
			if err != nil {
				return int64(used), err
			}
			if mask > 1<<24 {
				return int64(used), fmt.Errorf("corrupt map table of %d groups", mask+1)
			}
			for g := uint64(0); g <= mask; g++ {
				more, err := visit(data + g*uint64(group.Size))
				if err != nil || !more {
					return int64(used), err
				}
			}
		}
		return int64(used), nil
	}

	// Go 1.23 and before: runtime.hmap with 2^B buckets of 8 entries,
	// each with overflow buckets.
	hdrFields, err := uintFields("count", "B", "buckets")
	if err != nil {
		return 0, err
	}
	count, bl, buckets := hdrFields[0], hdrFields[1], hdrFields[2]
	oldbuckets, _ := uintField(hv, "oldbuckets")
	bf, _ := fieldByName(hdr, "buckets")
	bucket := stripType(stripType(bf.Type).Elem)
	if bucket.Kind != KindStruct || bucket.Size <= 0 {
		return int64(count), fmt.Errorf("map bucket type %s is not a struct", bucket.Name)
	}
	const emptyOne, minTopHash = 1, 5
	walk := func(baddr uint64) (bool, error) {
		for hops := 0; baddr != 0 && hops < 1<<16; hops++ {
			bv := atAddr("", bucket, baddr)
			th, ok1 := field(bv, "tophash")
			keys, ok2 := field(bv, "keys")
			vals, ok3 := field(bv, "values")
			if !ok1 || !ok2 || !ok3 {
				return false, fmt.Errorf("map bucket type %s lacks tophash/keys/values", bucket.Name)
			}
			tops, err := th.Contents(mem)
			if err != nil {
				return false, err
			}
			kt, vt := stripType(stripType(keys.Type).Elem), stripType(stripType(vals.Type).Elem)
			for i := range tops {
				if tops[i] <= emptyOne {
					continue
				}
				if !emit(subValue(keys, "", kt, int64(i)*kt.Size), subValue(vals, "", vt, int64(i)*max(vt.Size, 0))) {
					return false, nil
				}
			}
			baddr, err = uintField(bv, "overflow")
			if err != nil {
				return false, err
			}
		}
		return true, nil
	}
	nb := uint64(1) << bl
	for i := uint64(0); i < nb && bl < 32; i++ {
		// While growing, a bucket not yet evacuated still lives in the old
		// array; read it there, once.
		if oldbuckets != 0 {
			oldIdx := i & (nb/2 - 1)
			ob := oldbuckets + oldIdx*uint64(bucket.Size)
			tb, err := readMem(mem, ob, 1)
			if err == nil && !(tb[0] > emptyOne && tb[0] < minTopHash) {
				if oldIdx == i {
					if more, err := walk(ob); err != nil || !more {
						return int64(count), err
					}
				}
				continue
			}
		}
		if more, err := walk(buckets + i*uint64(bucket.Size)); err != nil || !more {
			return int64(count), err
		}
	}
	return int64(count), nil
}

// mapKeyElem finds a map type's key and element types from DW_AT_go_key
// and DW_AT_go_elem along its typedef chain.
func mapKeyElem(t *Type) (*Type, *Type) {
	for u := t; u != nil; u = u.Elem {
		if u.GoKey != nil || u.GoElem != nil {
			return u.GoKey, u.GoElem
		}
		if u.Kind != KindTypedef && u.Kind != KindQualified {
			break
		}
	}
	return nil, nil
}

// MapLookup finds a key in a Go map by comparing it with every entry
// (strings by contents, other keys by their bytes); ok is false when the
// map has no such key.
func (t *Table) MapLookup(m Value, key Value, mem Memory) (Value, bool, error) {
	f := t.newFormatter(mem, FormatOptions{})
	want, err := f.goKeyBytes(key)
	if err != nil {
		return Value{}, false, fmt.Errorf("map key: %w", err)
	}
	var found Value
	var ok bool
	var keyErr error
	_, err = t.goMapEntries(m, f.mem, math.MaxInt, func(k, val Value) bool {
		kb, err := f.goKeyBytes(k)
		if err != nil {
			keyErr = err
			return true
		}
		if bytes.Equal(kb, want) {
			found, ok = val, true
			return false
		}
		return true
	})
	if err != nil {
		return Value{}, false, fmt.Errorf("looking up map key: %w", err)
	}
	if !ok && keyErr != nil {
		return Value{}, false, fmt.Errorf("reading map keys: %w", keyErr)
	}
	return found, ok, nil
}

// goKeyBytes is the comparable form of a map key: a string's contents,
// the raw bytes of any other key.
func (f *formatter) goKeyBytes(k Value) ([]byte, error) {
	if GoKindOf(k.Type) == GoKindString {
		f2 := *f
		f2.opts.MaxString = math.MaxInt32
		s, _, err := f2.goString(k)
		return []byte("s" + s), err
	}
	b, err := k.Contents(f.mem)
	return append([]byte("b"), b...), err
}
