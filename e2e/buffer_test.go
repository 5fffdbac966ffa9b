package e2e

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBufferedCalls records a loop of calls the hook page records in the
// program (clock_gettime through the vDSO, getppid and fstat through
// glibc): every call is still an event of its own, the recording replays
// with --check, and a debugger stops in the loop, reads the values the
// calls returned, watches a global and goes back over buffered calls.
func TestBufferedCalls(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "buffered.c", "-O0")
	const n = 2000
	trace := filepath.Join(t.TempDir(), "buffered.rwd")
	rec := recordOpts(t, runOpts{}, trace, prog, strconv.Itoa(n))
	want := fmt.Sprintf("rounds %d total %d\n", n, 3*n)
	if rec.Code != 0 || string(rec.Stdout) != want {
		t.Fatalf("record: exit %d, stdout %q, want %q\n%s", rec.Code, rec.Stdout, want, tail(rec.Stderr))
	}
	info := run(t, runOpts{}, rewind(t), "info", trace)
	for _, call := range []string{"getppid", "newfstatat", "clock_gettime"} {
		m := regexp.MustCompile(`(?m)^\s+` + call + `\s+(\d+)$`).FindSubmatch(info.Stdout)
		if m == nil {
			t.Errorf("rewind info lists no %s:\n%s", call, info.Stdout)
			continue
		}
		if got, _ := strconv.Atoi(string(m[1])); got < n {
			t.Errorf("%d %s events, want at least %d (one a call):\n%s", got, call, n, info.Stdout)
		}
	}
	if m := regexp.MustCompile(`(?m)^buffered:\s+(\d+) system calls`).FindSubmatch(info.Stdout); m == nil {
		t.Errorf("rewind info does not count buffered calls:\n%s", info.Stdout)
	} else if got, _ := strconv.Atoi(string(m[1])); got < 3*n-10 {
		t.Errorf("%d buffered calls, want nearly all the %d the loop made:\n%s", got, 3*n, info.Stdout)
	}
	// events --json says which calls were buffered.
	ev := run(t, runOpts{}, rewind(t), "events", "--json", "--type", "syscall", trace)
	marked := 0
	for _, line := range strings.Split(string(ev.Stdout), "\n") {
		if strings.Contains(line, `"name":"getppid"`) && strings.Contains(line, `"buffered":true`) {
			marked++
		}
	}
	if marked < n-5 {
		t.Errorf("events --json marks %d getppid calls buffered, want nearly %d", marked, n)
	}

	wantReplayed(t, trace, want)

	rs := batch(t, trace, "break round_ if i == 1500", "continue", "finish", "print total", "delete 1",
		"watch total", "reverse-continue", "reverse-continue", "print i", "continue", "print total")
	for _, r := range rs {
		wantOK(t, r)
	}
	if v := rs[3]["value"]; v != "4503" {
		t.Errorf("total after round 1500: %v, want 4503", v)
	}
	for i, want := range map[int]string{6: "4503", 7: "4500", 9: "4503"} {
		st := stopOf(t, rs[i])
		if w, _ := st["watch"].(map[string]any); st["reason"] != "watchpoint" || fmt.Sprint(w["new"]) != want {
			t.Errorf("%v: %v, want the write of %s", rs[i]["command"], st, want)
		}
	}
	if v := rs[8]["value"]; v != "1499" {
		t.Errorf("i at the write before: %v, want 1499", v)
	}
	if v := rs[10]["value"]; v != "4503" {
		t.Errorf("total after going back and forth: %v, want 4503", v)
	}

	// At a patched site: the jump into the hook is one instruction, the
	// system call, both ways, and the stack never shows the hook.
	rs = batch(t, trace, "break round_ if i == 1500", "continue", "break *getppid", "continue", "stepi", "bt", "reverse-stepi", "bt", "x/i $pc")
	at := stopOf(t, rs[3])
	after, back := stopOf(t, rs[4]), stopOf(t, rs[6])
	if after["function"] != at["function"] || after["pc"] == at["pc"] || back["pc"] != at["pc"] {
		t.Errorf("stepi over the patched getppid from %v: %v, then reverse-stepi: %v", at, after, back)
	}
	if text, _ := rs[8]["text"].(string); !strings.Contains(text, "mov") || !strings.Contains(text, "$0x6e") {
		t.Errorf("x/i at the patched site: %q, want the program's own mov $0x6e (getppid), not the jump", text)
	}
	for _, i := range []int{5, 7} {
		frames, _ := rs[i]["value"].([]any)
		if len(frames) < 2 {
			t.Fatalf("bt: %v", rs[i])
		}
		f0, f1 := frames[0].(map[string]any), frames[1].(map[string]any)
		if f0["function"] != at["function"] || f1["function"] != "round_" {
			t.Errorf("bt at a patched site: %v, want %v then round_", frames, at["function"])
		}
	}
}

// TestBufferedFileCalls records the file system calls the hook records in
// the program (openat, statx, access, faccessat2, readlink, getcwd, uname,
// getrandom, read, close, pipe2, getrusage, fadvise64, and mkdir, rmdir,
// fcntl locks, fsync, fdatasync, chmod and chown in their forms, unlink,
// unlinkat, the old stat and lstat): most are buffered, the listing shows the paths
// they read, and replay --check reproduces what the program printed, which
// depends on every answer.
func TestBufferedFileCalls(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "buffered_files.c", "-O0")
	const n = 300
	dir := t.TempDir()
	trace := filepath.Join(t.TempDir(), "files.rwd")
	rec := recordOpts(t, runOpts{}, trace, prog, dir, strconv.Itoa(n))
	if rec.Code != 0 || !strings.HasPrefix(string(rec.Stdout), fmt.Sprintf("rounds %d sum ", n)) {
		t.Fatalf("record: exit %d, stdout %q\n%s", rec.Code, rec.Stdout, tail(rec.Stderr))
	}
	ev := run(t, runOpts{}, rewind(t), "events", "--json", "--type", "syscall", trace)
	counts := map[string]int{}
	for _, line := range strings.Split(string(ev.Stdout), "\n") {
		var e struct {
			Name     string   `json:"name"`
			Args     []string `json:"args"`
			Buffered bool     `json:"buffered"`
		}
		if line == "" || json.Unmarshal([]byte(line), &e) != nil || !e.Buffered {
			continue
		}
		counts[e.Name]++
		if e.Name == "openat" && len(e.Args) > 1 && strings.HasPrefix(e.Args[1], `"`+dir+`/f`) {
			counts["openat of the files"]++
		}
	}
	for _, call := range []string{"openat of the files", "statx", "access", "readlink", "getcwd", "uname", "getrandom", "read", "close",
		"mkdir", "rmdir", "fcntl", "fsync", "fdatasync", "fchmod", "fchown", "chmod", "fchmodat", "fchownat", "unlink", "unlinkat", "stat", "lstat",
		"gettimeofday", "time", "sysinfo", "pipe2", "getrusage", "fadvise64"} {
		if counts[call] < n-5 {
			t.Errorf("%d buffered %s calls, want nearly %d (all: %v)", counts[call], call, n, counts)
		}
	}
	wantReplayed(t, trace, string(rec.Stdout))
}

// TestBufferedStreams: over pipes and a socket pair between two processes
// (testdata/buffered_streams.c), the writes and sends that cannot wait and
// the reads that find data, or find none on a non-blocking pipe, are
// recorded by the hook with no stop. A read that waits for the other side
// waits in the hook too, as the processes run side by side; with --serial,
// where they take turns, it is made traced (the recorder runs the other
// process meanwhile). Both recordings replay.
func TestBufferedStreams(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "buffered_streams.c", "-O2")
	const n = 200
	want := "sum 79800, end 0, eagain 100\n"
	for _, serial := range []bool{false, true} {
		t.Run(fmt.Sprintf("serial=%v", serial), func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "streams.rwd")
			var flags []string
			if serial {
				flags = []string{"--serial"}
			}
			rec := recordOpts(t, runOpts{RecordFlags: flags}, trace, prog, strconv.Itoa(n))
			if rec.Code != 0 || string(rec.Stdout) != want {
				t.Fatalf("record: exit %d, stdout %q, want %q\n%s", rec.Code, rec.Stdout, want, tail(rec.Stderr))
			}
			ev := run(t, runOpts{}, rewind(t), "events", "--json", "--type", "syscall", trace)
			type key struct {
				name             string
				buffered, waited bool
			}
			count := map[key]int{}
			for _, e := range ndjson[map[string]any](t, ev) {
				count[key{fmt.Sprint(e["name"]), e["buffered"] == true, e["blocking"] == true}]++
			}
			for _, c := range []struct {
				name string
				min  int
			}{{"write", 2*n - 20}, {"sendto", n - 10}, {"read", 100}} {
				if got := count[key{c.name, true, false}]; got < c.min {
					t.Errorf("%d buffered %s, want at least %d: %v", got, c.name, c.min, count)
				}
			}
			traced := count[key{"read", false, true}] + count[key{"read", false, false}]
			switch {
			case serial && count[key{"read", false, true}] == 0:
				t.Errorf("no read waited for the other process (traced, blocking): %v", count)
			case !serial && traced > 4:
				// The first read of a site, before it is patched, may stop.
				t.Errorf("%d reads stopped, want those that wait made in the hook: %v", traced, count)
			}
			wantReplayed(t, trace, want)
		})
	}
}

// TestBufferedSharedReadOnly: a process mapping a file read-only and shared
// (as glibc maps gconv-modules.cache for setlocale: git, python, sort and
// most of coreutils do) keeps its writes to other files and its unmappings
// elsewhere buffered; the write to the mapped file and the unmapping of the
// shared mapping stay the recorder's, and replay reads the bytes the write
// put in the mapping. In "exec", the process is the exec'd child of one
// that maps the file first, as each process of a make maps the same cache:
// the recorder adds the child's mapping to what it follows without reading
// /proc/PID/maps, and the hook must know of it all the same.
func TestBufferedSharedReadOnly(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "buffered_sharedro.c", "-O1")
	for _, mode := range []string{"alone", "exec"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			bufferedSharedReadOnly(t, prog, mode)
		})
	}
}

func bufferedSharedReadOnly(t *testing.T, prog, mode string) {
	const n = 200
	trace := filepath.Join(t.TempDir(), "sharedro.rwd")
	args := []string{t.TempDir(), strconv.Itoa(n)}
	want := "mapped after!.\nagain 1\n"
	if mode == "exec" {
		args = append(args, "exec")
		want += "parent mapped after!.\n"
	}
	rec := recordOpts(t, runOpts{Env: []string{"REWIND_DEBUG=1"}}, trace, prog, args...)
	if rec.Code != 0 || !strings.Contains(string(rec.Stdout), want) {
		t.Fatalf("record: exit %d, stdout %q, want %q\n%s", rec.Code, rec.Stdout, want, tail(rec.Stderr))
	}
	if m := regexp.MustCompile(`mappings: (\d+) rescans, (\d+) added`).FindAllSubmatch(rec.Stderr, -1); len(m) == 0 {
		t.Errorf("REWIND_DEBUG reports no shared mappings:\n%s", tail(rec.Stderr))
	} else if added := string(m[len(m)-1][2]); (added != "0") != (mode == "exec") {
		t.Errorf("%s mappings added without a rescan in mode %s", added, mode)
	}
	count := map[string]int{}
	for _, e := range syscallEvents(t, trace) {
		name := e.Name
		if name == "munmap" && len(e.Args) > 1 && e.Args[1] == "4096" {
			name = "munmap of the shared mapping"
		}
		if e.Buffered {
			name += " (buffered)"
		}
		count[name]++
	}
	for _, want := range []struct {
		name string
		min  int
	}{{"write (buffered)", n - 5}, {"munmap (buffered)", n - 5}, {"pwrite64", 1}, {"munmap of the shared mapping", 1}} {
		if count[want.name] < want.min {
			t.Errorf("%d %s calls, want at least %d (all: %v)", count[want.name], want.name, want.min, count)
		}
	}
	for _, never := range []string{"pwrite64 (buffered)", "munmap of the shared mapping (buffered)"} {
		if count[never] != 0 {
			t.Errorf("%d %s calls: the recorder must see them (all: %v)", count[never], never, count)
		}
	}
	wantReplayed(t, trace, string(rec.Stdout))
}

// TestBufferedForkedChildren: a site the first forked child taught the
// recorder is patched in the parent too, so that the children forked after
// it, which run the parent's code without exec'ing, make the call with no
// stop; the recording replays.
func TestBufferedForkedChildren(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "forkcalls.c", "-O1")
	const n = 20
	trace := filepath.Join(t.TempDir(), "forkcalls.rwd")
	want := fmt.Sprintf("%d of %d children saw their parent\n", n, n)
	stdout, stderr, code := record(t, trace, prog, strconv.Itoa(n))
	if code != 0 || string(stdout) != want {
		t.Fatalf("record: exit %d, stdout %q, want %q\n%s", code, stdout, want, tail(stderr))
	}
	buffered, traced := countCalls(t, trace, "getppid")
	if buffered < n-3 || buffered+traced != n {
		t.Errorf("%d buffered and %d traced getppid calls of %d children, want nearly all buffered", buffered, traced, n)
	}
	wantReplayed(t, trace, want)
}

// TestBufferedVDSOFirstCalls: the vDSO's clock functions, which lie in no
// file that known sites could name, are patched to call the hook at each
// exec, so that every new process's first clock read (date's) needs no
// stop; the recording replays, reading the time date printed.
func TestBufferedVDSOFirstCalls(t *testing.T) {
	t.Parallel()
	if !haveVDSO(t) {
		t.Skip("this kernel maps no vDSO (vdso=0): clock reads are system calls of libc's")
	}
	const n = 10
	trace := filepath.Join(t.TempDir(), "dates.rwd")
	script := fmt.Sprintf("i=0; while [ $i -lt %d ]; do date +%%s.%%N; i=$((i + 1)); done", n)
	stdout, stderr, code := record(t, trace, "sh", "-c", script)
	if code != 0 || len(lines(stdout)) != n {
		t.Fatalf("record: exit %d, stdout %q\n%s", code, stdout, tail(stderr))
	}
	buffered, traced := countCalls(t, trace, "clock_gettime")
	if buffered < n || traced != 0 {
		t.Errorf("%d buffered and %d traced clock_gettime calls of %d processes of date, want every one buffered", buffered, traced, n)
	}
	wantReplayed(t, trace, string(stdout))
}

// haveVDSO says whether the kernel maps a vDSO into processes (this one's
// auxiliary vector has AT_SYSINFO_EHDR).
func haveVDSO(t *testing.T) bool {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		t.Fatal(err)
	}
	const atSysinfoEHdr = 33
	for i := 0; i+16 <= len(b); i += 16 {
		if binary.LittleEndian.Uint64(b[i:]) == atSysinfoEHdr {
			return binary.LittleEndian.Uint64(b[i+8:]) != 0
		}
	}
	return false
}

// TestBufferedStdWrites: writes to the standard output and error rewind
// passed (files here; a pipe's are the recorder's) are recorded by the hook
// with their bytes, with no stop; the listing shows them, and replay shows
// the same output.
func TestBufferedStdWrites(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "stdwrites.c", "-O1")
	const n = 300
	trace := filepath.Join(t.TempDir(), "stdwrites.rwd")
	dir := t.TempDir()
	outFile, errFile := filepath.Join(dir, "out"), filepath.Join(dir, "err")
	sh := fmt.Sprintf("exec %s record -o %s -- %s %d >%s 2>%s", rewind(t), trace, prog, n, outFile, errFile)
	r := run(t, runOpts{}, "/bin/sh", "-c", sh)
	stdout, _ := os.ReadFile(outFile)
	stderr, _ := os.ReadFile(errFile)
	if code := r.Code; code != 0 || strings.Count(string(stdout), "\n") != n-n/10 || !strings.HasPrefix(string(stdout), fmt.Sprintf("line 1 of %d\n", n)) {
		t.Fatalf("record: exit %d, stdout %q\n%s", code, stdout, tail(stderr))
	}
	buffered := map[string]int{}
	for _, e := range syscallEvents(t, trace) {
		if e.Name == "write" && e.Buffered && len(e.Args) > 1 && strings.HasPrefix(e.Args[1], `"line `) {
			buffered[e.Args[0]]++
		}
	}
	if buffered["1"] < n-n/10-5 || buffered["2"] < n/10-2 {
		t.Errorf("buffered writes to stdout %d, to stderr %d; want nearly %d and %d", buffered["1"], buffered["2"], n-n/10, n/10)
	}
	errOut := wantReplayed(t, trace, string(stdout))
	for i := 10; i <= n; i += 10 {
		if want := fmt.Sprintf("line %d of %d\n", i, n); !strings.Contains(string(errOut), want) {
			t.Fatalf("replay's stderr lacks %q:\n%s", want, tail(errOut))
		}
	}

	// Both streams into one file: the writes through descriptor 2 are
	// still the standard error's.
	both := filepath.Join(t.TempDir(), "both.rwd")
	file := filepath.Join(t.TempDir(), "both.txt")
	sh = fmt.Sprintf("exec %s record -o %s -- %s %d >%s 2>&1", rewind(t), both, prog, n, file)
	if r := run(t, runOpts{}, "/bin/sh", "-c", sh); r.Code != 0 {
		t.Fatalf("record into one file: exit %d\n%s", r.Code, tail(r.Stderr))
	}
	out, errOut, code := replayCheck(t, both)
	if code != 0 || strings.Count(string(out), "\n") != n-n/10 || strings.Count(string(errOut), "line ") != n/10 {
		t.Fatalf("replay of a recording into one file: exit %d, %d lines out, stderr:\n%s", code, strings.Count(string(out), "\n"), tail(errOut))
	}
}

// callEvent is a system call of `rewind events --json`.
type callEvent struct {
	Name     string   `json:"name"`
	Args     []string `json:"args"`
	Buffered bool     `json:"buffered"`
}

// syscallEvents lists the system calls of trace.
func syscallEvents(t *testing.T, trace string) []callEvent {
	t.Helper()
	return ndjson[callEvent](t, run(t, runOpts{}, rewind(t), "events", "--json", "--type", "syscall", trace))
}

// TestBufferedGoCalls: a Go program's own calls (os.WriteFile, ReadFile,
// Stat, Remove: the syscall package's Syscall6, checked with cmp
// $-4095) are made by the hook with no stop, and replay reproduces what
// it printed, which depends on every answer.
func TestBufferedGoCalls(t *testing.T) {
	t.Parallel()
	prog := buildGo(t, "files")
	const n = 200
	dir := t.TempDir()
	trace := filepath.Join(t.TempDir(), "gofiles.rwd")
	want := fmt.Sprintf("rounds %d sum ", n)
	rec := recordOpts(t, runOpts{}, trace, prog, dir, strconv.Itoa(n))
	if rec.Code != 0 || !strings.HasPrefix(string(rec.Stdout), want) {
		t.Fatalf("record: exit %d, stdout %q\n%s", rec.Code, rec.Stdout, tail(rec.Stderr))
	}
	ev := run(t, runOpts{}, rewind(t), "events", "--json", "--type", "syscall", trace)
	buffered, traced := 0, 0
	for _, line := range strings.Split(string(ev.Stdout), "\n") {
		var e struct {
			Name     string   `json:"name"`
			Args     []string `json:"args"`
			Buffered bool     `json:"buffered"`
		}
		if line == "" || json.Unmarshal([]byte(line), &e) != nil || e.Name != "openat" || len(e.Args) < 2 || !strings.HasPrefix(e.Args[1], `"`+dir+`/f`) {
			continue
		}
		if e.Buffered {
			buffered++
		} else {
			traced++
		}
	}
	// Each round opens its file twice (to write it, to read it).
	if buffered < 2*n-5 {
		t.Errorf("%d of the program's openat calls of its files buffered, %d traced: want nearly all %d buffered", buffered, traced, 2*n)
	}
	if out, errOut, code := replayCheck(t, trace); code != 0 || string(out) != string(rec.Stdout) {
		t.Errorf("replay --check: exit %d, stdout %q, want 0 and %q\n%s", code, out, rec.Stdout, tail(errOut))
	}
}

// TestBufferedFutexWake: a FUTEX_WAKE in a process of one thread, which
// can wake no one (glibc's pthread_once makes one in most processes), is
// recorded by the hook with no stop; once a second thread exists, or with
// --serial (the process no longer alone on a run queue), each is traced.
// Each recording replays.
func TestBufferedFutexWake(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "futexwake.c", "-O2")
	const n = 100
	for _, tc := range []struct {
		name         string
		flags        []string
		wantBuffered bool // the wakes made alone
	}{
		{"default", nil, true},
		{"serial", []string{"--serial"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			trace := filepath.Join(t.TempDir(), "futex.rwd")
			rec := recordOpts(t, runOpts{RecordFlags: tc.flags}, trace, prog, strconv.Itoa(n))
			var alone, shared string
			if _, err := fmt.Sscanf(string(rec.Stdout), "alone %s shared %s", &alone, &shared); rec.Code != 0 || err != nil {
				t.Fatalf("record: exit %d, stdout %q (%v)\n%s", rec.Code, rec.Stdout, err, tail(rec.Stderr))
			}
			ev := run(t, runOpts{}, rewind(t), "events", "--json", "--type", "syscall", trace)
			buffered := map[string]int{}
			for _, line := range strings.Split(string(ev.Stdout), "\n") {
				var e struct {
					Name     string   `json:"name"`
					Args     []string `json:"args"`
					Buffered bool     `json:"buffered"`
				}
				if line != "" && json.Unmarshal([]byte(line), &e) == nil && e.Name == "futex" && e.Buffered && len(e.Args) > 0 {
					buffered[e.Args[0]]++
				}
			}
			if got := buffered[alone] >= n-5; got != tc.wantBuffered {
				t.Errorf("%d of the %d wakes made alone buffered; want nearly all %v (%v)", buffered[alone], n, tc.wantBuffered, buffered)
			}
			if buffered[shared] != 0 {
				t.Errorf("%d wakes made beside a second thread buffered, want none", buffered[shared])
			}
			wantReplayed(t, trace, string(rec.Stdout))
		})
	}
}

// TestMapPastEnd: a small file's mapping that reaches past its last page
// faults there in replay as it did when recorded (testdata/mappastend.c),
// though replay maps small files from one memfd where the next one the
// program mapped lies right past it; a mapping within the file reads its
// bytes.
func TestMapPastEnd(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "mappastend.c", "-O1")
	want := strings.Repeat("fault past the end (12000)\nbytes xx\n", 3)
	trace := filepath.Join(t.TempDir(), "pastend.rwd")
	rec := recordOpts(t, runOpts{}, trace, prog, t.TempDir())
	if rec.Code != 0 || string(rec.Stdout) != want {
		t.Fatalf("record: exit %d, stdout %q, want 0 and %q\n%s", rec.Code, rec.Stdout, want, tail(rec.Stderr))
	}
	wantReplayed(t, trace, want)
}

// TestStepiOverTracedWrite: wc's write to a pipe (rewind's stdout here) is
// a call the hook leaves to the recorder, made traced from its site's stub
// and logged at its entry: stepi from write's first instruction steps over
// it as over any instruction, the flags at the entry compared without the
// trap flag replay's own single-step sets (it diverged there: eflags
// 0x302, recorded 0x202).
func TestStepiOverTracedWrite(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "pipe.rwd")
	if r := recordOpts(t, runOpts{}, trace, "/bin/sh", "-c", "ls / | wc -l"); r.Code != 0 {
		t.Fatalf("record: exit %d\n%s", r.Code, tail(r.Stderr))
	}
	ps := run(t, runOpts{}, rewind(t), "ps", trace)
	m := regexp.MustCompile(`(?m)^(\d+)\s.*\swc -l$`).FindSubmatch(ps.Stdout)
	if m == nil {
		t.Fatalf("no wc in rewind ps:\n%s", ps.Stdout)
	}
	cmds := []string{"process " + string(m[1]), "break write", "continue"}
	for range 6 {
		cmds = append(cmds, "stepi")
	}
	cmds = append(cmds, "finish")
	rs := batch(t, trace, cmds...)
	for _, r := range rs {
		wantOK(t, r)
	}
	at := stopOf(t, rs[2])
	if at["function"] == nil || !strings.Contains(fmt.Sprint(at["function"]), "write") {
		t.Fatalf("continue stopped at %v, want wc's write", at)
	}
	for i, r := range rs[3:9] {
		if st := stopOf(t, r); st["pc"] == at["pc"] {
			t.Errorf("stepi %d stayed at %v", i+1, st["pc"])
		}
	}
}

// countCalls counts the system calls named name in trace: those the hook
// buffered, and those that stopped.
func countCalls(t *testing.T, trace, name string) (buffered, traced int) {
	t.Helper()
	for _, e := range syscallEvents(t, trace) {
		switch {
		case e.Name != name:
		case e.Buffered:
			buffered++
		default:
			traced++
		}
	}
	return buffered, traced
}
