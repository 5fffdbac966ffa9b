package dwarf

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/internal/testprog"
	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

// The value tests build the programs of testdata/values, run them until
// they print "ready" and block on stdin, and read their globals through
// /proc/PID/mem.

// valBuild compiles testdata/values/values.<lang> with debug information
// into a temporary directory, skipping the test when the compiler is
// missing.
func valBuild(t *testing.T, lang string, flags ...string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "testdata", "values", "values."+lang))
	if err != nil {
		t.Fatal(err)
	}
	// Reading the source makes go test's cache notice when it changes.
	if _, err := os.ReadFile(src); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "values_"+lang)
	var cmd *exec.Cmd
	switch lang {
	case "c":
		// opaque.c defines a struct values.c only declares.
		return cc.Build(t, src, exe, append(append([]string{"-g", "-O0"}, flags...), filepath.Join(filepath.Dir(src), "opaque.c"))...)
	case "cpp":
		return cc.Build(t, src, exe, append([]string{"-g", "-O0"}, flags...)...)
	case "rs":
		cmd = exec.Command("rustc", append(append([]string{"-g", "-C", "opt-level=0", "--crate-name", "values"}, flags...), "-o", exe, src)...)
	case "go":
		cmd = exec.Command("go", append(append([]string{"build", "-gcflags=all=-N -l"}, flags...), "-o", exe, src)...)
	default:
		t.Fatalf("no compiler for %s", lang)
	}
	if _, err := exec.LookPath(cmd.Args[0]); err != nil {
		t.Skipf("%s is not installed: %v", cmd.Args[0], err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return exe
}

// valProgram is a running test program blocked on its stdin.
type valProgram struct {
	pid     int
	table   *Table
	mem     uwProcMem
	lines   []string         // what it printed before "ready"
	globals map[string]Value // by name: "n1", "shapes::x", "values::SOME", "main.str"
}

// valLoad loads the image of exe, closed when the test ends.
func valLoad(t *testing.T, exe string) *Image {
	t.Helper()
	img, err := LoadImage(exe, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	return img
}

// valStart runs exe until it prints "ready" and loads its image and globals.
func valStart(t *testing.T, exe string) *valProgram {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Stderr = os.Stderr
	stdin, stdout := testprog.StartPiped(t, cmd)
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	p := &valProgram{pid: cmd.Process.Pid}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if line == "ready" || strings.HasPrefix(line, "ready ") {
				ready <- nil
				io.Copy(io.Discard, stdout)
				return
			}
			p.lines = append(p.lines, line)
		}
		ready <- fmt.Errorf("program ended before it was ready: %v", sc.Err())
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("program did not get ready in 60s")
	}

	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", p.pid))
	if err != nil {
		t.Fatal(err)
	}
	var base uint64
	found := false
	for _, line := range strings.Split(string(maps), "\n") {
		fs := strings.Fields(line)
		if len(fs) >= 6 && fs[5] == exe && fs[2] == "00000000" {
			start, _, _ := strings.Cut(fs[0], "-")
			base, err = strconv.ParseUint(start, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			found = true
			break
		}
	}
	if !found {
		t.Fatalf("no offset-0 mapping of %s in\n%s", exe, maps)
	}
	img, err := LoadImage(exe, base)
	if err != nil {
		t.Fatal(err)
	}
	p.table = &Table{Images: []*Image{img}}
	t.Cleanup(p.table.Close)
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", p.pid))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	p.mem = uwProcMem{f}
	p.globals = valGlobals(t, img)
	return p
}

// valGlobals finds the variables at a fixed address (DW_OP_addr) declared
// at the top level or in namespaces, keyed by qualified name.
func valGlobals(t *testing.T, img *Image) map[string]Value {
	t.Helper()
	d, err := img.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Value{}
	r := d.Reader()
	var stack []string
	for e := range uwEntries(t, r) {
		if e.Tag == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		prefix := ""
		if len(stack) > 0 {
			prefix = stack[len(stack)-1]
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		switch e.Tag {
		case dwarf.TagCompileUnit:
			if e.Children {
				stack = append(stack, "")
			}
			continue
		case dwarf.TagNamespace:
			if e.Children {
				stack = append(stack, prefix+name+"::")
			}
			continue
		case dwarf.TagVariable:
			loc, _ := e.Val(dwarf.AttrLocation).([]byte)
			typ, hasType := e.Val(dwarf.AttrType).(dwarf.Offset)
			if spec, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
				sr := d.Reader()
				sr.Seek(spec)
				if se, err := sr.Next(); err == nil && se != nil {
					name, _ = se.Val(dwarf.AttrName).(string)
					if !hasType {
						typ, hasType = se.Val(dwarf.AttrType).(dwarf.Offset)
					}
				}
			}
			if len(loc) == 9 && loc[0] == 0x03 && hasType && name != "" {
				key := prefix + name
				if _, dup := out[key]; !dup {
					ty, err := img.TypeAt(typ)
					if err != nil {
						t.Fatalf("type of %s: %v", key, err)
					}
					out[key] = Value{Name: name, Type: ty, Addr: binary.LittleEndian.Uint64(loc[1:]) + img.Bias, InMem: true}
				}
			}
		}
		if e.Children {
			r.SkipChildren()
		}
	}
	return out
}

// valGDB attaches gdb to the process and prints each expression, returning
// what gdb printed after "$N = ".
func valGDB(t *testing.T, pid int, settings, exprs []string) map[string]string {
	t.Helper()
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb is not installed")
	}
	args := []string{"-batch", "-nx", "-p", strconv.Itoa(pid), "-ex", "set print pretty off", "-ex", "set width 0"}
	for _, s := range settings {
		args = append(args, "-ex", s)
	}
	for _, e := range exprs {
		args = append(args, "-ex", "echo @@@"+e+"\\n", "-ex", "print "+e)
	}
	out, err := exec.Command("gdb", args...).CombinedOutput()
	if err != nil {
		t.Logf("gdb: %v", err)
	}
	res := map[string]string{}
	cur := ""
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "@@@"); ok {
			cur = rest
			continue
		}
		if cur != "" && strings.HasPrefix(line, "$") {
			if _, v, ok := strings.Cut(line, " = "); ok {
				res[cur] = v
				cur = ""
			}
		}
	}
	if len(res) == 0 {
		t.Fatalf("gdb printed no values:\n%s", out)
	}
	return res
}

// gdbWhatis asks gdb (on the executable, not running) for the type names
// and sizes of expressions.
func gdbWhatis(t *testing.T, exe string, exprs []string) (names map[string]string, sizes map[string]int64) {
	t.Helper()
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb is not installed")
	}
	args := []string{"-batch", "-nx", exe, "-ex", "set width 0"}
	for _, e := range exprs {
		args = append(args, "-ex", "echo @@@"+e+"\\n", "-ex", "whatis "+e, "-ex", "print sizeof("+e+")")
	}
	out, _ := exec.Command("gdb", args...).CombinedOutput()
	names, sizes = map[string]string{}, map[string]int64{}
	cur := ""
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "@@@"); ok {
			cur = rest
			continue
		}
		if v, ok := strings.CutPrefix(line, "type = "); ok && cur != "" {
			names[cur] = v
		}
		if strings.HasPrefix(line, "$") && cur != "" {
			if _, v, ok := strings.Cut(line, " = "); ok {
				sizes[cur], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return names, sizes
}

// TestTypeNamesAndSizesMatchGDB reads the type of every global of the C
// and C++ programs and compares its name and size with gdb's whatis and
// sizeof.
func TestTypeNamesAndSizesMatchGDB(t *testing.T) {
	for _, tc := range []struct {
		lang  string
		flags []string
		vars  []string
	}{
		{"c", nil, []string{"n1", "head", "num", "col", "grid", "greeting", "nullstr", "sbuf", "fp", "zeros",
			"dbl", "flt", "flag", "uc", "ch", "neg", "big", "sh", "iptr", "pt", "pts", "vol", "cint", "hold", "vp", "n1.name", "n1.next", "hold->data", "op", "op->label"}},
		// DWARF 3 bitfields use DW_AT_bit_offset from the most significant bit.
		{"c", []string{"-gdwarf-3"}, []string{"n1", "head", "grid", "fp", "cint"}},
		{"cpp", nil, []string{"derived", "shortstr", "vec", "names", "pair", "mode", "gref", "yes", "target", "derived.ref", "derived.tag"}},
	} {
		t.Run(tc.lang+strings.Join(tc.flags, ""), func(t *testing.T) {
			exe := valBuild(t, tc.lang, tc.flags...)
			img := valLoad(t, exe)
			tab := &Table{Images: []*Image{img}}
			globals := valGlobals(t, img)
			names, sizes := gdbWhatis(t, exe, tc.vars)
			for _, v := range tc.vars {
				typ, err := valExprType(tab, globals, v)
				if err != nil {
					t.Errorf("%s: %v", v, err)
					continue
				}
				if typ.Name != names[v] {
					t.Errorf("type of %s is named %q, gdb says %q", v, typ.Name, names[v])
				}
				if typ.Size != sizes[v] && stripType(typ).Kind != KindReference {
					t.Errorf("type of %s (%s) has size %d, gdb says %d", v, typ.Name, typ.Size, sizes[v])
				}
			}
		})
	}
}

// valExprType resolves "var", "var.field" and "var->field" to a type.
func valExprType(tab *Table, globals map[string]Value, expr string) (*Type, error) {
	name, field, arrow := expr, "", false
	if i := strings.Index(expr, "->"); i >= 0 {
		name, field, arrow = expr[:i], expr[i+2:], true
	} else if i := strings.IndexByte(expr, '.'); i >= 0 {
		name, field = expr[:i], expr[i+1:]
	}
	v, ok := globals[name]
	if !ok {
		return nil, fmt.Errorf("no global %s", name)
	}
	if field == "" {
		return v.Type, nil
	}
	typ := stripType(v.Type)
	if arrow {
		typ = stripType(typ.Elem)
	}
	var find func(typ *Type) *Type
	find = func(typ *Type) *Type {
		for _, fl := range typ.Fields {
			if fl.Name == field {
				return fl.Type
			}
			if fl.Base {
				if ft := find(stripType(fl.Type)); ft != nil {
					return ft
				}
			}
		}
		return nil
	}
	if ft := find(typ); ft != nil {
		return ft, nil
	}
	return nil, fmt.Errorf("%s has no field %s", typ.Name, field)
}

// TestTypeLayoutC checks the layout read from DWARF against the offsets the
// program's own compiler chose, which gdb prints with ptype/o.
func TestTypeLayoutC(t *testing.T) {
	for _, flags := range [][]string{nil, {"-gdwarf-2", "-gstrict-dwarf"}, {"-gdwarf-4"}} {
		t.Run(strings.Join(flags, ""), func(t *testing.T) {
			exe := valBuild(t, "c", flags...)
			img := valLoad(t, exe)
			g := valGlobals(t, img)
			node := stripType(g["n1"].Type)
			if node.Kind != KindStruct || node.Name != "struct node" || node.Size != 24 {
				t.Fatalf("n1 is %+v", node)
			}
			want := []struct {
				name        string
				off, bitOff int64
				bits        int64
			}{{"name", 0, 0, 0}, {"next", 8, 0, 0}, {"x", 16, 0, 3}, {"y", 16, 3, 5}}
			for i, w := range want {
				f := node.Fields[i]
				if f.Name != w.name || f.Offset != w.off || f.BitOffset != w.bitOff || f.BitSize != w.bits {
					t.Errorf("field %d is %s at %d bit %d size %d, want %+v", i, f.Name, f.Offset, f.BitOffset, f.BitSize, w)
				}
			}
			// The self-reference closes the cycle on the same *Type.
			if next := node.Fields[1].Type; next.Kind != KindPointer || stripType(next.Elem) != node {
				t.Errorf("next points to %p, want the node type %p", next.Elem, node)
			}
			grid := g["grid"].Type
			if grid.Count != 2 || grid.Elem.Kind != KindArray || grid.Elem.Count != 3 || grid.Size != 24 || grid.Elem.Size != 12 {
				t.Errorf("grid is %s count %d size %d of %s count %d", grid.Name, grid.Count, grid.Size, grid.Elem.Name, grid.Elem.Count)
			}
			hold := stripType(stripType(g["hold"].Type).Elem)
			if data := hold.Fields[1].Type; data.Count != -1 || data.Kind != KindArray {
				t.Errorf("flexible array member is %+v", data)
			}
			col := stripType(g["col"].Type)
			if col.Kind != KindEnum || len(col.Enumerators) != 3 || col.Enumerators[1] != (Enumerator{"GREEN", 5}) {
				t.Errorf("enum color is %+v", col)
			}
			fp := stripType(g["fp"].Type)
			if fp.Kind != KindPointer || fp.Elem.Kind != KindFunc || len(fp.Elem.Params) != 2 || fp.Elem.Result.Name != "int" {
				t.Errorf("fp is %+v", fp)
			}
		})
	}
}

// TestTypeRustVariants checks that Rust enums keep their variant part: a
// tagged enum with discriminant values and a niche-encoded Option<Box<T>>
// whose dataful variant is the default one.
func TestTypeRustVariants(t *testing.T) {
	exe := valBuild(t, "rs")
	img := valLoad(t, exe)
	g := valGlobals(t, img)
	shape := stripType(g["values::CIRCLE"].Type)
	if shape.Name != "values::Shape" || shape.Variants == nil || shape.Variants.Discr == nil {
		t.Fatalf("values::Shape is %+v", shape)
	}
	var names []string
	for _, v := range shape.Variants.Variants {
		names = append(names, fmt.Sprintf("%s=%d/%v", v.Field.Name, v.DiscrValue, v.Default))
	}
	if got := strings.Join(names, " "); got != "Circle=0/false Rect=1/false Empty=2/false" {
		t.Errorf("Shape variants are %s", got)
	}
	boxed := stripType(g["values::BOXED"].Type)
	if boxed.Variants == nil || len(boxed.Variants.Variants) != 2 {
		t.Fatalf("Option<Box<Point>> is %+v", boxed)
	}
	for _, v := range boxed.Variants.Variants {
		if v.Default != (v.Field.Name == "Some") {
			t.Errorf("variant %s default=%v: the niche's dataful variant is the default one", v.Field.Name, v.Default)
		}
	}
	vec := stripType(g["values::VEC"].Type)
	if len(vec.TypeParams) == 0 || vec.TypeParams[0].Name != "i32" {
		t.Errorf("Vec<i32> type parameters: %+v", vec.TypeParams)
	}
	if n := g["values::NUMBERS"].Type.Name; n != "[u16; 4]" {
		t.Errorf("array type named %q", n)
	}
}

// TestTypeByName looks types up by the names users type, in each language,
// and checks them against the variables declared with them.
func TestTypeByName(t *testing.T) {
	cases := map[string][]struct {
		name, want string
		size       int64
	}{
		"c": {
			{"int", "int", 4}, {"unsigned long", "unsigned long", 8}, {"char", "char", 1},
			{"struct node", "struct node", 24}, {"node", "struct node", 24}, {"node_t", "node_t", 24},
			{"struct node *", "struct node *", 8}, {"int**", "int **", 8}, {"union number", "union number", 4},
			{"enum color", "enum color", 4}, {"short", "short", 2}, {"unsigned", "unsigned int", 4},
		},
		"cpp": {
			{"std::string", "std::string", 32}, {"shapes::Derived", "shapes::Derived", 32},
			{"shapes::Base", "shapes::Base", 16}, {"shapes::Mode", "shapes::Mode", 1}, {"shapes::Base*", "shapes::Base *", 8},
		},
		"go": {
			{"main.Point", "main.Point", 32}, {"*main.Point", "*main.Point", 8}, {"[]int", "[]int", 24},
			{"map[string]int", "map[string]int", 8}, {"string", "string", 16}, {"error", "error", 16},
		},
		"rs": {
			{"values::Point", "values::Point", 8}, {"core::option::Option<i32>", "core::option::Option<i32>", 8},
			{"&str", "&str", 16}, {"i32", "i32", 4},
		},
	}
	for _, lang := range []string{"c", "cpp", "go", "rs"} {
		t.Run(lang, func(t *testing.T) {
			exe := valBuild(t, lang)
			img, err := LoadImage(exe, 0)
			if err != nil {
				t.Fatal(err)
			}
			tab := &Table{Images: []*Image{img}}
			defer tab.Close()
			for _, c := range cases[lang] {
				typ, err := tab.TypeByName(c.name)
				if err != nil {
					t.Errorf("TypeByName(%q): %v", c.name, err)
					continue
				}
				if typ.Name != c.want || typ.Size != c.size {
					t.Errorf("TypeByName(%q) = %q size %d, want %q size %d", c.name, typ.Name, typ.Size, c.want, c.size)
				}
			}
			if _, err := tab.TypeByName("no_such_type_here"); err == nil {
				t.Error("TypeByName found a type that does not exist")
			}
		})
	}
}

// TestTypeCacheIdentity checks that reading a type twice gives the same
// *Type, so cyclic types and identity comparisons work.
func TestTypeCacheIdentity(t *testing.T) {
	exe := valBuild(t, "c")
	img := valLoad(t, exe)
	g := valGlobals(t, img)
	a, err := img.TypeAt(dwarf.Offset(g["n1"].Type.Offset))
	if err != nil {
		t.Fatal(err)
	}
	if a != g["n1"].Type {
		t.Error("TypeAt returned a new *Type for a cached offset")
	}
	if _, err := img.TypeAt(0); err == nil {
		t.Error("TypeAt(0) read the compilation unit as a type")
	}
	var buf bytes.Buffer
	fmt.Fprint(&buf, PointerTo(a).Name)
	if buf.String() != "node_t *" {
		t.Errorf("PointerTo(node_t) is named %q", buf.String())
	}
}
