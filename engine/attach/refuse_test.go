package attach

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRefusals(t *testing.T) {
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	cases := []struct {
		name string
		pid  func(t *testing.T) int
		want string
	}{
		{"rewind itself", func(*testing.T) int { return os.Getpid() }, "rewind itself"},
		{"an ancestor", func(*testing.T) int { return os.Getppid() }, "ancestor of rewind"},
		{"a child", func(*testing.T) int { return child.Process.Pid }, "descendant of rewind"},
		{"no such process", func(*testing.T) int { return 1 << 30 }, "no process"},
		{"a bad id", func(*testing.T) int { return -3 }, "bad process id"},
		{"traced by strace", tracedTarget, "already traced by process"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Seize(c.pid(t))
			if err == nil {
				p.Detach()
				t.Fatal("attached")
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line with %q", err, c.want)
			}
		})
	}
}

// tracedTarget starts the target under strace -p and returns its pid once
// strace holds it.
func tracedTarget(t *testing.T) int {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is missing")
	}
	tg := startTarget(t, buildTarget(t), 1)
	cmd := exec.Command(strace, "-f", "-o", os.DevNull, "-p", strconv.Itoa(tg.pid))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s, err := readStatus(tg.pid); err == nil && s.TracerPid != 0 {
			return tg.pid
		}
	}
	t.Fatal("strace did not attach")
	return 0
}

func TestCheckOwner(t *testing.T) {
	user := func(uid, gid int, caps uint64) procStatus {
		return procStatus{Uids: [4]int{uid, uid, uid, uid}, Gids: [4]int{gid, gid, gid, gid}, CapEff: caps}
	}
	setuid := user(1000, 1000, 0)
	setuid.Uids[1] = 0 // a set-user-ID program keeps its privilege
	cases := []struct {
		name         string
		target, self procStatus
		ok           bool
	}{
		{"same user", user(1000, 1000, 0), user(1000, 1000, 0), true},
		{"another user", user(1001, 1001, 0), user(1000, 1000, 0), false},
		{"another group", user(1000, 1001, 0), user(1000, 1000, 0), false},
		{"a set-user-ID program", setuid, user(1000, 1000, 0), false},
		{"another user with CAP_SYS_PTRACE", user(1001, 1001, 0), user(1000, 1000, 1<<capSysPtrace), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkOwner(c.target, c.self)
			if (err == nil) != c.ok {
				t.Fatalf("checkOwner: %v, want ok=%v", err, c.ok)
			}
		})
	}
}
