package syscalls

import (
	"encoding/binary"
	"errors"
	"syscall"
	"testing"
)

// kernelLast is the highest x86-64 number names.go knows; the kernel's
// table (arch/x86/entry/syscalls/syscall_64.tbl) leaves 337..423 unassigned.
const kernelLast = 471

// TestEveryCallHasAPolicy fails when a named number has no table entry: the
// recorder would then flag every success of it as unsupported without
// saying why. An entry is a policy: emulated with its output rule (none:
// it writes nothing), re-executed, refused, or marked Unsupported with a
// reason.
func TestEveryCallHasAPolicy(t *testing.T) {
	for n := 0; n <= kernelLast; n++ {
		if n >= 337 && n <= 423 {
			continue
		}
		s, ok := Lookup(n)
		if !ok {
			t.Errorf("system call %d (%s) has no entry in the table", n, Name(n))
			continue
		}
		if s.Policy == Unsupported && s.Why == "" {
			t.Errorf("%s is Unsupported without a reason", s.Name)
		}
	}
	if len(names) != kernelLast+1 {
		t.Errorf("names.go ends at %d: add the new calls here and to the table", len(names)-1)
	}
}

// TestFailuresWriteNothing checks that a failed call writes no memory
// replay must reproduce, for every call but the few whose failures do
// (listed with the errors that write).
func TestFailuresWriteNothing(t *testing.T) {
	const base = 0x10000
	m := newMem(base, 0x1000)
	writes := map[string]int64{ // call → the one failure that writes
		"capget": -22, "capset": -22, "name_to_handle_at": -75, "perf_event_open": -7,
		"lsm_get_self_attr": -7, "lsm_list_modules": -7,
	}
	for _, ret := range []int64{-1, -9, -14, -22, -7, -75, -38} {
		for _, s := range table {
			for _, args := range [][6]uint64{{}, {base, base, base, base, base, base}} {
				c := &Call{Nr: s.Nr, Args: args, Ret: ret}
				rs, _ := OutputRanges(c, m)
				if len(rs) == 0 || writes[s.Name] == ret {
					continue
				}
				if s.Name == "futex" || (s.Name == "bpf" && args[0] != 0) {
					continue // PI futex words, BPF logs: see their rules
				}
				t.Errorf("%s failing with %s writes %+v", s.Name, ErrnoName(int(-ret)), rs)
			}
		}
	}
}

func TestWhyUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *Call
		want bool
	}{
		{"unknown number failed", &Call{Nr: 999, Ret: -38}, false},
		{"syscall(-1)", &Call{Nr: -1, Ret: -38}, false},
		{"huge number", &Call{Nr: 100000, Ret: -38}, false},
		{"unknown number succeeded", &Call{Nr: 999, Ret: 0}, true},
		{"read", call(t, "read", 5, 0, 0x1000, 5), false},
		{"shmget succeeded", call(t, "shmget", 3, 0, 4096, 01600), false},
		{"shmget failed", call(t, "shmget", -22, 0, 4096, 01600), false},
		{"iopl failed", call(t, "iopl", -38, 3), false},
		{"user dispatch on", call(t, "prctl", 0, 59, 1, 0, 0, 0x1000), true},
		{"user dispatch off", call(t, "prctl", 0, 59, 0), false},
		{"PR_SET_NAME", call(t, "prctl", 0, 15, 0x1000), false},
		{"bpf future command", call(t, "bpf", 0, 99, 0x1000, 144), true},
		{"bpf map create", call(t, "bpf", 3, 0, 0x1000, 144), false},
		{"rt_sigreturn -1", call(t, "rt_sigreturn", -1), false},
		{"uretprobe SIGILL", call(t, "uretprobe", -1), false},
	} {
		if got := WhyUnsupported(tc.c) != ""; got != tc.want {
			t.Errorf("%s: WhyUnsupported = %q", tc.name, WhyUnsupported(tc.c))
		}
	}
}

// fakeProber is a Prober over fakeMem: its probes answer from a table of
// (call number, first argument) → scratch content and result.
type fakeProber struct {
	*fakeMem
	answers map[[2]uint64]probeAnswer
	fds     map[int]string
}

type probeAnswer struct {
	ret int64
	out func(scratch uint64) []byte
}

func (p *fakeProber) Probe(nr int, size int, build func(uint64) ([6]uint64, []byte)) (int64, []byte, error) {
	const scratch = 0x7000
	args, init := build(scratch)
	key := [2]uint64{uint64(nr), args[0]}
	if nr == 321 { // bpf: keyed by the map fd in attr
		key[1] = uint64(binary.LittleEndian.Uint32(init))
	}
	a, ok := p.answers[key]
	if !ok {
		return 0, nil, errors.New("no such probe")
	}
	buf := make([]byte, size)
	copy(buf, a.out(scratch))
	return a.ret, buf, nil
}

func (p *fakeProber) FdTarget(fd int) (string, error) {
	if s, ok := p.fds[fd]; ok {
		return s, nil
	}
	return "", syscall.EBADF
}

func TestFamilyOutputs(t *testing.T) {
	const base = 0x10000
	mem := newMem(base, 0x1000)
	// ptrace GETREGSET: iovec at base+0x100 → base+0x200, 512 bytes after the call.
	mem.put64(base+0x100, base+0x200)
	mem.put64(base+0x108, 512)
	// bpf MAP_LOOKUP_ELEM on map fd 5: attr at base+0x300, value at base+0x400.
	mem.put32(base+0x300, 5)
	mem.put64(base+0x310, base+0x400)
	// bpf PROG_LOAD with a log: attr at base+0x500, log of 256 bytes at base+0x600.
	mem.put32(base+0x518, 1)
	mem.put32(base+0x51c, 256)
	mem.put64(base+0x520, base+0x600)
	// bpf OBJ_GET_INFO_BY_FD of program fd 6, info at base+0x800 (232 bytes)
	// with 2 map ids at base+0x900.
	mem.put32(base+0x700, 6)
	mem.put32(base+0x704, 232)
	mem.put64(base+0x708, base+0x800)
	mem.put32(base+0x800+52, 2)
	mem.put64(base+0x800+56, base+0x900)
	// lsm_get_self_attr: *size = 40 at base+0xa00.
	mem.put32(base+0xa00, 40)

	m := &fakeProber{fakeMem: mem, fds: map[int]string{5: "anon_inode:bpf-map", 6: "anon_inode:bpf-prog", 7: "anon_inode:[perf_event]", 8: "/etc/passwd"},
		answers: map[[2]uint64]probeAnswer{
			{66, 9}: {0, func(uint64) []byte { // semctl IPC_STAT of set 9: 3 semaphores
				b := make([]byte, semidDsSize)
				binary.LittleEndian.PutUint64(b[semNsemsOff:], 3)
				return b
			}},
			{321, 5}: {0, func(uint64) []byte { // bpf map info: hash, key 4, value 12
				b := make([]byte, 16+bpfMapInfoSize)
				binary.LittleEndian.PutUint32(b[16:], 1)
				binary.LittleEndian.PutUint32(b[16+8:], 4)
				binary.LittleEndian.PutUint32(b[16+12:], 12)
				return b
			}},
		}}
	for _, tc := range []struct {
		name string
		c    *Call
		want []Range
	}{
		{"msgrcv", call(t, "msgrcv", 5, 3, base, 100, 0, 0), []Range{{Addr: base, Len: 13}}},
		{"msgctl IPC_STAT", call(t, "msgctl", 0, 3, 2, base), []Range{{Addr: base, Len: 120}}},
		{"msgctl MSG_INFO", call(t, "msgctl", 1, 3, 12, base), []Range{{Addr: base, Len: 32}}},
		{"msgctl IPC_RMID", call(t, "msgctl", 0, 3, 0, 0), nil},
		{"semctl IPC_STAT", call(t, "semctl", 0, 9, 0, 2, base), []Range{{Addr: base, Len: 104}}},
		{"semctl GETALL", call(t, "semctl", 0, 9, 0, 13, base), []Range{{Addr: base, Len: 6}}},
		{"semctl GETVAL", call(t, "semctl", 7, 9, 0, 12, 0), nil},
		{"prctl PR_GET_PDEATHSIG", call(t, "prctl", 0, 2, base), []Range{{Addr: base, Len: 4}}},
		{"prctl PR_GET_TSC", call(t, "prctl", 0, 25, base), []Range{{Addr: base, Len: 4}}},
		{"prctl PR_GET_CHILD_SUBREAPER", call(t, "prctl", 0, 37, base), []Range{{Addr: base, Len: 4}}},
		{"prctl PR_GET_AUXV", call(t, "prctl", 368, 0x41555856, base, 64), []Range{{Addr: base, Len: 64}}},
		{"prctl PR_GET_SECCOMP", call(t, "prctl", 0, 21), nil},
		{"prctl PR_CAPBSET_READ", call(t, "prctl", 1, 23, 21), nil},
		{"keyctl READ", call(t, "keyctl", 30, 11, 12345, base, 16), []Range{{Addr: base, Len: 16}}},
		{"keyctl DESCRIBE", call(t, "keyctl", 20, 6, 12345, base, 100), []Range{{Addr: base, Len: 20}}},
		{"keyctl probe size", call(t, "keyctl", 20, 6, 12345, 0, 0), nil},
		{"syslog READ_ALL", call(t, "syslog", 100, 3, base, 4096), []Range{{Addr: base, Len: 100}}},
		{"syslog SIZE_BUFFER", call(t, "syslog", 4096, 10, 0, 0), nil},
		{"perf_event_open E2BIG", call(t, "perf_event_open", -7, base, 0, ^uint64(0), ^uint64(0), 0), []Range{{Addr: base + 4, Len: 4}}},
		{"perf_event_open", call(t, "perf_event_open", 3, base, 0, ^uint64(0), ^uint64(0), 0), nil},
		{"ptrace PEEKDATA", call(t, "ptrace", 0, 2, 42, 0x400000, base), []Range{{Addr: base, Len: 8}}},
		{"ptrace GETREGS", call(t, "ptrace", 0, 12, 42, 0, base), []Range{{Addr: base, Len: 216}}},
		{"ptrace GETREGSET", call(t, "ptrace", 0, 0x4204, 42, 1, base+0x100), []Range{{Addr: base + 0x100, Len: 16}, {Addr: base + 0x200, Len: 512}}},
		{"ptrace POKEDATA", call(t, "ptrace", 0, 5, 42, 0x400000, 7), nil},
		{"ptrace TRACEME", call(t, "ptrace", -1, 0), nil},
		{"bpf MAP_LOOKUP_ELEM", call(t, "bpf", 0, 1, base+0x300, 32), []Range{{Addr: base + 0x400, Len: 12}}},
		{"bpf MAP_GET_NEXT_KEY", call(t, "bpf", 0, 4, base+0x300, 32), []Range{{Addr: base + 0x400, Len: 4}}},
		{"bpf MAP_LOOKUP_ELEM ENOENT", call(t, "bpf", -2, 1, base+0x300, 32), nil},
		{"bpf PROG_LOAD verifier error", call(t, "bpf", -13, 5, base+0x500, 0x90), []Range{{Addr: base + 0x500, Len: 0x90}, {Addr: base + 0x600, Len: 256}}},
		{"bpf OBJ_GET_INFO_BY_FD prog", call(t, "bpf", 0, 15, base+0x700, 16), []Range{{Addr: base + 0x700, Len: 16}, {Addr: base + 0x800, Len: 232}, {Addr: base + 0x900, Len: 8}}},
		{"bpf MAP_GET_NEXT_ID", call(t, "bpf", 0, 12, base, 8), []Range{{Addr: base, Len: 8}}},
		{"lsm_get_self_attr", call(t, "lsm_get_self_attr", 1, 100, base+0xb00, base+0xa00, 0), []Range{{Addr: base + 0xa00, Len: 4}, {Addr: base + 0xb00, Len: 40}}},
		{"lsm_list_modules E2BIG", call(t, "lsm_list_modules", -7, base+0xb00, base+0xa00, 0), []Range{{Addr: base + 0xa00, Len: 4}}},
		{"quotactl Q_GETQUOTA", call(t, "quotactl", 0, 0x80000700, base, 0, base+0x100), []Range{{Addr: base + 0x100, Len: 72}}},
		{"modify_ldt read", call(t, "modify_ldt", 16, 0, base, 64), []Range{{Addr: base, Len: 16}}},
		{"statmount", call(t, "statmount", 0, base, base+0x100, 512, 0), []Range{{Addr: base + 0x100, Len: 512}}},
		{"listmount", call(t, "listmount", 3, base, base+0x100, 64, 0), []Range{{Addr: base + 0x100, Len: 24}}},
	} {
		checkRanges(t, "OutputRanges", OutputRanges, tc.name, tc.c, m, tc.want)
	}
	// Without a Prober (a listing), GETALL cannot be sized: an error, not
	// a silent nothing.
	if _, err := OutputRanges(call(t, "semctl", 0, 9, 0, 13, base), mem); err == nil {
		t.Error("semctl GETALL without a prober: no error")
	}
	// A link's info points to names rewind does not decode.
	m.fds[6] = "anon_inode:bpf_link"
	if _, err := OutputRanges(call(t, "bpf", 0, 15, base+0x700, 16), m); err == nil {
		t.Error("bpf OBJ_GET_INFO_BY_FD of a link: no error")
	}
}

func TestPolicyForms(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *Call
		want Policy
	}{
		{"PR_SET_NAME", call(t, "prctl", 0, 15, 0x1000), Reexec},
		{"PR_SET_VMA", call(t, "prctl", 0, 0x53564d41, 0, 0x1000, 4096, 0x2000), Reexec},
		{"PR_SET_MDWE", call(t, "prctl", 0, 65, 1), Reexec},
		{"PR_SET_MM_MAP_SIZE", call(t, "prctl", 0, 35, 15, 0x1000), Emulate},
		{"PR_SET_MM brk", call(t, "prctl", 0, 35, 7, 0x1000), Reexec},
		{"PR_GET_NAME", call(t, "prctl", 0, 16, 0x1000), Emulate},
		{"PR_SET_DUMPABLE", call(t, "prctl", 0, 4, 0), Emulate},
		{"modify_ldt write", call(t, "modify_ldt", 0, 1, 0x1000, 16), Reexec},
		{"modify_ldt read", call(t, "modify_ldt", 0, 0, 0x1000, 16), Emulate},
		{"chroot", call(t, "chroot", 0, 0x1000), Reexec},
		{"mount", call(t, "mount", 0, 0x1000, 0x1000, 0x1000, 0, 0), Emulate},
		{"userfaultfd", call(t, "userfaultfd", 0, 0), Refuse},
		{"io_setup", call(t, "io_setup", 0, 8, 0x1000), Refuse},
		{"uretprobe", call(t, "uretprobe", -1), Reexec},
		{"setrlimit STACK", call(t, "setrlimit", 0, 3, 0x1000), Reexec},
		{"setrlimit NOFILE", call(t, "setrlimit", 0, 7, 0x1000), Emulate},
		{"prlimit64 own STACK", call(t, "prlimit64", 0, 0, 3, 0x1000, 0x2000), Reexec},
		{"prlimit64 own STACK read", call(t, "prlimit64", 0, 0, 3, 0, 0x2000), Emulate},
		{"prlimit64 another's STACK", call(t, "prlimit64", 0, 4242, 3, 0x1000, 0), Emulate},
	} {
		s, _ := Lookup(tc.c.Nr)
		if got := s.PolicyFor(tc.c); got != tc.want {
			t.Errorf("%s: policy %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRefusal(t *testing.T) {
	m := &fakeProber{fakeMem: newMem(0x10000, 0x100), fds: map[int]string{7: "anon_inode:[perf_event]", 8: "/etc/passwd"}}
	for _, tc := range []struct {
		name string
		c    *Call
		want syscall.Errno
	}{
		// The recorder emulates the program's ptrace (attach included).
		{"ptrace ATTACH", call(t, "ptrace", 0, 16, 42), 0},
		{"ptrace SEIZE", call(t, "ptrace", 0, 0x4206, 42), 0},
		{"ptrace TRACEME", call(t, "ptrace", 0, 0), 0},
		{"ptrace PEEKDATA", call(t, "ptrace", 0, 2, 42, 0x1000, 0x2000), 0},
		{"io_uring_setup", call(t, "io_uring_setup", 0, 8, 0x1000), syscall.ENOSYS},
		{"mmap perf ring", call(t, "mmap", 0, 0, 8192, 3, 1, 7, 0), syscall.ENODEV},
		{"mmap file", call(t, "mmap", 0, 0, 8192, 1, 2, 8, 0), 0},
		{"mmap anonymous", call(t, "mmap", 0, 0, 8192, 3, 0x22, ^uint64(0), 0), 0},
		{"unknown", &Call{Nr: 999}, 0},
	} {
		got, why := Refusal(tc.c, m)
		if got != tc.want || (got != 0 && got != syscall.ENOSYS && why == "") {
			t.Errorf("%s: Refusal = %v %q, want %v", tc.name, got, why, tc.want)
		}
	}
}
