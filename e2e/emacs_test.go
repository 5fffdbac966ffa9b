package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// emacsConfig registers rewind dap with Emacs's dap-mode (docs/dap.md).
const emacsConfig = "dap/testdata/emacs/rewind-dap.el"

// emacsDAP is a headless Emacs with dap-mode in tmux, visiting a source.
type emacsDAP struct{ *tmuxSession }

// startEmacsDAP opens src in `emacs -nw` with rewind-dap.el loaded and
// trace as the template's recording. It skips where Emacs or dap-mode
// (Debian's elpa-dap-mode) is missing.
func startEmacsDAP(t *testing.T, trace, src string) *emacsDAP {
	t.Helper()
	emacs := need(t, "emacs")
	need(t, "tmux")
	if out, err := exec.Command(emacs, "--batch", "-q", "--eval", "(require 'dap-mode)").CombinedOutput(); err != nil {
		t.Skipf("dap-mode not installed (elpa-dap-mode): %v\n%s", err, tail(out))
	}
	// HOME of its own: dap-mode keeps breakpoints in ~/.emacs.d. Native
	// compilation of the packages in the background is off: its warnings
	// take a window.
	cmdline := strings.Join([]string{"env", "HOME=" + t.TempDir(), "REWIND=" + rewind(t), "REWIND_TRACE=" + trace,
		emacs, "-nw", "-q", "--eval", `'(setq native-comp-deferred-compilation nil native-comp-async-report-warnings-errors nil)'`,
		// Nothing written beside the sources, whatever a failing run typed.
		"--eval", `'(setq auto-save-default nil make-backup-files nil create-lockfiles nil)'`,
		// Point's column in the mode line: a stop on the line point is
		// on still shows, dap-mode puts point past the first character.
		"--eval", `'(progn (setq mode-line-position-column-line-format (list " L%l C%c")) (column-number-mode 1))'`,
		"-l", filepath.Join(moduleRoot, emacsConfig), src}, " ")
	e := &emacsDAP{startTmux(t, 160, 48, cmdline)}
	// Startup's last word: keys typed before it may be lost.
	e.waitFor(`For information about GNU Emacs`)
	e.line(filepath.Base(src), 1)
	return e
}

// line waits until the source's window shows point at line n (its mode
// line says Ln): where dap-mode puts point at a stop.
func (e *emacsDAP) line(file string, n int) { e.at(file, n, `\d+`) }

// at waits until the mode line of file says point is at line n, column
// col (a regexp).
func (e *emacsDAP) at(file string, n int, col string) {
	e.t.Helper()
	e.waitFor(`(?m)^\S*\s+` + regexp.QuoteMeta(file) + `\s+\S+\s+L` + strconv.Itoa(n) + ` C` + col + `\s`)
}

// mx runs an interactive command as a user does: M-x, its name, Enter.
func (e *emacsDAP) mx(command string) {
	e.t.Helper()
	e.prompted("M-x", "M-x")
	e.enter(command)
}

// prompted presses keys until the minibuffer asks prompt.
func (e *emacsDAP) prompted(prompt string, keys ...string) {
	e.t.Helper()
	e.promptedBy(prompt, fmt.Sprint(keys), func() { e.keys(keys...) })
}

// promptedBy does what send does (what says what) until the minibuffer
// asks prompt. Keys pressed while dap-breakpoint-add still runs (its first
// use in a session) were seen lost, one run in three under load, the name
// of a command typed after M-x among them: after a while without the
// prompt, C-g and again.
func (e *emacsDAP) promptedBy(prompt, what string, send func()) {
	e.t.Helper()
	rx := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(prompt) + `\s*\z`)
	var screen string
	for deadline := time.Now().Add(screenWait); time.Now().Before(deadline); {
		send()
		for again := time.Now().Add(20 * time.Second); time.Now().Before(again); time.Sleep(100 * time.Millisecond) {
			if screen = e.capture(false); rx.MatchString(screen) {
				return
			}
		}
		e.t.Logf("no prompt %q after %s; again:\n%s", prompt, what, screen)
		e.keys("C-g")
	}
	e.t.Fatalf("no prompt %q after %s:\n%s", prompt, what, screen)
}

// answer types a reply once the minibuffer asks prompt.
func (e *emacsDAP) answer(prompt, reply string) {
	e.t.Helper()
	e.waitFor(`(?m)^` + regexp.QuoteMeta(prompt) + `\s*\z`)
	e.enter(reply)
}

// gotoLine moves point to line n of the source.
func (e *emacsDAP) gotoLine(file string, n int) {
	e.t.Helper()
	e.prompted("Goto line:", "M-g", "g")
	e.enter(strconv.Itoa(n))
	e.at(file, n, "0")
}

// eval asks dap-eval for expr in the stopped frame and waits for its
// overlay to show want. Point goes to the line's end first: dap-mode's
// overlay code reads the sexp before point, which fails after a C line
// ending with "{".
func (e *emacsDAP) eval(expr, want string) {
	e.t.Helper()
	e.prompted("M-x", "C-e", "M-x")
	e.enter("dap-eval")
	e.answer("Eval:", expr)
	e.waitFor(`(?m)=> ` + regexp.QuoteMeta(want) + `\s*$`)
}

// TestDAPWithEmacs drives Emacs's dap-mode (Debian's elpa-dap-mode) over
// rewind dap in a headless Emacs in tmux, as a user does with M-x: a
// breakpoint and a conditional one set in the source, dap-debug of a
// recording (the first line of main), continue, next, step in and out,
// docs/dap.md's reverse continue, step back and goto commands (dap-mode has
// none of its own), dap-eval, the end of the recording and back, and info
// locals in dap-mode's REPL.
func TestDAPWithEmacs(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	e := startEmacsDAP(t, trace, srcPath("source/steps.c"))
	const f = "steps.c"

	e.gotoLine(f, 21)
	e.mx("dap-breakpoint-add")
	e.gotoLine(f, 6)
	e.mx("dap-breakpoint-add")
	// Asked again where the command's name was lost (promptedBy).
	e.promptedBy("Enter breakpoint condition:", "dap-breakpoint-condition", func() { e.mx("dap-breakpoint-condition") })
	e.enter("x == 3")
	e.mx("dap-debug")
	e.answer("Select configuration template:", "rewind-recording")
	e.line(f, 18) // the first line of main

	// Each command, the line it stops at and, where given, a value there.
	for _, step := range []struct {
		command     string
		line        int
		expr, value string
	}{
		{"dap-continue", 21, "i", "1"},
		{"dap-next", 19, "", ""},
		{"dap-next", 20, "", ""},
		{"dap-continue", 21, "sq", "4"},
		{"dap-continue", 6, "x", "3"}, // square's line 6 stops when x == 3 only
		{"rewind-dap-reverse-continue", 21, "i", "2"},
		{"rewind-dap-step-back", 20, "total", "1"},
		{"dap-step-in", 6, "x", "2"},
		{"dap-step-out", 20, "", ""},
	} {
		e.mx(step.command)
		e.line(f, step.line)
		if step.expr != "" {
			e.eval(step.expr, step.value)
		}
	}

	// Goto the next arrival at the line at point: after the loop.
	e.gotoLine(f, 23)
	e.mx("rewind-dap-goto-line")
	e.at(f, 23, "[1-9]\\d*") // past the column 0 that M-g g left
	e.eval("total", "14")

	// To the end of the recording (in libc's _exit, no source), and back
	// to the last hit of line 21: the session outlives the end.
	e.mx("dap-continue")
	e.waitFor(`No source code for`)
	e.mx("rewind-dap-reverse-continue")
	e.line(f, 21)
	e.eval("i", "3")

	// dap-mode's REPL is rewind's console.
	e.mx("dap-ui-repl")
	e.waitFor(`(?m)^>>\s*$`)
	e.enter("info locals")
	e.waitFor(`(?s)sq = 9\s+i = 3\s+total = 5`)
}

// TestDAPWithEmacsSignal: a recording that ends in SIGSEGV stops in
// Emacs at the faulting line, and dap-mode tells what the exception was
// (from exceptionInfo: it said "nil" before rewind answered it).
func TestDAPWithEmacsSignal(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	e := startEmacsDAP(t, trace, srcPath("source/corrupt.c"))
	e.mx("dap-debug")
	e.answer("Select configuration template:", "rewind-recording")
	e.line("corrupt.c", 30)
	e.mx("dap-continue")
	e.line("corrupt.c", 24)
	e.waitFor(`Exception has occurred: SIGSEGV\s+Program received signal SIGSEGV, Segmentation fault\.`)
}
