package dwarf

import (
	"bytes"
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"iter"
	"math"
	"strings"
	"testing"
)

// uwFunc is a function DIE of a test program with its variables.
type uwFunc struct {
	cu, fn *dwarf.Entry
	vars   map[string]*dwarf.Entry
}

// uwFindFunc finds the subprogram named name (with code) in img's DWARF.
func uwFindFunc(t *testing.T, img *Image, name string) uwFunc {
	t.Helper()
	dw, err := img.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	r := dw.Reader()
	var cu *dwarf.Entry
	for e := range uwEntries(t, r) {
		if e.Tag == dwarf.TagCompileUnit {
			cu = e
			continue
		}
		if e.Tag != dwarf.TagSubprogram || e.Val(dwarf.AttrName) != name || e.Val(dwarf.AttrLowpc) == nil {
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		f := uwFunc{cu: cu, fn: e, vars: map[string]*dwarf.Entry{}}
		depth := 1
		for depth > 0 {
			c, err := r.Next()
			if err != nil || c == nil {
				t.Fatalf("children of %s: %v", name, err)
			}
			switch {
			case c.Tag == 0:
				depth--
			case c.Tag == dwarf.TagFormalParameter || c.Tag == dwarf.TagVariable:
				if n, ok := c.Val(dwarf.AttrName).(string); ok {
					f.vars[n] = c
				}
			}
			if c.Children {
				depth++
			}
		}
		return f
	}
	t.Fatalf("no function %s in %s", name, img.Path)
	return uwFunc{}
}

// uwEntries yields the entries r reads until the end of the data and
// fails the test on a read error. The loop body may advance r itself, to
// skip an entry's children or read them.
func uwEntries(t *testing.T, r *dwarf.Reader) iter.Seq[*dwarf.Entry] {
	t.Helper()
	return func(yield func(*dwarf.Entry) bool) {
		for {
			e, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e == nil || !yield(e) {
				return
			}
		}
	}
}

// uwFrameOf returns the index of the frame whose symbol is name.
func uwFrameOf(t *testing.T, frames []Frame, name string) int {
	t.Helper()
	for i, f := range frames {
		if f.Symbol == name {
			return i
		}
	}
	t.Fatalf("no frame %s in %q", name, uwSymbols(frames))
	return -1
}

// uwContext builds the location context of frame i running function fn,
// as the variables code does.
func uwContext(t *testing.T, p *uwStopped, frames []Frame, i int, fn uwFunc) (*LocContext, uint64) {
	t.Helper()
	img := p.table.Images[0]
	ctx, err := img.UnitContext(fn.cu)
	if err != nil {
		t.Fatal(err)
	}
	f := &frames[i]
	pc := f.PC
	if i > 0 && frames[i-1].Symbol != SignalFrameSymbol {
		pc-- // a return address: the call's location lists apply
	}
	ctx.Regs, ctx.CFA, ctx.Mem = &f.Regs, f.CFA, p.mem
	ctx.FrameBase = func() (uint64, error) {
		expr, err := img.LocationExpr(fn.fn.AttrField(dwarf.AttrFrameBase), fn.cu, pc)
		if err != nil {
			return 0, err
		}
		inner := ctx
		inner.FrameBase = nil
		return EvalAddress(expr, &inner)
	}
	if i+1 < len(frames) {
		ctx.EntryValue = p.table.EntryValueResolver(&frames[i+1], p.mem)
	}
	ctx.TLSBase = func() (uint64, error) { return img.StaticTLSBlock(f.Regs.FSBase) }
	return &ctx, pc
}

// uwRead evaluates the location of a variable DIE and reads size bytes.
func uwRead(t *testing.T, p *uwStopped, ctx *LocContext, pc uint64, fn uwFunc, v *dwarf.Entry, size int64) (Value, Location, []byte) {
	t.Helper()
	img := p.table.Images[0]
	expr, err := img.LocationExpr(v.AttrField(dwarf.AttrLocation), fn.cu, pc)
	if err != nil {
		t.Fatalf("location of %v at %#x: %v", v.Val(dwarf.AttrName), pc, err)
	}
	loc, err := EvalLocation(expr, ctx)
	if err != nil {
		t.Fatalf("evaluate % x (%v): %v", expr, v.Val(dwarf.AttrName), err)
	}
	val := ReadLocation(loc, size, p.mem, ctx.Regs)
	if val.Optimized || val.Err != nil {
		t.Fatalf("%v: optimized=%v err=%v (location % x)", v.Val(dwarf.AttrName), val.Optimized, val.Err, expr)
	}
	b := val.Bytes
	if val.InMem {
		b = make([]byte, size)
		if _, err := p.mem.ReadAt(b, val.Addr); err != nil {
			t.Fatal(err)
		}
	}
	return val, loc, b
}

func uwInt(b []byte) int64 {
	switch len(b) {
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	case 8:
		return int64(binary.LittleEndian.Uint64(b))
	}
	panic("size")
}

// TestLocVariables reads the variables of the stopped chain program in
// every frame and compares them with what the program printed: frame-base
// slots at -O0; registers restored by the unwinder, location lists,
// composite pieces and entry values at -O2.
func TestLocVariables(t *testing.T) {
	type want struct {
		fn, name string
		size     int64
		line     string // the printed line ("c", "b", ...) and key
		key      string
		kind     PieceKind // of the first piece
		entry    bool      // the location uses DW_OP_entry_value
	}
	// clang's locations differ from gcc's; its case checks values only,
	// through DW_OP_addrx and DW_FORM_loclistx.
	clangVars := []want{
		{"c", "x", 4, "c", "x", 0, false}, {"c", "z", 4, "c", "z", 0, false},
		{"b", "x", 4, "b", "x", 0, false}, {"a", "x", 4, "a", "x", 0, false},
	}
	tests := []struct {
		name  string
		cc    string
		flags []string
		vars  []want
		loose bool // compare values, not how they are located
	}{
		{name: "clang-O2", cc: "clang", flags: []string{"-g", "-gdwarf-5", "-O2"}, vars: clangVars, loose: true},
		{name: "O0", flags: []string{"-g", "-O0"}, vars: []want{
			{"c", "x", 4, "c", "x", PieceMemory, false},
			{"c", "z", 4, "c", "z", PieceMemory, false},
			{"b", "x", 4, "b", "x", PieceMemory, false},
			{"b", "y", 4, "b", "y", PieceMemory, false},
			{"a", "x", 4, "a", "x", PieceMemory, false},
			{"main", "argc", 4, "main", "argc", PieceMemory, false},
		}},
		{name: "O2", flags: []string{"-g", "-O2", "-fomit-frame-pointer"}, vars: []want{
			{"c", "x", 4, "c", "x", PieceRegister, false},
			{"c", "z", 4, "c", "z", PieceRegister, false},
			{"b", "x", 4, "b", "x", PieceValue, true},
			{"b", "y", 4, "b", "y", PieceRegister, false},
			{"a", "x", 4, "a", "x", PieceRegister, false},
			{"main", "argc", 4, "main", "argc", PieceRegister, false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := uwBuildWith(t, tc.cc, "chain.c", tc.flags...)
			p := uwRunStopped(t, bin)
			frames := p.table.Unwind(p.regs, p.mem, 64)
			img := p.table.Images[0]
			for _, w := range tc.vars {
				fn := uwFindFunc(t, img, w.fn)
				v := fn.vars[w.name]
				if v == nil {
					t.Fatalf("%s has no variable %s", w.fn, w.name)
				}
				i := uwFrameOf(t, frames, w.fn)
				ctx, pc := uwContext(t, p, frames, i, fn)
				expr, err := img.LocationExpr(v.AttrField(dwarf.AttrLocation), fn.cu, pc)
				if err != nil {
					t.Fatal(err)
				}
				_, loc, b := uwRead(t, p, ctx, pc, fn, v, w.size)
				got, exp := uwInt(b), p.value(t, w.line, w.key)
				t.Logf("%s.%s = %d at % x", w.fn, w.name, got, expr)
				if got != exp {
					t.Errorf("%s.%s = %d, program printed %d (location % x)", w.fn, w.name, got, exp, expr)
				}
				if tc.loose {
					continue
				}
				if k := loc.Pieces[0].Kind; k != w.kind {
					t.Errorf("%s.%s is a %v, want %v (location % x)", w.fn, w.name, k, w.kind, expr)
				}
				hasEntry := strings.Contains(string(expr), string([]byte{opEntryValue})) || strings.Contains(string(expr), string([]byte{opGNUEntryValue}))
				if hasEntry != w.entry {
					t.Errorf("%s.%s: entry value in % x: %v, want %v", w.fn, w.name, expr, hasEntry, w.entry)
				}
			}

			// a's struct p: in memory at -O0, two stack-value pieces at
			// -O2. clang keeps no location for it.
			fn := uwFindFunc(t, img, "a")
			i := uwFrameOf(t, frames, "a")
			ctx, pc := uwContext(t, p, frames, i, fn)
			if !tc.loose {
				_, loc, b := uwRead(t, p, ctx, pc, fn, fn.vars["p"], 16)
				px, py := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
				if px != p.value(t, "a", "p.x") || py != p.value(t, "a", "p.y") {
					t.Errorf("a.p = {%d, %d}, program printed {%d, %d}", px, py, p.value(t, "a", "p.x"), p.value(t, "a", "p.y"))
				}
				if tc.name == "O2" && len(loc.Pieces) != 2 {
					t.Errorf("a.p at -O2 has %d pieces, want 2", len(loc.Pieces))
				}
			}

			// Globals: DW_OP_addr plus the PIE's bias, and the TLS
			// variable through DW_OP_form_tls_address. gdb agrees.
			_, gdbExprs := uwGdbBacktrace(t, p.pid)
			for _, g := range []struct{ name, printed string }{{"counter", "counter"}, {"tl", "tl"}} {
				e := uwFindGlobal(t, img, g.name)
				loc, err := EvalLocation(e.Val(dwarf.AttrLocation).([]byte), ctx)
				if err != nil {
					t.Fatalf("%s: %v", g.name, err)
				}
				if len(loc.Pieces) != 1 || loc.Pieces[0].Kind != PieceMemory {
					t.Fatalf("%s: location %+v", g.name, loc)
				}
				addr := loc.Pieces[0].Addr
				printed := uwPrintedAddr(t, p, g.printed)
				if addr != printed {
					t.Errorf("&%s = %#x, program printed %#x", g.name, addr, printed)
				}
				if ga, ok := gdbExprs["&"+g.name]; !ok || ga != addr {
					t.Errorf("&%s = %#x, gdb says %#x (evaluated: %v)", g.name, addr, ga, ok)
				}
			}
		})
	}
}

// uwPrintedAddr returns the address the program printed as "name=0x...".
func uwPrintedAddr(t *testing.T, p *uwStopped, name string) uint64 {
	t.Helper()
	for _, l := range p.out {
		for _, f := range strings.Fields(l) {
			if v, ok := strings.CutPrefix(f, name+"=0x"); ok {
				var n uint64
				for _, c := range v {
					n = n*16 + uint64(strings.IndexRune("0123456789abcdef", c))
				}
				return n
			}
		}
	}
	t.Fatalf("program printed no %s=", name)
	return 0
}

func uwFindGlobal(t *testing.T, img *Image, name string) *dwarf.Entry {
	t.Helper()
	dw, _ := img.DWARF()
	r := dw.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			t.Fatalf("no global %s: %v", name, err)
		}
		if e.Tag == dwarf.TagVariable && e.Val(dwarf.AttrName) == name && e.Val(dwarf.AttrLocation) != nil {
			return e
		}
		if e.Tag == dwarf.TagSubprogram && e.Children {
			r.SkipChildren()
		}
	}
}

// TestLocEntryValueResolver resolves DW_OP_entry_value(DW_OP_regN) of a
// parameter through the call site in the caller, and checks the at-entry
// shortcut (registers still hold the entry values) on a frame made to
// stand at c's first instruction.
func TestLocEntryValueResolver(t *testing.T) {
	bin := uwBuildC(t, "chain.c", "-g", "-O2", "-fomit-frame-pointer")
	p := uwRunStopped(t, bin)
	frames := p.table.Unwind(p.regs, p.mem, 64)
	tests := []struct {
		callee, caller string
		line, key      string
	}{
		{"b", "a", "b", "x"},    // a passes x+3 in rdi: DW_OP_breg3 3 or similar
		{"c", "b", "c", "x"},    // b passes y
		{"a", "main", "a", "x"}, // main passes argc+10: an entry value of main's own argc, resolved in __libc_start_call_main
	}
	for _, tc := range tests {
		ci := uwFrameOf(t, frames, tc.caller)
		resolve := p.table.EntryValueResolver(&frames[ci], p.mem)
		got, err := resolve([]byte{opReg0 + RegRDI})
		if err != nil {
			t.Errorf("entry value of %s's rdi: %v", tc.callee, err)
			continue
		}
		if want := p.value(t, tc.line, tc.key); int32(got) != int32(want) {
			t.Errorf("entry value of %s's rdi = %d, program printed %d", tc.callee, int32(got), want)
		}
		// The call site is searched once an address: asked again (a
		// conditional breakpoint's next hit), it comes from the image.
		if _, found := p.table.ImageAt(frames[ci].PC).callSites[frames[ci].PC]; !found {
			t.Errorf("the call site returning to %s (%#x) was not kept", tc.caller, frames[ci].PC)
		}
		if again, err := resolve([]byte{opReg0 + RegRDI}); err != nil || again != got {
			t.Errorf("entry value of %s's rdi asked again = %d, %v; want %d", tc.callee, int32(again), err, int32(got))
		}
	}
	// A register no call site parameter describes is not available.
	ai := uwFrameOf(t, frames, "a")
	_, err := p.table.EntryValueResolver(&frames[ai], p.mem)([]byte{opReg0 + 9})
	if !errors.Is(err, ErrOptimizedOut) {
		t.Errorf("entry value of r9: %v, want ErrOptimizedOut", err)
	}

	// At c's first instruction the sub-expression reads the registers.
	c, _ := p.table.Lookup("c")
	regs := frames[uwFrameOf(t, frames, "b")].Regs
	regs.Set(RegRIP, c.Addr)
	regs.Set(RegRDI, 1234)
	ctx := &LocContext{Regs: &regs, Mem: p.mem, Image: p.table.Images[0]}
	loc, err := EvalLocation([]byte{opEntryValue, 1, opReg0 + RegRDI, opStackValue}, ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v := ReadLocation(loc, 8, nil, nil); binary.LittleEndian.Uint64(v.Bytes) != 1234 {
		t.Errorf("entry value at c's entry = % x, want 1234", v.Bytes)
	}
}

// TestLocLocationLists checks LocationExpr on c's x at -O2, in each form
// of location list: a list whose ranges give rdi at the entry, a
// callee-saved register during the call, and no location outside the
// function.
func TestLocLocationLists(t *testing.T) {
	cases := []struct {
		name, cc, version string
		class             dwarf.Class
	}{
		{"gcc .debug_loc", "gcc", "-gdwarf-4", dwarf.ClassLocListPtr},
		{"gcc .debug_loclists", "gcc", "-gdwarf-5", dwarf.ClassLocListPtr},
		{"clang loclistx", "clang", "-gdwarf-5", dwarf.ClassLocList},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			bin := uwBuildWith(t, cs.cc, "chain.c", "-g", cs.version, "-O2", "-fomit-frame-pointer")
			p := uwRunStopped(t, bin)
			img := p.table.Images[0]
			fn := uwFindFunc(t, img, "c")
			field := fn.vars["x"].AttrField(dwarf.AttrLocation)
			if field.Class != cs.class {
				t.Fatalf("c's x is a %v, want %v", field.Class, cs.class)
			}
			c, _ := p.table.Lookup("c")
			tests := []struct {
				pc   uint64
				want []byte
				err  error
			}{
				{c.Addr, []byte{opReg0 + RegRDI}, nil},
				{c.Addr - 1, nil, ErrOptimizedOut},
			}
			// The call to raise: x lives in a callee-saved register.
			frames := p.table.Unwind(p.regs, p.mem, 64)
			ci := uwFrameOf(t, frames, "c")
			ret := frames[ci].PC - 1
			expr, err := img.LocationExpr(field, fn.cu, ret)
			if err != nil {
				t.Fatal(err)
			}
			if len(expr) != 1 || expr[0] < opReg0 || expr[0] > opReg31 || !calleeSaved[expr[0]-opReg0] {
				t.Errorf("c's x during the call: % x, want a callee-saved register", expr)
			}
			for _, tc := range tests {
				got, err := img.LocationExpr(field, fn.cu, tc.pc)
				if !errors.Is(err, tc.err) || string(got) != string(tc.want) {
					t.Errorf("at %#x: % x, %v; want % x, %v", tc.pc, got, err, tc.want, tc.err)
				}
			}
		})
	}
}

// uwSliceMem is memory made of one byte slice at a base address.
type uwSliceMem struct {
	base uint64
	b    []byte
}

// ReadAt reads like os.File.ReadAt: a read running past the end returns
// what it could with an error.
func (m uwSliceMem) ReadAt(p []byte, addr uint64) (int, error) {
	if addr < m.base || addr-m.base >= uint64(len(m.b)) {
		return 0, errors.New("unmapped")
	}
	n := copy(p, m.b[addr-m.base:])
	if n < len(p) {
		return n, errors.New("unmapped")
	}
	return n, nil
}

// TestLocOperations runs expressions through the evaluator, one family of
// operations each, against fixed registers and memory. Typed operations
// use the base types of a real compiled program.
func TestLocOperations(t *testing.T) {
	bin := uwBuildC(t, "chain.c", "-g", "-O0")
	img, err := LoadImage(bin, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	// CU-relative offsets of base types in chain.c's unit.
	dw, _ := img.DWARF()
	r := dw.Reader()
	cu, _ := r.Next()
	ctxBase, err := img.UnitContext(cu)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]uint64{}
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagBaseType {
			types[e.Val(dwarf.AttrName).(string)] = uint64(e.Offset) - ctxBase.CUOffset
		}
		if e.Tag == dwarf.TagCompileUnit {
			break
		}
	}
	// typeOf returns the ULEB128 operand naming a base type.
	typeOf := func(name string) []byte {
		off, ok := types[name]
		if !ok {
			t.Fatalf("no base type %q in %v", name, types)
		}
		var b []byte
		for {
			c := byte(off & 0x7f)
			off >>= 7
			if off == 0 {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	ex := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	floatT := typeOf("float")
	intT, longT, ulongT := typeOf("int"), typeOf("long int"), typeOf("long unsigned int")

	mem := uwSliceMem{base: 0x1000, b: make([]byte, 64)}
	binary.LittleEndian.PutUint64(mem.b[0:], 0xdeadbeefcafef00d)
	binary.LittleEndian.PutUint64(mem.b[8:], 0x1008)
	binary.LittleEndian.PutUint32(mem.b[16:], math.Float32bits(2.5))
	var regs Regs
	regs.Set(RegRAX, 7)
	regs.Set(RegRBX, 0x1000)
	regs.Set(RegRSP, 0x1010)
	regs.Set(RegRIP, 0x500)
	regs.Set(12, ^uint64(0)) // -1

	u64 := func(v uint64) []byte { b := make([]byte, 8); binary.LittleEndian.PutUint64(b, v); return b }
	value := func(v uint64) Location { return Location{Pieces: []Piece{{Kind: PieceValue, Value: u64(v)}}} }
	tests := []struct {
		name string
		expr []byte
		want Location
		err  string
	}{
		{"lit", []byte{opLit0 + 5, opStackValue}, value(5), ""},
		{"const1s", []byte{opConst1s, 0xff, opStackValue}, value(^uint64(0)), ""},
		{"const2u", []byte{opConst2u, 0x34, 0x12, opStackValue}, value(0x1234), ""},
		{"consts", []byte{opConsts, 0x7f, opStackValue}, value(^uint64(0)), ""},
		{"constu", []byte{opConstu, 0xe5, 0x8e, 0x26, opStackValue}, value(624485), ""},
		{"addr", []byte{opAddr, 0x10, 0, 0, 0, 0, 0, 0, 0}, Location{Pieces: []Piece{{Kind: PieceMemory, Addr: 0x10}}}, ""},
		{"breg", []byte{opBreg0 + RegRBX, 0x08}, Location{Pieces: []Piece{{Kind: PieceMemory, Addr: 0x1008}}}, ""},
		{"bregx negative", []byte{opBregx, RegRSP, 0x70}, Location{Pieces: []Piece{{Kind: PieceMemory, Addr: 0x1000}}}, ""},
		{"reg", []byte{opReg0 + RegRAX}, Location{Pieces: []Piece{{Kind: PieceRegister, Reg: RegRAX}}}, ""},
		{"regx", []byte{opRegx, 12}, Location{Pieces: []Piece{{Kind: PieceRegister, Reg: 12}}}, ""},
		{"deref", []byte{opBreg0 + RegRBX, 0, opDeref, opStackValue}, value(0xdeadbeefcafef00d), ""},
		{"deref_size", []byte{opBreg0 + RegRBX, 0, opDerefSize, 2, opStackValue}, value(0xf00d), ""},
		{"double deref", []byte{opBreg0 + RegRBX, 8, opDeref, opDeref}, Location{Pieces: []Piece{{Kind: PieceMemory, Addr: 0x1008}}}, ""},
		{"dup plus", []byte{opLit0 + 3, opDup, opPlus, opStackValue}, value(6), ""},
		{"over minus", []byte{opLit0 + 9, opLit0 + 4, opOver, opMinus, opPlus, opStackValue}, value(4), ""},
		{"pick", []byte{opLit0 + 1, opLit0 + 2, opLit0 + 3, opPick, 2, opStackValue}, value(1), ""},
		{"swap", []byte{opLit0 + 1, opLit0 + 2, opSwap, opMinus, opStackValue}, value(1), ""},
		{"rot", []byte{opLit0 + 1, opLit0 + 2, opLit0 + 3, opRot, opDrop, opDrop, opStackValue}, value(3), ""},
		{"div signed", []byte{opConsts, 0x79, opLit0 + 2, opDiv, opStackValue}, value(^uint64(2)), ""}, // -7/2 = -3
		{"mod unsigned", []byte{opLit0 + 7, opLit0 + 3, opMod, opStackValue}, value(1), ""},
		{"mul and or xor", []byte{opLit0 + 6, opLit0 + 7, opMul, opLit0 + 15, opAnd, opLit0 + 16, opOr, opLit0 + 1, opXor, opStackValue}, value(0x1b), ""},
		{"neg abs not", []byte{opLit0 + 5, opNeg, opAbs, opNot, opStackValue}, value(^uint64(5)), ""},
		{"shl shr shra", []byte{opLit0 + 1, opConst1u, 63, opShl, opConst1u, 62, opShra, opLit0 + 1, opShr, opStackValue}, value(0x7fffffffffffffff), ""},
		{"plus_uconst", []byte{opBreg0 + 12, 0, opPlusUconst, 2, opStackValue}, value(1), ""},
		{"comparisons signed", []byte{opBreg0 + 12, 0, opLit0, opLt, opLit0 + 2, opLit0 + 1, opGt, opPlus, opLit0 + 1, opLit0 + 1, opEq, opPlus, opLit0, opLit0 + 1, opGe, opPlus, opStackValue}, value(3), ""},
		{"bra taken", []byte{opLit0 + 1, opBra, 2, 0, opLit0 + 8, opStackValue, opLit0 + 9, opStackValue}, value(9), ""},
		{"bra not taken", []byte{opLit0, opBra, 2, 0, opLit0 + 8, opSkip, 1, 0, opLit0 + 9, opStackValue}, value(8), ""},
		{"skip backwards loop", []byte{opSkip, 0xfd, 0xff}, Location{}, "too long"},
		{"call_frame_cfa", []byte{opCallFrameCFA, opConsts, 0x70, opPlus}, Location{Pieces: []Piece{{Kind: PieceMemory, Addr: 0x2000 - 16}}}, ""},
		{"fbreg", []byte{opFbreg, 0x6c}, Location{Pieces: []Piece{{Kind: PieceMemory, Addr: 0x3000 - 20}}}, ""},
		{"pieces", []byte{opReg0 + RegRAX, opPiece, 4, opBreg0 + RegRBX, 0, opPiece, 4, opPiece, 2, opLit0 + 1, opStackValue, opPiece, 2},
			Location{Pieces: []Piece{{Size: 4, Kind: PieceRegister, Reg: RegRAX}, {Size: 4, Kind: PieceMemory, Addr: 0x1000}, {Size: 2, Kind: PieceUndefined}, {Size: 2, Kind: PieceValue, Value: u64(1)}}}, ""},
		{"bit_piece bytes", []byte{opReg0 + RegRAX, opBitPiece, 16, 8}, Location{Pieces: []Piece{{Size: 2, Kind: PieceRegister, Reg: RegRAX, Offset: 1}}}, ""},
		{"bit_piece bits", []byte{opReg0 + RegRAX, opBitPiece, 3, 0}, Location{}, "not byte aligned"},
		{"implicit_value", []byte{opImplicitValue, 3, 1, 2, 3}, Location{Pieces: []Piece{{Kind: PieceValue, Value: []byte{1, 2, 3}}}}, ""},
		{"implicit_pointer", []byte{opImplicitPointer, 0x34, 0x12, 0, 0, 0x04}, Location{Pieces: []Piece{{Kind: PieceImplicitPointer, ImplicitPtr: 0x1234, Offset: 4}}}, ""},
		{"GNU_implicit_pointer", []byte{opGNUImplicitPointer, 0x34, 0x12, 0, 0, 0x7c}, Location{Pieces: []Piece{{Kind: PieceImplicitPointer, ImplicitPtr: 0x1234, Offset: -4}}}, ""},
		{"form_tls_address", []byte{opConst1u, 0x10, opFormTLSAddress}, Location{Pieces: []Piece{{Kind: PieceMemory, Addr: 0x7000 + 0x10}}}, ""},
		{"GNU_push_tls_address", []byte{opConst8u, 4, 0, 0, 0, 0, 0, 0, 0, opGNUPushTLSAddress}, Location{Pieces: []Piece{{Kind: PieceMemory, Addr: 0x7004}}}, ""},
		{"const_type int", ex([]byte{opConstType}, intT, []byte{4, 0xfe, 0xff, 0xff, 0xff, opStackValue}), Location{Pieces: []Piece{{Kind: PieceValue, Value: []byte{0xfe, 0xff, 0xff, 0xff}}}}, ""},
		{"convert int to long", ex([]byte{opConstType}, intT, []byte{4, 0xfe, 0xff, 0xff, 0xff, opConvert}, longT, []byte{opStackValue}), value(^uint64(1)), ""},
		{"convert int to generic", ex([]byte{opGNUConstType}, intT, []byte{4, 0xfe, 0xff, 0xff, 0xff, opGNUConvert, 0, opStackValue}), value(^uint64(1)), ""},
		{"regval_type", ex([]byte{opRegvalType, 12}, intT, []byte{opStackValue}), Location{Pieces: []Piece{{Kind: PieceValue, Value: []byte{0xff, 0xff, 0xff, 0xff}}}}, ""},
		{"typed unsigned compare", ex([]byte{opGNURegvalType, 12}, ulongT, []byte{opConstType}, ulongT, []byte{8, 1, 0, 0, 0, 0, 0, 0, 0, opGt, opStackValue}), value(1), ""},
		{"deref_type", ex([]byte{opBreg0 + RegRBX, 0, opDerefType, 4}, intT, []byte{opConvert}, longT, []byte{opStackValue}), value(0xffffffffcafef00d), ""},
		{"float arithmetic", ex([]byte{opBreg0 + RegRBX, 16, opGNUDerefType, 4}, floatT, []byte{opDup, opPlus, opConvert}, intT, []byte{opConvert, 0, opStackValue}), value(5), ""},
		{"reinterpret", ex([]byte{opConstType}, intT, []byte{4, 0, 0, 0x20, 0x40, opReinterpret}, floatT, []byte{opConvert}, longT, []byte{opStackValue}), value(2), ""},
		{"entry_value unavailable", []byte{opEntryValue, 1, opReg0 + RegRDI, opStackValue}, Location{}, "optimized out"},
		{"nop", []byte{opNop, opLit0 + 1, opNop, opStackValue}, value(1), ""},
		{"empty", nil, Location{}, ""},
		{"unknown opcode", []byte{0xe1}, Location{}, "0xe1"},
		{"truncated", []byte{opConst4u, 1, 2}, Location{}, "truncated"},
		{"underflow", []byte{opPlus}, Location{}, "underflow"},
		{"unsaved register", []byte{opBreg0 + RegRDI, 0}, Location{}, "not saved"},
		{"op after register", []byte{opReg0, opLit0}, Location{}, "without DW_OP_piece"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxBase
			ctx.Regs, ctx.Mem, ctx.CFA = &regs, mem, 0x2000
			ctx.FrameBase = func() (uint64, error) { return 0x3000, nil }
			ctx.TLSBase = func() (uint64, error) { return 0x7000, nil }
			got, err := EvalLocation(tc.expr, &ctx)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Pieces) != len(tc.want.Pieces) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got.Pieces {
				g, w := got.Pieces[i], tc.want.Pieces[i]
				if g.Size != w.Size || g.Kind != w.Kind || g.Addr != w.Addr || g.Reg != w.Reg || string(g.Value) != string(w.Value) || g.ImplicitPtr != w.ImplicitPtr || g.Offset != w.Offset {
					t.Errorf("piece %d: got %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestLocReadLocation assembles values from pieces.
func TestLocReadLocation(t *testing.T) {
	mem := uwSliceMem{base: 0x1000, b: []byte{1, 2, 3, 4, 5, 6, 7, 8}}
	var regs Regs
	regs.Set(RegRAX, 0x1122334455667788)
	regs.Valid[RegRBX] = false
	tests := []struct {
		name      string
		loc       Location
		size      int64
		inMem     bool
		addr      uint64
		bytes     []byte
		optimized bool
		errText   string
	}{
		{name: "memory lvalue", loc: Location{Pieces: []Piece{{Kind: PieceMemory, Addr: 0x1004}}}, size: 4, inMem: true, addr: 0x1004},
		{name: "register", loc: Location{Pieces: []Piece{{Kind: PieceRegister, Reg: RegRAX}}}, size: 4, bytes: []byte{0x88, 0x77, 0x66, 0x55}},
		{name: "register high bytes", loc: Location{Pieces: []Piece{{Size: 2, Kind: PieceRegister, Reg: RegRAX, Offset: 2}}}, size: 2, bytes: []byte{0x66, 0x55}},
		{name: "composite", loc: Location{Pieces: []Piece{{Size: 2, Kind: PieceRegister, Reg: RegRAX}, {Size: 2, Kind: PieceMemory, Addr: 0x1000}, {Size: 1, Kind: PieceValue, Value: []byte{9}}}}, size: 5, bytes: []byte{0x88, 0x77, 1, 2, 9}},
		{name: "empty", loc: Location{}, size: 4, optimized: true},
		{name: "undefined piece", loc: Location{Pieces: []Piece{{Size: 2, Kind: PieceUndefined}, {Size: 2, Kind: PieceValue, Value: []byte{1, 2}}}}, size: 4, optimized: true, bytes: []byte{0, 0, 1, 2}},
		{name: "unsaved register", loc: Location{Pieces: []Piece{{Kind: PieceRegister, Reg: RegRBX}}}, size: 8, optimized: true, bytes: make([]byte, 8)},
		{name: "xmm register", loc: Location{Pieces: []Piece{{Kind: PieceRegister, Reg: 17}}}, size: 8, bytes: make([]byte, 8), errText: "not available"},
		{name: "implicit pointer in a composite", loc: Location{Pieces: []Piece{{Size: 8, Kind: PieceImplicitPointer, ImplicitPtr: 0x40, Offset: 8}, {Size: 4, Kind: PieceValue, Value: []byte{1, 2, 3, 4}}}}, size: 12, bytes: []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}, errText: "implicit pointer to DIE 0x40+8"},
		{name: "unreadable piece", loc: Location{Pieces: []Piece{{Size: 4, Kind: PieceMemory, Addr: 0x9000}, {Size: 4, Kind: PieceValue, Value: []byte{1, 2, 3, 4}}}}, size: 8, bytes: []byte{0, 0, 0, 0, 1, 2, 3, 4}, errText: "unmapped"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := ReadLocation(tc.loc, tc.size, mem, &regs)
			if v.InMem != tc.inMem || v.Addr != tc.addr || string(v.Bytes) != string(tc.bytes) || v.Optimized != tc.optimized {
				t.Errorf("got %+v", v)
			}
			if (v.Err == nil) != (tc.errText == "") || v.Err != nil && !strings.Contains(v.Err.Error(), tc.errText) {
				t.Errorf("error %v, want %q", v.Err, tc.errText)
			}
		})
	}
	var ip *ImplicitPointerError
	v := ReadLocation(Location{Pieces: []Piece{{Size: 8, Kind: PieceImplicitPointer, ImplicitPtr: 0x40}, {Size: 8, Kind: PieceUndefined}}}, 16, mem, &regs)
	if !errors.As(v.Err, &ip) || ip.DIE != 0x40 {
		t.Errorf("implicit pointer error %v", v.Err)
	}
	// A whole pointer that is implicit is a synthetic pointer: zeros to
	// compute with, its target to follow.
	v = ReadLocation(Location{Pieces: []Piece{{Kind: PieceImplicitPointer, ImplicitPtr: 0x40, Offset: 8}}}, 8, mem, &regs)
	if v.Err != nil || v.Synthetic == nil || v.Synthetic.DIE != 0x40 || v.Synthetic.Offset != 8 || !bytes.Equal(v.Bytes, make([]byte, 8)) {
		t.Errorf("synthetic pointer %+v", v)
	}
}

// TestReadLocationXMM: a variable an optimizer kept in an SSE register (an
// int in xmm5, a double in xmm0) is read from the frame's XMM registers,
// whole; without them it is not available.
func TestReadLocationXMM(t *testing.T) {
	var regs Regs
	regs.HaveXMM = true
	binary.LittleEndian.PutUint32(regs.XMM[5][:], 1)
	binary.LittleEndian.PutUint64(regs.XMM[0][:], math.Float64bits(84.5))
	for _, c := range []struct {
		reg  int
		size int64
		want []byte
	}{
		{RegXMM0 + 5, 4, []byte{1, 0, 0, 0}},
		{RegXMM0, 8, binary.LittleEndian.AppendUint64(nil, math.Float64bits(84.5))},
	} {
		loc := Location{Pieces: []Piece{{Kind: PieceRegister, Reg: c.reg}}}
		v := ReadLocation(loc, c.size, nil, &regs)
		if v.Err != nil || v.Optimized || !bytes.Equal(v.Bytes, c.want) {
			t.Errorf("xmm%d: % x (err %v, optimized %v), want % x", c.reg-RegXMM0, v.Bytes, v.Err, v.Optimized, c.want)
		}
	}
	regs.HaveXMM = false
	if v := ReadLocation(Location{Pieces: []Piece{{Kind: PieceRegister, Reg: RegXMM0 + 5}}}, 4, nil, &regs); v.Err == nil {
		t.Errorf("xmm5 without the SSE registers: % x, want an error", v.Bytes)
	}
}

// calleeSaved are the registers the System V ABI preserves across calls.
var calleeSaved = [NumRegs]bool{RegRBX: true, RegRBP: true, 12: true, 13: true, 14: true, RegR15: true}
