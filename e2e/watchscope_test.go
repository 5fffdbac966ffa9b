package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareWithGDBWatchScope: a watchpoint on a local is deleted when its
// frame returns, and the motion that took the frame away stops at the
// return, in the caller, saying so — whether the motion was continue,
// next or finish, and at a recursive call's own return only (issue 22).
func TestCompareWithGDBWatchScope(t *testing.T) {
	t.Parallel()
	prog, trace := recordedC(t, "source/watchscope.c")
	tests := []struct {
		name string
		pre  []string
		cmds []string
	}{
		{"continue", []string{"break f"}, []string{"watch local", "continue", "continue", "continue", "info breakpoints", "continue"}},
		{"next", []string{"break 13"}, []string{"watch local", "next", "next", "info watchpoints", "next"}},
		{"finish", []string{"break 13"}, []string{"watch local", "finish", "info watchpoints"}},
		{"recursion", []string{"break depth if n == 2"}, []string{"next", "watch here", "continue", "continue", "info watchpoints"}},
		{"global stays", []string{"break f"}, []string{"watch g", "continue", "continue", "info watchpoints"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			compareWithGDB(t, prog, trace, append(append([]string{}, tc.pre...), "run"), append(append([]string{}, tc.pre...), "continue"), tc.cmds)
		})
	}
}

// TestWatchScopeReverse: going backwards, a local's watchpoint ends at the
// call that made its frame: reverse-continue, reverse-step and
// reverse-finish stop at that call instruction in the caller with reason
// watchpoint-scope and delete the watchpoint; the writes inside the frame
// are still reported on the way (issue 22).
func TestWatchScopeReverse(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "source/watchscope.c")
	trace := filepath.Join(t.TempDir(), "t.rwd")
	record(t, trace, prog)
	tests := []struct {
		name    string
		cmds    []string
		watches int // watchpoint stops before the scope's end
	}{
		{"reverse-continue", []string{"break 12", "continue", "continue", "watch local", "reverse-continue", "reverse-continue", "reverse-continue", "reverse-continue", "reverse-continue"}, 4},
		// f(4)'s local = 0 replaces f(3)'s 3 in the same slot: a change.
		{"reverse-step", []string{"break 10", "continue", "continue", "watch local", "reverse-step", "reverse-step", "reverse-step"}, 1},
		{"reverse-finish", []string{"break 11", "continue", "continue", "continue", "continue", "continue", "delete 1", "watch local", "reverse-finish"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := batch(t, trace, append(tc.cmds, "info watchpoints")...)
			n := 0
			for _, r := range rs {
				if st, ok := r["stop"].(map[string]any); ok && st["reason"] == "watchpoint" {
					n++
				}
			}
			if n != tc.watches {
				t.Errorf("%d watchpoint stops before the scope's end, want %d", n, tc.watches)
			}
			st := stopOf(t, rs[len(rs)-2])
			if st["reason"] != "watchpoint-scope" || st["function"] != "main" || field(st, "line") != "25" {
				t.Fatalf("last stop %v, want watchpoint-scope in main at line 25 (the call of f(4))", st)
			}
			text := field(rs[len(rs)-2], "text")
			if !strings.Contains(text, "deleted because the program has left the block in\nwhich its expression is valid.") {
				t.Errorf("stop text %q", text)
			}
			if w, _ := st["watch"].(map[string]any); w == nil || w["expr"] != "local" {
				t.Errorf("stop's watch %v, want local", st["watch"])
			}
			if got := field(rs[len(rs)-1], "text"); got != "No watchpoints." {
				t.Errorf("info watchpoints after the scope's end: %q", got)
			}
		})
	}
}
