package ptrace

import (
	"errors"
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
