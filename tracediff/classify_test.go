package tracediff

import (
	"encoding/binary"
	"testing"
)

// le32 is a tid as a clone writes it.
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// stat is a struct stat of a file type, inode and access time.
func stat(mode uint32, ino, atime uint64) []byte {
	b := make([]byte, statSize)
	binary.LittleEndian.PutUint64(b[statIno:], ino)
	binary.LittleEndian.PutUint32(b[statMode:], mode)
	binary.LittleEndian.PutUint64(b[statAtime:], atime)
	return normalStat(b)
}

func TestClassify(t *testing.T) {
	m := ids{"100": "200", "101": "201"}
	call := func(name string, args []string, result string, out []byte) item {
		return item{key: name, name: name, args: args, result: result, out: out}
	}
	for _, tc := range []struct {
		name     string
		a, b     item
		cat      string // "" for no difference
		expected bool
	}{
		{"same", call("read", []string{"3"}, "4", []byte("abcd")), call("read", []string{"3"}, "4", []byte("abcd")), "", false},
		{"random bytes", call("getrandom", []string{"16", "0"}, "16", []byte{1}), call("getrandom", []string{"16", "0"}, "16", []byte{2}), CatRandom, false},
		{"time", call("clock_gettime", []string{"CLOCK_REALTIME"}, "0", []byte{1}), call("clock_gettime", []string{"CLOCK_REALTIME"}, "0", []byte{2}), CatTime, false},
		{"urandom", item{key: "read", name: "read", path: "/dev/urandom", out: []byte{1}}, item{key: "read", name: "read", path: "/dev/urandom", out: []byte{2}}, CatRandom, false},
		{"file contents", item{key: "read", name: "read", path: "/etc/x", out: []byte{1}}, item{key: "read", name: "read", path: "/etc/x", out: []byte{2}}, CatData, false},
		{"long contents", item{key: "read", name: "read", outSum: 1}, item{key: "read", name: "read", outSum: 2}, CatData, false},
		{"other path", call("openat", []string{"AT_FDCWD", `"/tmp/a"`}, "3", nil), call("openat", []string{"AT_FDCWD", `"/tmp/b"`}, "3", nil), CatArgs, false},
		{"own pid", call("getpid", nil, "100", nil), call("getpid", nil, "200", nil), "", false},
		{"another pid", call("getpid", nil, "100", nil), call("getpid", nil, "300", nil), CatResult, false},
		{"kill of the counterpart", call("kill", []string{"101", "SIGTERM"}, "0", nil), call("kill", []string{"201", "SIGTERM"}, "0", nil), "", false},
		{"clone writes the new tid", call("clone", nil, "101", le32(101)), call("clone", nil, "201", le32(201)), "", false},
		{"other bytes written", item{key: "write", name: "write", hash: 1}, item{key: "write", name: "write", hash: 2}, CatWritten, false},
		{"error", call("open", []string{`"/x"`}, "-1 ENOENT", nil), call("open", []string{`"/x"`}, "3", nil), CatResult, false},
		{"loader's rdtsc", item{key: "rdtsc", result: "1", loader: true}, item{key: "rdtsc", result: "2", loader: true}, CatTime, true},
		{"program's rdtsc", item{key: "rdtsc", result: "1"}, item{key: "rdtsc", result: "2"}, CatTime, false},
		{"rdrand", item{key: "rdrand", result: "1"}, item{key: "rdrand", result: "2"}, CatRandom, false},
		{"exit status", item{key: "exit", result: "exited with status 0"}, item{key: "exit", result: "exited with status 1"}, CatExit, false},
		{"tcache key", item{key: "getrandom", name: "getrandom", out: []byte{1}, tcacheKey: true}, item{key: "getrandom", name: "getrandom", out: []byte{2}, tcacheKey: true}, CatRandom, true},
		{"the recorder's pid", item{key: "getppid", name: "getppid", result: "7", outerParent: true}, item{key: "getppid", name: "getppid", result: "8", outerParent: true}, CatResult, true},
		{"AT_RANDOM", item{key: "exec", atRandom: []byte{1}}, item{key: "exec", atRandom: []byte{2}}, CatRandom, true},
		{"stdout's pipe", call("newfstatat", []string{"1"}, "0", stat(sIFIFO, 5, 7)), call("newfstatat", []string{"1"}, "0", stat(sIFIFO, 6, 8)), "", false},
		{"a file read since", call("newfstatat", []string{"3"}, "0", stat(0o100000, 5, 7)), call("newfstatat", []string{"3"}, "0", stat(0o100000, 5, 8)), "", false},
		{"another file", call("newfstatat", []string{"3"}, "0", stat(0o100000, 5, 7)), call("newfstatat", []string{"3"}, "0", stat(0o100000, 6, 7)), CatResult, false},
		{"preempted elsewhere", item{key: "preempt", args: []string{"0x1"}}, item{key: "preempt", args: []string{"0x2"}}, CatScheduling, false},
		{"signal code", item{key: "signal SIGSEGV", args: []string{"SEGV_MAPERR", "0x0"}}, item{key: "signal SIGSEGV", args: []string{"SEGV_ACCERR", "0x0"}}, CatSignal, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, differ := classify(&tc.a, &tc.b, m)
			switch {
			case tc.cat == "" && differ:
				t.Errorf("found %s (%s), want no difference", f.cat, f.what)
			case tc.cat != "" && !differ:
				t.Errorf("no difference, want %s", tc.cat)
			case differ && (f.cat != tc.cat || f.expected != tc.expected || f.what == ""):
				t.Errorf("found %s expected=%v (%s), want %s expected=%v", f.cat, f.expected, f.what, tc.cat, tc.expected)
			}
		})
	}
}

// TestCpuidResult: the fields that name the CPU do not count.
func TestCpuidResult(t *testing.T) {
	if cpuidResult(1, 0x01020800<<32|0xa10f11, 7) != cpuidResult(1, 0x00020800<<32|0xa10f11, 7) {
		t.Error("leaf 1's APIC id counted")
	}
	if cpuidResult(1, 0x01020800<<32|0xa10f11, 7) == cpuidResult(1, 0x01020801<<32|0xa10f11, 7) {
		t.Error("leaf 1's other fields not counted")
	}
	if cpuidResult(0xb, 1, 5<<32) != cpuidResult(0xb, 1, 6<<32) {
		t.Error("leaf 0xb's x2APIC id counted")
	}
}
