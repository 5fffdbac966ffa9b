package ptrace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// stoppedChild starts sleep traced by th's thread and returns its pid, at
// its exec stop. The child is killed when the test ends.
func stoppedChild(t *testing.T, th *Thread) int {
	t.Helper()
	var pid int
	var err error
	th.Do(func() {
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
		if err = cmd.Start(); err != nil {
			return
		}
		pid = cmd.Process.Pid
		var st Status
		if st, _, err = Wait(pid, false); err == nil && st.Kind != StopSignal {
			err = errors.New("first stop is " + st.String())
		}
	})
	if err != nil {
		t.Fatalf("start a traced child: %v", err)
	}
	t.Cleanup(func() {
		unix.Kill(pid, unix.SIGKILL)
		th.Do(func() { Wait(pid, false) })
	})
	return pid
}

func TestSetRegsNamesTheRefusedRegister(t *testing.T) {
	th := NewThread()
	t.Cleanup(th.Close) // after the child's cleanup, which needs the thread
	pid := stoppedChild(t, th)
	var live trace.Regs
	var err error
	th.Do(func() { err = GetRegs(pid, &live) })
	if err != nil {
		t.Fatal(err)
	}
	if what := refusedReg(&live); what != "" {
		t.Fatalf("registers read from a stopped thread are called refused (%s): %#x", what, live)
	}
	for _, c := range []struct {
		reg  int
		val  uint64
		want string
	}{
		{trace.CS, 0, "cs=0x0"},
		{trace.SS, 0x28, "ss=0x28"},
		{trace.DS, 1, "ds=0x1"},
		{trace.GS, 0x10, "gs=0x10"},
		{trace.FSBase, 1 << 47, "fs_base=0x800000000000"},
		{trace.GSBase, 1<<64 - 1, "gs_base=0xffffffffffffffff"},
	} {
		regs := live
		regs[c.reg] = c.val
		if got := refusedReg(&regs); got != c.want {
			t.Errorf("refusedReg with %s=%#x: %q, want %q", trace.RegNames[c.reg], c.val, got, c.want)
		}
		th.Do(func() { err = SetRegs(pid, &regs) })
		if !errors.Is(err, unix.EIO) || !strings.Contains(err.Error(), c.want+" refused") {
			t.Errorf("SetRegs with %s=%#x: %v, want EIO naming %s", trace.RegNames[c.reg], c.val, err, c.want)
		}
	}
	var back trace.Regs
	var setErr, getErr error
	th.Do(func() {
		setErr = SetRegs(pid, &live)
		getErr = GetRegs(pid, &back)
	})
	if setErr != nil || getErr != nil {
		t.Fatalf("write back the registers read: %v; read them again: %v", setErr, getErr)
	}
	if back != live {
		t.Errorf("registers changed by the refused writes:\n got %#x\nwant %#x", back, live)
	}
}

// TestRestartCall: the kernel's restart, on registers at a call's end.
func TestRestartCall(t *testing.T) {
	const rip, nanosleep, read = 0x401002, 35, 0
	cases := []struct {
		ret, orig uint64
		i386      bool
		want      Restarted
		rax, rip  uint64
	}{
		{ret: ^uint64(errRestartSys - 1), orig: read, want: Restarted{Restart: true}, rax: read, rip: rip - 2},
		{ret: ^uint64(errRestartNoHand - 1), orig: read, want: Restarted{Restart: true}, rax: read, rip: rip - 2},
		{ret: ^uint64(errRestartBlock - 1), orig: nanosleep, want: Restarted{Restart: true, Block: true}, rax: sysRestartSyscall, rip: rip - 2},
		{ret: ^uint64(errRestartBlock - 1), orig: 162, i386: true, want: Restarted{Restart: true, Block: true}, rax: sysRestartSyscallI386, rip: rip - 2},
		{ret: ^uint64(4 - 1), orig: read, rax: ^uint64(3), rip: rip}, // -EINTR: no restart
		{ret: 5, orig: read, rax: 5, rip: rip},
	}
	for _, c := range cases {
		var regs trace.Regs
		regs[trace.RAX], regs[trace.OrigRAX], regs[trace.RIP] = c.ret, c.orig, rip
		got := RestartCall(&regs, c.i386)
		if got != c.want || regs[trace.RAX] != c.rax || regs[trace.RIP] != c.rip || regs[trace.OrigRAX] != c.orig {
			t.Errorf("rax %#x orig %d: %+v rax %#x rip %#x, want %+v rax %#x rip %#x", c.ret, c.orig, got, regs[trace.RAX], regs[trace.RIP], c.want, c.rax, c.rip)
		}
		if IsRestart(c.ret) != c.want.Restart {
			t.Errorf("IsRestart(%#x) = %v", c.ret, !c.want.Restart)
		}
	}
}

// TestStopsProcess: which signals would stop a process, after its
// dispositions: a shell that ignores SIGTTOU and catches SIGTSTP.
func TestStopsProcess(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap "" TTOU; trap ":" TSTP; echo ready; read x`)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		cmd.Wait()
	}()
	var ready [6]byte
	if _, err := io.ReadFull(out, ready[:]); err != nil {
		t.Fatalf("the shell did not get ready: %v", err)
	}
	// SIGTTIN keeps the disposition the shell inherited from us.
	ttinDefault := statusMask(fmt.Sprintf("/proc/%d/status", os.Getpid()), "SigIgn")&(1<<(unix.SIGTTIN-1)) == 0
	for _, c := range []struct {
		sig  unix.Signal
		want bool
	}{
		{unix.SIGSTOP, true},
		{unix.SIGTSTP, false}, // caught
		{unix.SIGTTOU, false}, // ignored
		{unix.SIGTTIN, ttinDefault},
		{unix.SIGCONT, false},
		{unix.SIGUSR1, false},
	} {
		if got := StopsProcess(cmd.Process.Pid, int(c.sig)); got != c.want {
			t.Errorf("StopsProcess(%s) = %v, want %v", unix.SignalName(c.sig), got, c.want)
		}
	}
}
