package patch

import "testing"

// TestEHPointer reads a value in each pointer encoding of .eh_frame, the
// signed ones sign-extended and the pc-relative ones made absolute, and
// refuses a value cut short.
func TestEHPointer(t *testing.T) {
	const vaddr = 0x1000
	for _, c := range []struct {
		name  string
		enc   byte
		data  []byte
		apply bool
		want  uint64
		pos   int
	}{
		{"absptr", peAbsptr, []byte{1, 2, 3, 4, 5, 6, 7, 8}, false, 0x0807060504030201, 8},
		{"udata8", peUdata8, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, false, ^uint64(0), 8},
		{"udata4", peUdata4, []byte{0xfe, 0xff, 0xff, 0xff}, false, 0xfffffffe, 4},
		{"sdata4", peSdata4, []byte{0xfe, 0xff, 0xff, 0xff}, false, ^uint64(1), 4},
		{"sdata4 positive", peSdata4, []byte{0x10, 0, 0, 0x7f}, false, 0x7f000010, 4},
		{"udata2", peUdata2, []byte{0xfe, 0xff}, false, 0xfffe, 2},
		{"sdata2", peSdata2, []byte{0xfe, 0xff}, false, ^uint64(1), 2},
		{"uleb128", peUleb128, []byte{0xe5, 0x8e, 0x26}, false, 624485, 3},
		{"sleb128", peSleb128, []byte{0xc0, 0xbb, 0x78}, false, uint64(0xffffffffffffffff - 123456 + 1), 3},
		{"pcrel sdata4", pePcrel | peSdata4, []byte{0xf0, 0xff, 0xff, 0xff}, true, vaddr - 0x10, 4},
		{"pcrel unapplied", pePcrel | peSdata4, []byte{0x20, 0, 0, 0}, false, 0x20, 4},
	} {
		r := &ehReader{data: c.data, vaddr: vaddr}
		got, err := r.pointer(c.enc, c.apply)
		if err != nil || got != c.want || r.pos != c.pos {
			t.Errorf("%s: %#x at %d, %v; want %#x at %d", c.name, got, r.pos, err, c.want, c.pos)
		}
		short := &ehReader{data: c.data[:len(c.data)-1], vaddr: vaddr}
		if _, err := short.pointer(c.enc, c.apply); err == nil {
			t.Errorf("%s: a value cut short is read", c.name)
		}
	}
}
