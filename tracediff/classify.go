package tracediff

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// ids maps the process and thread ids of recording A, as decimal strings,
// to those of B: a getpid that returns each run's own pid returns the
// same thing in both.
type ids map[string]string

// same says whether two values are equal, a pid or tid of A standing for
// its counterpart in B.
func (m ids) same(a, b string) bool {
	return a == b || (m[a] != "" && m[a] == b)
}

// sameList compares argument lists as same does.
func (m ids) sameList(a, b []string) (int, bool) {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || !m.same(a[i], b[i]) {
			return i, false
		}
	}
	return 0, true
}

// sameBytes compares memory a call wrote, a tid of A in it standing for
// its counterpart in B (clone's CLONE_PARENT_SETTID, set_tid_address).
func (m ids) sameBytes(a, b []byte) bool {
	if bytes.Equal(a, b) || len(a) != len(b) {
		return len(a) == len(b) && bytes.Equal(a, b)
	}
	for ka, kb := range m {
		x, errA := strconv.ParseInt(ka, 10, 32)
		y, errB := strconv.ParseInt(kb, 10, 32)
		if errA != nil || errB != nil {
			continue
		}
		var bx, by [4]byte
		binary.LittleEndian.PutUint32(bx[:], uint32(x))
		binary.LittleEndian.PutUint32(by[:], uint32(y))
		a = bytes.ReplaceAll(a, bx[:], by[:])
	}
	return bytes.Equal(a, b)
}

// timeCalls read a clock.
var timeCalls = map[string]bool{"clock_gettime": true, "gettimeofday": true, "time": true, "times": true, "sysinfo": true}

// randomFiles are the kernel's sources of random bytes.
var randomFiles = map[string]bool{"/dev/urandom": true, "/dev/random": true}

// finding is what differs between two aligned steps.
type finding struct {
	cat, what string
	// expected marks a difference every pair of runs has; name then says
	// which (the summary's name).
	expected bool
	name     string
}

// classify compares two aligned steps (equal keys); ok is false when they
// agree.
func classify(a, b *item, m ids) (f finding, ok bool) {
	if i, same := m.sameList(a.args, b.args); !same {
		return argsFinding(a, b, i), true
	}
	if a.hash != b.hash {
		return finding{cat: CatWritten, what: fmt.Sprintf("%s wrote other bytes", a.key)}, true
	}
	if len(a.atRandom) > 0 && !bytes.Equal(a.atRandom, b.atRandom) {
		return finding{cat: CatRandom, what: "the exec's AT_RANDOM bytes differ", expected: true, name: "AT_RANDOM"}, true
	}
	if m.same(a.result, b.result) && m.sameBytes(a.out, b.out) && a.outSum == b.outSum {
		return finding{}, false
	}
	switch {
	case a.key == "rdtsc":
		if a.loader && b.loader {
			return finding{cat: CatTime, what: "the loader read the cycle counter", expected: true, name: "rdtsc in the loader"}, true
		}
		return finding{cat: CatTime, what: "the cycle counter read another value"}, true
	case a.key == "rdrand" || a.key == "rdseed":
		return finding{cat: CatRandom, what: a.key + " returned another random number"}, true
	case a.key == "exit":
		return finding{cat: CatExit, what: fmt.Sprintf("the process %s in A, %s in B", a.result, b.result)}, true
	case a.key == "cpuid":
		return finding{cat: CatResult, what: "cpuid answered otherwise"}, true
	case timeCalls[a.name]:
		return finding{cat: CatTime, what: a.name + " returned another time"}, true
	case a.outerParent && b.outerParent:
		return finding{cat: CatResult, what: "the recorder's pid", expected: true, name: "getppid of the first process"}, true
	case a.tcacheKey && b.tcacheKey:
		return finding{cat: CatRandom, what: "malloc's tcache key", expected: true, name: "malloc's tcache key"}, true
	case a.name == "getrandom" || randomFiles[a.path] && randomFiles[b.path]:
		return finding{cat: CatRandom, what: a.name + " returned other random bytes"}, true
	case strings.HasPrefix(a.key, "shared "):
		return finding{cat: CatData, what: "shared memory changed otherwise"}, true
	}
	if _, reads := readFd(a.name, 0); reads {
		from := ""
		if a.path != "" {
			from = " from " + a.path
		}
		if !m.same(a.result, b.result) {
			return finding{cat: CatData, what: fmt.Sprintf("%s%s returned %s in A, %s in B", a.name, from, a.result, b.result)}, true
		}
		return finding{cat: CatData, what: fmt.Sprintf("%s%s read other contents", a.name, from)}, true
	}
	if !m.same(a.result, b.result) {
		return finding{cat: CatResult, what: fmt.Sprintf("%s returned %s in A, %s in B", a.key, a.result, b.result)}, true
	}
	if statCalls[a.name] {
		return finding{cat: CatResult, what: fmt.Sprintf("%s of %s returned another status (size, times, owner…)", a.name, a.path)}, true
	}
	return finding{cat: CatResult, what: a.key + " wrote other results into memory"}, true
}

// argsFinding describes two steps whose arguments differ at argument i.
func argsFinding(a, b *item, i int) finding {
	arg := func(x *item) string {
		if i < len(x.args) {
			return x.args[i]
		}
		return "nothing"
	}
	switch {
	case a.key == "preempt":
		return finding{cat: CatScheduling, what: fmt.Sprintf("preempted at %s in A, %s in B", arg(a), arg(b))}
	case strings.HasPrefix(a.key, "signal "):
		return finding{cat: CatSignal, what: fmt.Sprintf("%s came otherwise: %s in A, %s in B", a.key[len("signal "):], arg(a), arg(b))}
	case a.key == "exec":
		return finding{cat: CatArgs, what: fmt.Sprintf("exec'd otherwise: %s in A, %s in B", arg(a), arg(b))}
	}
	return finding{cat: CatArgs, what: fmt.Sprintf("%s was called with %s in A, %s in B", a.key, arg(a), arg(b))}
}

// onlyFinding describes a step one recording has and the other not.
func onlyFinding(it *item, inA bool) finding {
	side, cat := "A", CatOnlyA
	if !inA {
		side, cat = "B", CatOnlyB
	}
	if it.key == "preempt" {
		return finding{cat: CatScheduling, what: "preempted only in " + side, name: "preempt"}
	}
	return finding{cat: cat, what: fmt.Sprintf("%s only in %s", it.key, side)}
}
