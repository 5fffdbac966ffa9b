package bench

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

// bigGoProgram writes and builds a Go program of about 20 MB: the
// standard-library-heavy testdata/go/big plus generated functions, each
// with its own struct type, locals and lines.
func bigGoProgram(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "testdata", "go", "big", "main.go"))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		b.Fatal(err)
	}
	var g strings.Builder
	g.WriteString("package main\n\nimport \"strconv\"\n\n")
	const n = 22000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&g, "type rec%d struct{ A, B int; S string; M map[string]int }\n\n", i)
		fmt.Fprintf(&g, "//go:noinline\nfunc gen%d(x int) string {\n\tr := rec%d{A: x, B: x * %d, S: strconv.Itoa(x)}\n\tif r.A > r.B {\n\t\tr.S += \"!\"\n\t}\n\treturn r.S\n}\n\n", i, i, i+1)
	}
	g.WriteString("var gens = []func(int) string{")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&g, "gen%d, ", i)
	}
	g.WriteString("}\n\nfunc init() { if len(os.Args) > 5 { println(gens[len(os.Args)](1)) } }\n")
	gen := strings.Replace(g.String(), "import \"strconv\"", "import (\n\t\"os\"\n\t\"strconv\"\n)", 1)
	if err := os.WriteFile(filepath.Join(dir, "gen.go"), []byte(gen), 0o644); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module big\n\ngo 1.24\n"), 0o644)
	out := filepath.Join(dir, "big")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}

// BenchmarkLoadGoSymbols loads everything `break main.go:N` and a stop
// description need from a 20 MB Go binary: ELF symbols, the function
// index and the line tables.
func BenchmarkLoadGoSymbols(b *testing.B) {
	prog := bigGoProgram(b)
	st, _ := os.Stat(prog)
	f, err := elf.Open(prog)
	if err != nil {
		b.Fatal(err)
	}
	base := uint64(0)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			base = p.Vaddr - p.Off
			break
		}
	}
	f.Close()
	b.ResetTimer()
	var worst time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		img, err := dwarf.LoadImage(prog, base)
		if err != nil {
			b.Fatal(err)
		}
		t := &dwarf.Table{Images: []*dwarf.Image{img}}
		fns := t.FindFunction("main.main")
		locs, err := t.FindLine("main.go", 40)
		if len(fns) == 0 || err != nil || len(locs) == 0 {
			b.Fatalf("main.main %v, main.go:40 %v %v", fns, locs, err)
		}
		if l, ok := t.LineAt(fns[0].Entry); !ok || l.Line == 0 {
			b.Fatal("no line for main.main")
		}
		worst = max(worst, time.Since(start))
		t.Close()
	}
	b.ReportMetric(float64(st.Size())/1e6, "binary-MB")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}

// BenchmarkBacktrace measures `bt` (unwinding, functions, lines and the
// arguments of every frame) at the crash of the corrupted-list program.
func BenchmarkBacktrace(b *testing.B) {
	prog := filepath.Join(b.TempDir(), "corrupt")
	cc.Build(b, filepath.Join("..", "testdata", "source", "corrupt.c"), prog, "-g", "-O0")
	trace := filepath.Join(b.TempDir(), "c.rwd")
	recordRun(b, prog, nil, trace)
	s, err := debugger.Open(trace, debugger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if r := s.Execute("continue"); !r.OK || r.Stop.Reason != "signal" {
		b.Fatalf("continue: %+v", r)
	}
	first := time.Now()
	if r := s.Execute("bt"); !r.OK {
		b.Fatal(r.Error)
	}
	cold := time.Since(first)
	b.ResetTimer()
	var worst time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r := s.Execute("bt")
		if !r.OK || !strings.Contains(r.Text, "sum (head=") {
			b.Fatalf("bt: %+v", r)
		}
		worst = max(worst, time.Since(start))
	}
	b.ReportMetric(float64(cold.Microseconds())/1000, "first-bt-ms")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
}
