package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/internal/testprog"
)

// remoteGDB runs a batch gdb session on prog connected with connect (a
// `target remote` command) and returns one output block per command.
func remoteGDB(t *testing.T, prog, connect string, cmds []string) []string {
	t.Helper()
	// A replay that opens slowly on a loaded machine must not outlast
	// gdb's remote timeout (2 s by default).
	args := []string{"-nx", "-batch", "-ex", "set pagination off", "-ex", "set width 0", "-ex", "set confirm off", "-ex", "set remotetimeout 120", "-ex", connect}
	for _, c := range cmds {
		args = append(args, "-ex", "echo <<<\\n", "-ex", c)
	}
	args = append(args, "-ex", "echo <<<\\n", prog)
	cmd := exec.Command("gdb", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("gdb did not finish:\n%s", out.String())
	}
	checkNoPanic(t, "gdb session", out.Bytes())
	parts := strings.Split(out.String(), "<<<\n")
	if len(parts) < len(cmds)+2 {
		t.Fatalf("gdb output:\n%s", out.String())
	}
	return parts[1 : len(cmds)+1]
}

// pipeTarget is the target remote command of the stdio server.
func pipeTarget(t *testing.T, trace string) string {
	return fmt.Sprintf("target remote | %s replay --gdbserver - %s", rewind(t), trace)
}

// fileSum is the SHA-256 of a file, to see that it did not change.
func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

var ripValue = regexp.MustCompile(`(?m)^rip\s+(0x[0-9a-f]+)`)

// TestGDBServerTimeTravel: gdb over `target remote |` on a recording of
// the list whose node gets overwritten: breakpoints both ways, watch -l and
// reverse-continue to the corrupting write, bt, registers equal to
// rewind's own, reverse-stepi, reverse-finish, and the start of the
// recording as the end of gdb's reverse-execution history.
func TestGDBServerTimeTravel(t *testing.T) {
	need(t, "gdb")
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	prog := buildC(t, "source/corrupt.c")
	before := fileSum(t, trace)
	steps := []struct {
		cmd  string
		want []string // regexps the command's output must match, in order
	}{
		{"break set_name", []string{`Breakpoint 1 at`}},
		{"continue", []string{`Breakpoint 1, set_name \(n=0x[0-9a-f]+, src=0x[0-9a-f]+ "alpha"\) at .*corrupt.c:15`}},
		{"continue", []string{`Breakpoint 1, set_name \(.*"bravo-overflowing"\) at .*corrupt.c:15`}},
		{"reverse-continue", []string{`Breakpoint 1, set_name \(.*"alpha"\) at .*corrupt.c:15`}},
		{"delete", nil},
		{"break sum", []string{`Breakpoint 2 at`}},
		{"continue", []string{`Breakpoint 2, sum \(head=0x[0-9a-f]+\) at .*corrupt.c:22`}},
		{"bt", []string{`#0 +sum \(head=0x[0-9a-f]+\) at .*corrupt.c:22`, `#1 +0x[0-9a-f]+ in main \(\) at .*corrupt.c:41`}},
		{"info registers rip", []string{`rip +0x[0-9a-f]+ +0x[0-9a-f]+ <sum\+\d+>`}},
		{"up", nil},
		{"watch -l a->next->next", []string{`Hardware watchpoint 3: -location a->next->next`}},
		{"reverse-continue", []string{`Hardware watchpoint 3`, `Old value = \(struct node \*\) 0x6e69776f6c667265`, `in set_name \(.*"bravo-overflowing"\) at .*corrupt.c:16`}},
		{"bt", []string{`#0 +0x[0-9a-f]+ in set_name \(.*\) at .*corrupt.c:16`, `#1 +0x[0-9a-f]+ in main \(\) at .*corrupt.c:39`}},
		{"p/x $pc", []string{`\$\d+ = 0x[0-9a-f]+`}},
		{"reverse-stepi", []string{`16\s+n->name\[i\] = src\[i\];`}},
		{"p/x $pc", []string{`\$\d+ = 0x[0-9a-f]+`}},
		{"delete", nil},
		{"reverse-finish", []string{`in main \(\) at .*corrupt.c:39`, `39\s+set_name\(b, "bravo-overflowing"\);`}},
		{"reverse-continue", []string{`No more reverse-execution history.`}},
	}
	var cmds []string
	for _, s := range steps {
		cmds = append(cmds, s.cmd)
	}
	out := remoteGDB(t, prog, pipeTarget(t, trace), cmds)
	for i, s := range steps {
		rest := out[i]
		for _, w := range s.want {
			loc := regexp.MustCompile(w).FindStringIndex(rest)
			if loc == nil {
				t.Errorf("%s: want %q in:\n%s", s.cmd, w, out[i])
				break
			}
			rest = rest[loc[1]:]
		}
	}

	// reverse-stepi went back one instruction: the pc moved, within the
	// line.
	pcOf := func(i int) string { return regexp.MustCompile(`= (0x[0-9a-f]+)`).FindString(out[i]) }
	for i, s := range steps {
		if s.cmd == "reverse-stepi" && (pcOf(i-1) == "" || pcOf(i-1) == pcOf(i+1)) {
			t.Errorf("reverse-stepi left the pc at %q (it was %q)", pcOf(i+1), pcOf(i-1))
		}
	}

	// rewind's own info registers at the same moment.
	r := run(t, runOpts{}, rewind(t), "replay", "--batch", "--json", "-ex", "break sum", "-ex", "continue", "-ex", "info registers rip", trace)
	var res struct {
		Value map[string]string `json:"value"`
	}
	ls := lines(r.Stdout)
	if len(ls) < 3 || json.Unmarshal([]byte(ls[2]), &res) != nil {
		t.Fatalf("rewind batch: %s%s", r.Stdout, r.Stderr)
	}
	m := ripValue.FindStringSubmatch(out[8])
	if m == nil || m[1] != res.Value["rip"] {
		t.Errorf("gdb's rip %v, rewind's %q", m, res.Value["rip"])
	}
	if fileSum(t, trace) != before {
		t.Error("the recording changed")
	}
}

// TestGDBServerThreads: info threads lists the threads of a threaded
// program at a breakpoint in a worker, with their names, and the current
// one in the worker.
func TestGDBServerThreads(t *testing.T) {
	need(t, "gdb")
	t.Parallel()
	trace := recorded(t, "threads.c", 0)
	prog := buildC(t, "threads.c")
	out := remoteGDB(t, prog, pipeTarget(t, trace), []string{"break worker", "continue", "info threads"})
	if !strings.Contains(out[1], "hit Breakpoint 1, worker (") {
		t.Fatalf("continue:\n%s", out[1])
	}
	n := strings.Count(out[2], `Thread `)
	if n < 2 || !strings.Contains(out[2], `"threads"`) || !regexp.MustCompile(`(?m)^\* +\d+ +Thread \d+ "threads" worker \(`).MatchString(out[2]) {
		t.Errorf("info threads (%d threads):\n%s", n, out[2])
	}
}

// TestGDBServerTCP: --gdbserver 127.0.0.1:0 says on stderr where it
// listens, gdb connects there, and the server ends when gdb detaches.
func TestGDBServerTCP(t *testing.T) {
	need(t, "gdb")
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	prog := buildC(t, "source/steps.c")
	srv := exec.Command(rewind(t), "replay", "--gdbserver", "127.0.0.1:0", trace)
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	addr := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := regexp.MustCompile(`listening on (\S+)`).FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatal("the server did not say where it listens")
	}
	go io.Copy(io.Discard, stderr)
	out := remoteGDB(t, prog, "target remote "+addr, []string{"break main", "continue", "reverse-stepi", "detach"})
	if !strings.Contains(out[1], "Breakpoint 1, main () at") {
		t.Errorf("continue:\n%s", out[1])
	}
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server after detach: %v", err)
		}
	case <-time.After(time.Minute):
		t.Error("the server did not end after gdb detached")
	}
}

// packet frames a payload with its checksum.
func packet(payload string) string {
	var sum byte
	for i := 0; i < len(payload); i++ {
		sum += payload[i]
	}
	return fmt.Sprintf("$%s#%02x", payload, sum)
}

// rawServer is `rewind replay --gdbserver - TRACE` driven packet by packet.
type rawServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

// startRaw starts the stdio server on trace.
func startRaw(t *testing.T, trace string) *rawServer {
	t.Helper()
	s := &rawServer{t: t, cmd: exec.Command(rewind(t), "replay", "--gdbserver", "-", trace)}
	s.cmd.Stderr = &s.stderr
	in, out := testprog.StartPiped(t, s.cmd)
	s.in, s.out = in, bufio.NewReader(out)
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	return s
}

// reply sends raw bytes and reads the acknowledgement and, after a '+',
// the reply packet's payload.
func (s *rawServer) reply(send string) (byte, string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, send); err != nil {
		s.t.Fatal(err)
	}
	ack, err := s.out.ReadByte()
	if err != nil {
		s.t.Fatalf("after %.40q: %v (stderr %s)", send, err, s.stderr.String())
	}
	if ack != '+' {
		return ack, ""
	}
	p, err := s.out.ReadString('#')
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := io.ReadFull(s.out, make([]byte, 2)); err != nil {
		s.t.Fatal(err)
	}
	return ack, strings.TrimSuffix(strings.TrimPrefix(p, "$"), "#")
}

// detach ends the session and checks the server exits cleanly.
func (s *rawServer) detach() {
	s.t.Helper()
	if _, got := s.reply(packet("D")); got != "OK" {
		s.t.Errorf("detach: %q", got)
	}
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		s.t.Errorf("server: %v: %s", err, s.stderr.String())
	}
	checkNoPanic(s.t, "gdbserver", s.stderr.Bytes())
}

// TestGDBServerBadPackets: garbage, bad checksums and oversized packets
// are NAKed, malformed requests and writes get E replies, the server
// answers the next good packet each time and the recording is unchanged.
func TestGDBServerBadPackets(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	before := fileSum(t, trace)
	srv := startRaw(t, trace)
	tests := []struct {
		name, send string
		ack        byte
		want       string // a regexp of the reply ("" with a NAK)
	}{
		{"good", packet("qSupported:swbreak+"), '+', `^PacketSize=[0-9a-f]+;.*ReverseContinue\+`},
		{"bad checksum", "$g#00", '-', ""},
		{"garbage then bad checksum", "hello world$m0,4#zz", '-', ""},
		{"oversized", packet(strings.Repeat("m", 100000)), '-', ""},
		{"bad memory request", packet("mzz,qq"), '+', `^E01$`},
		{"memory write", packet("M1000,1:00"), '+', `^E01$`},
		{"register write", packet("P10=0000000000000000"), '+', `^E01$`},
		{"bad breakpoint", packet("Z0,nothex"), '+', `^E01$`},
		{"bad thread", packet("Hgzz"), '+', `^E01$`},
		{"unknown", packet("qNoSuchThing"), '+', `^$`},
		{"still serving", packet("?"), '+', `^T05thread:[0-9a-f]+;`},
		{"registers", packet("g"), '+', `^[0-9a-f]{1000,}$`},
	}
	for _, tc := range tests {
		ack, got := srv.reply(tc.send)
		if ack != tc.ack || !regexp.MustCompile(tc.want).MatchString(got) {
			t.Errorf("%s: got %c %.80q, want %c %q", tc.name, ack, got, tc.ack, tc.want)
		}
	}
	srv.detach()
	if fileSum(t, trace) != before {
		t.Error("the recording changed")
	}
}

// TestGDBServerInterrupt: gdb's Ctrl-C (0x03) during a continue stops the
// replay with SIGINT before the end, and the server goes on serving.
func TestGDBServerInterrupt(t *testing.T) {
	t.Parallel()
	prog := filepath.Join(t.TempDir(), "syscalls")
	if msg, err := exec.Command("gcc", "-O0", "-o", prog, filepath.Join(testdataDir, "bench", "syscalls.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	trace := filepath.Join(t.TempDir(), "s.rwd")
	mustRecord(t, trace, prog, "20000")
	srv := startRaw(t, trace)
	// The interrupt follows the continue at once: it is seen whenever the
	// server first checks, long before the recording's end.
	if _, got := srv.reply(packet("vCont;c") + "\x03"); !regexp.MustCompile(`^T02thread:[0-9a-f]+;$`).MatchString(got) {
		t.Fatalf("continue then interrupt: %q", got)
	}
	if _, got := srv.reply(packet("?")); !strings.HasPrefix(got, "T02") {
		t.Errorf("stop reason after the interrupt: %q", got)
	}
	if _, got := srv.reply(packet("bs")); !strings.HasPrefix(got, "T05thread:") {
		t.Errorf("reverse step after the interrupt: %q", got)
	}
	srv.detach()
}

// BenchmarkGDBStepi: the round trip of stepi and reverse-stepi through gdb
// after the loop of a recording of 100k getppid calls (going back needs a
// checkpoint near the end), timed by gdb itself between shell date calls.
func BenchmarkGDBStepi(b *testing.B) {
	need(b, "gdb")
	prog := filepath.Join(b.TempDir(), "syscalls")
	if msg, err := exec.Command("gcc", "-g", "-O0", "-o", prog, filepath.Join(testdataDir, "bench", "syscalls.c")).CombinedOutput(); err != nil {
		b.Fatalf("gcc: %v\n%s", err, msg)
	}
	trace := filepath.Join(b.TempDir(), "s.rwd")
	if _, stderr, code := record(b, trace, prog, "100000"); code != 0 {
		b.Fatalf("record: %s", stderr)
	}
	const n = 20
	clock := []string{"-ex", "shell date +T%s%N"}
	args := []string{"-nx", "-batch", "-ex", "set pagination off",
		"-ex", fmt.Sprintf("target remote | %s replay --gdbserver - %s", rewind(b), trace),
		"-ex", "break syscalls.c:17", "-ex", "continue", "-ex", "delete"}
	args = append(args, clock...)
	for range n {
		args = append(args, "-ex", "stepi")
	}
	args = append(args, clock...)
	for range n {
		args = append(args, "-ex", "reverse-stepi")
	}
	args = append(args, clock...)
	for b.Loop() {
		out, err := exec.Command("gdb", append(args, prog)...).CombinedOutput()
		if err != nil {
			b.Fatalf("gdb: %v\n%s", err, out)
		}
		var ns []int64
		for _, m := range regexp.MustCompile(`(?m)^T(\d+)$`).FindAllStringSubmatch(string(out), -1) {
			var v int64
			fmt.Sscan(m[1], &v)
			ns = append(ns, v)
		}
		if len(ns) != 3 {
			b.Fatalf("gdb output:\n%s", out)
		}
		b.ReportMetric(float64(ns[1]-ns[0])/n/1e6, "stepi-ms")
		b.ReportMetric(float64(ns[2]-ns[1])/n/1e6, "reverse-stepi-ms")
	}
}

// TestGDBServerEnd: continuing to the end of a recording whose program
// exited is the end of gdb's reverse-execution history, not the end of the
// session: the exit is said on the console, and reverse-continue goes
// back to the breakpoint.
func TestGDBServerEnd(t *testing.T) {
	t.Parallel()
	need(t, "gdb")
	trace := recorded(t, "source/steps.c", 0)
	prog := buildC(t, "source/steps.c")
	out := remoteGDB(t, prog, pipeTarget(t, trace), []string{"break main", "continue", "continue", "reverse-continue"})
	if !strings.Contains(out[2], "No more reverse-execution history.") || !strings.Contains(out[2], "exited with status 0") {
		t.Errorf("continue to the end:\n%s", out[2])
	}
	if !regexp.MustCompile(`Breakpoint 1, main \(\) at .*steps.c:18`).MatchString(out[3]) {
		t.Errorf("reverse-continue from the end:\n%s", out[3])
	}
}
