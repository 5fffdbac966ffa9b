package syscalls

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"syscall"
)

var (
	byNr     [len(names)]*Spec
	byName   = map[string]*Spec{}
	numberOf = map[string]int{}
)

func init() {
	for nr, n := range names {
		if n != "" {
			numberOf[n] = nr
		}
	}
	for i := range table {
		s := &table[i]
		nr, ok := numberOf[s.Name]
		if !ok || byNr[nr] != nil {
			panic(fmt.Sprintf("syscalls: table entry %q is unknown or repeated", s.Name))
		}
		s.Nr = nr
		byNr[nr] = s
		byName[s.Name] = s
	}
}

// Lookup returns the description of system call nr. Numbers without one
// (unassigned, or newer than this table) report false: their successes are
// flagged unsupported rather than guessed at (see WhyUnsupported).
func Lookup(nr int) (*Spec, bool) {
	if nr < 0 || nr >= len(byNr) || byNr[nr] == nil {
		return nil, false
	}
	return byNr[nr], true
}

// ByName is Lookup by Linux name ("openat"), for command-line filters.
func ByName(name string) (*Spec, bool) {
	s, ok := byName[name]
	return s, ok
}

// Number returns the x86-64 number of any named call, described or not.
func Number(name string) (int, bool) {
	nr, ok := numberOf[name]
	return nr, ok
}

// Name returns the Linux name of any x86-64 system call number, or
// "syscall_N" for numbers no kernel assigns, so displays never go blank.
func Name(nr int) string {
	if nr >= 0 && nr < len(names) && names[nr] != "" {
		return names[nr]
	}
	return "syscall_" + strconv.Itoa(nr)
}

// Count returns how many calls have a full description.
func Count() int { return len(table) }

// PolicyFor refines s.Policy with the arguments (Spec.PolicyOf): a clone
// that creates a thread must really happen in replay, while a clone that
// creates a process is emulated (replay forks for real only the children
// it runs); madvise(MADV_FREE) is emulated (see MadvFree).
func (s *Spec) PolicyFor(c *Call) Policy {
	if s.PolicyOf != nil {
		return s.PolicyOf(c)
	}
	return s.Policy
}

// Failed reports whether the call returned an error (-4095..-1) that is a
// failure: rt_sigreturn's "result" is the restored rax, whatever it is.
func Failed(c *Call) bool {
	if c.Ret >= 0 || c.Ret < -4095 {
		return false
	}
	s, ok := Lookup(c.Nr)
	return !ok || !s.NoFailure
}

// WhyUnsupported says why replay cannot reproduce call c, which returned
// c.Ret, or "" when it can. Every failure can be replayed, whatever the
// call or number: it is emulated with its error, and the failures that
// write memory (an interrupted sleep, capget's EINVAL, a BPF verifier log)
// have output rules. A success cannot when the number is unknown, the call
// is marked Unsupported, or its form is (Spec.UnsupportedForm).
func WhyUnsupported(c *Call) string {
	if Failed(c) {
		return ""
	}
	s, ok := Lookup(c.Nr)
	switch {
	case c.I386 && c.Nr == NoEquivalent:
		return "rewind replays only the int $0x80 calls whose arguments and structures are those of an x86-64 call"
	case !ok:
		return "rewind does not know this call"
	case s.Policy == Unsupported:
		return s.Why
	case s.UnsupportedForm != nil:
		return s.UnsupportedForm(c)
	}
	return ""
}

// Refusal says whether the recorder must keep the kernel from executing
// call c (its entry seen, its result not yet known) and what error the
// program then gets: ENOSYS for the calls refused whole (io_uring, rseq),
// another errno and a reason to tell the user for a refused form (see
// Spec.RefuseForm). m may be a Prober.
func Refusal(c *Call, m Memory) (syscall.Errno, string) {
	s, ok := Lookup(c.Nr)
	switch {
	case !ok:
		return 0, ""
	case s.Policy == Refuse:
		return syscall.ENOSYS, ""
	case s.RefuseForm != nil:
		return s.RefuseForm(c, m)
	}
	return 0, ""
}

// MayBlock reports whether the call may wait for another thread or the
// outside world. Calls with a timeout pointer (select, ppoll, pselect6,
// epoll_pwait2, rt_sigtimedwait) count as blocking because the timeout's
// value is in memory; MayBlockMem reads it.
func MayBlock(c *Call) bool {
	s, ok := Lookup(c.Nr)
	if !ok || s.Blocks == nil {
		return false
	}
	return s.Blocks(c)
}

// timeoutArg gives the argument holding a timeout pointer (timeval for
// select, timespec otherwise) whose all-zero value makes the call a poll.
var timeoutArg = map[string]int{"select": 4, "pselect6": 4, "ppoll": 2, "epoll_pwait2": 3, "rt_sigtimedwait": 2}

// MayBlockMem is MayBlock refined with the tracee's memory at entry: a
// non-NULL zero timeout means the call only polls. When the timeout cannot
// be read it answers like MayBlock, the safe side.
func MayBlockMem(c *Call, m Memory) bool {
	if !MayBlock(c) {
		return false
	}
	i, ok := timeoutArg[Name(c.Nr)]
	if !ok || c.Args[i] == 0 || m == nil {
		return true
	}
	b, err := readFull(m, c.Args[i], 16)
	if err != nil {
		return true
	}
	return le64(b) != 0 || le64(b[8:]) != 0
}

// OutputRanges lists the memory the call wrote, which the recorder saves
// and the replayer injects. Unknown calls and calls without outputs give none.
func OutputRanges(c *Call, m Memory) ([]Range, error) {
	s, ok := Lookup(c.Nr)
	if !ok || s.Outputs == nil {
		return nil, nil
	}
	return s.Outputs(c, m)
}

// InputRanges lists memory worth capturing at entry (paths, addresses, the
// first bytes written). Unknown calls give none.
func InputRanges(c *Call, m Memory) ([]Range, error) {
	s, ok := Lookup(c.Nr)
	if !ok || s.Inputs == nil {
		return nil, nil
	}
	return s.Inputs(c, m)
}

// GatherIovecs reads up to n bytes from an iovec array of cnt entries at
// iov: what a writev-like call wrote.
func GatherIovecs(m Memory, iov uint64, cnt, n int) []byte {
	out := make([]byte, 0, n)
	var vec [16]byte
	for i := 0; i < cnt && len(out) < n; i++ {
		if _, err := m.ReadAt(vec[:], iov+uint64(16*i)); err != nil {
			break
		}
		base := binary.LittleEndian.Uint64(vec[:8])
		l := int(min(binary.LittleEndian.Uint64(vec[8:]), uint64(n-len(out))))
		buf := make([]byte, l)
		got, _ := m.ReadAt(buf, base)
		out = append(out, buf[:got]...)
	}
	return out
}
