package record

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestWaitArgs checks which tracees a wait of an emulated tracer selects,
// and where its options are.
func TestWaitArgs(t *testing.T) {
	neg := func(v int64) uint64 { return uint64(v) }
	tests := []struct {
		name    string
		nr      int
		args    []uint64
		pid     int
		options uint64
		reg     int
	}{
		{"wait4 one child", unix.SYS_WAIT4, []uint64{42, 0, 2, 0}, 42, 2, trace.RDX},
		{"wait4 any", unix.SYS_WAIT4, []uint64{neg(-1), 0, 0x40000000, 0}, -1, 0x40000000, trace.RDX},
		{"wait4 own group", unix.SYS_WAIT4, []uint64{0, 0, 1, 0}, -1, 1, trace.RDX},
		{"wait4 a group", unix.SYS_WAIT4, []uint64{neg(-7), 0, 0, 0}, -1, 0, trace.RDX},
		{"waitid P_PID", unix.SYS_WAITID, []uint64{pPid, 42, 0, 4, 0}, 42, 4, trace.R10},
		{"waitid P_ALL", unix.SYS_WAITID, []uint64{pAll, 0, 0, 4, 0}, -1, 4, trace.R10},
		{"waitid P_PGID", unix.SYS_WAITID, []uint64{2, 7, 0, 4, 0}, -2, 4, trace.R10},
		{"waitid P_PIDFD", unix.SYS_WAITID, []uint64{3, 5, 0, 4, 0}, -2, 4, trace.R10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := syscalls.Call{Nr: tt.nr}
			copy(c.Args[:], tt.args)
			pid, options, reg := waitArgs(&c)
			if pid != tt.pid || options != tt.options || reg != tt.reg {
				t.Errorf("waitArgs = %d, %#x, reg %d; want %d, %#x, reg %d", pid, options, reg, tt.pid, tt.options, tt.reg)
			}
		})
	}
}

// TestRegsBytes checks the registers are laid out as struct
// user_regs_struct, which the tracer's GETREGS and SETREGS use.
func TestRegsBytes(t *testing.T) {
	var regs trace.Regs
	for i := range regs {
		regs[i] = uint64(i + 1)
	}
	b := regsBytes(&regs)
	if len(b) != userRegsBytes {
		t.Fatalf("%d bytes, want %d", len(b), userRegsBytes)
	}
	// rip is at offset 128 of struct user_regs_struct, orig_rax at 120.
	if got := binary.LittleEndian.Uint64(b[128:]); got != regs[trace.RIP] {
		t.Errorf("rip at 128 = %d, want %d", got, regs[trace.RIP])
	}
	if got := binary.LittleEndian.Uint64(b[120:]); got != regs[trace.OrigRAX] {
		t.Errorf("orig_rax at 120 = %d, want %d", got, regs[trace.OrigRAX])
	}
}
