package e2e

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// liveRecord is a `rewind record` running in a process group of its own,
// as a shell runs a foreground job: a signal to the group is what the
// terminal sends on Ctrl-C.
type liveRecord struct {
	t      *testing.T
	cmd    *exec.Cmd
	out    *bufio.Reader
	stdout bytes.Buffer // the program's output read so far
	stderr bytes.Buffer
	code   int // once ended, rewind's status (-1 before)
}

// startRecord starts recording prog into trace, with stdin from stdin (nil:
// /dev/null).
func startRecord(t *testing.T, stdin io.Reader, trace, prog string, args ...string) *liveRecord {
	t.Helper()
	cmd := exec.Command(rewind(t), append([]string{"record", "-o", trace, "--", prog}, args...)...)
	cmd.Dir = filepath.Dir(trace)
	cmd.Stdin = stdin
	// On a timeout, SIGABRT makes rewind dump every goroutine.
	cmd.Env = append(os.Environ(), "GOTRACEBACK=all")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	lr := &liveRecord{t: t, cmd: cmd, out: bufio.NewReader(pipe), code: -1}
	cmd.Stderr = &lr.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if lr.code < 0 {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
	})
	return lr
}

// waitLine reads the program's output until a line equal to want.
func (lr *liveRecord) waitLine(want string) {
	lr.t.Helper()
	got := make(chan error, 1)
	go func() {
		for {
			line, err := lr.out.ReadString('\n')
			lr.stdout.WriteString(line)
			if err != nil {
				got <- err
				return
			}
			if strings.TrimSuffix(line, "\n") == want {
				got <- nil
				return
			}
		}
	}()
	select {
	case err := <-got:
		if err != nil {
			lr.t.Fatalf("the program ended before printing %q (%v)\noutput:\n%s\nstderr:\n%s", want, err, lr.stdout.String(), lr.stderr.String())
		}
	case <-time.After(cmdTimeout):
		lr.t.Fatalf("no %q from the program within %v\noutput:\n%s", want, cmdTimeout, lr.stdout.String())
	}
}

// exited reports whether rewind ends within d.
func (lr *liveRecord) exited(d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		// WNOWAIT: leave the status for cmd.Wait. With WNOHANG and no
		// exit to report, the kernel leaves the siginfo zero.
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, lr.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == nil && info.Signo == int32(unix.SIGCHLD) {
			return true
		}
	}
	return false
}

// signalGroup sends sig to the whole process group, as the terminal does.
func (lr *liveRecord) signalGroup(sig syscall.Signal) {
	if err := syscall.Kill(-lr.cmd.Process.Pid, sig); err != nil {
		lr.t.Fatal(err)
	}
}

// signalRewind sends sig to rewind alone.
func (lr *liveRecord) signalRewind(sig syscall.Signal) {
	if err := syscall.Kill(lr.cmd.Process.Pid, sig); err != nil {
		lr.t.Fatal(err)
	}
}

// wait waits for rewind to exit and returns its shell-style status.
func (lr *liveRecord) wait() int {
	lr.t.Helper()
	ended := make(chan error, 1)
	go func() {
		rest, _ := io.ReadAll(lr.out)
		lr.stdout.Write(rest)
		ended <- lr.cmd.Wait()
	}()
	var err error
	select {
	case err = <-ended:
	case <-time.After(cmdTimeout):
		// A goroutine dump says where rewind is stuck.
		syscall.Kill(lr.cmd.Process.Pid, syscall.SIGABRT)
		time.Sleep(time.Second)
		syscall.Kill(-lr.cmd.Process.Pid, syscall.SIGKILL)
		lr.t.Fatalf("rewind record did not end within %v after its stop\nstderr:\n%s", cmdTimeout, lr.stderr.String())
	}
	ws := lr.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err != nil && !ws.Signaled() && ws.ExitStatus() == 0 {
		lr.t.Fatalf("rewind record: %v", err)
	}
	lr.code = ws.ExitStatus()
	if ws.Signaled() {
		lr.code = 128 + int(ws.Signal())
	}
	return lr.code
}

// TestInterrupts: Ctrl-C reaches the program as it would without rewind
// (its handler runs, and the recording goes on); a second one, or SIGTERM,
// ends the recording with an end event; every such recording replays to its
// end, in --check and in batch mode.
func TestInterrupts(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "sigint.c")
	for _, c := range []struct {
		name string
		args []string
		// stdin keeps the program's stdin open (a pipe nobody writes).
		stop     func(lr *liveRecord)
		code     int
		handled  int    // times the program's handler ran (-1: at least once)
		finished bool   // the program ended by itself ("done after N")
		end      string // the end of the recording, when rewind stopped it
	}{
		{
			name: "ctrl-c handled",
			args: []string{"1"},
			stop: func(lr *liveRecord) {
				lr.signalGroup(syscall.SIGINT)
				lr.waitLine("done after 1")
			},
			handled: 1, finished: true,
		},
		{
			name: "ctrl-c to rewind alone is passed on",
			args: []string{"1"},
			stop: func(lr *liveRecord) {
				lr.signalRewind(syscall.SIGINT)
				lr.waitLine("done after 1")
			},
			handled: 1, finished: true,
		},
		{
			name: "second ctrl-c ends the recording",
			stop: func(lr *liveRecord) {
				lr.signalGroup(syscall.SIGINT)
				lr.waitLine("handler: SIGINT")
				// Two SIGINTs that reach rewind before it handles the
				// first are one (standard signals do not queue): press
				// again until it ends, as a user would.
				// Bounded: a rewind that never ends fails in wait, with
				// its goroutines dumped.
				lr.signalGroup(syscall.SIGINT)
				for end := time.Now().Add(cmdTimeout); !lr.exited(300*time.Millisecond) && time.Now().Before(end); {
					lr.signalGroup(syscall.SIGINT)
				}
			},
			code: 130, handled: -1, end: "interrupted (SIGINT to rewind twice)",
		},
		{
			name: "sigterm ends the recording",
			stop: func(lr *liveRecord) { lr.signalRewind(syscall.SIGTERM) },
			code: 143, end: "interrupted (SIGTERM to rewind)",
		},
		{
			name: "sighup ends the recording",
			stop: func(lr *liveRecord) { lr.signalRewind(syscall.SIGHUP) },
			code: 129, end: "interrupted (SIGHUP to rewind)",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			trace := filepath.Join(t.TempDir(), "t.rwd")
			lr := startRecord(t, nil, trace, prog, c.args...)
			lr.waitLine("ready")
			c.stop(lr)
			code := lr.wait()
			if code != c.code {
				t.Fatalf("rewind record exited %d, want %d\nstderr:\n%s", code, c.code, lr.stderr.String())
			}
			if n := strings.Count(lr.stdout.String(), "handler: SIGINT\n"); n != c.handled && (c.handled >= 0 || n == 0) {
				t.Errorf("the handler ran %d times, want %d\noutput:\n%s", n, c.handled, lr.stdout.String())
			}
			summary := regexp.MustCompile(`(?m)^rewind: recorded (\d+) events to t\.rwd( \(stopped by SIG[A-Z]+; the program was killed\))?$`)
			m := summary.FindStringSubmatch(lr.stderr.String())
			if m == nil || (m[2] != "") != (c.end != "") {
				t.Fatalf("record's stderr lacks the right summary line:\n%s", lr.stderr.String())
			}

			// The trace is complete (not partial) and replays to its end.
			r := run(t, runOpts{}, rewind(t), "replay", "--check", trace)
			if r.Code != 0 || !strings.Contains(string(r.Stderr), "replay OK: "+m[1]+" events") {
				t.Fatalf("replay --check exited %d\nstderr:\n%s", r.Code, r.Stderr)
			}
			if !bytes.Equal(r.Stdout, lr.stdout.Bytes()) {
				t.Errorf("replay re-emitted %q, the program printed %q", r.Stdout, lr.stdout.String())
			}
			ev := run(t, runOpts{}, rewind(t), "events", trace)
			last, _ := lastLine(ev.Stdout)
			if c.end != "" {
				if !strings.HasSuffix(last, "+++ end of the recording: "+c.end+" +++") {
					t.Errorf("last event %q, want the end of the recording: %s", last, c.end)
				}
				b := run(t, runOpts{}, rewind(t), "replay", "--batch", "-ex", "continue", "-ex", "bt", trace)
				if b.Code != 0 || !strings.Contains(string(b.Stdout), "End of the recording") || !strings.Contains(string(b.Stdout), "in main (") {
					t.Errorf("batch continue on an interrupted recording exited %d:\n%s%s", b.Code, b.Stdout, b.Stderr)
				}
			} else if !strings.Contains(last, "+++ exited with status 0 +++") {
				t.Errorf("last event %q, want the program's exit", last)
			}
			if c.finished != strings.Contains(lr.stdout.String(), "done after") {
				t.Errorf("program output %q: finished=%v expected", lr.stdout.String(), c.finished)
			}
		})
	}
}

// TestInterruptBlockedProgram: SIGTERM reaches rewind while the program
// sleeps in a read that never returns; the recording still ends at once.
func TestInterruptBlockedProgram(t *testing.T) {
	t.Parallel()
	cat := need(t, "cat")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	trace := filepath.Join(t.TempDir(), "t.rwd")
	lr := startRecord(t, pr, trace, cat)
	pr.Close()
	pw.Write([]byte("ready\n"))
	lr.waitLine("ready")
	lr.signalRewind(syscall.SIGTERM)
	if code := lr.wait(); code != 143 {
		t.Fatalf("rewind record exited %d, want 143\nstderr:\n%s", code, lr.stderr.String())
	}
	r := run(t, runOpts{}, rewind(t), "replay", "--check", trace)
	if r.Code != 0 || string(r.Stdout) != "ready\n" {
		t.Fatalf("replay --check exited %d, stdout %q\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestKillRecorder: kill -9 of rewind loses at most the last second: a
// program that printed its ticks and then sleeps has every tick in the
// .partial trace, which replays and debugs up to its last event. The
// program dies with rewind (PTRACE_O_EXITKILL), as under rr.
func TestKillRecorder(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "ticks.c")
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.rwd")
	lr := startRecord(t, nil, trace, prog, "5")
	lr.waitLine("tick 5")
	// The program now sleeps without a system call to come: only the
	// recorder's periodic push can bring its last events to the file.
	var partial string
	deadline := time.Now().Add(cmdTimeout)
	for {
		matches, _ := filepath.Glob(filepath.Join(dir, "*.partial"))
		if len(matches) == 1 {
			partial = matches[0]
			r := run(t, runOpts{}, rewind(t), "events", partial)
			if strings.Count(string(r.Stdout), "write(1, \"tick ") == 5 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the .partial trace never held the 5 ticks (files %v)", matches)
		}
		time.Sleep(200 * time.Millisecond)
	}
	pid := lr.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := lr.wait(); code != 137 {
		t.Fatalf("rewind exited %d after kill -9", code)
	}
	// The program went with it: nothing is left in rewind's process group.
	for end := time.Now().Add(cmdTimeout); syscall.Kill(-pid, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the recorded program outlived rewind's kill -9")
		}
	}

	r := run(t, runOpts{}, rewind(t), "replay", "--check", partial)
	checkNoPanic(t, "replay --check of a .partial", r.Stdout, r.Stderr)
	if got := strings.Count(string(r.Stdout), "tick "); got != 5 || !strings.Contains(string(r.Stderr), "replay OK") {
		t.Fatalf("replay --check of the .partial re-emitted %d ticks (exit %d)\nstdout:\n%s\nstderr:\n%s", got, r.Code, r.Stdout, r.Stderr)
	}
	b := run(t, runOpts{}, rewind(t), "replay", "--batch", "-ex", "continue", "-ex", "bt", partial)
	if !strings.Contains(string(b.Stdout), "End of the recording") {
		t.Fatalf("batch continue on a .partial:\n%s%s", b.Stdout, b.Stderr)
	}
	// At the end, the program is where it was: main printed its last tick
	// (i = 5) and sleeps.
	m := regexp.MustCompile(`(?m)^#(\d+) .* in main \(`).FindSubmatch(b.Stdout)
	if m == nil {
		t.Fatalf("no main in the backtrace at the end of the .partial:\n%s", b.Stdout)
	}
	b = run(t, runOpts{}, rewind(t), "replay", "--batch", "-ex", "continue", "-ex", "frame "+string(m[1]), "-ex", "print i", partial)
	if !regexp.MustCompile(`(?m)^\$1 = 5$`).Match(b.Stdout) {
		t.Errorf("at the end of the .partial, i is not 5:\n%s", b.Stdout)
	}
}

// TestIgnoredSignals: a program started with SIGINT ignored (nohup, a
// shell's background job) is replayed with SIGINT ignored too, from
// wherever the replay runs: shells and language runtimes ask, and their
// answers are in the recording.
func TestIgnoredSignals(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "sigint.c")
	for _, c := range []struct {
		name, trap, want string
	}{
		{"ignored", `trap "" INT; `, "SIGINT at start: ignored\n"},
		{"default", "", "SIGINT at start: default\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			trace := filepath.Join(t.TempDir(), "t.rwd")
			r := run(t, runOpts{}, "sh", "-c", c.trap+`exec "$0" record -o "$1" "$2" check`, rewind(t), trace, prog)
			if r.Code != 0 || string(r.Stdout) != c.want {
				t.Fatalf("record exited %d, printed %q, want %q\nstderr:\n%s", r.Code, r.Stdout, c.want, r.Stderr)
			}
			// Replayed from a shell that ignores SIGINT when the
			// recording did not, and the other way round.
			other := `trap "" INT; `
			if c.trap != "" {
				other = ""
			}
			r = run(t, runOpts{}, "sh", "-c", other+`exec "$0" replay --check "$1"`, rewind(t), trace)
			if r.Code != 0 || string(r.Stdout) != c.want {
				t.Fatalf("replay --check exited %d, printed %q, want %q\nstderr:\n%s", r.Code, r.Stdout, c.want, r.Stderr)
			}
		})
	}
}
