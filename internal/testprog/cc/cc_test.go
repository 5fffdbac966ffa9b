package cc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompile: C goes to gcc and C++ to g++, and what does not compile
// says which command failed and why.
func TestCompile(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, src, code, want string
	}{
		{"c", "ok.c", "int main(void) { return 3; }\n", ""},
		{"c++", "ok.cpp", "#include <vector>\nint main() { return std::vector<int>(3).size(); }\n", ""},
		{"broken", "bad.c", "int main(void) { return nope; }\n", "gcc -O1 -o"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := filepath.Join(dir, c.src)
			os.WriteFile(src, []byte(c.code), 0o644)
			out := filepath.Join(dir, c.name)
			err := Compile(src, out, "-O1")
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nope") {
					t.Fatalf("Compile(%s) = %v, want an error naming %q and the compiler's message", c.src, err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := exec.Command(out).Run(); err == nil || err.(*exec.ExitError).ExitCode() != 3 {
				t.Errorf("%s ran with %v, want exit status 3", out, err)
			}
		})
	}
}
