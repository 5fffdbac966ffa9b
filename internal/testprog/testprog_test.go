package testprog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgPath: wherever the temporary directory is, the program's path
// has the same length (its stack addresses depend on it), and a directory
// too long for that is an error rather than a path of another length.
func TestProgPath(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		name    string
		extra   int // bytes added to root's length
		wantErr bool
	}{
		{"short", 0, false},
		{"longer", 37, false},
		{"just fits", ProgPathLen - len(root) - len("corrupt") - 3, false},
		{"too long", ProgPathLen, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := root
			if c.extra > 0 {
				dir = filepath.Join(root, strings.Repeat("d", c.extra-1))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			p, err := progPath(dir, "corrupt")
			if c.wantErr {
				if err == nil {
					t.Errorf("%d-byte directory: %s, want an error", len(dir), p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p) != ProgPathLen || !strings.HasPrefix(p, dir+"/") || filepath.Base(p) != "corrupt" {
				t.Errorf("%d-byte directory: %q (%d bytes), want %d bytes under it", len(dir), p, len(p), ProgPathLen)
			}
			if fi, err := os.Stat(filepath.Dir(p)); err != nil || !fi.IsDir() {
				t.Errorf("%s: %v", filepath.Dir(p), err)
			}
		})
	}
}
