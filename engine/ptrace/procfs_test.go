package ptrace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestReadStat: the layout and the command name of a process whose name
// holds spaces and parentheses, as /proc/PID/comm says it, from one read
// of its stat.
func TestReadStat(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep here")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sleep", "a) b (c", "a-name-longer-than-fifteen"} {
		t.Run(name, func(t *testing.T) {
			prog := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(prog, b, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(prog, "60")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer cmd.Process.Kill()
			// Start returns once the child forked, maybe before its exec
			// set up the new image (a ptrace exec stop comes after).
			var l trace.MMLayout
			var comm string
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
				exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid))
				if l, comm, err = ReadStat(cmd.Process.Pid); err == nil && exe == prog {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the child never exec'd: %v", err)
				}
			}
			want, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cmd.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			if comm+"\n" != string(want) {
				t.Errorf("command name %q, /proc says %q", comm, want)
			}
			if l.ArgStart == 0 || l.ArgEnd <= l.ArgStart || l.EnvEnd <= l.EnvStart || l.StartCode == 0 || l.Brk != l.StartBrk {
				t.Errorf("layout %+v", l)
			}
		})
	}
}
