package e2e

import (
	"strings"
	"testing"
)

// TestOrigin: overflow.c's set_name copies a name past its buffer into the
// pointer after it, and main dies dereferencing the pointer. From the
// crash, origin on the pointer lands on the overflowing line with the value
// before and after the write; repeating it follows the location one write
// further back (one byte of the overflow each) to the assignment in main;
// origin --forward comes back to the first overflowing write; origin $rax
// finds the instruction that set rax.
func TestOrigin(t *testing.T) {
	trace := recorded(t, "overflow.c", 139)
	cmds := []string{"goto end", "origin r.score"}
	for range 5 {
		cmds = append(cmds, "origin")
	}
	cmds = append(cmds, "origin --forward r.score", "origin $rax", "origin no_such_var")
	out := batch(t, trace, cmds...)

	watchOf := func(i int) (map[string]any, map[string]any) {
		t.Helper()
		st := stopOf(t, out[i])
		w, _ := st["watch"].(map[string]any)
		if st["reason"] != "origin" || w == nil {
			t.Fatalf("%s: stop %v, want reason origin with old and new values", cmds[i], st)
		}
		return st, w
	}
	// The last write first, then one byte of the overflow before each.
	var overflow []map[string]any
	i := 1
	for ; i < 7; i++ {
		st, w := watchOf(i)
		if st["line"] != float64(17) {
			break
		}
		if st["function"] != "set_name" || st["file"] != "overflow.c" || w["old"] == w["new"] || w["writer"] == nil {
			t.Errorf("%s: stop %v, want the copy at overflow.c:17 changing the value, with the writer", cmds[i], st)
		}
		if len(overflow) > 0 && w["new"] != overflow[len(overflow)-1]["old"] {
			t.Errorf("%s wrote %v, want the value the later write found (%v)", cmds[i], w["new"], overflow[len(overflow)-1]["old"])
		}
		overflow = append(overflow, w)
	}
	// "overflow!!!!" and its NUL reach 5 bytes past name[8].
	if len(overflow) != 5 {
		t.Fatalf("%d overflowing writes before the assignment, want 5", len(overflow))
	}
	st, w := watchOf(i)
	if st["function"] != "main" || st["line"] != float64(23) || !strings.HasSuffix(w["new"].(string), "<total>") || w["new"] != overflow[4]["old"] {
		t.Errorf("%s: stop %v (%v), want the assignment of &total at overflow.c:23", cmds[i], st, w)
	}

	fwd := len(cmds) - 3
	st, w = watchOf(fwd)
	if st["line"] != float64(17) || w["old"] != overflow[4]["old"] || w["new"] != overflow[4]["new"] {
		t.Errorf("origin --forward: stop %v (%v), want the first overflowing write (%v)", st, w, overflow[4])
	}
	st, w = watchOf(fwd + 1)
	if w["expr"] != "$rax" || st["function"] != "set_name" || st["file"] != "overflow.c" || w["old"] == w["new"] || w["writer"] == nil {
		t.Errorf("origin $rax: stop %v (%v), want the instruction in set_name that set rax", st, w)
	}
	wantError(t, out[len(out)-1], "no_such_var")
}

// TestTUIOrigin: in the UI at the crash, o on the corrupted pointer in
// Locals lands on the overflowing write, o again goes one write further,
// Ctrl-O comes back along them to the crash and Ctrl-] goes forward again.
func TestTUIOrigin(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "overflow.c", 139)
	s := newTmux(t, 160, 48, []string{"HOME=" + t.TempDir()}, "replay", trace)
	s.waitFor(`#\d+/\d+ .*thread`)
	s.command("goto end", `goto in main at overflow.c:25`)
	// Focus Locals (its pane key), open r and go down to score.
	s.keys("3", "Down", "Down", "Right")
	s.waitFor(`▾ r = `)
	s.keys("Down", "Down", "o")
	screen := s.waitFor(`origin in set_name at overflow.c:17`)
	if !strings.Contains(screen, "Origin of r.score") || !strings.Contains(screen, "Old value = ") {
		t.Errorf("no origin result with old and new values in the Console:\n%s", screen)
	}
	// o again follows the pointer one write further back (the byte before).
	s.press("o", `:origin +│`)
	s.waitFor(`origin in set_name at overflow.c:17`)
	// Back along the jump list: the first write, then the crash; forward
	// again to the write.
	s.press("C-o", `goto in set_name at overflow.c:17`)
	s.press("C-o", `goto in main at overflow.c:25`)
	s.press("C-]", `goto in set_name at overflow.c:17`)
	s.quit()
}

// TestOriginForwardRegister: origin --forward $REG goes to the next
// instruction that changes the register: one reverse-stepi from there
// stands at that instruction with the old value, stepi again gives the new.
func TestOriginForwardRegister(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	rs := batch(t, trace, "break add", "continue", "origin --forward $rax", "reverse-stepi", "print/x $rax", "print/x $pc", "stepi", "print/x $rax")
	st := stopOf(t, rs[2])
	w, _ := st["watch"].(map[string]any)
	if st["reason"] != "origin" || w["expr"] != "$rax" || w["old"] == w["new"] || w["writer"] == nil {
		t.Fatalf("origin --forward $rax: %v", rs[2])
	}
	if field(rs[4], "value") != w["old"] || field(rs[5], "value") != w["writer"] || field(rs[7], "value") != w["new"] {
		t.Errorf("before the writer: rax %v at %v; after it: rax %v; want %v at %v, then %v",
			rs[4]["value"], rs[5]["value"], rs[7]["value"], w["old"], w["writer"], w["new"])
	}
}

// TestOriginInsideLoop: corrupt.c's sum() reaches its faulting instruction
// twice before, in other states, and writes the pointer n once per pass.
// From one instruction before the crash, origin n finds the pass that
// stored the corrupted pointer (not the pass before), and reverse-stepi
// from a write found that way, or by a watchpoint and reverse-continue,
// goes one instruction back inside the loop.
func TestOriginInsideLoop(t *testing.T) {
	trace := recorded(t, "source/corrupt.c", 139)
	out := batch(t, trace, "continue", "print n", "reverse-stepi", "origin n", "reverse-stepi", "print n",
		"goto end", "watch -l n", "reverse-continue", "reverse-stepi", "print n", "reverse-continue")
	bad := out[1]["value"]
	if _, w := originWatch(t, out[3]); w["new"] != bad || w["old"] == bad {
		t.Errorf("origin n from inside the crash's pass: %v, want the write of %v", w, bad)
	}
	prev := out[5]
	if out[4]["ok"] != true || prev["ok"] != true || prev["value"] == bad {
		t.Errorf("reverse-stepi after origin: %v, then print n: %v, want the value before the corrupting write", out[4], prev)
	}
	st := stopOf(t, out[8])
	if w, _ := st["watch"].(map[string]any); w == nil || w["new"] != bad {
		t.Errorf("watch n, reverse-continue from the crash: %v, want the write of %v", st, bad)
	}
	if out[9]["ok"] != true || out[10]["value"] != prev["value"] {
		t.Errorf("reverse-stepi after a watchpoint stop: %v, print n: %v, want %v", out[9], out[10], prev["value"])
	}
	st = stopOf(t, out[11])
	if w, _ := st["watch"].(map[string]any); w == nil || w["new"] != prev["value"] {
		t.Errorf("reverse-continue again: %v, want the write of %v", st, prev["value"])
	}
}

// originWatch returns an origin result's stop and its watch part.
func originWatch(t *testing.T, r map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	st := stopOf(t, r)
	w, _ := st["watch"].(map[string]any)
	if st["reason"] != "origin" || w == nil {
		t.Fatalf("%v: stop %v, want reason origin with old and new values", r["command"], st)
	}
	return st, w
}
