package e2e

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// vscodeTestDir holds the JavaScript test of rewind dap and the exact
// versions of VS Code's test client it runs on (package-lock.json).
const vscodeTestDir = "dap/testdata/vscode"

// TestDAPWithVSCodeClient runs rewind dap under VS Code's DAP test client
// (@vscode/debugadapter-testsupport's DebugClient, with node's test
// runner), on stdio and over --listen: launch of a recording and of a
// program, line, conditional,
// function and data breakpoints, a signal stop, steps both ways by line
// and by instruction, reverse continue, goto targets, variables, watch,
// hover and the debug console. It skips where node or npm is missing or
// the client cannot be installed (no registry, no cache).
func TestDAPWithVSCodeClient(t *testing.T) {
	t.Parallel()
	node := need(t, "node")
	if v, err := exec.Command(node, "--version").Output(); err != nil || !nodeHasTestRunner(string(v)) {
		t.Skipf("node %q has no test runner (node:test needs 18 or later)", v)
	}
	dir := vscodeClient(t)

	work := t.TempDir()
	steps, corrupt := buildC(t, "source/steps.c"), buildC(t, "source/corrupt.c")
	stepsTrace, corruptTrace := filepath.Join(work, "steps.rwd"), filepath.Join(work, "corrupt.rwd")
	mustRecord(t, stepsTrace, steps)
	if _, stderr, code := record(t, corruptTrace, corrupt); code != 139 {
		t.Fatalf("record corrupt: exit %d, want 139: %s", code, stderr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, port, _ := net.SplitHostPort(listenDAP(ctx, t))
	cmd := exec.CommandContext(ctx, node, "--test", "rewind.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"REWIND="+rewind(t),
		"STEPS_TRACE="+stepsTrace, "STEPS_SRC="+srcPath("source/steps.c"), "STEPS_PROG="+steps,
		"CORRUPT_TRACE="+corruptTrace, "CORRUPT_SRC="+srcPath("source/corrupt.c"),
		"WORK="+work, "DAP_PORT="+port)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test rewind.test.js: %v\n%s", err, out)
	}
	checkNoPanic(t, "rewind dap under the VS Code client", out)
	if !regexp.MustCompile(`(?m)^# pass 4$`).Match(out) || regexp.MustCompile(`(?m)^# fail [1-9]`).Match(out) {
		t.Fatalf("node --test: want 4 passing tests, none failing:\n%s", out)
	}
}

// listenDAP starts `rewind dap --listen` on a free port of the loopback
// and returns its address, stopping the server (SIGINT) when the test
// ends.
func listenDAP(ctx context.Context, t *testing.T) string {
	t.Helper()
	srv := exec.CommandContext(ctx, rewind(t), "dap", "--listen", "127.0.0.1:0")
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
	})
	line, err := bufio.NewReader(stderr).ReadString('\n')
	m := regexp.MustCompile(`^rewind: DAP server listening at (127\.0\.0\.1:\d+)\n`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("rewind dap --listen: no address in %q: %v", line, err)
	}
	return m[1]
}

// nodeHasTestRunner says whether a `node --version` (v20.1.0) is 18 or
// later.
func nodeHasTestRunner(version string) bool {
	m := regexp.MustCompile(`^v(\d+)\.`).FindStringSubmatch(version)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	return major >= 18
}

// vscodeClient returns a directory where rewind.test.js finds the test
// client: the source tree's own when `npm ci` was run there (as .ci/run
// does), else a copy installed with `npm ci` from the lockfile (the npm
// cache serves it offline). It skips the test when neither works.
func vscodeClient(t *testing.T) string {
	t.Helper()
	src := filepath.Join(moduleRoot, vscodeTestDir)
	if _, err := os.Stat(filepath.Join(src, "node_modules", "@vscode", "debugadapter-testsupport", "package.json")); err == nil {
		return src
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm not installed, and " + vscodeTestDir + "/node_modules absent")
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "rewind.test.js"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--prefer-offline", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot install the VS Code test client (offline?): npm ci: %v\n%s", err, tail(out))
	}
	return dir
}
