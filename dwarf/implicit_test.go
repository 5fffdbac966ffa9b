package dwarf

import (
	"bytes"
	"errors"
	"testing"
)

// TestSliceTarget: a synthetic pointer reads its type's bytes at its
// offset in the target, and an access past either end is gdb's error.
func TestSliceTarget(t *testing.T) {
	target := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	for _, c := range []struct {
		name      string
		off, size int64
		want      []byte
		err       error
	}{
		{"whole", 0, 8, target, nil},
		{"second int", 4, 4, []byte{5, 6, 7, 8}, nil},
		{"past the end", 8, 4, nil, errSyntheticBounds},
		{"straddling the end", 6, 4, nil, errSyntheticBounds},
		{"before the start", -4, 4, nil, errSyntheticBounds},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := sliceTarget(Value{}, target, c.off, c.size)
			if !errors.Is(err, c.err) || !bytes.Equal(v.Bytes, c.want) {
				t.Errorf("got % x, %v; want % x, %v", v.Bytes, err, c.want, c.err)
			}
		})
	}
}

// TestImplicitPointerAdd: p+n moves the offset and keeps the target; a
// pointer with no frame cannot be followed.
func TestImplicitPointerAdd(t *testing.T) {
	p := &ImplicitPointer{DIE: 0x40, Offset: 4}
	q := p.Add(8)
	if q.DIE != 0x40 || q.Offset != 12 || p.Offset != 4 {
		t.Errorf("Add(8) of %+v = %+v", p, q)
	}
	if _, err := q.Deref(&Type{Kind: KindBase, Name: "int", Size: 4}); err == nil {
		t.Error("Deref without a frame succeeded")
	}
}
