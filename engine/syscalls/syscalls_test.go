package syscalls

import (
	"bufio"
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fakeMem is tracee memory made of one byte slice mapped at base; reads past
// its end return what is available and an error, like a partial
// process_vm_readv.
type fakeMem struct {
	base uint64
	data []byte
}

var errFault = errors.New("fault")

func (f *fakeMem) ReadAt(p []byte, addr uint64) (int, error) {
	if addr < f.base || addr >= f.base+uint64(len(f.data)) {
		return 0, errFault
	}
	n := copy(p, f.data[addr-f.base:])
	if n < len(p) {
		return n, errFault
	}
	return n, nil
}

func newMem(base uint64, size int) *fakeMem { return &fakeMem{base: base, data: make([]byte, size)} }

func (f *fakeMem) put(addr uint64, b []byte) { copy(f.data[addr-f.base:], b) }
func (f *fakeMem) put64(addr, v uint64)      { binary.LittleEndian.PutUint64(f.data[addr-f.base:], v) }
func (f *fakeMem) put32(addr uint64, v uint32) {
	binary.LittleEndian.PutUint32(f.data[addr-f.base:], v)
}

func nr(t *testing.T, name string) int {
	t.Helper()
	n, ok := Number(name)
	if !ok {
		t.Fatalf("no number for %s", name)
	}
	return n
}

func call(t *testing.T, name string, ret int64, args ...uint64) *Call {
	t.Helper()
	c := &Call{Nr: nr(t, name), Ret: ret}
	copy(c.Args[:], args)
	return c
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		nr   int
		name string
	}{
		{0, "read"}, {1, "write"}, {9, "mmap"}, {56, "clone"}, {202, "futex"},
		{231, "exit_group"}, {257, "openat"}, {318, "getrandom"}, {334, "rseq"},
		{435, "clone3"}, {462, "mseal"}, {400, "syscall_400"}, {-1, "syscall_-1"}, {9999, "syscall_9999"},
	} {
		if got := Name(tc.nr); got != tc.name {
			t.Errorf("Name(%d) = %q, want %q", tc.nr, got, tc.name)
		}
	}
}

// TestNamesMatchHeader checks every number against this machine's kernel
// headers when they are installed.
func TestNamesMatchHeader(t *testing.T) {
	checkHeaderNames(t, "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "Name", Name, 300)
	for n := 0; n <= 462; n++ {
		named := Name(n) != "syscall_"+strconv.Itoa(n)
		if unassigned := n >= 337 && n <= 423; named == unassigned {
			t.Errorf("Name(%d) = %q", n, Name(n))
		}
	}
}

// checkHeaderNames checks what name (called fname in messages) says of
// every __NR_ number a kernel header defines; a machine without the header
// skips the test, and a header with fewer than least numbers fails it, so
// that a change of its format is not taken for agreement.
func checkHeaderNames(t *testing.T, header, fname string, name func(int) string, least int) {
	t.Helper()
	f, err := os.Open(header)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 || fs[0] != "#define" || !strings.HasPrefix(fs[1], "__NR_") {
			continue
		}
		n, err := strconv.Atoi(fs[2])
		if err != nil {
			continue
		}
		if got, want := name(n), strings.TrimPrefix(fs[1], "__NR_"); got != want {
			t.Errorf("%s(%d) = %q, header says %q", fname, n, got, want)
		}
		seen++
	}
	if seen < least {
		t.Errorf("only %d header entries parsed", seen)
	}
}

func TestTable(t *testing.T) {
	if Count() < 150 {
		t.Errorf("Count() = %d, want >= 150", Count())
	}
	for _, s := range table {
		if got, ok := Lookup(s.Nr); !ok || got.Name != s.Name || Name(s.Nr) != s.Name {
			t.Errorf("%s: Lookup(%d) inconsistent", s.Name, s.Nr)
		}
		if got, ok := ByName(s.Name); !ok || got.Nr != s.Nr {
			t.Errorf("ByName(%s) inconsistent", s.Name)
		}
		if len(s.Args) > 6 {
			t.Errorf("%s has %d args", s.Name, len(s.Args))
		}
	}
	if _, ok := ByName("nosuchcall"); ok {
		t.Error("ByName found nosuchcall")
	}
}

func TestPolicy(t *testing.T) {
	const (
		thread = 0x3d0f00  // what glibc's pthread_create passes
		fork   = 0x1200011 // CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD
		spawn  = 0x4111    // CLONE_VM|CLONE_VFORK|SIGCHLD (posix_spawn)
	)
	clone, _ := ByName("clone")
	for _, tc := range []struct {
		flags uint64
		want  Policy
	}{{thread, Reexec}, {fork, Emulate}, {spawn, Emulate}} {
		if got := clone.PolicyFor(&Call{Nr: clone.Nr, Args: [6]uint64{tc.flags}}); got != tc.want {
			t.Errorf("clone(%#x) policy %d, want %d", tc.flags, got, tc.want)
		}
	}
	want := map[Policy][]string{
		Refuse: {"io_uring_setup", "io_uring_enter", "io_uring_register", "rseq", "clone3"},
		Reexec: {"mmap", "munmap", "mprotect", "mremap", "brk", "madvise", "arch_prctl", "execve",
			"execveat", "exit", "exit_group", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn",
			"rt_sigsuspend", "sigaltstack", "set_tid_address", "set_robust_list", "chdir"},
		Emulate: {"fork", "vfork", "futex", "openat", "read", "prctl", "seccomp", "ioctl", "fcntl",
			"kill", "tgkill", "wait4", "sched_getaffinity", "mlock", "mlockall", "getrandom"},
	}
	for p, list := range want {
		for _, name := range list {
			s, ok := ByName(name)
			if !ok {
				t.Errorf("%s not described", name)
				continue
			}
			if got := s.PolicyFor(&Call{Nr: s.Nr}); got != p {
				t.Errorf("%s policy %d, want %d", name, got, p)
			}
		}
	}
}

func TestMayBlock(t *testing.T) {
	m := newMem(0x1000, 64) // zero timeout at 0x1000, one second at 0x1010
	m.put64(0x1010, 1)
	for _, tc := range []struct {
		c    *Call
		want bool
	}{
		{call(t, "futex", 0, 0x7f00, 128, 2), true},       // FUTEX_WAIT_PRIVATE
		{call(t, "futex", 0, 0x7f00, 128|9, 2), true},     // FUTEX_WAIT_BITSET_PRIVATE
		{call(t, "futex", 0, 0x7f00, 256|128|9, 2), true}, // with FUTEX_CLOCK_REALTIME
		{call(t, "futex", 0, 0x7f00, 129, 1), false},      // FUTEX_WAKE_PRIVATE
		{call(t, "futex", 0, 0x7f00, 8), false},           // FUTEX_TRYLOCK_PI
		{call(t, "poll", 0, 0x1000, 1, 0), false},
		{call(t, "poll", 0, 0x1000, 1, 0xffffffff), true},
		{call(t, "poll", 0, 0x1000, 1, ^uint64(0)), true},
		{call(t, "epoll_wait", 0, 3, 0x1000, 8, 0), false},
		{call(t, "epoll_wait", 0, 3, 0x1000, 8, 0xffffffff), true},
		{call(t, "flock", 0, 3, 2), true},    // LOCK_EX
		{call(t, "flock", 0, 3, 2|4), false}, // LOCK_EX|LOCK_NB
		{call(t, "fcntl", 0, 3, 7), true},    // F_SETLKW
		{call(t, "fcntl", 0, 3, 6), false},   // F_SETLK
		{call(t, "read", 0, 3), true},
		{call(t, "getpid", 0), false},
		{&Call{Nr: 999}, false},
	} {
		if got := MayBlock(tc.c); got != tc.want {
			t.Errorf("MayBlock(%s %x) = %v, want %v", Name(tc.c.Nr), tc.c.Args, got, tc.want)
		}
	}
	for _, tc := range []struct {
		c    *Call
		want bool
	}{
		{call(t, "select", 0, 4, 0x1020, 0, 0, 0x1000), false},
		{call(t, "select", 0, 4, 0x1020, 0, 0, 0x1010), true},
		{call(t, "select", 0, 4, 0x1020, 0, 0, 0), true},
		{call(t, "ppoll", 0, 0x1020, 1, 0x1000), false},
		{call(t, "pselect6", 0, 4, 0x1020, 0, 0, 0x9000), true}, // unreadable: assume it blocks
		{call(t, "poll", 0, 0x1020, 1, 0), false},
	} {
		if got := MayBlockMem(tc.c, m); got != tc.want {
			t.Errorf("MayBlockMem(%s %x) = %v, want %v", Name(tc.c.Nr), tc.c.Args, got, tc.want)
		}
	}
}

func TestOutputs(t *testing.T) {
	const base = 0x10000
	m := newMem(base, 0x1000)
	// readv: two iovecs of 4 and 100 bytes at base+0x100.
	m.put64(base+0x100, base+0x200)
	m.put64(base+0x108, 4)
	m.put64(base+0x110, base+0x300)
	m.put64(base+0x118, 100)
	// recvmsg: msghdr at base+0x400 with name, one iovec (base+0x100) and control.
	hdr := uint64(base + 0x400)
	m.put64(hdr, base+0x500)    // msg_name
	m.put32(hdr+8, 16)          // msg_namelen after the call
	m.put64(hdr+16, base+0x100) // msg_iov
	m.put64(hdr+24, 2)          // msg_iovlen
	m.put64(hdr+32, base+0x600) // msg_control
	m.put64(hdr+40, 24)         // msg_controllen after the call
	// accept: *addrlen = 110 (AF_UNIX) at base+0x700.
	m.put32(base+0x700, 110)

	for _, tc := range []struct {
		name string
		c    *Call
		want []Range
	}{
		{"read", call(t, "read", 10, 3, base, 4096), []Range{{Addr: base, Len: 10}}},
		{"read EOF", call(t, "read", 0, 3, base, 4096), nil},
		{"read failed", call(t, "read", -11, 3, base, 4096), nil},
		{"readv", call(t, "readv", 50, 3, base+0x100, 2), []Range{{Addr: base + 0x200, Len: 4}, {Addr: base + 0x300, Len: 46}}},
		{"recvfrom MSG_TRUNC", call(t, "recvfrom", 9000, 3, base, 100, 0x20, 0, 0), []Range{{Addr: base, Len: 100}}},
		{"recvmsg", call(t, "recvmsg", 20, 3, hdr, 0), []Range{
			{Addr: hdr, Len: 56}, {Addr: base + 0x500, Len: 16},
			{Addr: base + 0x200, Len: 4}, {Addr: base + 0x300, Len: 16}, {Addr: base + 0x600, Len: 24}}},
		{"accept", call(t, "accept", 4, 3, base+0x800, base+0x700), []Range{{Addr: base + 0x700, Len: 4}, {Addr: base + 0x800, Len: 110}}},
		{"accept NULL", call(t, "accept4", 4, 3, 0, 0, 0), nil},
		{"ioctl TCGETS", call(t, "ioctl", 0, 0, 0x5401, base), []Range{{Addr: base, Len: 36}}},
		{"ioctl TIOCGWINSZ", call(t, "ioctl", 0, 1, 0x5413, base), []Range{{Addr: base, Len: 8}}},
		{"ioctl _IOR TIOCGPTN", call(t, "ioctl", 0, 3, 0x80045430, base), []Range{{Addr: base, Len: 4}}},
		{"ioctl _IOW", call(t, "ioctl", 0, 3, 0x40045431, base), nil},
		{"ioctl FIONBIO", call(t, "ioctl", 0, 3, 0x5421, base), nil},
		{"ioctl failed", call(t, "ioctl", -25, 3, 0x5401, base), nil},
		{"stat", call(t, "stat", 0, base, base+0x100), []Range{{Addr: base + 0x100, Len: 144}}},
		{"stat failed", call(t, "stat", -2, base, base+0x100), nil},
		{"newfstatat", call(t, "newfstatat", 0, 0xffffff9c, base, base+0x100, 0), []Range{{Addr: base + 0x100, Len: 144}}},
		{"statx", call(t, "statx", 0, 0xffffff9c, base, 0, 0x7ff, base+0x100), []Range{{Addr: base + 0x100, Len: 256}}},
		{"pipe2", call(t, "pipe2", 0, base, 0x80000), []Range{{Addr: base, Len: 8}}},
		{"gettimeofday no tz", call(t, "gettimeofday", 0, base, 0), []Range{{Addr: base, Len: 16}}},
		{"wait4", call(t, "wait4", 42, ^uint64(0), base, 0, base+0x10), []Range{{Addr: base, Len: 4}, {Addr: base + 0x10, Len: 144}}},
		{"epoll_wait", call(t, "epoll_wait", 3, 4, base, 64, 0xffffffff), []Range{{Addr: base, Len: 36}}},
		{"poll EINTR", call(t, "poll", -4, base, 3, 100), []Range{{Addr: base, Len: 24}}},
		{"select", call(t, "select", 1, 65, base, 0, base+0x20, base+0x40), []Range{{Addr: base, Len: 16}, {Addr: base + 0x20, Len: 16}, {Addr: base + 0x40, Len: 16}}},
		{"select EINTR", call(t, "select", -4, 65, base, 0, 0, base+0x40), []Range{{Addr: base + 0x40, Len: 16}}},
		{"select EBADF", call(t, "select", -9, 65, base, 0, 0, base+0x40), nil},
		{"nanosleep restart", call(t, "nanosleep", -516, base, base+0x10), []Range{{Addr: base + 0x10, Len: 16}}},
		{"clock_nanosleep abs", call(t, "clock_nanosleep", -4, 1, 1, base, base+0x10), nil},
		{"clock_nanosleep rel", call(t, "clock_nanosleep", -4, 1, 0, base, base+0x10), []Range{{Addr: base + 0x10, Len: 16}}},
		{"getgroups size 0", call(t, "getgroups", 5, 0, 0), nil},
		{"getgroups", call(t, "getgroups", 5, 64, base), []Range{{Addr: base, Len: 20}}},
		{"getxattr probe", call(t, "getxattr", 12, base, base, 0, 0), nil},
		{"clone thread", call(t, "clone", 1234, 0x3d0f00, base, base+0x10, base+0x20, base+0x30), []Range{{Addr: base + 0x10, Len: 4}}},
		{"fcntl F_GETLK", call(t, "fcntl", 0, 3, 5, base), []Range{{Addr: base, Len: 32}}},
		{"fcntl F_SETFL", call(t, "fcntl", 0, 3, 4, 0x800), nil},
		{"prctl PR_GET_NAME", call(t, "prctl", 0, 16, base), []Range{{Addr: base, Len: 16}}},
		{"arch_prctl ARCH_GET_FS", call(t, "arch_prctl", 0, 0x1003, base), []Range{{Addr: base, Len: 8}}},
		{"arch_prctl ARCH_SET_FS", call(t, "arch_prctl", 0, 0x1002, base), nil},
		{"futex WAIT", call(t, "futex", 0, base, 128, 0), nil},
		{"futex LOCK_PI timeout", call(t, "futex", -110, base, 6|128, 0, base+0x10), []Range{{Addr: base, Len: 4}}},
		{"mincore", call(t, "mincore", 0, 0x7000, 8193, base), []Range{{Addr: base, Len: 3}}},
		{"sendmmsg", call(t, "sendmmsg", 2, 3, base, 5, 0), []Range{{Addr: base + 56, Len: 4}, {Addr: base + 64 + 56, Len: 4}}},
		{"rt_sigaction", call(t, "rt_sigaction", 0, 2, base, base+0x20, 8), nil},
		{"unknown", &Call{Nr: 9999}, nil},
	} {
		checkRanges(t, "OutputRanges", OutputRanges, tc.name, tc.c, m, tc.want)
	}
	// A msghdr that cannot be read is an error, not a silent "nothing".
	if _, err := OutputRanges(call(t, "recvmsg", 5, 3, 0x9000000, 0), m); err == nil {
		t.Error("recvmsg with unreadable msghdr: no error")
	}
}

func TestInputs(t *testing.T) {
	const base = 0x10000
	m := newMem(base, 0x100)
	m.put64(base+0x10, base+0x80)
	m.put64(base+0x18, 1000)
	for _, tc := range []struct {
		name string
		c    *Call
		want []Range
	}{
		{"openat", call(t, "openat", 3, 0xffffff9c, base, 0), []Range{{Addr: base, Len: 4096, CString: true}}},
		{"rename", call(t, "rename", 0, base, base+8), []Range{{Addr: base, Len: 4096, CString: true}, {Addr: base + 8, Len: 4096, CString: true}}},
		{"write", call(t, "write", 5, 1, base, 5), []Range{{Addr: base, Len: 5}}},
		{"write long", call(t, "write", 5000, 1, base, 5000), []Range{{Addr: base, Len: 32}}},
		{"writev", call(t, "writev", 1000, 1, base+0x10, 1), []Range{{Addr: base + 0x80, Len: 32}}},
		{"connect", call(t, "connect", 0, 3, base, 16), []Range{{Addr: base, Len: 16}}},
		{"sendto no addr", call(t, "sendto", 3, 3, base, 3, 0, 0, 0), []Range{{Addr: base, Len: 3}}},
		{"getpid", call(t, "getpid", 7), nil},
	} {
		checkRanges(t, "InputRanges", InputRanges, tc.name, tc.c, m, tc.want)
	}
}

// checkRanges checks the ranges that ranges (OutputRanges or InputRanges,
// fname in messages) gives for the call c of the case called name.
func checkRanges(t *testing.T, fname string, ranges func(*Call, Memory) ([]Range, error), name string, c *Call, m Memory, want []Range) {
	t.Helper()
	got, err := ranges(c, m)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %s = %+v, want %+v", name, fname, got, want)
	}
}

func TestFormat(t *testing.T) {
	const base = 0x10000
	m := newMem(base, 0x1000)
	m.put(base, []byte("/etc/passwd\x00"))
	m.put(base+0x100, []byte("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1"))
	m.put(base+0x200, []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00"))
	m.put(base+0x300, []byte{2, 0, 0, 80, 127, 0, 0, 1})
	m.put(base+0x400, []byte("/tmp\x00"))
	for _, tc := range []struct {
		c    *Call
		want string
	}{
		{call(t, "openat", 3, 0xffffff9c, base, 0x80000), `openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3`},
		{call(t, "openat", 4, ^uint64(99), base, 0x241, 0644), `openat(AT_FDCWD, "/etc/passwd", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 4`},
		{call(t, "openat", -2, 0xffffff9c, base, 0), `openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = -1 ENOENT (No such file or directory)`},
		{call(t, "read", 1234, 3, base+0x100, 4096), `read(3, "root:x:0:0:root:/root:/bin/bash\n"..., 4096) = 1234`},
		{call(t, "read", 4, 3, base+0x100, 4096), `read(3, "root", 4096) = 4`},
		{call(t, "read", 20, 3, base+0x200, 832), `read(3, "\177ELF\2\1\1\0\0\0\0\0\0\0\0\0\3\0>\0", 832) = 20`},
		{call(t, "read", -11, 3, base+0x100, 4096), `read(3, 0x10100, 4096) = -1 EAGAIN (Resource temporarily unavailable)`},
		{call(t, "read", 10, 3, 0x9000000, 4096), `read(3, 0x9000000, 4096) = 10`},
		{call(t, "write", 4, 1, base+0x100, 4), `write(1, "root", 4) = 4`},
		{call(t, "futex", -11, 0x7fffe7a0c910, 128, 2, 0, 0, 0), `futex(0x7fffe7a0c910, FUTEX_WAIT_PRIVATE, 2, NULL) = -1 EAGAIN (Resource temporarily unavailable)`},
		{call(t, "futex", 1, 0x7fffe7a0c910, 129, 1), `futex(0x7fffe7a0c910, FUTEX_WAKE_PRIVATE, 1) = 1`},
		{call(t, "mmap", 0x7ffff7fc1000, 0, 8192, 3, 0x22, 0xffffffff, 0), `mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7fc1000`},
		{call(t, "mmap", -12, 0, 8192, 0, 0x22, ^uint64(0), 0), `mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = -1 ENOMEM (Cannot allocate memory)`},
		{call(t, "connect", 0, 3, base+0x300, 16), `connect(3, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}, 16) = 0`},
		{call(t, "stat", 0, 0x9000000, base), `stat(0x9000000, 0x10000) = 0`},
		{call(t, "getcwd", 5, base+0x400, 4096), `getcwd("/tmp", 4096) = 5`},
		{call(t, "fcntl", 0x8002, 3, 3), `fcntl(3, F_GETFL) = 32770`},
		{call(t, "kill", 0, 42, 9), `kill(42, SIGKILL) = 0`},
		{call(t, "clock_gettime", 0, 1, base), `clock_gettime(CLOCK_MONOTONIC, 0x10000) = 0`},
		{call(t, "exit_group", 0, 0), `exit_group(0) = ?`},
		{call(t, "getpid", 77), `getpid() = 77`},
		{call(t, "nanosleep", -516, base, base), `nanosleep(0x10000, 0x10000) = -1 ERESTART_RESTARTBLOCK (Interrupted by signal)`},
		{&Call{Nr: 400, Args: [6]uint64{1, 2}, Ret: -38}, `syscall_400(0x1, 0x2, 0, 0, 0, 0) = -1 ENOSYS (Function not implemented)`},
	} {
		if got := Format(tc.c, m); got != tc.want {
			t.Errorf("Format:\n got %s\nwant %s", got, tc.want)
		}
	}
}

func TestNamesOfErrorsAndSignals(t *testing.T) {
	for e, want := range map[int]string{2: "ENOENT", 11: "EAGAIN", 512: "ERESTARTSYS", 4000: "E4000"} {
		if got := ErrnoName(e); got != want {
			t.Errorf("ErrnoName(%d) = %q, want %q", e, got, want)
		}
	}
	for s, want := range map[int]string{11: "SIGSEGV", 17: "SIGCHLD", 34: "SIGRT_2", 0: "0", 99: "99"} {
		if got := SignalName(s); got != want {
			t.Errorf("SignalName(%d) = %q, want %q", s, got, want)
		}
	}
}
