package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/internal/testprog"
)

// Recording a process that already runs (rewind record -p, rewind attach):
// each test starts a program the way a service starts, away from rewind,
// talks to it, attaches, makes something happen, detaches with Ctrl-C,
// checks that the program goes on as if nothing had happened, and replays
// the trace.

// service is a running program the test talks to through its stdin and
// stdout.
type service struct {
	pid  int
	in   *os.File
	out  *bufio.Reader
	head string // its first line
}

// startService runs bin with args; with "-d" among them it forks away and
// its parent exits, as a daemon's does, else it runs in a session of its
// own. It is killed at the end of the test.
func startService(t *testing.T, bin string, args ...string) *service {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	inR.Close()
	outW.Close()
	s := &service{in: inW, out: bufio.NewReader(outR)}
	t.Cleanup(func() {
		if s.pid > 0 {
			// Its session's group: the children it made too (they
			// hold the test's stderr).
			syscall.Kill(-s.pid, syscall.SIGKILL)
			syscall.Kill(s.pid, syscall.SIGKILL)
		}
		inW.Close()
		outR.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	s.head = s.readLine(t)
	if _, err := fmt.Sscanf(s.head, "pid %d", &s.pid); err != nil {
		t.Fatalf("%s said %q", bin, s.head)
	}
	return s
}

// readLine reads one line of the service's output, failing after a while.
func (s *service) readLine(t *testing.T) string {
	t.Helper()
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		l, err := s.out.ReadString('\n')
		ch <- answer{strings.TrimSpace(l), err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatalf("read from process %d: %v", s.pid, a.err)
		}
		return a.line
	case <-time.After(cmdTimeout):
		t.Fatalf("process %d did not answer", s.pid)
	}
	return ""
}

// ask sends a command line and, when answer is set, returns the line the
// service answers.
func (s *service) ask(t *testing.T, cmd string, answer bool) string {
	t.Helper()
	if _, err := s.in.WriteString(cmd + "\n"); err != nil {
		t.Fatalf("write to process %d: %v", s.pid, err)
	}
	if !answer {
		return ""
	}
	return s.readLine(t)
}

// checkRuns fails unless pid is alive, running or sleeping, traced by no
// one, with its own personality and CPUs (those of a process the tests
// start: this process's).
func checkRuns(t *testing.T, pid int) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("process %d is gone after the detach: %v", pid, err)
	}
	st := string(data)
	if !strings.Contains(st, "Cpus_allowed_list:\t"+cpusAllowed(t)+"\n") {
		t.Errorf("process %d after the detach: its CPUs were not given back:\n%s", pid, st)
	}
	mine, _ := os.ReadFile("/proc/self/personality")
	if theirs, _ := os.ReadFile(fmt.Sprintf("/proc/%d/personality", pid)); string(theirs) != string(mine) {
		t.Errorf("process %d after the detach: personality %q, want %q", pid, theirs, mine)
	}
	if m := regexp.MustCompile(`State:\s+(\S)`).FindStringSubmatch(st); m == nil || !strings.Contains("RSD", m[1]) {
		t.Errorf("process %d after the detach: state %v", pid, m)
	}
	if !strings.Contains(st, "TracerPid:\t0\n") {
		t.Errorf("process %d is still traced after the detach", pid)
	}
}

// waitIdle waits until every thread of process pid sleeps in a blocking
// call that only the world ends (not a sleep for a while: Go's sysmon
// polls with nanosleep before it sleeps for long), on three looks in a
// row. A recorder killed then leaves no thread running in the moment
// before its guard puts the process back (guard.go says why that moment
// exists). It gives up quietly after cmdTimeout: the test then goes on
// and checks what it checks.
func waitIdle(t *testing.T, pid int) {
	t.Helper()
	const nanosleep, clockNanosleep = "35", "230"
	quiet := func() bool {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil || len(tasks) == 0 {
			return false
		}
		for _, task := range tasks {
			dir := fmt.Sprintf("/proc/%d/task/%s/", pid, task.Name())
			stat, err1 := os.ReadFile(dir + "stat")
			call, err2 := os.ReadFile(dir + "syscall")
			i := strings.LastIndexByte(string(stat), ')')
			if err1 != nil || err2 != nil || i < 0 || i+2 >= len(stat) || stat[i+2] != 'S' {
				return false
			}
			if nr := strings.Fields(string(call)); len(nr) == 0 || nr[0] == nanosleep || nr[0] == clockNanosleep || nr[0] == "running" {
				return false
			}
		}
		return true
	}
	for seen, end := 0, time.Now().Add(cmdTimeout); seen < 3 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if quiet() {
			seen++
		} else {
			seen = 0
		}
	}
}

// recording is a `rewind record -p` in progress.
type recording struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan error
}

// syncBuffer is a buffer one goroutine fills while another reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// attachTo starts `rewind record -p pid -o trace` (or `rewind attach`) and
// returns once the snapshot is taken.
func attachTo(t *testing.T, pid int, trace string, extra ...string) *recording {
	t.Helper()
	args := append([]string{"record", "-p", fmt.Sprint(pid), "-o", trace}, extra...)
	cmd := exec.Command(rewind(t), args...)
	pr, pw := io.Pipe()
	rec := &recording{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	attached := make(chan bool, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		seen := false
		for sc.Scan() {
			rec.stderr.WriteString(sc.Text() + "\n")
			if !seen && strings.Contains(sc.Text(), "attached to process") {
				seen = true
				attached <- true
			}
		}
		if !seen {
			attached <- false
		}
	}()
	go func() {
		err := cmd.Wait()
		pw.Close()
		<-scanned // the last lines are in rec.stderr
		rec.done <- err
	}()
	select {
	case ok := <-attached:
		if !ok {
			<-rec.done
			if strings.Contains(rec.stderr.String(), "not permitted") {
				t.Skipf("ptrace attach is not permitted here: %s", rec.stderr)
			}
			t.Fatalf("rewind did not attach to %d:\n%s", pid, rec.stderr)
		}
	case <-time.After(cmdTimeout):
		t.Fatalf("rewind did not attach to %d within %v", pid, cmdTimeout)
	}
	return rec
}

// stop sends sig to rewind and waits for the recording to end with status
// 0 and say that the process was detached.
func (r *recording) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	r.cmd.Process.Signal(sig)
	r.wait(t)
}

// wait waits for the recording to end by itself and checks it ended well,
// the process detached.
func (r *recording) wait(t *testing.T) {
	t.Helper()
	r.waitSaying(t, "detached; the process runs on")
}

// waitSaying waits for the recording to end by itself and checks it ended
// well, saying says.
func (r *recording) waitSaying(t *testing.T, says string) {
	t.Helper()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("rewind record -p: %v\n%s", err, r.stderr)
		}
	case <-time.After(cmdTimeout):
		t.Fatalf("rewind record -p did not end:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr.String(), says) {
		t.Errorf("rewind record -p did not say %q:\n%s", says, r.stderr)
	}
}

// askTCP sends lines to a TCP service and returns its answer.
func askTCP(t *testing.T, addr string, lines ...string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("connect to %s: %v", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(cmdTimeout))
	if _, err := io.WriteString(c, strings.Join(lines, "\n")+"\nx\n"); err != nil {
		t.Fatalf("write to %s: %v", addr, err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read from %s: %v", addr, err)
	}
	return strings.TrimSpace(string(b))
}

func TestAttachServiceBug(t *testing.T) {
	bin := buildC(t, "attach/service.c")
	svc := startService(t, bin, "-d")
	var port int
	fmt.Sscanf(svc.head, "pid %d port %d", new(int), &port)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	svc.ask(t, "add 100", false)
	if got := askTCP(t, addr, "get"); got != "balance 100 records 1 name nobody" {
		t.Fatalf("before the attach: %q", got)
	}

	trace := filepath.Join(t.TempDir(), "service.rwd")
	rec := attachTo(t, svc.pid, trace)
	svc.ask(t, "add 23", false)
	if got := askTCP(t, addr, "add 7", "get"); got != "balance 130 records 3 name nobody" {
		t.Errorf("while recorded, over TCP: %q", got)
	}
	// The bug: 21 bytes into a 16-byte name; "-1234" lands in the balance.
	svc.ask(t, "name overflowing-name-1234", false)
	const corrupted = "balance 224197226797 records 3 name overflowing-name"
	if got := svc.ask(t, "get", true); got != corrupted {
		t.Errorf("while recorded, after the overflow: %q", got)
	}
	rec.stop(t, syscall.SIGINT)

	// The process goes on, its state intact, on both of its inputs.
	checkRuns(t, svc.pid)
	svc.ask(t, "add 1", false)
	if got := svc.ask(t, "get", true); got != "balance 224197226798 records 4 name overflowing-name" {
		t.Errorf("after the detach: %q", got)
	}
	if got := askTCP(t, addr, "add 1", "get"); got != "balance 224197226799 records 5 name overflowing-name" {
		t.Errorf("after the detach, over TCP: %q", got)
	}

	out, errOut, code := replayCheck(t, trace)
	if code != 0 || !strings.Contains(string(errOut), "replay OK") {
		t.Fatalf("replay --check: status %d\n%s", code, errOut)
	}
	if !strings.Contains(string(out), corrupted) {
		t.Errorf("replay --check did not write what the service answered on stdout:\n%s", out)
	}

	// From the end, the last writes to the balance, going back: the
	// overflow's, then the add that made 130.
	args := []string{"replay", "--batch", "-ex", "continue", "-ex", "watch -l acc.balance", "-ex", "reverse-continue", "-ex", "bt"}
	for range 6 {
		args = append(args, "-ex", "reverse-continue")
	}
	res := run(t, runOpts{}, rewind(t), append(args, trace)...)
	got := string(res.Stdout) + string(res.Stderr)
	if res.Code != 0 {
		t.Fatalf("replay --batch: status %d\n%s", res.Code, got)
	}
	first := strings.Index(got, "set_name")
	add := strings.Index(got, "New value = 130")
	if first < 0 || add < first {
		t.Errorf("reverse-continue with watch -l acc.balance: want set_name's write, then add's (130):\n%s", got)
	}
	if !regexp.MustCompile(`#1 .* command \(`).MatchString(got) {
		t.Errorf("bt at the overflow does not show command():\n%s", got)
	}

	// The same question from a coding agent, over MCP.
	answer := mcpCall(t, trace, "watch_history", `{"expression":"acc.balance"}`)
	if !strings.Contains(answer, `"function":"add","index":2,"line":51,`) || !strings.Contains(answer, `"new":"224197226797","old":"858927405"`) {
		t.Errorf("MCP watch_history of acc.balance: want the add that made 130 and the overflow:\n%s", answer)
	}
}

// mcpCall runs `rewind mcp trace`, calls one tool and returns the line of
// its answer.
func mcpCall(t *testing.T, trace, tool, args string) string {
	t.Helper()
	cmd := exec.Command(rewind(t), "mcp", trace)
	var stderr syncBuffer
	cmd.Stderr = &stderrWriter{&stderr}
	in, out := testprog.StartPiped(t, cmd)
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}
`)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"id":2`) {
				lines <- sc.Text()
				return
			}
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("rewind mcp ended without answering %s:\n%s", tool, stderr.String())
		}
		return l
	case <-time.After(cmdTimeout):
		t.Fatalf("rewind mcp did not answer %s", tool)
	}
	return ""
}

// TestAttachRseq: a thread that registers an rseq area while rewind records
// its process (as one pthread_create made just before the attach does when
// it first runs: glibc makes a failed registration fatal then) is answered
// with success and lives; the area is registered for real at the detach
// (registering it again is refused as busy), and the recording replays.
func TestAttachRseq(t *testing.T) {
	bin := buildC(t, "attach/rseqlate.c")
	svc := startService(t, bin)
	trace := filepath.Join(t.TempDir(), "rseq.rwd")
	rec := attachTo(t, svc.pid, trace, "--duration", "1s")
	if got := svc.ask(t, "go", true); got != "rseq 0" {
		t.Errorf("rseq registered while recorded: %q, want \"rseq 0\"", got)
	}
	rec.wait(t)
	if got := svc.ask(t, "check", true); got != fmt.Sprintf("again %d", -int(syscall.EBUSY)) {
		t.Errorf("rseq registered again after the detach: %q, want EBUSY (the first registration holds)", got)
	}
	if _, errOut, code := replayCheck(t, trace); code != 0 {
		t.Fatalf("replay --check: status %d\n%s", code, errOut)
	}
}

func TestAttachThreads(t *testing.T) {
	bin := buildC(t, "attach/workers.c")
	svc := startService(t, bin, "-d")
	before := svc.ask(t, "get", true)
	trace := filepath.Join(t.TempDir(), "workers.rwd")
	rec := attachTo(t, svc.pid, trace, "--duration", "1500ms", "--keep-last", "400ms")
	during := svc.ask(t, "get", true)
	rec.wait(t)
	checkRuns(t, svc.pid)
	time.Sleep(20 * time.Millisecond)
	after := svc.ask(t, "get", true)
	for _, line := range []string{before, during, after} {
		var counter, sum int
		if _, err := fmt.Sscanf(line, "counter %d sum %d", &counter, &sum); err != nil || counter != sum {
			t.Errorf("workers answered %q: the counter must equal the sum of the counts", line)
		}
	}
	if before == after {
		t.Errorf("the workers did not run on after the detach: %q", after)
	}
	_, errOut, code := replayCheck(t, trace)
	if code != 0 {
		t.Fatalf("replay --check: status %d\n%s", code, errOut)
	}
	res := run(t, runOpts{}, rewind(t), "replay", "--batch", "-ex", "break workers.c:22", "-ex", "continue", "-ex", "print id", "-ex", "info threads", trace)
	got := string(res.Stdout)
	if res.Code != 0 || !strings.Contains(got, "Breakpoint 1, worker") || strings.Count(got, "Thread 0x") != 4 {
		t.Errorf("replay --batch on the workers: status %d, want a worker's breakpoint and 4 threads:\n%s%s", res.Code, got, res.Stderr)
	}

	// The UI opens at the snapshot, says so, and goes back to it.
	ui := newTmux(t, 160, 48, []string{"HOME=" + t.TempDir()}, "replay", trace)
	ui.waitFor(`The recording starts from a snapshot of process \d+`)
	ui.command("break workers.c:22", `Breakpoint 1 at 0x[0-9a-f]+: file workers.c, line 22`)
	ui.command("continue", `Breakpoint 1, worker`)
	ui.command("reverse-continue", `No more reverse-execution history`)
}

func TestAttachGoServer(t *testing.T) {
	bin := buildGo(t, "serve")
	svc := startService(t, bin)
	var addr string
	fmt.Sscanf(svc.head, "pid %d addr %s", new(int), &addr)
	get := func(path string) string {
		t.Helper()
		c := &http.Client{Timeout: cmdTimeout}
		resp, err := c.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.TrimSpace(string(b))
	}
	get("/before")
	trace := filepath.Join(t.TempDir(), "serve.rwd")
	rec := attachTo(t, svc.pid, trace)
	for i := 2; i <= 4; i++ {
		if got, want := get("/during"), fmt.Sprintf("hit %d /during", i); got != want {
			t.Errorf("while recorded: %q, want %q", got, want)
		}
	}
	rec.stop(t, syscall.SIGINT)
	checkRuns(t, svc.pid)
	// Its runtime reads the clock through the vDSO and rdtsc: both must
	// work again.
	for i := 5; i <= 7; i++ {
		time.Sleep(50 * time.Millisecond)
		if got, want := get("/after"), fmt.Sprintf("hit %d /after", i); got != want {
			t.Errorf("after the detach: %q, want %q", got, want)
		}
	}
	_, errOut, code := replayCheck(t, trace)
	if code != 0 {
		t.Fatalf("replay --check: status %d\n%s", code, errOut)
	}
	get("/quit")
}

func TestAttachShellTree(t *testing.T) {
	// A shell loop forks and execs a child per command: the children
	// are recorded with it, and laid out as replay lays them out.
	script := filepath.Join(t.TempDir(), "loop.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho pid $$\ni=0\nwhile read line; do i=$((i+1)); echo \"$i $(echo $line | tr a-z A-Z)\"; done\n"), 0o755)
	svc := startService(t, script)
	if got := svc.ask(t, "before", true); got != "1 BEFORE" {
		t.Fatalf("before the attach: %q", got)
	}
	trace := filepath.Join(t.TempDir(), "sh.rwd")
	rec := attachTo(t, svc.pid, trace)
	if got := svc.ask(t, "during", true); got != "2 DURING" {
		t.Errorf("while recorded: %q", got)
	}
	rec.stop(t, syscall.SIGUSR2)
	checkRuns(t, svc.pid)
	if got := svc.ask(t, "after", true); got != "3 AFTER" {
		t.Errorf("after the detach: %q", got)
	}
	out, errOut, code := replayCheck(t, trace)
	if code != 0 || !strings.Contains(string(out), "2 DURING") {
		t.Fatalf("replay --check: status %d\n%s%s", code, out, errOut)
	}
	ps := run(t, runOpts{}, rewind(t), "ps", trace)
	if !strings.Contains(string(ps.Stdout), "tr a-z A-Z") {
		t.Errorf("rewind ps does not list the shell's children:\n%s", ps.Stdout)
	}
}

func TestAttachRecorderKilled(t *testing.T) {
	// rewind dies with SIGKILL: its guard puts back what recording
	// changed (rdtsc that faults would kill a Go program at its next
	// runtime.cputicks) and the server goes on.
	bin := buildGo(t, "serve")
	svc := startService(t, bin)
	var addr string
	fmt.Sscanf(svc.head, "pid %d addr %s", new(int), &addr)
	get := func() (string, error) {
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Get("http://" + addr + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return strings.TrimSpace(string(b)), err
	}
	trace := filepath.Join(t.TempDir(), "killed.rwd")
	rec := attachTo(t, svc.pid, trace)
	if _, err := get(); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, svc.pid)
	rec.cmd.Process.Kill()
	<-rec.done
	deadline := time.Now().Add(cmdTimeout)
	for !strings.Contains(rec.stderr.String(), "is restored and runs on") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(rec.stderr.String(), fmt.Sprintf("process %d is restored", svc.pid)) {
		t.Fatalf("no word from the guard:\n%s", rec.stderr)
	}
	checkRuns(t, svc.pid)
	for i := 0; i < 5; i++ {
		time.Sleep(100 * time.Millisecond)
		if got, err := get(); err != nil || !strings.HasPrefix(got, "hit ") {
			t.Fatalf("after rewind died: %q %v", got, err)
		}
	}
	// The trace rewind left is readable up to where it died.
	partial, _ := filepath.Glob(trace + ".*.partial")
	if len(partial) != 1 {
		t.Fatalf("rewind killed left %v, want one .partial trace", partial)
	}
	if res := run(t, runOpts{}, rewind(t), "replay", "--check", partial[0]); !strings.Contains(string(res.Stderr), "replay OK") && !strings.Contains(string(res.Stderr), "did not finish") {
		t.Errorf("replay --check of the trace rewind left: status %d\n%s", res.Code, res.Stderr)
	}
}

func TestAttachCrash(t *testing.T) {
	// The bug shows as a crash: the recording, a ring of one second,
	// ends with it, and replay stops at the faulting line.
	bin := buildC(t, "attach/service.c")
	svc := startService(t, bin, "-d")
	trace := filepath.Join(t.TempDir(), "crash.rwd")
	rec := attachTo(t, svc.pid, trace, "--keep-last", "1s")
	svc.ask(t, "add 5", false)
	svc.ask(t, "crash", false)
	rec.waitSaying(t, "(the process ended)")
	res := run(t, runOpts{}, rewind(t), "replay", "--batch", "-ex", "continue", "-ex", "bt", trace)
	got := string(res.Stdout)
	if !strings.Contains(got, "SIGSEGV") || !regexp.MustCompile(`#0 .*command \(`).MatchString(got) {
		t.Errorf("replay does not stop at the crash in command():\n%s%s", got, res.Stderr)
	}
}

func TestAttachRefused(t *testing.T) {
	// A process another tracer holds (rewind's own recording), and
	// rewind's ancestors: one line, a failure status, nothing left.
	bin := buildC(t, "ticks.c")
	dir := t.TempDir()
	held := exec.Command(rewind(t), "record", "-o", filepath.Join(dir, "held.rwd"), bin, "1")
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Process.Kill(); held.Wait() })
	var tracee int
	for deadline := time.Now().Add(cmdTimeout); tracee == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		// Started from one of rewind's threads: any task's child.
		kids, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", held.Process.Pid))
		for _, k := range kids {
			list, _ := os.ReadFile(k)
			for _, f := range strings.Fields(string(list)) {
				if exe, _ := os.Readlink("/proc/" + f + "/exe"); exe == bin {
					fmt.Sscan(f, &tracee)
				}
			}
		}
	}
	if tracee == 0 {
		t.Fatal("the recorded program did not start")
	}
	for _, c := range []struct {
		pid  int
		want string
	}{
		{tracee, "already traced by process"},
		{os.Getpid(), "it is an ancestor of rewind"},
		{1 << 30, "no process"},
	} {
		res := run(t, runOpts{}, rewind(t), "attach", fmt.Sprint(c.pid), "-o", filepath.Join(dir, "refused.rwd"))
		msg := strings.TrimSpace(string(res.Stderr))
		if res.Code == 0 || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") > 0 {
			t.Errorf("attach %d: status %d, want one line saying %q:\n%s", c.pid, res.Code, c.want, msg)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "refused*")); len(left) > 0 {
		t.Errorf("a refused attach left files: %v", left)
	}
}

func TestAttachSignals(t *testing.T) {
	// Signals sent while recorded are delivered, and recorded: the
	// program counts them in its handler, on its alternate stack.
	bin := buildC(t, "attach/target.c")
	file := filepath.Join(t.TempDir(), "data")
	os.WriteFile(file, make([]byte, 4096), 0o644)
	svc := startService(t, bin, "-d", file, "1")
	trace := filepath.Join(t.TempDir(), "signals.rwd")
	rec := attachTo(t, svc.pid, trace)
	usr1 := func() string {
		t.Helper()
		svc.ask(t, "q", false)
		got := ""
		for line := svc.readLine(t); line != "end"; line = svc.readLine(t) {
			if strings.HasPrefix(line, "usr1 ") {
				got = line
			}
		}
		return got
	}
	for i := 1; i <= 2; i++ {
		syscall.Kill(svc.pid, syscall.SIGUSR1)
		want := fmt.Sprintf("usr1 %d 0", i) // si_code SI_USER: sent by kill, as it was
		for deadline := time.Now().Add(cmdTimeout); usr1() != want; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("SIGUSR1 %d was not handled while recorded", i)
			}
		}
	}
	rec.stop(t, syscall.SIGINT)
	checkRuns(t, svc.pid)
	syscall.Kill(svc.pid, syscall.SIGUSR1)
	for deadline := time.Now().Add(cmdTimeout); usr1() != "usr1 3 0"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("SIGUSR1 was not handled after the detach")
		}
	}
	out, errOut, code := replayCheck(t, trace)
	if code != 0 || !strings.Contains(string(out), "usr1 2 0\n") {
		t.Fatalf("replay --check: status %d\n%s%s", code, out, errOut)
	}
	if info := run(t, runOpts{}, rewind(t), "info", trace); !strings.Contains(string(info.Stdout), fmt.Sprintf("attached:  to process %d while it ran", svc.pid)) {
		t.Errorf("rewind info does not say the recording attached:\n%s", info.Stdout)
	}
	ev := run(t, runOpts{}, rewind(t), "events", trace)
	if strings.Count(string(ev.Stdout), "SIGUSR1") < 2 {
		t.Errorf("the trace does not hold the two SIGUSR1:\n%s", ev.Stdout)
	}
}

func TestAttachSharedMemory(t *testing.T) {
	// Memory the process shared with another, unrecorded, before the
	// attach: what that one writes (while the process waits for it) is in
	// the trace, and replay reads the same counts.
	bin := buildC(t, "attach/shared.c")
	svc := startService(t, bin, "-d")
	svc.ask(t, "tick", false)
	trace := filepath.Join(t.TempDir(), "shared.rwd")
	rec := attachTo(t, svc.pid, trace)
	var counts []string
	for i := 0; i < 3; i++ {
		svc.ask(t, "tick", false)
		counts = append(counts, svc.ask(t, "get", true))
	}
	rec.stop(t, syscall.SIGINT)
	checkRuns(t, svc.pid)
	if want := []string{"count 14", "count 21", "count 28"}; !slices.Equal(counts, want) {
		t.Fatalf("while recorded: %q, want %q", counts, want)
	}
	out, errOut, code := replayCheck(t, trace)
	if code != 0 || string(out) != strings.Join(counts, "\n")+"\n" {
		t.Errorf("replay --check: status %d, wrote %q, want %q\n%s", code, out, strings.Join(counts, "\n")+"\n", errOut)
	}
}
