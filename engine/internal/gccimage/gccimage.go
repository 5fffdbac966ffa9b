// Package gccimage checks the binary images that engine packages build
// with gcc and commit (the hook page, the native exec helper) against the
// sources they are built from, for those packages' tests.
package gccimage

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Check builds the image again, with `sh script OUT`, and compares it with
// image, committed as the file name of the test's package, which go
// generate in pkg writes. It skips the test where gcc or one of tools is
// missing, or where this gcc is not the one that built the image (named in
// the file name+".gcc"): another compiler may lay the image out otherwise.
func Check(t *testing.T, image []byte, name, script, pkg string, tools ...string) {
	t.Helper()
	ver, err := exec.Command("gcc", "--version").Output()
	if err != nil {
		t.Skipf("no gcc: %v", err)
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	built, _ := os.ReadFile(name + ".gcc")
	if first, _, _ := strings.Cut(string(ver), "\n"); first != strings.TrimSpace(string(built)) {
		t.Skipf("%s was built with %q, this gcc is %q", name, strings.TrimSpace(string(built)), first)
	}
	out := filepath.Join(t.TempDir(), name)
	if b, err := exec.Command("sh", script, out).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, b)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, image) {
		t.Errorf("%s is not what %s/ builds (%d bytes, built %d): run go generate %s", name, filepath.Dir(script), len(image), len(got), pkg)
	}
}
