package dwarf

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// gdbFormat splits a test expression "/x name" into gdb's format letter and
// the expression.
func gdbFormat(expr string) (byte, string) {
	if strings.HasPrefix(expr, "/") {
		letter, rest, _ := strings.Cut(expr[1:], " ")
		return letter[0], rest
	}
	return 0, expr
}

// valEval evaluates the few expression forms the tests use through Field,
// Index and Deref: "name", "*name", "name.field", "name->field",
// "name[i]".
func valEval(p *valProgram, expr string) (Value, error) {
	if v, ok := p.globals[expr]; ok {
		return v, nil
	}
	if rest, ok := strings.CutPrefix(expr, "*"); ok {
		v, err := valEval(p, rest)
		if err != nil {
			return Value{}, err
		}
		return p.table.Deref(v, p.mem)
	}
	if i := strings.LastIndexByte(expr, '['); i > 0 && strings.HasSuffix(expr, "]") {
		v, err := valEval(p, expr[:i])
		if err != nil {
			return Value{}, err
		}
		n, err := strconv.ParseInt(expr[i+1:len(expr)-1], 10, 64)
		if err != nil {
			return Value{}, err
		}
		return p.table.Index(v, n, p.mem)
	}
	for _, sep := range []string{"->", "."} {
		if i := strings.LastIndex(expr, sep); i > 0 {
			v, err := valEval(p, expr[:i])
			if err != nil {
				return Value{}, err
			}
			return p.table.Field(v, expr[i+len(sep):], p.mem)
		}
	}
	v, ok := p.globals[expr]
	if !ok {
		return Value{}, fmt.Errorf("no global %s", expr)
	}
	return v, nil
}

// TestFormatMatchesGDB prints globals of every kind of the C and C++
// programs, plain, with /FMT letters and through Field, Index and Deref,
// and compares each with what gdb prints attached to the same process.
func TestFormatMatchesGDB(t *testing.T) {
	for _, tc := range []struct {
		lang  string
		flags []string
		exprs []string
	}{
		{"c", nil, []string{
			"n1", "n2", "head", "num", "col", "badcol", "grid", "greeting", "nullstr", "sbuf", "fp", "zeros", "mixed",
			"dbl", "flt", "flag", "uc", "ch", "neg", "big", "sh", "iptr", "pt", "pts", "vol", "cint", "hold", "vp",
			"*hold", "head->next", "*head->next", "head->name", "grid[1]", "iptr[1]", "pts[1]", "n1.x", "n1.y", "n1.next->y",
			"/x n1", "/x dbl", "/x flt", "/c mixed", "/t uc", "/o sh", "/x sh", "/d uc", "/a fp", "/x pt", "/u neg",
			"/z sh", "/x col", "/d flag", "/x sbuf", "/c n1", "/x greeting", "/a iptr", "/x grid", "/x zeros",
			"op", "*op", "op->label",
		}},
		{"c", []string{"-gdwarf-3"}, []string{"n1", "n2", "/x n1", "grid"}},
		{"cpp", nil, []string{
			"derived", "shortstr", "longstr", "vec", "names", "pair", "mode", "gref", "yes", "target",
			"derived.id", "derived.ref", "/x vec", "/x mode",
			// gdb indexes a vector only through xmethods; read the
			// element it holds.
			"vec[2]=vec._M_impl._M_start[2]", "names[1]=names._M_impl._M_start[1]",
		}},
	} {
		t.Run(tc.lang+strings.Join(tc.flags, ""), func(t *testing.T) {
			p := valStart(t, valBuild(t, tc.lang, tc.flags...))
			var gdbExprs []string
			for _, e := range tc.exprs {
				_, g, ok := strings.Cut(e, "=")
				if !ok {
					g = e
				}
				gdbExprs = append(gdbExprs, g)
			}
			want := valGDB(t, p.pid, nil, gdbExprs)
			for i, e := range tc.exprs {
				e, _, _ = strings.Cut(e, "=")
				letter, expr := gdbFormat(e)
				v, err := valEval(p, expr)
				if err != nil {
					t.Errorf("%s: %v", e, err)
					continue
				}
				got := p.table.Format(v, p.mem, FormatOptions{Format: letter, TypePrefix: true})
				if w, ok := want[gdbExprs[i]]; !ok {
					t.Errorf("gdb printed nothing for %s; we print %s", e, got)
				} else if got != w {
					t.Errorf("print %s\n got: %s\nwant: %s", e, got, w)
				}
			}
		})
	}
}

// TestFormatLimits checks gdb's "print elements" and "print max-depth"
// limits against gdb with the same settings.
func TestFormatLimits(t *testing.T) {
	p := valStart(t, valBuild(t, "c"))
	exprs := []string{"mixed", "grid", "greeting", "sbuf", "zeros", "n1", "pts"}
	for _, c := range []struct {
		opts     FormatOptions
		settings []string
	}{
		{FormatOptions{MaxElements: 3}, []string{"set print elements 3"}},
		{FormatOptions{MaxElements: 1}, []string{"set print elements 1"}},
		{FormatOptions{MaxDepth: 1}, []string{"set print max-depth 1"}},
	} {
		want := valGDB(t, p.pid, c.settings, exprs)
		for _, e := range exprs {
			c.opts.TypePrefix = true
			if got := p.table.Format(p.globals[e], p.mem, c.opts); got != want[e] {
				t.Errorf("%v: print %s\n got: %s\nwant: %s", c.settings, e, got, want[e])
			}
		}
	}
}

// TestFormatErrors checks unreadable and optimized-out values.
func TestFormatErrors(t *testing.T) {
	p := valStart(t, valBuild(t, "c"))
	intType := stripType(p.globals["sh"].Type)
	charPtr := p.globals["greeting"].Type
	for _, c := range []struct {
		v    Value
		want string
	}{
		{Value{Type: intType, Addr: 0x10, InMem: true}, "<error: Cannot access memory at address 0x10>"},
		{Value{Type: intType, Optimized: true}, "<optimized out>"},
		{Value{Type: charPtr, Bytes: []byte{0x20, 0, 0, 0, 0, 0, 0, 0}}, "0x20 <error: Cannot access memory at address 0x20>"},
		{Value{Type: p.globals["n1"].Type, Addr: 0x40, InMem: true}, "{name = <error: Cannot access memory at address 0x40>, next = <error: Cannot access memory at address 0x48>, x = <error: Cannot access memory at address 0x50>, y = <error: Cannot access memory at address 0x50>}"},
		// A struct declared only (no body, no size anywhere), as gdb says;
		// an empty one has no fields but a size.
		{Value{Type: &Type{Kind: KindStruct, Name: "handle", Size: -1, Lang: LangC}, Addr: 0x40, InMem: true}, "<incomplete type>"},
		{Value{Type: &Type{Kind: KindStruct, Name: "empty", Size: 0, Lang: LangC}, Bytes: []byte{}}, "{<No data fields>}"},
	} {
		if got := p.table.Format(c.v, p.mem, FormatOptions{}); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
	if _, err := p.table.Deref(p.globals["nullstr"], p.mem); err == nil {
		t.Error("dereferencing a null pointer succeeded")
	}
	if _, err := p.table.Field(p.globals["n1"], "nosuch", p.mem); err == nil {
		t.Error("a missing field was found")
	}
}

// TestChildrenC expands values as a variables tree does.
func TestChildrenC(t *testing.T) {
	p := valStart(t, valBuild(t, "c"))
	names := func(vs []Value) string {
		var s []string
		for _, v := range vs {
			s = append(s, v.Name+"="+p.table.Format(v, p.mem, FormatOptions{}))
		}
		return strings.Join(s, " ")
	}
	kids := p.table.Children(p.globals["head"], p.mem, FormatOptions{})
	if len(kids) != 1 || kids[0].Name != "*" {
		t.Fatalf("children of a pointer: %s", names(kids))
	}
	if got := names(p.table.Children(kids[0], p.mem, FormatOptions{})); !strings.HasPrefix(got, `name="first\000\000" next=0x`) || !strings.HasSuffix(got, "<n2> x=-3 y=17") {
		t.Errorf("children of *head: %s", got)
	}
	if got := names(p.table.Children(p.globals["grid"], p.mem, FormatOptions{})); got != "[0]={0, 1, 2} [1]={10, 11, 12}" {
		t.Errorf("children of grid: %s", got)
	}
	if got := p.table.Children(p.globals["mixed"], p.mem, FormatOptions{MaxElements: 4}); len(got) != 4 {
		t.Errorf("MaxElements 4 gave %d children", len(got))
	}
	if got := p.table.Children(p.globals["dbl"], p.mem, FormatOptions{}); got != nil {
		t.Errorf("a double has children: %s", names(got))
	}
}

// TestFormatRust compares the rendering of the Rust program's statics with
// the Debug text the program printed for them.
func TestFormatRust(t *testing.T) {
	p := valStart(t, valBuild(t, "rs"))
	p.checkPrinted(t, "values::", nil)
	p.checkExprs(t, []valExpr{
		{"values::VEC[1]", "2"},
		{"values::SLICE[2]", "40"},
		{"values::STR[0]", "104"},
		{"values::POINT.y", "2"},
		{"values::RECT.h", "4"},
		{"values::SOME.__0", "5"},
	})
	// Some(Box) expands to its payload field, the box to the point.
	kids := p.table.Children(p.globals["values::BOXED"], p.mem, FormatOptions{})
	if len(kids) != 1 || kids[0].Name != "__0" {
		t.Fatalf("Some(Box) has children %+v", kids)
	}
	kids = p.table.Children(kids[0], p.mem, FormatOptions{})
	if len(kids) != 1 || kids[0].Name != "*" {
		t.Fatalf("Box has children %+v", kids)
	}
	if got := p.table.Format(kids[0], p.mem, FormatOptions{}); got != "Point { x: 9, y: 8 }" {
		t.Errorf("the box holds %s", got)
	}
	if got := len(p.table.Children(p.globals["values::VEC"], p.mem, FormatOptions{})); got != 3 {
		t.Errorf("vec has %d children", got)
	}
}

// sortMapText sorts the entries of delve's rendering of a map, whose order
// follows the hash table.
func sortMapText(s string) string {
	open := strings.Index(s, " [") + 1
	if open <= 0 || !strings.HasSuffix(s, ", ]") {
		return s
	}
	entries := strings.Split(s[open+1:len(s)-3], ", ")
	sort.Strings(entries)
	return s[:open+1] + strings.Join(entries, ", ") + ", ]"
}

// TestFormatGo compares the rendering of the Go program's variables with
// the text in delve's format the program printed for them.
func TestFormatGo(t *testing.T) {
	valCheckGo(t, valBuild(t, "go"))
}

// TestFormatGoOldMaps does the same for a program built by a Go toolchain
// from before swiss tables (Go 1.23 and earlier: runtime.hmap buckets),
// when one is in the module cache (GOTOOLCHAIN=go1.23.12 go version puts
// it there); the test downloads nothing.
func TestFormatGoOldMaps(t *testing.T) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env: %v", err)
	}
	gos, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "golang.org", "toolchain@v0.0.1-go1.2[0-3]*.linux-amd64", "bin", "go"))
	if len(gos) == 0 {
		t.Skip("no Go 1.20-1.23 toolchain in the module cache")
	}
	goTool := gos[len(gos)-1]
	src, err := os.ReadFile(filepath.Join("..", "testdata", "values", "values.go"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "values.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "build", "-gcflags=all=-N -l", "-o", "values_old", "values.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=", "GO111MODULE=on")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s build: %v\n%s", goTool, err, out)
	}
	p := valCheckGo(t, filepath.Join(dir, "values_old"))
	if _, ok := fieldByName(stripType(stripType(stripType(p.globals["main.small"].Type).Elem)), "buckets"); !ok {
		t.Errorf("the old toolchain's map is not an hmap: %s", stripType(stripType(p.globals["main.small"].Type).Elem).Name)
	}
}

func valCheckGo(t *testing.T, exe string) *valProgram {
	p := valStart(t, exe)
	p.checkPrinted(t, "main.", func(got, want string) string {
		if strings.HasPrefix(want, "map[") {
			return sortMapText(got) // Go prints maps sorted
		}
		return got
	})
	p.checkExprs(t, []valExpr{
		{"main.ints[1]", "20"},
		{"main.str[0]", "104"},
		{"main.ptp.Name", `"heap"`},
		{"main.pt.Y", "-4"},
		{"main.arr[0]", "-1"},
		{"main.nested.S[0].X", "3"},
	})
	if _, err := valEval(p, "main.ints[3]"); err == nil {
		t.Error("indexing a slice past its length succeeded")
	}
	for _, m := range []string{"main.small", "main.large"} {
		val, ok, err := p.table.MapLookup(p.globals[m], p.globals["main.keyB"], p.mem)
		if m == "main.small" && (err != nil || !ok || p.table.Format(val, p.mem, FormatOptions{}) != "2") {
			t.Errorf("%s[\"b\"] = %v %v %v", m, val, ok, err)
		}
		if m == "main.large" && (err != nil || ok) {
			t.Errorf("%s has no key \"b\", yet lookup gave %v %v", m, ok, err)
		}
	}
	kids := p.table.Children(p.globals["main.large"], p.mem, FormatOptions{})
	if len(kids) != 40 {
		t.Errorf("large map has %d children", len(kids))
	}
	for _, k := range kids {
		n, err := strconv.Atoi(strings.Trim(k.Name, `"k`))
		if got := p.table.Format(k, p.mem, FormatOptions{}); err != nil || got != strconv.Itoa(n*n) {
			t.Errorf("entry %s = %s", k.Name, got)
		}
	}
	if kids := p.table.Children(p.globals["main.err"], p.mem, FormatOptions{}); len(kids) != 1 || kids[0].Type.Name != "*main.MyErr" {
		t.Errorf("error's children: %+v", kids)
	}
	return p
}

// checkPrinted compares the rendering of each global the program printed
// an expectation for ("NAME\tWANT", the global prefix+NAME) with what it
// printed; norm, if any, adjusts the rendering first.
func (p *valProgram) checkPrinted(t *testing.T, prefix string, norm func(got, want string) string) {
	t.Helper()
	if len(p.lines) == 0 {
		t.Fatal("the program printed no expectations")
	}
	for _, line := range p.lines {
		name, want, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		v, ok := p.globals[prefix+name]
		if !ok {
			t.Errorf("no global %s%s", prefix, name)
			continue
		}
		got := p.table.Format(v, p.mem, FormatOptions{})
		if norm != nil {
			got = norm(got, want)
		}
		if got != want {
			t.Errorf("%s\n got: %s\nwant: %s", name, got, want)
		}
	}
}

// valExpr is an expression and its rendering.
type valExpr struct{ expr, want string }

// checkExprs evaluates each expression and compares its rendering.
func (p *valProgram) checkExprs(t *testing.T, cases []valExpr) {
	t.Helper()
	for _, c := range cases {
		v, err := valEval(p, c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := p.table.Format(v, p.mem, FormatOptions{}); got != c.want {
			t.Errorf("%s = %s, want %s", c.expr, got, c.want)
		}
	}
}
