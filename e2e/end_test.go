package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestEndOfRecording: continue with no breakpoint ahead stops at the very
// end, as rr does: at the exit_group instruction, with the exit's path in
// the backtrace, also when main made no system call before it (all of it
// in the recording's last stretch) or another thread exits; at the fault
// of a program killed by a signal. From there stepi says the recording
// ends, every reverse motion works, and continue stops there again.
func TestEndOfRecording(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		flags []string
		code  int
		// frames are suffixes of the backtrace's function names at the
		// end, in order (libc names them __GI__exit, __GI_exit…).
		frames []string
		// first is the reason of the first continue (the fault's signal
		// comes before the end).
		first string
	}{
		{"output", nil, 0, []string{"_exit", "exit", "__libc_start_call_main"}, "exit"},
		{"no system call in main", []string{"-DQUIET"}, 0, []string{"_exit", "exit", "__libc_start_call_main"}, "exit"},
		{"exit from a thread", []string{"-DTHREAD"}, 0, []string{"_exit", "exit", "worker", "start_thread"}, "exit"},
		{"killed by a signal", []string{"-DCRASH"}, 139, []string{"finish", "main"}, "signal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			trace := recorded(t, "source/ends.c", c.code, c.flags...)
			rs := batch(t, trace, "continue", "continue", "bt", "stepi", "reverse-stepi", "stepi",
				"goto end", "reverse-finish", "goto end", "reverse-next", "goto end", "reverse-step",
				"break add", "reverse-continue", "print v", "continue", "delete", "continue")
			first, end := stopOf(t, rs[0]), stopOf(t, rs[1])
			if first["reason"] != c.first || end["reason"] != "exit" || first["pc"] != end["pc"] {
				t.Fatalf("continue, continue: %v then %v, want %s then exit at the same pc", first, end, c.first)
			}
			if !strings.Contains(field(rs[1], "text"), "End of the recording (exit).") {
				t.Errorf("continue at the end says: %s", rs[1]["text"])
			}
			frames := functions(t, rs[2])
			if !suffixesInOrder(frames, c.frames) || frames[0] != end["function"] {
				t.Errorf("bt at the end: %v, want frames ending in %v from the stop's %v", frames, c.frames, end["function"])
			}
			wantError(t, rs[3], "ends here")
			if st := stopOf(t, rs[4]); st["pc"] == end["pc"] || st["function"] != end["function"] {
				t.Errorf("reverse-stepi from the end: %v, want the instruction before in %v", st, end["function"])
			}
			if st := stopOf(t, rs[5]); st["pc"] != end["pc"] {
				t.Errorf("stepi after reverse-stepi: %v, want the end's pc %v", st, end["pc"])
			}
			for _, i := range []int{6, 8, 10} {
				if st := stopOf(t, rs[i]); st["pc"] != end["pc"] {
					t.Errorf("goto end: %v, want the end's pc %v", st, end["pc"])
				}
			}
			if st := stopOf(t, rs[7]); st["function"] != frames[1] {
				t.Errorf("reverse-finish from the end: %v, want the caller %s", st, frames[1])
			}
			for _, i := range []int{9, 11} {
				if st := stopOf(t, rs[i]); st["reason"] != "step" || st["function"] != end["function"] || st["pc"] == end["pc"] {
					t.Errorf("%s from the end: %v, want a step back in %v", rs[i]["command"], st, end["function"])
				}
			}
			// add's last call is finish's, with 42.
			wantStop(t, rs[13], "breakpoint", "add", 15)
			wantValue(t, rs[14], "42")
			if st := stopOf(t, rs[15]); st["reason"] != c.first || st["pc"] != end["pc"] {
				t.Errorf("continue from add's last call: %v, want %s at the end", st, c.first)
			}
			if st := stopOf(t, rs[17]); st["reason"] != "exit" || st["pc"] != end["pc"] {
				t.Errorf("continue at the end: %v, want exit at %v", st, end["pc"])
			}
		})
	}
}

// functions returns the function names of a backtrace's frames.
func functions(t *testing.T, r map[string]any) []string {
	t.Helper()
	wantOK(t, r)
	list, _ := r["value"].([]any)
	var out []string
	for _, f := range list {
		m, _ := f.(map[string]any)
		out = append(out, fmt.Sprint(m["function"]))
	}
	if len(out) < 2 {
		t.Fatalf("%v: frames %v, want a caller", r["command"], r["value"])
	}
	return out
}

// suffixesInOrder says whether names has, in order, a name ending with
// each of want.
func suffixesInOrder(names, want []string) bool {
	for _, n := range names {
		if len(want) > 0 && strings.HasSuffix(n, want[0]) {
			want = want[1:]
		}
	}
	return len(want) == 0
}
