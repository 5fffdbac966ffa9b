package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// helperArg is argv[1] of the rewind binary when it runs as the exec helper.
const helperArg = "__rewind_exec_helper"

// addrNoRandomize is ADDR_NO_RANDOMIZE from <sys/personality.h>.
const addrNoRandomize = 0x0040000

func init() {
	// The helper must exec from the main thread: only the thread that was
	// seized is traced, and an exec from it keeps the tracee's pid. Locking
	// in init keeps main() on the main thread.
	if len(os.Args) > 1 && (os.Args[1] == helperArg || os.Args[1] == shepherdArg) {
		runtime.LockOSThread()
	}
}

// Spec says how to start a program, identically in recording and replay:
// the same path, argv, environment, working directory and stack limit give
// the same initial stack and address-space layout once ASLR is off.
type Spec struct {
	Path       string   // absolute path of the executable
	Args       []string // argv, including argv[0]
	Env        []string
	Dir        string
	StackLimit uint64 // RLIMIT_STACK soft limit (0: leave as is)
	// Ignored is the set of signals (bit N-1 for signal N) the program
	// starts with ignored, every other one at its default action; -1
	// leaves them as rewind's runtime has them. An ignored disposition
	// survives exec (nohup, a shell's background job), and programs look
	// at it: sh asks whether SIGINT is ignored.
	Ignored int64
	// CPU is the CPU the program is bound to, or -1 to leave its affinity
	// alone. cpuid answers (the APIC id of leaf 1, leaves 0xb and 0x1f) name
	// the CPU that runs the instruction: where cpuid cannot be trapped,
	// record and replay agree only when both run on the same CPU.
	CPU int
	// Filter installs the seccomp filter of traceFilter right before the
	// exec: the recorder then sees system calls as PTRACE_EVENT_SECCOMP
	// stops and lets the hook page's own calls run untraced.
	Filter bool
	Stdin  *os.File
	Stdout *os.File
	Stderr *os.File
}

// Options are the ptrace options every recorded or replayed task gets.
//
// Forks are followed only for as long as it takes to turn rdtsc trapping off
// in the child and let it go unrecorded.
const Options = OptTraceSysGood | OptTraceClone | OptTraceFork | OptTraceVfork | OptTraceExec | OptExitKill

// MaybeRunHelper turns the process into the exec helper when it was started
// as one, and never returns in that case. main (and TestMain of packages that
// launch programs) must call it first.
func MaybeRunHelper() {
	if len(os.Args) == 2 && os.Args[1] == wakerArg {
		runWaker()
	}
	if len(os.Args) > 1 && os.Args[1] == shepherdArg {
		runShepherd(os.Args[2:])
		os.Exit(0)
	}
	if len(os.Args) < 2 || os.Args[1] != helperArg {
		return
	}
	err := runHelper(os.Args[2:])
	if errors.Is(err, ErrNoFilter) {
		os.Exit(helperNoFilter) // Start says so, and the recorder goes without
	}
	fmt.Fprintf(os.Stderr, "rewind: %v\n", err)
	os.Exit(127)
}

func runHelper(args []string) error {
	if len(args) < 5 {
		return errors.New("exec helper: bad arguments")
	}
	filter := args[0] == "filter"
	args = args[1:]
	stack, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil {
		return fmt.Errorf("exec helper: %w", err)
	}
	ignored, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil {
		return fmt.Errorf("exec helper: %w", err)
	}
	path, argv := args[2], args[3:]
	// The program's environment comes through the sync pipe, so that the
	// helper itself runs with an environment that keeps its runtime quiet:
	// no SIGURG preemption signal may be pending when it execs.
	// Say we are running our own code: the tracer must not seize us while
	// our own exec is still completing, or it would see that exec's stop.
	ready := os.NewFile(4, "ready")
	ready.Write([]byte{'R'})
	ready.Close()
	sync := os.NewFile(3, "sync")
	blob, err := io.ReadAll(sync)
	sync.Close()
	if err != nil {
		return fmt.Errorf("exec helper: %w", err)
	}
	env := []string{}
	if len(blob) > 0 {
		env = strings.Split(strings.TrimSuffix(string(blob), "\x00"), "\x00")
	}
	if stack != 0 {
		var lim unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_STACK, &lim); err == nil {
			lim.Cur = stack
			if lim.Max < stack {
				lim.Max = stack
			}
			_ = unix.Setrlimit(unix.RLIMIT_STACK, &lim)
		}
	}
	// Disable ASLR for what this process execs: 0xffffffff queries the persona.
	persona, _, _ := unix.Syscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
	if _, _, e := unix.Syscall(unix.SYS_PERSONALITY, persona|addrNoRandomize, 0, 0); e != 0 {
		return fmt.Errorf("personality(ADDR_NO_RANDOMIZE): %w", e)
	}
	if ignored >= 0 {
		setDispositions(uint64(ignored))
	}
	if filter {
		if err := installTraceFilter(); err != nil {
			return fmt.Errorf("exec helper: %w: %w", ErrNoFilter, err)
		}
	}
	err = unix.Exec(path, argv, env)
	return fmt.Errorf("exec %s: %w", path, err)
}

// Start starts the program described by s, seizes it from the calling
// thread (which must be the session's Thread) and returns at its exec stop.
func Start(s *Spec) (pid int, err error) {
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("launch: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("launch: %w", err)
	}
	defer r.Close()
	defer w.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("launch: %w", err)
	}
	defer readyR.Close()
	defer readyW.Close()
	filter, seize := "nofilter", OptTraceExec|OptExitKill
	if s.Filter {
		filter, seize = "filter", seize|OptTraceSeccomp
	}
	args := append([]string{filter, strconv.FormatUint(s.StackLimit, 10), strconv.FormatInt(s.Ignored, 10), s.Path}, s.Args...)
	// The helper of helper.go; rewind itself where there is none, or it
	// cannot be executed.
	native := helperFile()
	cmd := helperCmd(s, self, args, native, r, readyW)
	err = cmd.Start()
	if err != nil && native != nil {
		native = nil
		cmd = helperCmd(s, self, args, nil, r, readyW)
		err = cmd.Start()
	}
	if err != nil {
		return 0, fmt.Errorf("launch %s: %w", s.Path, err)
	}
	pid = cmd.Process.Pid
	kill := func() { unix.Kill(pid, unix.SIGKILL); unix.Wait4(pid, nil, unix.WALL, nil) }
	if s.CPU >= 0 {
		// The helper's main thread is the one that execs: binding it binds
		// the program and every thread and child it makes.
		var set unix.CPUSet
		set.Set(s.CPU)
		if err := unix.SchedSetaffinity(pid, &set); err != nil {
			kill()
			return 0, fmt.Errorf("launch: bind to CPU %d: %w", s.CPU, err)
		}
	}
	readyW.Close()
	var b [1]byte
	if n, _ := readyR.Read(b[:]); n != 1 {
		kill()
		return 0, fmt.Errorf("launch %s: the exec helper did not start", s.Path)
	}
	// Only exec is followed until the program starts: the helper's own
	// runtime threads must not be attached.
	if err := Seize(pid, seize); err != nil {
		kill()
		if errors.Is(err, unix.EPERM) {
			return 0, fmt.Errorf("ptrace is not permitted here (%w): run as root, or allow it with `sysctl kernel.yama.ptrace_scope=0` or the CAP_SYS_PTRACE capability", unix.EPERM)
		}
		return 0, fmt.Errorf("launch: %w", err)
	}
	// Rewind as its own helper installs the filter itself.
	blob := helperInput(native != nil && s.Filter, s.Env)
	if _, err := w.Write(blob); err != nil {
		kill()
		return 0, fmt.Errorf("launch: %w", err)
	}
	w.Close()
	for {
		st, _, err := Wait(pid, false)
		if err != nil {
			kill()
			return 0, fmt.Errorf("launch: %w", err)
		}
		switch st.Kind {
		case StopEvent:
			if st.Event == unix.PTRACE_EVENT_EXEC {
				if err := checkPersonality(pid); err != nil {
					kill()
					return 0, fmt.Errorf("launch: %w", err)
				}
				opts := Options
				if s.Filter {
					opts |= OptTraceSeccomp
				}
				if err := SetOptions(pid, opts); err != nil {
					kill()
					return 0, fmt.Errorf("launch: %w", err)
				}
				return pid, nil
			}
			err = Cont(pid, 0)
		case StopSignal:
			// The helper's own runtime signals (SIGURG…) before the exec.
			err = Cont(pid, st.Sig)
		case StopGroup, StopSyscall:
			err = Cont(pid, 0)
		case Exited:
			if s.Filter && st.Code == helperNoFilter {
				return 0, fmt.Errorf("launch %s: %w", s.Path, ErrNoFilter)
			}
			return 0, fmt.Errorf("could not start %s (exit status %d)", s.Path, st.Code)
		case Killed:
			return 0, fmt.Errorf("could not start %s (killed by signal %d)", s.Path, st.Sig)
		}
		if err != nil {
			kill()
			return 0, fmt.Errorf("launch: %w", err)
		}
	}
}

// helperCmd is the command that runs the exec helper for s with args: the
// native one in native, else rewind itself. sync and ready are the pipes
// it reads its input from and says it runs on.
func helperCmd(s *Spec, self string, args []string, native, sync, ready *os.File) *exec.Cmd {
	var cmd *exec.Cmd
	if native != nil {
		cmd = exec.Command(helperPath)
		cmd.Args = append([]string{helperName}, args...)
		cmd.Env = []string{}
		cmd.ExtraFiles = []*os.File{sync, ready, native}
	} else {
		cmd = exec.Command(self, append([]string{helperArg}, args...)...)
		cmd.Env = []string{"GODEBUG=asyncpreemptoff=1"}
		cmd.ExtraFiles = []*os.File{sync, ready}
	}
	cmd.Dir = s.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, s.Stdout, s.Stderr
	return cmd
}

// IgnoredSignals returns the set of signals this process ignores (bit N-1
// for signal N): what a program it starts inherits. The Go runtime keeps
// SIGHUP and SIGINT ignored when they were at its start and handles every
// other one, so read it before signal.Notify takes SIGINT over.
func IgnoredSignals() uint64 {
	return statusMask("/proc/self/status", "SigIgn")
}

// setDispositions sets every signal's action to ignored (in set) or default
// right before exec, the helper's last act: whatever its Go runtime did with
// them, the program starts with the recorded dispositions.
func setDispositions(set uint64) {
	type sigaction struct {
		handler  uintptr
		flags    uint64
		restorer uintptr
		mask     uint64
	}
	for sig := 1; sig <= 64; sig++ {
		if sig == int(unix.SIGKILL) || sig == int(unix.SIGSTOP) {
			continue
		}
		act := sigaction{handler: 0} // SIG_DFL
		if set&(1<<(sig-1)) != 0 {
			act.handler = 1 // SIG_IGN
		}
		unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	}
}

// checkPersonality makes sure the new image runs without address space
// randomization: everything downstream (replayed addresses, moments) needs it.
func checkPersonality(pid int) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/personality", pid))
	if err != nil {
		return err
	}
	p, err := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 32)
	if err != nil {
		return fmt.Errorf("personality of %d: %w", pid, err)
	}
	if p&addrNoRandomize == 0 {
		return fmt.Errorf("address space randomization is still on for %d (personality %#x)", pid, p)
	}
	return nil
}

// Auxv entry types Rewind rewrites or records.
const (
	atNull        = 0
	atIgnore      = 1
	atRandom      = 25
	atSysinfoEhdr = 33
)

// StartState is what the exec stop tells about the new image.
type StartState struct {
	AtRandom uint64 // address of the 16 AT_RANDOM bytes
	Auxv     uint64 // address of the auxv vector on the stack
	// VDSO is the vDSO's address (AT_SYSINFO_EHDR), 0 without one, and
	// vdsoEntry where that auxv entry is.
	VDSO      uint64
	vdsoEntry uint64
}

// InitialState reads the auxv vector of a new image at its exec stop: where
// AT_RANDOM and the vDSO are. rsp is the stack pointer at the exec stop.
func InitialState(m *Mem, rsp uint64) (StartState, error) {
	var st StartState
	// A page at a time: a read of each of the ~100 words cost a
	// process_vm_readv (a third of a millisecond of each exec).
	var page [4096]byte
	at := ^uint64(0)
	word := func(addr uint64) (uint64, error) {
		if addr&4095 > 4096-8 { // across pages (the stack is aligned: never)
			var b [8]byte
			_, err := m.ReadAt(b[:], addr)
			return binary.LittleEndian.Uint64(b[:]), err
		}
		if base := addr &^ 4095; base != at {
			if _, err := m.ReadAt(page[:], base); err != nil {
				return 0, err
			}
			at = base
		}
		return binary.LittleEndian.Uint64(page[addr&4095:]), nil
	}
	argc, err := word(rsp)
	if err != nil {
		return st, fmt.Errorf("read initial stack: %w", err)
	}
	p := rsp + 8 + 8*(argc+1)
	for { // skip envp
		v, err := word(p)
		if err != nil {
			return st, fmt.Errorf("read initial stack: %w", err)
		}
		p += 8
		if v == 0 {
			break
		}
	}
	st.Auxv = p
	for i := 0; i < 64; i++ {
		typ, err := word(p)
		if err != nil {
			return st, fmt.Errorf("read auxv: %w", err)
		}
		if typ == atNull {
			return st, nil
		}
		val, err := word(p + 8)
		if err != nil {
			return st, fmt.Errorf("read auxv: %w", err)
		}
		switch typ {
		case atSysinfoEhdr:
			st.VDSO, st.vdsoEntry = val, p
		case atRandom:
			st.AtRandom = val
		}
		p += 16
	}
	return st, errors.New("auxv: no AT_NULL")
}

// HideVDSO rewrites the AT_SYSINFO_EHDR auxv entry to AT_IGNORE, so that
// glibc and the Go runtime make real (recordable) system calls for clocks
// instead of calling the vDSO: what rewind does when it cannot patch the
// vDSO, and what replay does for traces made before it could.
func HideVDSO(m *Mem, st *StartState) error {
	if st.vdsoEntry == 0 {
		return nil
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], atIgnore)
	if _, err := m.WriteAt(b[:], st.vdsoEntry); err != nil {
		return fmt.Errorf("hide vDSO: %w", err)
	}
	st.VDSO, st.vdsoEntry = 0, 0
	return nil
}
