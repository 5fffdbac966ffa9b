package dwarf

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// TestRustNamesAsGDB: every concrete function of a Rust program, its own
// and those of the standard library it instantiates or links, has the
// name gdb's `info functions` lists it by: closures, methods, trait
// impls, generic instances, nested functions; at -O0 and at -O2, where
// more of them are out-of-line copies of abstract instances.
func TestRustNamesAsGDB(t *testing.T) {
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb is not installed")
	}
	for _, c := range []struct {
		src   string
		flags []string
	}{
		{"../testdata/rust/names.rs", nil},
		{"../testdata/rust/names.rs", []string{"-C", "opt-level=2"}},
		{"../testdata/values/values.rs", []string{"--crate-name", "values"}},
	} {
		exe := compileTest(t, "rustc", c.src, append([]string{"-g"}, c.flags...)...)
		out, err := exec.Command("gdb", "-nx", "-batch", "-ex", "set width 0", "-ex", "info functions", exe).Output()
		if err != nil {
			t.Fatalf("gdb info functions: %v", err)
		}
		want := gdbFunctionNames(string(out))
		if len(want) < 100 {
			t.Fatalf("gdb listed %d functions:\n%s", len(want), out)
		}
		img, err := LoadImage(exe, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, fn := range img.funcIndex().rust {
			got[fn.Name] = true
		}
		img.Close()
		var missing, extra []string
		for n := range want {
			if !got[n] {
				missing = append(missing, n)
			}
		}
		for n := range got {
			if !want[n] {
				extra = append(extra, n)
			}
		}
		sort.Strings(missing)
		sort.Strings(extra)
		if len(missing)+len(extra) > 0 {
			t.Errorf("%s %v: of %d functions, gdb's names not found: %q; names gdb does not list: %q",
				c.src, c.flags, len(want), missing, extra)
		}
	}
}

// gdbFunctionNames reads the names of the functions with debug
// information that gdb's `info functions` lists for Rust
// ("12:	static fn names::Counter::bump(*mut names::Counter, u64) -> u64;").
func gdbFunctionNames(out string) map[string]bool {
	names := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Non-debugging symbols:") {
			break
		}
		_, decl, ok := strings.Cut(l, "\t")
		if !ok {
			continue
		}
		decl = strings.TrimPrefix(decl, "static ")
		decl, ok = strings.CutPrefix(decl, "fn ")
		if !ok {
			continue
		}
		// The parameters start at the first "(" outside generic
		// arguments (which may hold "fn() -> T").
		depth, end := 0, len(decl)
		for i := 0; i < len(decl) && end == len(decl); i++ {
			switch {
			case decl[i] == '<':
				depth++
			case decl[i] == '>' && (i == 0 || decl[i-1] != '-'):
				depth--
			case decl[i] == '(' && depth == 0:
				end = i
			}
		}
		names[decl[:end]] = true
	}
	return names
}

// TestRustSuffixMatch: `break` takes the end of a Rust path, after a "::",
// with or without generic arguments.
func TestRustSuffixMatch(t *testing.T) {
	for _, c := range []struct {
		full, spec string
		want       bool
	}{
		{"symm::Acc::add", "add", true},
		{"symm::Acc::add", "Acc::add", true},
		{"symm::Acc::add", "symm::Acc::add", true},
		{"symm::Acc::add", "cc::add", false},
		{"symm::Acc::add", "ad", false},
		{"names::largest<u32>", "largest", true},
		{"names::largest<u32>", "largest<u32>", true},
		{"names::largest<u32>", "largest<u64>", false},
		{"core::iter::range::{impl#6}::next<u64>", "next", true},
		{"core::iter::range::{impl#6}::next<u64>", "range::{impl#6}::next", true},
		{"core::ops::function::FnOnce::call_once<fn() -> i32, ()>", "call_once", true},
		{"names::main::{closure#0}", "{closure#0}", true},
		{"names::main::{closure#0}", "main::{closure#0}", true},
		{"names::main", "main::{closure#0}", false},
	} {
		if got := rustSuffixMatch(c.full, c.spec); got != c.want {
			t.Errorf("rustSuffixMatch(%q, %q) = %v, want %v", c.full, c.spec, got, c.want)
		}
	}
	if got := stripGenerics("core::ops::function::FnOnce::call_once<fn() -> i32, ()>"); got != "core::ops::function::FnOnce::call_once" {
		t.Errorf("stripGenerics = %q", got)
	}
}
