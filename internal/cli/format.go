package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// displayPath shows a path relative to the working directory when shorter.
func displayPath(p string) string {
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, p); err == nil && len(rel) < len(p) && !filepath.IsAbs(rel) && rel[0] != '.' {
			return rel
		}
	}
	return p
}

// quoteArgs quotes arguments as a shell would need them, to show a command
// line that can be pasted back.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

// plural picks the singular (or the first form) for n == 1.
func plural(n int, forms ...string) string {
	if n == 1 {
		return forms[0]
	}
	if len(forms) > 1 {
		return forms[1]
	}
	return forms[0] + "s"
}
