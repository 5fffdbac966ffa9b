package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The terminal UI, driven for real in tmux: commands at the prompt, keys,
// resizes, NO_COLOR and colour profiles, quitting.

// tmuxSession runs rewind in a detached tmux session of its own server.
type tmuxSession struct {
	t    *testing.T
	sock string
	dir  string // the working directory rewind runs in
}

func newTmux(t *testing.T, w, h int, env []string, args ...string) *tmuxSession {
	t.Helper()
	need(t, "tmux")
	// What the environment of the test could say about colours or the
	// configuration goes first; each test sets what it needs after.
	env = append([]string{"-u", "NO_COLOR", "-u", "CLICOLOR", "-u", "CLICOLOR_FORCE", "-u", "XDG_CONFIG_HOME"}, env...)
	return startTmux(t, w, h, strings.Join(append(append([]string{"env"}, env...), append([]string{rewind(t)}, args...)...), " "))
}

// startTmux runs a shell command line in a detached tmux session of its
// own server, in a directory of its own.
func startTmux(t *testing.T, w, h int, cmdline string) *tmuxSession {
	t.Helper()
	s := &tmuxSession{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock"), dir: t.TempDir()}
	s.run("-f", "/dev/null", "new-session", "-d", "-s", "rw", "-c", s.dir, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), cmdline)
	s.run("set-option", "-t", "rw", "remain-on-exit", "on")
	t.Cleanup(func() { exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	return s
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *tmuxSession) capture(escapes bool) string {
	args := []string{"capture-pane", "-p", "-t", "rw"}
	if escapes {
		args = append(args, "-e")
	}
	return s.run(args...)
}

// keys sends keys (tmux key names or literal text with -l).
func (s *tmuxSession) keys(k ...string) { s.run(append([]string{"send-keys", "-t", "rw"}, k...)...) }

// typeLine types a prompt command and presses Enter. It types the line
// once the prompt is open (the status bar starts with ":"): typed at once,
// ":" and the text can reach the program in one read, as one key event.
func (s *tmuxSession) typeLine(line string) {
	s.press(":", `(?m)^:.*\n*\z`)
	s.enter(line)
}

// enter types text as it is (no key names) and presses Enter.
func (s *tmuxSession) enter(text string) {
	s.keys("-l", text)
	s.keys("Enter")
}

// press sends one key and waits for the screen it leads to, matching re.
func (s *tmuxSession) press(key, re string) string {
	s.t.Helper()
	s.keys(key)
	return s.waitFor(re)
}

// command types a prompt command and waits for the screen matching re.
func (s *tmuxSession) command(line, re string) string {
	s.t.Helper()
	s.typeLine(line)
	return s.waitFor(re)
}

// quit presses q and waits until the program has left the pane.
func (s *tmuxSession) quit() { s.press("q", `Pane is dead|^\s*$`) }

// screenWait bounds how long a screen may take to appear: only a guard
// against a hang, generous because the test suite runs many recordings and
// replays at once, each bound to one CPU, on machines with two cores.
const screenWait = 2 * time.Minute

// waitFor waits until the screen matches re.
func (s *tmuxSession) waitFor(re string) string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(screenWait)
	var screen string
	for time.Now().Before(deadline) {
		screen = s.capture(false)
		if rx.MatchString(screen) {
			return screen
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("screen never matched %q:\n%s", re, screen)
	return ""
}

func TestTUIInTmux(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	s := newTmux(t, 160, 48, []string{"HOME=" + t.TempDir()}, "replay", trace)
	s.waitFor(`#\d+/\d+ .*thread`)
	s.command("break corrupt.c:16", `Breakpoint 1 at 0x[0-9a-f]+: file corrupt.c, line 16`)
	s.command("continue", `Breakpoint 1, set_name`)
	screen := s.command("continue", `(?s)Breakpoint 1, set_name.*Breakpoint 1, set_name`)
	if !strings.Contains(screen, "n->name[i] = src[i];") {
		t.Errorf("the source pane does not show line 16:\n%s", screen)
	}
	s.command("reverse-continue", `(?s)reverse-continue.*Breakpoint 1, set_name`)
	// Keys: next, then reverse-next back to where we were.
	s.press("n", `step in set_name at corrupt.c:15`)
	s.press("N", `breakpoint in set_name at corrupt.c:16`)
	// step and reverse-step.
	s.press("s", `step in set_name at corrupt.c:15`)
	s.press("S", `breakpoint in set_name at corrupt.c:16`)
	// Resizes: 80x24 stays usable, 30x8 is too small.
	s.run("resize-window", "-t", "rw", "-x", "80", "-y", "24")
	s.waitFor(`Source`)
	if screen := s.capture(false); len(strings.Split(strings.TrimRight(screen, "\n"), "\n")) > 24 {
		t.Errorf("screen taller than 24 lines at 80x24:\n%s", screen)
	}
	s.run("resize-window", "-t", "rw", "-x", "30", "-y", "8")
	s.waitFor(`too small`)
	s.run("resize-window", "-t", "rw", "-x", "100", "-y", "30")
	s.waitFor(`Source`)
	s.quit()
}

// colourSGR matches an SGR sequence that sets a colour (30-38, 40-48,
// 90-97, 100-107); 39 and 49 only return to the terminal's defaults.
var colourSGR = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m`)

// deepSGR matches a colour set from the 256-colour (38;5/48;5) or the
// truecolor (38;2/48;2) range.
var (
	sgr256  = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?[34]8;5;`)
	sgrTrue = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?[34]8;2;`)
	// sgrBg sets a background colour of any range.
	sgrBg = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(4[0-7]|10[0-7]|48;5;\d+|48;2;[\d;]+)m`)
)

// currentLineBg is the background the Source pane gives the current line
// (24, at the crash): the last one set before its text.
func currentLineBg(raw string) string {
	for _, l := range strings.Split(raw, "\n") {
		if i := strings.Index(l, "total += n->value"); i >= 0 && strings.Contains(l, "=> 24") {
			m := sgrBg.FindAllStringSubmatch(l[:i], -1)
			if len(m) == 0 {
				return ""
			}
			return m[len(m)-1][1]
		}
	}
	return ""
}

// TestTUIColours: the screen at a crash uses only what the terminal has:
// nothing with NO_COLOR or TERM=dumb, the 16 basic colours on a plain
// xterm (with the current line still on a background of its own), at most
// 256 on xterm-256color. TMUX and COLORTERM are unset so that only TERM
// tells the program what the terminal can do.
func TestTUIColours(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	tests := []struct {
		name   string
		env    []string
		banned []*regexp.Regexp
		// currentBg matches the current line's background; "" is none.
		currentBg string
	}{
		{"NO_COLOR", []string{"NO_COLOR=1", "TERM=xterm-256color"}, []*regexp.Regexp{colourSGR}, "^$"},
		{"dumb", []string{"TERM=dumb"}, []*regexp.Regexp{colourSGR}, "^$"},
		// Not black (40): that is the terminal's own background.
		{"16 colours", []string{"TERM=xterm"}, []*regexp.Regexp{sgr256, sgrTrue}, `^(4[1-7]|10[0-7])$`},
		{"256 colours", []string{"TERM=xterm-256color"}, []*regexp.Regexp{sgrTrue}, `^48;5;\d+$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := append([]string{"-u", "TMUX", "-u", "COLORTERM", "HOME=" + t.TempDir()}, tt.env...)
			s := newTmux(t, 100, 30, env, "replay", trace)
			s.waitFor(`#\d+/\d+ .*thread`)
			s.command("continue", `SIGSEGV`)
			raw := s.capture(true)
			for _, re := range tt.banned {
				if re.MatchString(raw) {
					t.Errorf("escape beyond the terminal: %q", re.FindString(raw))
				}
			}
			if bg := currentLineBg(raw); !regexp.MustCompile(tt.currentBg).MatchString(bg) {
				t.Errorf("the current line's background is %q, want %s:\n%q", bg, tt.currentBg, raw)
			}
			s.keys("q")
		})
	}
}

func TestTUIConfigErrors(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "rewind"), 0o755)
	cases := map[string]string{
		"theme = \"purple\"\n":          `unknown theme "purple"`,
		"[bindings]\nstep = [\"n\"]\n":  `bound to both`,
		"[bindings]\nstepp = [\"x\"]\n": `unknown key action "stepp"`,
		"keys = \"nano\"\n":             `unknown key preset "nano"`,
		"colour = 1\n":                  `unknown setting colour`,
		"theme = \n":                    `config `,
		"layout = \"source | sauce\"\n": `unknown pane "sauce"`,
		"layout = \"source*0\"\n":       `must be a number from 1 to 99`,
	}
	for cfg, want := range cases {
		os.WriteFile(filepath.Join(home, "rewind", "config.toml"), []byte(cfg), 0o644)
		cmd := exec.Command(rewind(t), "replay", trace)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+home)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) || strings.Count(strings.TrimSpace(string(out)), "\n") > 0 {
			t.Errorf("config %q: %v %q, want a one-line error with %q", cfg, err, out, want)
		}
	}
}

// TestTUILayout: at 160x48 the first screen shows Memory and Watch beside
// Source, Stack, Locals, Registers, Timeline and Console; at 80x24 the tab
// row names every pane with its key, and a pane's key brings it on
// screen; the layout follows resizes and the config's layout setting.
func TestTUILayout(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	s := newTmux(t, 160, 48, []string{"HOME=" + t.TempDir()}, "replay", trace)
	s.waitFor(`#\d+/\d+ .*thread`)
	screen := s.waitFor(`no watchpoints: w on a local, or :watch EXPR`)
	for _, pane := range []string{"Source", "Stack", "Locals", "Registers", "Memory", "Timeline", "Watch", "Console"} {
		if !regexp.MustCompile(`[─━═] ` + pane + `[ :]`).MatchString(screen) {
			t.Errorf("160x48: no %s pane on screen:\n%s", pane, screen)
		}
	}
	// The tab row, in full: every pane, its key first.
	tabs := `(?m)^1 Source +2 Stack +3 Locals +4 Registers +5 Memory +6 Timeline +7 Watch +8 Console +9 Disassembly +0 Threads +B Breakpoints +L LLM`
	if !regexp.MustCompile(tabs).MatchString(screen) {
		t.Errorf("160x48: the tab row does not name every pane:\n%s", screen)
	}
	s.run("resize-window", "-t", "rw", "-x", "80", "-y", "24")
	screen = s.waitFor(`(?m)^1 Src 2 Stk 3 Loc 4 Regs 5 Mem 6 Time 7 Watch 8 Cons 9 Asm 0 Thr B Brk L LLM *$`)
	if regexp.MustCompile(`[─━═] (Memory|Watch) `).MatchString(screen) {
		t.Errorf("80x24 shows Memory or Watch besides Source, Stack, Locals and Console:\n%s", screen)
	}
	s.press("5", `[━═] Memory [━═]`) // focused: a thick frame (double without colour)
	s.press("7", `[━═] Watch [━═](?s:.*)no watchpoints`)
	s.run("resize-window", "-t", "rw", "-x", "220", "-y", "56")
	s.waitFor(`[─━═] Disassembly [─━═](?s:.*)[─━═] Memory [─━═]`)
	s.keys("q")

	// The config's layout.
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "rewind"), 0o755)
	os.WriteFile(filepath.Join(cfg, "rewind", "config.toml"), []byte("layout = \"(source | memory) / watch\"\n"), 0o644)
	c := newTmux(t, 100, 30, []string{"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + cfg}, "replay", trace)
	screen = c.waitFor(`[─━═] Memory [─━═](?s:.*)no watchpoints`)
	if strings.Contains(screen, "─ Stack ─") || strings.Contains(screen, "─ Console ─") {
		t.Errorf("the config's layout shows other panes:\n%s", screen)
	}
	c.keys("q")
}

// TestTUIRecordThenDebug: `rewind PROG` records, then opens the UI at the
// crash, with the loader's events folded in the Timeline all the same;
// `rewind demo` does it with the bundled program and a hint.
func TestTUIRecordThenDebug(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "source/corrupt.c")
	s := newTmux(t, 160, 48, []string{"HOME=" + t.TempDir()}, prog)
	screen := s.waitFor(`signal SIGSEGV in sum at corrupt.c:24`)
	if !strings.Contains(screen, "before main") {
		t.Errorf("opened at the crash, the Timeline does not fold the loader's events:\n%s", screen)
	}
	s.keys("q")
	if _, err := os.Stat(filepath.Join(s.dir, "corrupt-1.rwd")); err != nil {
		t.Errorf("the recording was not kept: %v", err)
	}
	d := newTmux(t, 120, 36, []string{"HOME=" + t.TempDir()}, "demo")
	d.waitFor(`Welcome to the rewind demo`)
	d.waitFor(`signal SIGSEGV in sum`)
	d.keys("q")
}

// TestTUIInterruptedRecording: the UI replays a recording stopped by a
// second Ctrl-C to its end and says why it ends there; q leaves no process
// behind (the replayed program runs in the recording's directory).
func TestTUIInterruptedRecording(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "sigint.c")
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.rwd")
	lr := startRecord(t, nil, trace, prog)
	lr.waitLine("ready")
	for lr.signalGroup(syscall.SIGINT); !lr.exited(300 * time.Millisecond); {
		lr.signalGroup(syscall.SIGINT)
	}
	if code := lr.wait(); code != 130 {
		t.Fatalf("rewind record exited %d, want 130\nstderr:\n%s", code, lr.stderr.String())
	}
	s := newTmux(t, 160, 48, []string{"HOME=" + t.TempDir()}, "replay", trace)
	s.waitFor(`#\d+/\d+ .*thread`)
	if n := processesIn(t, dir); n == 0 {
		t.Fatalf("no replaying process runs in the recording's directory")
	}
	s.press("c", `End of the recording: the recording was interrupted \(SIGINT`)
	s.quit()
	for end := time.Now().Add(30 * time.Second); processesIn(t, dir) > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("a process still runs in the recording's directory after q")
		}
	}
}

// processesIn counts the processes whose working directory is dir.
func processesIn(t *testing.T, dir string) int {
	t.Helper()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range procs {
		if cwd, err := os.Readlink("/proc/" + p.Name() + "/cwd"); err == nil && cwd == dir {
			n++
		}
	}
	return n
}
