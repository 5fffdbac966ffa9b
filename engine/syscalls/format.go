package syscalls

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Format renders a finished call the way strace does, e.g.
// `openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3`. m supplies
// strings and buffers (as they are after the call); whatever it cannot
// supply is shown as a hexadecimal pointer.
func Format(c *Call, m Memory) string {
	s, ok := Lookup(c.Nr)
	return FormatCall(c, m) + " = " + formatRet(c, ok && hexRet[s.Name])
}

// FormatCall renders the call without its result, for a call that has not
// returned (a blocking entry, exit).
func FormatCall(c *Call, m Memory) string {
	var b strings.Builder
	b.WriteString(CallName(c))
	b.WriteByte('(')
	s, ok := Lookup(c.Nr)
	if !ok {
		for i, a := range c.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(hex(a))
		}
		b.WriteByte(')')
		return b.String()
	}
	n := len(s.Args)
	if f := shownArgs[s.Name]; f != nil {
		n = min(n, f(c))
	}
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(formatArg(s, c, m, i))
	}
	b.WriteByte(')')
	return b.String()
}

// FormatArgs renders each argument of a call as FormatCall would, for
// structured listings (NDJSON).
func FormatArgs(c *Call, m Memory) []string {
	s, ok := Lookup(c.Nr)
	if !ok {
		out := make([]string, len(c.Args))
		for i, a := range c.Args {
			out[i] = hex(a)
		}
		return out
	}
	n := len(s.Args)
	if f := shownArgs[s.Name]; f != nil {
		n = min(n, f(c))
	}
	out := make([]string, n)
	for i := range n {
		out[i] = formatArg(s, c, m, i)
	}
	return out
}

// FormatResult renders a call's result ("3", "0x7f00…", "-1", "?") and, for
// a failure, the errno name ("ENOENT").
func FormatResult(c *Call) (result, errno string) {
	s, ok := Lookup(c.Nr)
	r := formatRet(c, ok && hexRet[s.Name])
	if c.Ret >= -4095 && c.Ret <= -1 {
		return "-1", ErrnoName(int(-c.Ret))
	}
	return r, ""
}

// hexRet lists calls whose result is an address.
var hexRet = map[string]bool{"mmap": true, "mremap": true, "brk": true, "map_shadow_stack": true}

// shownArgs trims arguments the kernel ignores for this call, as strace
// does, so a listing shows `openat(AT_FDCWD, "x", O_RDONLY)` without a mode.
var shownArgs = map[string]func(c *Call) int{
	"open":   func(c *Call) int { return 2 + creates(c.Args[1]) },
	"openat": func(c *Call) int { return 3 + creates(c.Args[2]) },
	"futex": func(c *Call) int {
		// Arguments used by FUTEX_WAIT … FUTEX_LOCK_PI2, by command number.
		n := [...]int{4, 3, 3, 5, 6, 6, 4, 2, 2, 6, 6, 5, 6, 4}
		if cmd := futexCmd(c); cmd < len(n) {
			return n[cmd]
		}
		return 6
	},
	"fcntl": func(c *Call) int {
		switch int32(c.Args[1]) {
		case 1, 3, 9, 11, 1025, 1032, 1034: // F_GETFD, F_GETFL, F_GETOWN, F_GETSIG, F_GETLEASE, F_GETPIPE_SZ, F_GET_SEALS
			return 2
		}
		return 3
	},
}

func creates(flags uint64) int {
	if flags&0100 != 0 || flags&020000000 != 0 { // O_CREAT, __O_TMPFILE
		return 1
	}
	return 0
}

func formatRet(c *Call, addr bool) string {
	switch Name(c.Nr) {
	case "exit", "exit_group":
		return "?"
	}
	if c.Ret >= -4095 && c.Ret <= -1 {
		e := int(-c.Ret)
		return "-1 " + ErrnoName(e) + " (" + errnoDesc(e) + ")"
	}
	if addr {
		return hex(uint64(c.Ret))
	}
	return strconv.FormatInt(c.Ret, 10)
}

// ErrnoName returns the symbolic name of errno e ("ENOENT"), including the
// kernel-internal restart codes a ptrace stop can show.
func ErrnoName(e int) string {
	if e < 0 {
		e = -e
	}
	switch e {
	case errRestartSys:
		return "ERESTARTSYS"
	case errRestartNoIntr:
		return "ERESTARTNOINTR"
	case errRestartNoHand:
		return "ERESTARTNOHAND"
	case errNoIoctlCmd:
		return "ENOIOCTLCMD"
	case errRestartBlock:
		return "ERESTART_RESTARTBLOCK"
	}
	if n := unix.ErrnoName(syscall.Errno(e)); n != "" {
		return n
	}
	return "E" + strconv.Itoa(e)
}

func errnoDesc(e int) string {
	switch e {
	case errRestartSys:
		return "To be restarted if SA_RESTART is set"
	case errRestartNoIntr:
		return "To be restarted"
	case errRestartNoHand:
		return "To be restarted if no handler"
	case errNoIoctlCmd:
		return "Inappropriate ioctl for device"
	case errRestartBlock:
		return "Interrupted by signal"
	}
	d := syscall.Errno(e).Error()
	if d != "" && d[0] >= 'a' && d[0] <= 'z' {
		d = string(d[0]-'a'+'A') + d[1:]
	}
	return d
}

// SignalName returns "SIGSEGV" for 11; real-time signals read SIGRTMIN and
// SIGRT_n like strace, anything else is the bare number.
func SignalName(sig int) string {
	switch {
	case sig == 32:
		return "SIGRTMIN"
	case sig > 32 && sig <= 64:
		return "SIGRT_" + strconv.Itoa(sig-32)
	}
	if sig > 0 {
		if n := unix.SignalName(syscall.Signal(sig)); n != "" {
			return n
		}
	}
	return strconv.Itoa(sig)
}

func hex(v uint64) string {
	if v == 0 {
		return "0"
	}
	return "0x" + strconv.FormatUint(v, 16)
}

func ptr(v uint64) string {
	if v == 0 {
		return "NULL"
	}
	return hex(v)
}

// signed decodes a C int or long. C ints arrive zero-extended as often as
// sign-extended (mov $-1,%edx clears the upper half), so a value that fits in
// 32 bits is read as an int32; only longs in [2^31, 2^32) are misread.
func signed(v uint64) int64 {
	if v>>32 == 0 {
		return int64(int32(uint32(v)))
	}
	return int64(v)
}

func formatArg(s *Spec, c *Call, m Memory, i int) string {
	v := c.Args[i]
	if names, ok := argConsts[s.Name+"/"+strconv.Itoa(i)]; ok {
		if n, ok := names[uint64(uint32(v))]; ok { // commands are C ints
			return n
		}
	}
	switch s.Args[i].Type {
	case Int:
		return strconv.FormatInt(signed(v), 10)
	case Uint:
		return strconv.FormatUint(v, 10)
	case Hex:
		return hex(v)
	case Ptr:
		return ptr(v)
	case Fd:
		if fd := int32(v); fd != -100 {
			return strconv.Itoa(int(fd))
		}
		return "AT_FDCWD"
	case Path:
		if v == 0 {
			return "NULL"
		}
		if str, ok := readString(m, v, maxPath); ok {
			return str
		}
		return hex(v)
	case Buf:
		return formatBuf(s, c, m, i)
	case OpenFlags:
		return openFlags(v, strings.Contains(s.Name, "open"))
	case Mode:
		return fmt.Sprintf("%#03o", v)
	case Prot:
		return flags(v, protFlags, "PROT_NONE")
	case MapFlags:
		return mapFlags(v)
	case Signal:
		return SignalName(int(int32(v)))
	case FutexOp:
		return futexOp(v)
	case Sockaddr:
		if v == 0 || i+1 >= len(c.Args) {
			return ptr(v)
		}
		return sockaddr(m, v, min(uint64(uint32(c.Args[i+1])), maxSockaddr))
	case ClockID:
		if n, ok := clockNames[v]; ok {
			return n
		}
		return strconv.FormatInt(signed(v), 10)
	case AtFlags:
		return flags(v, atFlags, "0")
	}
	return hex(v)
}

// formatBuf shows a buffer whose length is the next argument. A buffer the
// call reads (write) is shown from its length argument; one it fills (read)
// from the result, and only if the call succeeded.
func formatBuf(s *Spec, c *Call, m Memory, i int) string {
	v := c.Args[i]
	if v == 0 {
		return "NULL"
	}
	var n uint64
	if i+1 < len(c.Args) {
		n = c.Args[i+1]
	}
	if !isInput(s, c, m, v) {
		if c.Ret < 0 {
			return hex(v)
		}
		n = min(n, uint64(c.Ret))
		if s.Name == "getcwd" && n > 0 { // the result counts the NUL
			n--
		}
	}
	want := min(n, maxInputPrefix)
	b := readSome(m, v, int(want))
	if len(b) == 0 && want > 0 {
		return hex(v)
	}
	str := quote(b)
	if uint64(len(b)) < n {
		str += "..."
	}
	return str
}

func isInput(s *Spec, c *Call, m Memory, addr uint64) bool {
	if s.Inputs == nil {
		return false
	}
	rs, _ := s.Inputs(c, m)
	for _, r := range rs {
		if r.Addr == addr {
			return true
		}
	}
	return false
}

// readSome reads up to n bytes at addr, as many as m can give: live memory
// fails at an unmapped page, rebuilt memory where the recording stopped, and
// some Memory implementations refuse a read that is only partly available.
func readSome(m Memory, addr uint64, n int) []byte {
	if m == nil || n <= 0 {
		return nil
	}
	for want := n; want > 0; want /= 2 {
		b := make([]byte, want)
		k, _ := m.ReadAt(b, addr)
		if k > 0 {
			return b[:min(k, want)]
		}
	}
	return nil
}

// readString reads a NUL-terminated string of at most limit bytes and quotes
// it; ok is false when not even the first byte is readable. A string whose
// end is unreadable is shown as far as it goes.
func readString(m Memory, addr uint64, limit int) (string, bool) {
	var s []byte
	for len(s) < limit {
		chunk := min(256, limit-len(s), 4096-int((addr+uint64(len(s)))%4096))
		b := readSome(m, addr+uint64(len(s)), chunk)
		if len(b) == 0 {
			break
		}
		if k := strings.IndexByte(string(b), 0); k >= 0 {
			return quote(append(s, b[:k]...)), true
		}
		s = append(s, b...)
	}
	if len(s) == 0 {
		return "", false
	}
	if len(s) >= limit {
		return quote(s) + "...", true
	}
	return quote(s), true
}

// quote escapes like strace: C escapes for the usual controls, octal for the
// rest, with three digits only when a digit follows.
func quote(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for i, ch := range b {
		switch ch {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\t':
			sb.WriteString(`\t`)
		case '\n':
			sb.WriteString(`\n`)
		case '\v':
			sb.WriteString(`\v`)
		case '\f':
			sb.WriteString(`\f`)
		case '\r':
			sb.WriteString(`\r`)
		default:
			switch {
			case ch >= ' ' && ch < 0x7f:
				sb.WriteByte(ch)
			case i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '7':
				fmt.Fprintf(&sb, `\%03o`, ch)
			default:
				fmt.Fprintf(&sb, `\%o`, ch)
			}
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

type flagName struct {
	mask uint64
	name string
}

// flags names the bits of v in table order (multi-bit masks first where
// they overlap) and shows what is left in hex.
func flags(v uint64, table []flagName, zero string) string {
	if v == 0 {
		return zero
	}
	var parts []string
	for _, f := range table {
		if v&f.mask == f.mask {
			parts = append(parts, f.name)
			v &^= f.mask
		}
	}
	if v != 0 || len(parts) == 0 {
		parts = append(parts, hex(v))
	}
	return strings.Join(parts, "|")
}

// Kernel values: glibc's O_LARGEFILE is 0 on x86-64 but the kernel's is not.
var openFlagNames = []flagName{
	{0100, "O_CREAT"}, {0200, "O_EXCL"}, {0400, "O_NOCTTY"}, {01000, "O_TRUNC"},
	{02000, "O_APPEND"}, {04000, "O_NONBLOCK"}, {04010000, "O_SYNC"}, {010000, "O_DSYNC"},
	{020000, "O_ASYNC"}, {040000, "O_DIRECT"}, {0100000, "O_LARGEFILE"},
	{020200000, "O_TMPFILE"}, {0200000, "O_DIRECTORY"}, {0400000, "O_NOFOLLOW"},
	{01000000, "O_NOATIME"}, {02000000, "O_CLOEXEC"}, {010000000, "O_PATH"},
}

// openFlags prints the access mode only for opens: pipe2, dup3, eventfd2…
// take the same O_ bits but have no access mode.
func openFlags(v uint64, open bool) string {
	if !open {
		return flags(v, openFlagNames, "0")
	}
	acc := [...]string{"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"}[v&3]
	if rest := v &^ 3; rest != 0 {
		return acc + "|" + flags(rest, openFlagNames, "")
	}
	return acc
}

var protFlags = []flagName{
	{1, "PROT_READ"}, {2, "PROT_WRITE"}, {4, "PROT_EXEC"}, {0x8, "PROT_SEM"},
	{0x01000000, "PROT_GROWSDOWN"}, {0x02000000, "PROT_GROWSUP"},
}

var mapFlagNames = []flagName{
	{0x10, "MAP_FIXED"}, {0x20, "MAP_ANONYMOUS"}, {0x40, "MAP_32BIT"},
	{0x100, "MAP_GROWSDOWN"}, {0x800, "MAP_DENYWRITE"}, {0x1000, "MAP_EXECUTABLE"},
	{0x2000, "MAP_LOCKED"}, {0x4000, "MAP_NORESERVE"}, {0x8000, "MAP_POPULATE"},
	{0x10000, "MAP_NONBLOCK"}, {0x20000, "MAP_STACK"}, {0x40000, "MAP_HUGETLB"},
	{0x80000, "MAP_SYNC"}, {0x100000, "MAP_FIXED_NOREPLACE"}, {0x4000000, "MAP_UNINITIALIZED"},
}

func mapFlags(v uint64) string {
	typ := [16]string{1: "MAP_SHARED", 2: "MAP_PRIVATE", 3: "MAP_SHARED_VALIDATE"}[v&0xf]
	if typ == "" {
		typ = hex(v & 0xf)
	}
	if rest := v &^ 0xf; rest != 0 {
		return typ + "|" + flags(rest, mapFlagNames, "")
	}
	return typ
}

var atFlags = []flagName{
	{0x100, "AT_SYMLINK_NOFOLLOW"}, {0x200, "AT_REMOVEDIR"}, {0x400, "AT_SYMLINK_FOLLOW"},
	{0x800, "AT_NO_AUTOMOUNT"}, {0x1000, "AT_EMPTY_PATH"}, {0x2000, "AT_STATX_FORCE_SYNC"},
	{0x4000, "AT_STATX_DONT_SYNC"}, {0x8000, "AT_RECURSIVE"},
}

var futexCmds = [...]string{"FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_FD", "FUTEX_REQUEUE",
	"FUTEX_CMP_REQUEUE", "FUTEX_WAKE_OP", "FUTEX_LOCK_PI", "FUTEX_UNLOCK_PI",
	"FUTEX_TRYLOCK_PI", "FUTEX_WAIT_BITSET", "FUTEX_WAKE_BITSET", "FUTEX_WAIT_REQUEUE_PI",
	"FUTEX_CMP_REQUEUE_PI", "FUTEX_LOCK_PI2"}

func futexOp(v uint64) string {
	v = uint64(uint32(v))
	cmd := v & futexCmdMask
	if cmd >= uint64(len(futexCmds)) || v&^(futexCmdMask|futexPrivate|futexClockRealtime) != 0 {
		return hex(v)
	}
	s := futexCmds[cmd]
	if v&futexPrivate != 0 {
		s += "_PRIVATE"
	}
	if v&futexClockRealtime != 0 {
		s += "|FUTEX_CLOCK_REALTIME"
	}
	return s
}

var clockNames = map[uint64]string{
	0: "CLOCK_REALTIME", 1: "CLOCK_MONOTONIC", 2: "CLOCK_PROCESS_CPUTIME_ID",
	3: "CLOCK_THREAD_CPUTIME_ID", 4: "CLOCK_MONOTONIC_RAW", 5: "CLOCK_REALTIME_COARSE",
	6: "CLOCK_MONOTONIC_COARSE", 7: "CLOCK_BOOTTIME", 8: "CLOCK_REALTIME_ALARM",
	9: "CLOCK_BOOTTIME_ALARM", 11: "CLOCK_TAI",
}

// argConsts names the commands of multiplexed calls, keyed "name/argindex".
var argConsts = map[string]map[uint64]string{
	"fcntl/1": {0: "F_DUPFD", 1: "F_GETFD", 2: "F_SETFD", 3: "F_GETFL", 4: "F_SETFL",
		5: "F_GETLK", 6: "F_SETLK", 7: "F_SETLKW", 8: "F_SETOWN", 9: "F_GETOWN",
		10: "F_SETSIG", 11: "F_GETSIG", 15: "F_SETOWN_EX", 16: "F_GETOWN_EX",
		36: "F_OFD_GETLK", 37: "F_OFD_SETLK", 38: "F_OFD_SETLKW", 1024: "F_SETLEASE",
		1025: "F_GETLEASE", 1026: "F_NOTIFY", 1030: "F_DUPFD_CLOEXEC", 1031: "F_SETPIPE_SZ",
		1032: "F_GETPIPE_SZ", 1033: "F_ADD_SEALS", 1034: "F_GET_SEALS"},
	"ioctl/1": {0x5401: "TCGETS", 0x5402: "TCSETS", 0x5403: "TCSETSW", 0x5404: "TCSETSF",
		0x540F: "TIOCGPGRP", 0x5410: "TIOCSPGRP", 0x5413: "TIOCGWINSZ", 0x5414: "TIOCSWINSZ",
		0x541B: "FIONREAD", 0x5421: "FIONBIO", 0x5450: "FIONCLEX", 0x5451: "FIOCLEX",
		0x5429: "TIOCGSID", 0x802C542A: "TCGETS2"},
	"lseek/2":          {0: "SEEK_SET", 1: "SEEK_CUR", 2: "SEEK_END", 3: "SEEK_DATA", 4: "SEEK_HOLE"},
	"rt_sigprocmask/0": {0: "SIG_BLOCK", 1: "SIG_UNBLOCK", 2: "SIG_SETMASK"},
	"epoll_ctl/1":      {1: "EPOLL_CTL_ADD", 2: "EPOLL_CTL_DEL", 3: "EPOLL_CTL_MOD"},
	"arch_prctl/0": {0x1001: "ARCH_SET_GS", 0x1002: "ARCH_SET_FS", 0x1003: "ARCH_GET_FS",
		0x1004: "ARCH_GET_GS", 0x1011: "ARCH_GET_CPUID", 0x1012: "ARCH_SET_CPUID"},
	"socket/0":     {1: "AF_UNIX", 2: "AF_INET", 10: "AF_INET6", 16: "AF_NETLINK", 17: "AF_PACKET"},
	"socketpair/0": {1: "AF_UNIX"},
	"madvise/2": {0: "MADV_NORMAL", 1: "MADV_RANDOM", 2: "MADV_SEQUENTIAL", 3: "MADV_WILLNEED",
		4: "MADV_DONTNEED", 8: "MADV_FREE", 14: "MADV_HUGEPAGE", 15: "MADV_NOHUGEPAGE",
		16: "MADV_DONTDUMP"},
}

// sockaddr decodes the families programs commonly use; others show the
// family number only.
func sockaddr(m Memory, addr, n uint64) string {
	b := readSome(m, addr, int(n))
	if len(b) < 2 {
		return hex(addr)
	}
	fam := binary.LittleEndian.Uint16(b)
	switch {
	case fam == unix.AF_UNIX:
		p := b[2:]
		if len(p) > 0 && p[0] == 0 {
			return "{sa_family=AF_UNIX, sun_path=@" + quote(p[1:]) + "}"
		}
		if k := strings.IndexByte(string(p), 0); k >= 0 {
			p = p[:k]
		}
		return "{sa_family=AF_UNIX, sun_path=" + quote(p) + "}"
	case fam == unix.AF_INET && len(b) >= 8:
		ip := netip.AddrFrom4([4]byte(b[4:8]))
		return fmt.Sprintf("{sa_family=AF_INET, sin_port=htons(%d), sin_addr=inet_addr(%q)}",
			binary.BigEndian.Uint16(b[2:]), ip)
	case fam == unix.AF_INET6 && len(b) >= 24:
		ip := netip.AddrFrom16([16]byte(b[8:24]))
		return fmt.Sprintf("{sa_family=AF_INET6, sin6_port=htons(%d), sin6_addr=%q}",
			binary.BigEndian.Uint16(b[2:]), ip)
	case fam == unix.AF_NETLINK && len(b) >= 12:
		return fmt.Sprintf("{sa_family=AF_NETLINK, nl_pid=%d, nl_groups=%#08x}",
			binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:]))
	}
	return fmt.Sprintf("{sa_family=%d}", fam)
}

// signalDescriptions are gdb's words for the signals (gdb/signals.def), which
// it prints after the name: "Program received signal SIGSEGV, Segmentation
// fault."
var signalDescriptions = map[string]string{
	"SIGHUP": "Hangup", "SIGINT": "Interrupt", "SIGQUIT": "Quit", "SIGILL": "Illegal instruction",
	"SIGTRAP": "Trace/breakpoint trap", "SIGABRT": "Aborted", "SIGBUS": "Bus error",
	"SIGFPE": "Arithmetic exception", "SIGKILL": "Killed", "SIGUSR1": "User defined signal 1",
	"SIGSEGV": "Segmentation fault", "SIGUSR2": "User defined signal 2", "SIGPIPE": "Broken pipe",
	"SIGALRM": "Alarm clock", "SIGTERM": "Terminated", "SIGSTKFLT": "Stack fault",
	"SIGCHLD": "Child status changed", "SIGCONT": "Continued", "SIGSTOP": "Stopped (signal)",
	"SIGTSTP": "Stopped (user)", "SIGTTIN": "Stopped (tty input)", "SIGTTOU": "Stopped (tty output)",
	"SIGURG": "Urgent I/O condition", "SIGXCPU": "CPU time limit exceeded",
	"SIGXFSZ": "File size limit exceeded", "SIGVTALRM": "Virtual timer expired",
	"SIGPROF": "Profiling timer expired", "SIGWINCH": "Window size changed",
	"SIGIO": "I/O possible", "SIGPWR": "Power fail/restart", "SIGSYS": "Bad system call",
}

// SignalDescription is gdb's description of a signal by name ("" when it
// has none, as for real-time signals).
func SignalDescription(name string) string { return signalDescriptions[name] }
