// Package demo builds the bundled buggy program of `rewind demo`: in C
// when a C compiler is installed, else in Go.
package demo

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

//go:embed corrupt.c.txt
var cSource []byte

//go:embed corrupt.go.txt
var goSource []byte

// Hint is what the UI shows first: the bug and the keys to find it.
const Hint = `Welcome to the rewind demo: corrupt crashed walking a linked list.
Try: Tab to Stack and Enter on main (or :up), then
  :watch -l b->next        watch the pointer that went bad
  C  (reverse-continue)    back to the write that corrupted it
  :print i                 the loop index that overflowed name[8]
  F  (reverse-finish)      back to the call; s n f c step forwards, S N F C backwards; ? for keys`

// Build writes and compiles the demo program in dir and returns its path
// and the language it was built from.
func Build(dir string) (string, string, error) {
	if cc, err := exec.LookPath("gcc"); err == nil {
		src := filepath.Join(dir, "corrupt.c")
		out := filepath.Join(dir, "corrupt")
		if err := os.WriteFile(src, cSource, 0o644); err != nil {
			return "", "", err
		}
		if msg, err := exec.Command(cc, "-g", "-O0", "-o", out, src).CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("demo: gcc: %v: %s", err, msg)
		}
		return out, "C", nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", "", fmt.Errorf("demo: needs gcc or go to build the demo program")
	}
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, goSource, 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module corrupt\n\ngo 1.24\n"), 0o644); err != nil {
		return "", "", err
	}
	out := filepath.Join(dir, "corrupt")
	cmd := exec.Command(goTool, "build", "-gcflags=all=-N -l", "-o", out, ".")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("demo: go build: %v: %s", err, msg)
	}
	return out, "Go", nil
}
