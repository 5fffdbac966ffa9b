package dwarf

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// llb builds location list bytes.
type llb []byte

func (b llb) u8(v ...byte) llb { return append(b, v...) }
func (b llb) u16(v uint16) llb { return binary.LittleEndian.AppendUint16(b, v) }
func (b llb) u32(v uint32) llb { return binary.LittleEndian.AppendUint32(b, v) }
func (b llb) u64(v uint64) llb { return binary.LittleEndian.AppendUint64(b, v) }
func (b llb) uleb(v uint64) llb {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// loc4 appends a .debug_loc entry (8-byte addresses) with its expression.
func (b llb) loc4(lo, hi uint64, expr ...byte) llb {
	return b.u64(lo).u64(hi).u16(uint16(len(expr))).u8(expr...)
}

// expr5 appends a .debug_loclists expression: ULEB128 length, bytes.
func (b llb) expr5(expr ...byte) llb { return b.uleb(uint64(len(expr))).u8(expr...) }

var (
	exprA = []byte{opReg0 + RegRDI}
	exprB = []byte{opReg0 + RegRSI}
	exprC = []byte{opLit0 + 7, opStackValue}
)

// testAddrs is a .debug_addr table: entry i is testAddrs[i].
var testAddrs = []uint64{0x2000, 0x3000, 0x3010}

func testAddr(idx uint64) (uint64, error) {
	if idx >= uint64(len(testAddrs)) {
		return 0, fmt.Errorf(".debug_addr index %d beyond %d entries", idx, len(testAddrs))
	}
	return testAddrs[idx], nil
}

func TestLocListFind(t *testing.T) {
	// DWARF 2-4 lists, relative to the unit's base 0x1000. An empty range
	// is at offset 4, not 0: (0, 0) ends a list.
	v4 := llb{}.
		loc4(0x10, 0x20, exprA...).loc4(0x20, 0x30, exprB...).u64(0).u64(0)
	v4base := llb{}.
		u64(^uint64(0)).u64(0x5000).loc4(0, 4, exprC...).u64(0).u64(0)
	v4empty := llb{}.
		loc4(4, 4, exprA...).loc4(4, 0x10, exprB...).loc4(0x10, 0x10, exprC...).u64(0).u64(0)
	v4gap := llb{}.
		loc4(4, 8, exprA...).loc4(8, 8).loc4(0x10, 0x10, exprC...).u64(0).u64(0)
	// DWARF 5 lists of every kind.
	v5 := llb{}.
		u8(lleBaseAddress).u64(0x1000).
		u8(lleOffsetPair).uleb(0x10).uleb(0x20).expr5(exprA...).
		u8(lleStartLength).u64(0x1800).uleb(8).expr5(exprB...).
		u8(lleStartxLength).uleb(0).uleb(0x10).expr5(exprC...).
		u8(lleBaseAddressx).uleb(1).
		u8(lleOffsetPair).uleb(0).uleb(4).expr5(exprA...).
		u8(lleStartxEndx).uleb(1).uleb(2).expr5(exprB...).
		u8(lleGNUViewPair).uleb(1).uleb(3).
		u8(lleStartEnd).u64(0x4000).u64(0x4010).expr5(exprC...).
		u8(lleEndOfList)
	v5default := llb{}.
		u8(lleDefaultLocation).expr5(exprC...).
		u8(lleStartLength).u64(0x1000).uleb(8).expr5(exprA...).
		u8(lleEndOfList)
	// A call inlined at a function's entry 0x1000: its argument is in rdi
	// at the entry's first views only, then the same pc holds another
	// location (as a start_length of length 0 and an offset pair).
	v5empty := llb{}.
		u8(lleStartLength).u64(0x1000).uleb(0).expr5(exprA...).
		u8(lleBaseAddress).u64(0x1000).
		u8(lleOffsetPair).uleb(0).uleb(0).expr5(exprC...).
		u8(lleOffsetPair).uleb(0).uleb(8).expr5(exprB...).
		u8(lleEndOfList)
	// Two lists in one section: the second at offset len(first).
	first := llb{}.loc4(0x10, 0x20, exprA...).u64(0).u64(0)
	second := uint64(len(first))
	two := append(append(llb{}, first...), llb{}.loc4(0x40, 0x50, exprB...).u64(0).u64(0)...)

	type tc struct {
		pc      uint64
		entry   bool // pc is the entry of its function
		want    []byte
		found   bool
		comment string
	}
	tables := []struct {
		name    string
		version int
		data    llb
		off     uint64
		cases   []tc
	}{
		{"debug_loc offset pairs", 4, v4, 0, []tc{
			{0x1010, false, exprA, true, "first range's start"},
			{0x101f, false, exprA, true, "first range's last byte"},
			{0x1020, false, exprB, true, "second range"},
			{0x1030, false, nil, false, "past the ranges"},
			{0x100f, true, nil, false, "before them, also at an entry"},
		}},
		{"debug_loc base selection", 4, v4base, 0, []tc{
			{0x5000, false, exprC, true, "relative to the new base"},
			{0x1000, false, nil, false, "the unit's base no longer applies"},
		}},
		{"debug_loc empty ranges", 4, v4empty, 0, []tc{
			{0x1004, true, exprA, true, "at an entry: the empty range, listed first"},
			{0x1004, false, exprB, true, "elsewhere: the range holding pc"},
			{0x1010, true, exprC, true, "at an entry, after the other ranges"},
			{0x1010, false, nil, false, "only an empty range there"},
		}},
		{"debug_loc empty expression", 4, v4gap, 0, []tc{
			{0x1008, true, []byte{}, true, "an empty range with no expression: found, no location"},
			{0x1010, true, exprC, true, "an empty range after a gap"},
			{0x100c, true, nil, false, "in the gap"},
		}},
		{"debug_loc second list", 4, two, second, []tc{
			{0x1045, false, exprB, true, "its own range"},
			{0x1015, false, nil, false, "the first list's range"},
		}},
		{"debug_loclists kinds", 5, v5, 0, []tc{
			{0x1010, false, exprA, true, "offset pair from base_address"},
			{0x1804, false, exprB, true, "start_length"},
			{0x200f, false, exprC, true, "startx_length"},
			{0x3002, false, exprA, true, "offset pair from base_addressx"},
			{0x3008, false, exprB, true, "startx_endx"},
			{0x4000, false, exprC, true, "start_end after a view pair"},
			{0x4010, false, nil, false, "past them all"},
		}},
		{"debug_loclists default location", 5, v5default, 0, []tc{
			{0x1004, false, exprA, true, "a range holds"},
			{0x1008, false, exprC, true, "none holds: the default"},
		}},
		{"debug_loclists empty ranges", 5, v5empty, 0, []tc{
			{0x1000, true, exprA, true, "at the entry: the first empty range"},
			{0x1000, false, exprB, true, "not an entry: the offset pair holding it"},
			{0x1004, true, exprB, true, "an empty range elsewhere holds nothing"},
		}},
	}
	for _, tb := range tables {
		t.Run(tb.name, func(t *testing.T) {
			lr := &locListReader{data: tb.data, version: tb.version, addrSize: 8, base: 0x1000, addr: testAddr}
			for _, c := range tb.cases {
				got, found, err := lr.find(tb.off, c.pc, func() bool { return c.entry })
				if err != nil {
					t.Errorf("%s: pc %#x: %v", c.comment, c.pc, err)
					continue
				}
				if found != c.found || string(got) != string(c.want) || (found && got == nil) {
					t.Errorf("%s: pc %#x: % x, %v; want % x, %v", c.comment, c.pc, got, found, c.want, c.found)
				}
			}
		})
	}
}

// TestLocListEntryAsked: whether pc is a function's entry is asked only
// where an empty range starts at pc, and once a list.
func TestLocListEntryAsked(t *testing.T) {
	data := llb{}.loc4(4, 4, exprA...).loc4(4, 4, exprB...).loc4(8, 0x10, exprC...).u64(0).u64(0)
	lr := &locListReader{data: data, version: 4, addrSize: 8, base: 0x1000}
	for _, c := range []struct {
		pc   uint64
		asks int
	}{{0x1004, 1}, {0x1008, 0}, {0x1000, 0}} {
		asks := 0
		if _, _, err := lr.find(0, c.pc, func() bool { asks++; return false }); err != nil {
			t.Fatal(err)
		}
		if asks != c.asks {
			t.Errorf("pc %#x: asked %d times, want %d", c.pc, asks, c.asks)
		}
	}
}

func TestLocListMalformed(t *testing.T) {
	tests := []struct {
		name    string
		version int
		addr    func(uint64) (uint64, error)
		size    int
		data    llb
		off     uint64
	}{
		{"offset past the section", 4, nil, 8, llb{}.u64(0).u64(0), 16},
		{"empty section", 5, nil, 8, nil, 0},
		{"address cut short", 4, nil, 8, llb{}.u64(0x10).u32(0), 0},
		{"length cut short", 4, nil, 8, llb{}.u64(0x10).u64(0x20).u8(1), 0},
		{"expression past the end", 4, nil, 8, llb{}.u64(0x10).u64(0x20).u16(40).u8(1, 2), 0},
		{"no end of list (v4)", 4, nil, 8, llb{}.loc4(0x10, 0x20, exprA...), 0},
		{"no end of list (v5)", 5, nil, 8, llb{}.u8(lleOffsetPair).uleb(4).uleb(8).expr5(exprA...), 0},
		{"unknown kind", 5, nil, 8, llb{}.u8(0x2a, 0, 0), 0},
		{"ULEB128 cut short", 5, nil, 8, llb{}.u8(lleOffsetPair, 0x80), 0},
		{"expression length past the end", 5, nil, 8, llb{}.u8(lleOffsetPair).uleb(0).uleb(4).uleb(1 << 40).u8(1), 0},
		{"start_end cut short", 5, nil, 8, llb{}.u8(lleStartEnd).u64(0x10).u8(1, 2), 0},
		{"base_address cut short", 5, nil, 8, llb{}.u8(lleBaseAddress).u32(0), 0},
		{"startx without .debug_addr", 5, nil, 8, llb{}.u8(lleStartxLength).uleb(0).uleb(4).expr5(exprA...).u8(lleEndOfList), 0},
		{"startx past .debug_addr", 5, testAddr, 8, llb{}.u8(lleStartxLength).uleb(9).uleb(4).expr5(exprA...).u8(lleEndOfList), 0},
		{"base_addressx past .debug_addr", 5, testAddr, 8, llb{}.u8(lleBaseAddressx).uleb(1 << 62).u8(lleEndOfList), 0},
		{"startx_endx past .debug_addr", 5, testAddr, 8, llb{}.u8(lleStartxEndx).uleb(0).uleb(3).expr5().u8(lleEndOfList), 0},
		{"address size", 4, nil, 2, llb{}.u16(0).u16(0), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lr := &locListReader{data: tc.data, version: tc.version, addrSize: tc.size, base: 0x1000, addr: tc.addr}
			got, found, err := lr.find(tc.off, 0x1000, func() bool { return true })
			if err == nil {
				t.Fatalf("no error: % x, %v", got, found)
			}
			if !errors.Is(err, errLocList) {
				t.Errorf("%v does not wrap errLocList", err)
			}
		})
	}
}

// TestLocListTruncated: every prefix of valid lists of both formats reads
// without a panic, to an error or to what the prefix holds.
func TestLocListTruncated(t *testing.T) {
	lists := []struct {
		version int
		data    llb
	}{
		{4, llb{}.u64(^uint64(0)).u64(0x5000).loc4(0, 4, exprC...).loc4(4, 4, exprA...).u64(0).u64(0)},
		{5, llb{}.u8(lleBaseAddressx).uleb(1).u8(lleOffsetPair).uleb(0).uleb(4).expr5(exprA...).
			u8(lleStartxLength).uleb(2).uleb(0).expr5(exprB...).u8(lleGNUViewPair).uleb(300).uleb(2).
			u8(lleDefaultLocation).expr5(exprC...).u8(lleStartEnd).u64(0x10).u64(0x20).expr5().u8(lleEndOfList)},
	}
	for _, l := range lists {
		for n := 0; n <= len(l.data); n++ {
			for _, pc := range []uint64{0x3000, 0x3010, 0x5004, 0x18} {
				lr := &locListReader{data: l.data[:n], version: l.version, addrSize: 8, base: 0x1000, addr: testAddr}
				if _, _, err := lr.find(0, pc, func() bool { return true }); err != nil && !errors.Is(err, errLocList) {
					t.Errorf("v%d, %d bytes, pc %#x: %v does not wrap errLocList", l.version, n, pc, err)
				}
			}
		}
	}
}

func TestLoclistxOffset(t *testing.T) {
	// A table of two offsets after a 12-byte header.
	data := llb{}.u32(0).u16(5).u8(8, 0).u32(2).u32(8).u32(0x20)
	for _, tc := range []struct {
		idx  uint64
		want uint64
		ok   bool
	}{
		{0, 12 + 8, true},
		{1, 12 + 0x20, true},
		{2, 0, false},
		{1 << 62, 0, false},
		{^uint64(0), 0, false},
	} {
		got, err := loclistxOffset(data, 12, tc.idx)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("index %d: %#x, %v; want %#x (ok %v)", tc.idx, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, errLocList) {
			t.Errorf("index %d: %v does not wrap errLocList", tc.idx, err)
		}
	}
	if _, err := loclistxOffset(data, ^uint64(0)-2, 1); err == nil {
		t.Error("a base at the end of the address space: no error")
	}
}

// TestLocEmptyRangeAtEntry: gcc -O2 inlines locviews.c's probe at the first
// instruction of lookup, and binds probe's arguments there only, in empty
// ranges of their location lists (told apart by location views): they
// hold at lookup's entry, as gdb takes them, and not an instruction later,
// in .debug_loc (DWARF 4) and .debug_loclists (DWARF 5).
func TestLocEmptyRangeAtEntry(t *testing.T) {
	for _, version := range []string{"-gdwarf-4", "-gdwarf-5"} {
		t.Run(version, func(t *testing.T) {
			bin := compileTest(t, "gcc", filepath.Join("..", "testdata", "source", "locviews.c"), "-g", version, "-O2")
			img, err := LoadImage(bin, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer img.Close()
			fn := uwFindFunc(t, img, "lookup")
			low, _ := fn.fn.Val(dwarf.AttrLowpc).(uint64)
			params := inlinedParams(t, img, fn.fn, low)
			if len(params) != 2 {
				t.Fatalf("%d parameters of a call inlined at lookup's entry %#x, want probe's 2", len(params), low)
			}
			for _, p := range params {
				field := p.AttrField(dwarf.AttrLocation)
				if field == nil || (field.Class != dwarf.ClassLocListPtr && field.Class != dwarf.ClassLocList) {
					t.Fatalf("parameter at %#x has no location list: %v", p.Offset, field)
				}
				expr, err := img.LocationExpr(field, fn.cu, low)
				if err != nil || len(expr) != 1 || (expr[0] != opReg0+RegRDI && expr[0] != opReg0+RegRSI) {
					t.Errorf("parameter at %#x at lookup's entry: % x, %v; want rdi or rsi", p.Offset, expr, err)
				}
				if expr, err := img.LocationExpr(field, fn.cu, low+1); !errors.Is(err, ErrOptimizedOut) {
					t.Errorf("parameter at %#x after lookup's entry: % x, %v; want optimized out", p.Offset, expr, err)
				}
			}
		})
	}
}

// inlinedParams returns the parameters of the call inlined in fn whose
// DW_AT_entry_pc is pc.
func inlinedParams(t *testing.T, img *Image, fn *dwarf.Entry, pc uint64) []*dwarf.Entry {
	t.Helper()
	dw, err := img.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	r := dw.Reader()
	r.Seek(fn.Offset)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	var params []*dwarf.Entry
	inCall := false
	for depth := 1; depth > 0; {
		e, err := r.Next()
		if err != nil || e == nil {
			t.Fatalf("children of the function at %#x: %v", fn.Offset, err)
		}
		if e.Tag == 0 {
			if depth == 2 {
				inCall = false
			}
			depth--
			continue
		}
		switch {
		case depth == 1 && e.Tag == dwarf.TagInlinedSubroutine:
			v, _ := e.Val(dwarf.AttrEntrypc).(uint64)
			inCall = v == pc && len(params) == 0
		case depth == 2 && inCall && e.Tag == dwarf.TagFormalParameter:
			params = append(params, e)
		}
		if e.Children {
			depth++
		}
	}
	return params
}
