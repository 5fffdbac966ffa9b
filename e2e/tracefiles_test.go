package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/internal/testprog"
)

// Trace files: how rewind record takes a name and what it does when the
// trace cannot be written; what every entry point says of a trace that is
// unfinished or damaged, and its exit status.

// exitTraceFailed is rewind record's status when the trace is not complete.
const exitTraceFailed = 125

// TestConcurrentRecordings runs eight recordings of one program in one
// directory at once, without -o: each gets a name of its own (PROG-N.rwd),
// reports it, and leaves a complete trace that replays.
func TestConcurrentRecordings(t *testing.T) {
	t.Parallel()
	bin := rewind(t)
	prog := buildC(t, "exit3.c")
	dir := t.TempDir()
	const n = 8
	results := make([]result, n)
	t.Run("record", func(t *testing.T) {
		for i := range n {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				results[i] = run(t, runOpts{Dir: dir}, bin, "record", prog)
			})
		}
	})
	names := map[string]bool{}
	for _, r := range results {
		if r.Code != 3 {
			t.Errorf("record exited %d, want the program's 3\nstderr:\n%s", r.Code, tail(r.Stderr))
			continue
		}
		checkRecorded(t, r.Stderr, "", dir)
		last, _ := lastLine(r.Stderr)
		name := recordedRE.FindStringSubmatch(last)[2]
		if names[name] {
			t.Errorf("two recordings report %s", name)
		}
		names[name] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	traceName := regexp.MustCompile(`^exit3-\d+\.rwd$`)
	for _, e := range entries {
		if !traceName.MatchString(e.Name()) || !names[e.Name()] {
			t.Errorf("the directory holds %s, which no recording reported", e.Name())
		}
	}
	if len(entries) != n || len(names) != n {
		t.Fatalf("%d recordings reported %d names, the directory holds %d files", n, len(names), len(entries))
	}
	for name := range names {
		r := run(t, runOpts{Dir: dir}, bin, "replay", "--check", name)
		if r.Code != 0 || !replayOKRE.Match(r.Stderr) {
			t.Errorf("replay --check %s exited %d\nstderr:\n%s", name, r.Code, tail(r.Stderr))
		}
	}
}

// smallDisk mounts a tmpfs of the given size (and options) on a new
// directory for the test, or skips the test where mounting is not
// permitted.
func smallDisk(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs to make a small or read-only disk (it needs root): %v: %s", err, out)
	}
	// Cleanups run last-in first-out: unmounted before TempDir removes it.
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// unwritableDir returns a directory the recording cannot write to: one
// without write permission, or, for root whom permissions do not stop, a
// read-only file system.
func unwritableDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() == 0 {
		return smallDisk(t, "ro,size=64k")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	return dir
}

// fillDisk writes to a file in dir until the file system is full.
func fillDisk(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return
		}
	}
}

// TestRecordTraceWriteFailures records where the trace cannot be written:
// one line on stderr and status 125, even though the program succeeds.
// What can be seen before the program starts stops it from running; a
// failure during the recording kills the program and keeps what was
// written in TRACE.NNNN.partial, a readable trace.
func TestRecordTraceWriteFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// setup returns the working directory and the arguments of
		// record before the program.
		setup func(t *testing.T) (dir string, args []string)
		// during: the failure comes once the program runs (it would run
		// forever if not killed).
		during bool
		why    string // in the message
	}{
		{"-o names a directory", func(t *testing.T) (string, []string) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			return dir, []string{"-o", "sub"}
		}, false, "it is a directory"},
		{"unwritable directory", func(t *testing.T) (string, []string) {
			return unwritableDir(t), nil
		}, false, ""},
		{"unwritable directory with -o", func(t *testing.T) (string, []string) {
			return t.TempDir(), []string{"-o", filepath.Join(unwritableDir(t), "t.rwd")}
		}, false, ""},
		{"full disk", func(t *testing.T) (string, []string) {
			dir := smallDisk(t, "size=64k")
			fillDisk(t, dir)
			return dir, nil
		}, false, "no space left on device"},
		{"disk full during the recording", func(t *testing.T) (string, []string) {
			return smallDisk(t, "size=64k"), []string{"-o", "t.rwd"}
		}, true, "no space left on device"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := rewind(t)
			prog, progArgs := buildC(t, "exit3.c"), []string(nil)
			if c.during {
				prog, progArgs = buildC(t, "bulk.c"), []string{"forever"}
			}
			dir, args := c.setup(t)
			before := dirNames(t, dir)
			args = append(append(append([]string{"record"}, args...), "--", prog), progArgs...)
			r := run(t, runOpts{Dir: dir}, bin, args...)
			checkNoPanic(t, "rewind record", r.Stdout, r.Stderr)
			if r.Code != exitTraceFailed {
				t.Errorf("exit status %d, want %d", r.Code, exitTraceFailed)
			}
			ls := lines(r.Stderr)
			if len(ls) != 1 || !strings.HasPrefix(ls[0], "rewind: ") || !strings.Contains(ls[0], "cannot write the trace") ||
				!strings.Contains(ls[0], c.why) {
				t.Fatalf("stderr is %q, want one line saying the trace cannot be written (%s)", r.Stderr, c.why)
			}
			after := dirNames(t, dir)
			if !c.during {
				if len(r.Stdout) != 0 {
					t.Errorf("the program ran: its output is %q", r.Stdout)
				}
				if strings.Join(after, " ") != strings.Join(before, " ") {
					t.Errorf("the directory held %q, now %q", before, after)
				}
				return
			}
			// The program was killed (it reads forever), and what was
			// written is a readable trace that says it did not finish.
			var partial string
			for _, n := range after {
				if regexp.MustCompile(`^t\.rwd\.\d+\.partial$`).MatchString(n) {
					partial = n
				}
			}
			if partial == "" || len(after) != 1 || !strings.Contains(ls[0], partial) {
				t.Fatalf("the directory holds %q, want the .partial file the message names", after)
			}
			info := run(t, runOpts{Dir: dir}, bin, "info", partial)
			if info.Code != exitPartialTrace || !regexp.MustCompile(`^rewind: the recording did not finish.*; \d+ events usable\n$`).Match(info.Stderr) {
				t.Errorf("info on the .partial file exited %d, stderr %q", info.Code, info.Stderr)
			}
		})
	}
}

// TestKilledRecording kills rewind itself during a recording (as a crash
// or an OOM kill would): the trace's name stays reserved by an empty file,
// which no command mistakes for a trace (each names the .partial file), and
// the .partial file is a trace readable up to its last complete frame.
func TestKilledRecording(t *testing.T) {
	t.Parallel()
	bin := rewind(t)
	prog := buildC(t, "bulk.c")
	dir := t.TempDir()
	cmd := exec.Command(bin, "record", prog, "forever")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
	}()
	// Wait until the .partial file holds events: the header and the
	// libraries are far smaller than this.
	partialRE := regexp.MustCompile(`^bulk-1\.rwd\.\d+\.partial$`)
	var partial string
	for deadline := time.Now().Add(cmdTimeout); partial == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, n := range dirNames(t, dir) {
			if st, err := os.Stat(filepath.Join(dir, n)); err == nil && partialRE.MatchString(n) && st.Size() > 4<<20 {
				partial = n
			}
		}
	}
	if partial == "" {
		t.Fatalf("no .partial file grew in %s: %q", dir, dirNames(t, dir))
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	killed = true

	for _, args := range [][]string{{"info"}, {"events"}, {"replay", "--check"}, {"replay", "--batch", "-ex", "info threads"}, {"mcp"}} {
		r := run(t, runOpts{Dir: dir}, bin, append(args, "bulk-1.rwd")...)
		want := "bulk-1.rwd is empty: the name reserved by a recording that has not finished (still running, or killed); what it recorded is in " + partial
		if ls := lines(r.Stderr); r.Code != 1 || len(ls) != 1 || !strings.Contains(ls[0], want) {
			t.Errorf("%s on the reserved name exited %d, stderr %q; want 1 and one line saying %q", strings.Join(args, " "), r.Code, r.Stderr, want)
		}
	}
	r := run(t, runOpts{Dir: dir}, bin, "replay", "--check", partial)
	checkNoPanic(t, "replay --check", r.Stdout, r.Stderr)
	msg := regexp.MustCompile(`^rewind: the recording did not finish(?: \(the trace has no footer\)|: the file ends inside frame \d+ \(events from #\d+\)); (\d+) events usable\n`)
	m := msg.FindSubmatch(r.Stderr)
	if m == nil || r.Code != exitPartialTrace {
		t.Fatalf("replay --check of the .partial file exited %d\nstderr:\n%s", r.Code, tail(r.Stderr))
	}
	if last, _ := lastLine(r.Stderr); last != "replay OK: "+string(m[1])+" events" {
		t.Errorf("replay --check of the .partial file ends with %q, want replay OK: %s events", last, m[1])
	}
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// exitPartialTrace is the status of info, events and replay --check on an
// unfinished or damaged trace.
const exitPartialTrace = 2

// mcpOpen starts `rewind mcp trace`, initializes a session and calls
// get_stack. It returns the server's instructions and the call's text ("" if
// the server did not answer), and how the server ended once its input was
// closed.
func mcpOpen(t *testing.T, trace string) (instructions, first string, res result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, rewind(t), "mcp", trace)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, stdout := testprog.StartPiped(t, cmd)
	in := bufio.NewReader(stdout)
	var out []byte
	// call sends a request and returns the result of its answer.
	call := func(id int, method string, params any) map[string]any {
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := stdin.Write(append(msg, '\n')); err != nil {
			return nil
		}
		line, err := in.ReadBytes('\n')
		out = append(out, line...)
		var answer struct {
			Result map[string]any `json:"result"`
		}
		if err != nil || json.Unmarshal(line, &answer) != nil {
			return nil
		}
		return answer.Result
	}
	hello := call(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2e", "version": "1"}})
	if hello != nil {
		instructions, _ = hello["instructions"].(string)
		stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
		if stack := call(2, "tools/call", map[string]any{"name": "get_stack", "arguments": map[string]any{}}); stack != nil {
			if content, _ := stack["content"].([]any); len(content) > 0 {
				if c, _ := content[0].(map[string]any); c != nil {
					first, _ = c["text"].(string)
				}
			}
		}
	}
	stdin.Close()
	rest, _ := io.ReadAll(in)
	err := cmd.Wait()
	res = result{Stdout: append(out, rest...), Stderr: []byte(stderr.String())}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("rewind mcp %s: %v", trace, err)
	}
	return instructions, first, res
}

// recordedBytes records testdata's C program src, which must exit 0,
// checks the recording and returns the trace's bytes and its events: the
// tests that cut or damage a real trace start from it.
func recordedBytes(t *testing.T, src string) (data []byte, events int) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "full.rwd")
	rec := mustRecord(t, trace, buildC(t, src))
	events, _ = checkRecorded(t, rec.Stderr, trace, "")
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	return data, events
}

// TestIncompleteTraces cuts a real trace at several points and damages one
// of its frames, and checks what each entry point says on open: the reason,
// the frame at fault and the events it held, the count of usable events.
// info, events and replay --check do their work on the usable events and
// exit 2; batch mode, MCP and the UI open with a notice; a trace with no
// usable event cannot be replayed (exit 1).
func TestIncompleteTraces(t *testing.T) {
	t.Parallel()
	bin := rewind(t)
	data, total := recordedBytes(t, "bulk.c")
	frames := testprog.Frames(data)
	var eventFrames []int
	for i, f := range frames {
		if f.Type == 2 {
			eventFrames = append(eventFrames, i)
		}
	}
	if len(eventFrames) < 4 || frames[len(frames)-1].Type != 4 {
		t.Fatalf("the trace of bulk.c has %d events frames (want several) and ends with a frame of type %d", len(eventFrames), frames[len(frames)-1].Type)
	}
	mid := eventFrames[len(eventFrames)/2] // a middle events frame
	lastFrame := len(frames) - 2           // the last before the footer

	// cutAt describes a cut of the trace at off: the message it must give.
	cutAt := func(off int64) string {
		for k, f := range frames {
			switch {
			case off == f.Off && k > 0:
				return `the recording did not finish \(the trace has no footer\); (?P<usable>\d+) events usable`
			case off >= f.Off+f.Len:
				continue
			case k == 0:
				return `the file ends inside its header`
			case f.Type == 3:
				return fmt.Sprintf(`the recording did not finish: the file ends inside frame %d \(blob \d+\); (?P<usable>\d+) events usable`, k)
			case f.Type == 4:
				return fmt.Sprintf(`the recording did not finish: the file ends inside the footer \(frame %d\); (?P<usable>\d+) events usable`, k)
			}
			return fmt.Sprintf(`the recording did not finish: the file ends inside frame %d \(events from #(?P<first>\d+)\); (?P<usable>\d+) events usable`, k)
		}
		t.Fatalf("no frame at offset %d", off)
		return ""
	}
	size := int64(len(data))
	damaged := append([]byte(nil), data...)
	damaged[frames[mid].Off+frames[mid].Len/2] ^= 0x55
	// The largest blob is a library the program maps: replay cannot go
	// past the event that maps it.
	blob := -1
	for i, f := range frames {
		if f.Type == 3 && (blob < 0 || f.Len > frames[blob].Len) {
			blob = i
		}
	}
	badBlob := append([]byte(nil), data...)
	badBlob[frames[blob].Off+frames[blob].Len/2] ^= 0x55

	type tcase struct {
		name string
		data []byte
		msg  string // regexp of the message; "" for a complete trace
	}
	cases := []tcase{
		{"complete", data, ""},
		{"cut inside the header", data[:frames[0].Off+frames[0].Len/2], cutAt(frames[0].Off + frames[0].Len/2)},
		{"cut at a frame boundary", data[:frames[mid].Off], cutAt(frames[mid].Off)},
		{"crc of a middle frame", damaged, fmt.Sprintf(`damaged trace: frame %d \(events #(?P<first>\d+)–#(?P<last>\d+)\) fails its CRC check; (?P<usable>\d+) of (?P<total>\d+) events usable, (?P<lost>\d+) lost \(frames %d–%d\)`,
			mid, mid, lastFrame)},
		{"crc of a mapped file", badBlob, fmt.Sprintf(`damaged trace: frame %d \(blob \d+, [^)]+\) fails its CRC check, and event #(?P<first>\d+) maps it; (?P<usable>\d+) of (?P<total>\d+) events usable, (?P<lost>\d+) lost`,
			blob)},
	}
	for _, pct := range []int64{10, 50, 90} {
		cases = append(cases, tcase{fmt.Sprintf("cut at %d%%", pct), data[:size*pct/100], cutAt(size * pct / 100)})
	}

	// usableAt is the count each case reports, for the cross-checks.
	usableAt := map[string]int{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "t.rwd")
			if err := os.WriteFile(trace, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			var msgRE *regexp.Regexp
			if c.msg != "" {
				// An error that stops the command names the trace first.
				msgRE = regexp.MustCompile("^rewind: (?:(?:mcp: )?(?:trace: )?" + regexp.QuoteMeta(trace) + ": (?:nothing to replay: )?)?(" + c.msg + ")")
			}
			// stderrSays checks that the first line of stderr is the
			// message, and returns its named numbers.
			stderrSays := func(what string, stderr []byte) map[string]int {
				t.Helper()
				ls := lines(stderr)
				if len(ls) == 0 || !msgRE.MatchString(ls[0]) {
					t.Fatalf("%s: stderr %q does not start with a line matching %q", what, stderr, msgRE)
				}
				nums := map[string]int{}
				m := msgRE.FindStringSubmatch(ls[0])
				for i, name := range msgRE.SubexpNames() {
					if name != "" && m[i] != "" {
						nums[name], _ = strconv.Atoi(m[i])
					}
				}
				return nums
			}

			info := run(t, runOpts{}, bin, "info", trace)
			checkNoPanic(t, "info", info.Stdout, info.Stderr)
			if c.msg == "" {
				if info.Code != 0 || len(info.Stderr) != 0 || !strings.Contains(string(info.Stdout), "state:     complete\n") {
					t.Fatalf("info on a complete trace exited %d\nstdout:\n%s\nstderr:\n%s", info.Code, info.Stdout, info.Stderr)
				}
				return
			}
			if c.name == "cut inside the header" {
				for _, args := range [][]string{{"info"}, {"events"}, {"replay", "--check"}, {"replay", "--batch", "-ex", "info threads"}} {
					r := run(t, runOpts{}, bin, append(args, trace)...)
					if r.Code != 1 || len(lines(r.Stderr)) != 1 {
						t.Errorf("%s exited %d, want 1 with one line", strings.Join(args, " "), r.Code)
					}
					stderrSays(strings.Join(args, " "), r.Stderr)
				}
				return
			}
			nums := stderrSays("info", info.Stderr)
			usable := nums["usable"]
			usableAt[c.name] = usable
			if info.Code != exitPartialTrace || len(lines(info.Stderr)) != 1 {
				t.Errorf("info exited %d with %d lines on stderr, want %d and one line", info.Code, len(lines(info.Stderr)), exitPartialTrace)
			}
			if !strings.Contains(string(info.Stdout), "state:     "+strings.TrimPrefix(lines(info.Stderr)[0], "rewind: ")+"\n") {
				t.Errorf("info's summary does not state the message:\n%s", info.Stdout)
			}
			if first, ok := nums["first"]; ok && first != usable {
				t.Errorf("the damaged frame starts at #%d, but %d events are usable", first, usable)
			}
			if last, ok := nums["last"]; ok && last < nums["first"] {
				t.Errorf("the damaged frame holds events #%d–#%d", nums["first"], last)
			}
			if n, ok := nums["total"]; ok && (n != total || nums["lost"] != total-usable) {
				t.Errorf("%d of %d events usable, %d lost; the recording has %d events", usable, n, nums["lost"], total)
			}

			events := run(t, runOpts{}, bin, "events", trace)
			stderrSays("events", events.Stderr)
			if events.Code != exitPartialTrace || len(lines(events.Stderr)) != 1 || len(lines(events.Stdout)) != usable {
				t.Errorf("events exited %d, listed %d events with %d lines on stderr; want %d, %d events, one line",
					events.Code, len(lines(events.Stdout)), len(lines(events.Stderr)), exitPartialTrace, usable)
			}
			// A listing that stops early still checks the whole trace.
			head := run(t, runOpts{}, bin, "events", "--to", "3", trace)
			stderrSays("events --to 3", head.Stderr)
			if head.Code != exitPartialTrace {
				t.Errorf("events --to 3 exited %d, want %d", head.Code, exitPartialTrace)
			}

			check := run(t, runOpts{}, bin, "replay", "--check", trace)
			checkNoPanic(t, "replay --check", check.Stdout, check.Stderr)
			stderrSays("replay --check", check.Stderr)
			batch := run(t, runOpts{}, bin, "replay", "--batch", "-ex", "info threads", trace)
			stderrSays("replay --batch", batch.Stderr)
			inst, first, mcp := mcpOpen(t, trace)
			stderrSays("mcp", mcp.Stderr)
			if usable == 0 {
				for what, r := range map[string]result{"replay --check": check, "replay --batch": batch, "mcp": mcp} {
					if r.Code != 1 || len(lines(r.Stderr)) != 1 || !strings.Contains(string(r.Stderr), ": nothing to replay: ") {
						t.Errorf("%s with no usable event exited %d, stderr %q; want 1 and one line", what, r.Code, r.Stderr)
					}
				}
				return
			}
			if last, _ := lastLine(check.Stderr); check.Code != exitPartialTrace || last != fmt.Sprintf("replay OK: %d events", usable) {
				t.Errorf("replay --check exited %d, last line %q; want %d and replay OK: %d events", check.Code, last, exitPartialTrace, usable)
			}
			if batch.Code != 0 || len(lines(batch.Stderr)) != 1 || !strings.Contains(string(batch.Stdout), "(rewind) info threads") {
				t.Errorf("replay --batch exited %d\nstdout:\n%s\nstderr:\n%s", batch.Code, batch.Stdout, batch.Stderr)
			}
			msg := strings.TrimPrefix(lines(info.Stderr)[0], "rewind: ")
			if !strings.Contains(inst, "WARNING: this trace is incomplete: "+msg) || !strings.HasPrefix(first, "warning: "+msg+"\n") {
				t.Errorf("MCP does not warn\ninstructions: %s\nfirst result: %s", inst, first)
			}
		})
	}
	if n, ok := usableAt["cut at a frame boundary"]; ok && usableAt["crc of a middle frame"] != n {
		t.Errorf("a cut before frame %d leaves %d events usable, a damaged frame %d %d", mid, n, mid, usableAt["crc of a middle frame"])
	}
	if usableAt["cut at 10%"] > usableAt["cut at 50%"] || usableAt["cut at 50%"] > usableAt["cut at 90%"] || usableAt["cut at 90%"] >= total {
		t.Errorf("usable events at 10%%, 50%%, 90%% of the file: %d, %d, %d of %d", usableAt["cut at 10%"], usableAt["cut at 50%"], usableAt["cut at 90%"], total)
	}
}

// TestIncompleteTraceInTUI opens a damaged trace in the terminal UI: the
// Console says which frame failed and how many events are usable, and the
// status bar keeps saying the trace is damaged.
func TestIncompleteTraceInTUI(t *testing.T) {
	t.Parallel()
	data, _ := recordedBytes(t, "bulk.c")
	frames := testprog.Frames(data)
	mid := len(frames) / 2
	for frames[mid].Type != 2 {
		mid++
	}
	data[frames[mid].Off+frames[mid].Len/2] ^= 0x55
	trace := filepath.Join(t.TempDir(), "damaged.rwd")
	if err := os.WriteFile(trace, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Not the large layout (36 lines or more): the Console spans the width.
	s := newTmux(t, 200, 30, []string{"HOME=" + t.TempDir()}, "replay", trace)
	s.waitFor(fmt.Sprintf(`damaged trace: frame %d \(events #\d+–#\d+\) fails its CRC check; \d+ of \d+ events usable`, mid))
	s.waitFor(`#\d+/\d+ .*thread \d+ · damaged trace \(\d+ of \d+ events\)`)
	s.quit()
}
