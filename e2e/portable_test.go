package e2e

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Portable recordings (issue 24): a recording replays, and debugs, where
// the files it ran are gone or are other files, as on another machine. Each
// case records a program whose executable, loader and libc (or a script
// and its shim) live in a private directory, then deletes or replaces what
// the program ran before replaying.

// systemLoader returns the dynamic loader and libc the C compiler links
// against here (their real files, not symlinks).
func systemLoader(t *testing.T) (loader, libc string) {
	t.Helper()
	f, err := elf.Open(buildC(t, "portable.c"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			p.ReadAt(b, 0)
			loader = string(bytes.TrimRight(b, "\x00"))
		}
	}
	out, err := exec.Command("gcc", "-print-file-name=libc.so.6").Output()
	if err != nil || loader == "" {
		t.Skipf("cannot find the loader (%q) or libc: %v", loader, err)
	}
	libc = strings.TrimSpace(string(out))
	for _, p := range []*string{&loader, &libc} {
		if *p, err = filepath.EvalSymlinks(*p); err != nil {
			t.Skipf("cannot resolve %s: %v", *p, err)
		}
	}
	return loader, libc
}

// copyFile copies src to dst with mode.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		t.Fatal(err)
	}
}

// privateProgram builds testdata/portable.c in dir against a copy of the
// loader and libc there: everything it runs is in dir.
func privateProgram(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	loader, libc := systemLoader(t)
	copyFile(t, loader, filepath.Join(dir, "ld.so"), 0o755)
	copyFile(t, libc, filepath.Join(dir, "libc.so.6"), 0o755)
	prog := filepath.Join(dir, "prog")
	args := append([]string{"-g", "-O0", "-o", prog, srcPath("portable.c"),
		"-Wl,--dynamic-linker=" + filepath.Join(dir, "ld.so"), "-Wl,-rpath," + dir}, extra...)
	if err := compile("gcc", testdataDir, args...); err != nil {
		t.Fatal(err)
	}
	return prog
}

// debugAfterMove checks what a user debugs once the files are gone: a
// breakpoint in main, a watch on the global and a reverse-continue to its
// last write, a backtrace, the libraries with their symbols.
func debugAfterMove(t *testing.T, trace, dir string) {
	t.Helper()
	res := run(t, runOpts{}, rewind(t), "replay", "--batch", "-ex", "break main", "-ex", "continue",
		"-ex", "break portable.c:12", "-ex", "continue", "-ex", "watch counter", "-ex", "reverse-continue", "-ex", "print counter",
		"-ex", "bt", "-ex", "info sharedlibrary", trace)
	out := string(res.Stdout)
	for _, want := range []string{
		"Breakpoint 1, main (",
		"Old value = 498501\nNew value = 499500",
		"$1 = 499500",
		"#0  main (", "at portable.c:10",
		filepath.Join(dir, "libc.so.6"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("batch output lacks %q\nstdout:\n%s\nstderr:\n%s", want, out, tail(res.Stderr))
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "libc.so.6") && !strings.Contains(l, "Yes (R)") {
			t.Errorf("libc's symbols not read from the recording's copy, or not said to be: %q", l)
		}
	}
}

func TestPortableReplay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// after changes dir once recorded, as another machine would have it.
		after func(t *testing.T, dir string)
	}{
		{"deleted", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced", func(t *testing.T, dir string) {
			// Other files at the recorded paths: a program built otherwise,
			// another library as libc, another program as the loader.
			privateProgram(t, dir, "-O2", "-DREPLACED")
			_, libc := systemLoader(t)
			copyFile(t, filepath.Join(filepath.Dir(libc), "libm.so.6"), filepath.Join(dir, "libc.so.6"), 0o755)
			copyFile(t, buildC(t, "portable.c"), filepath.Join(dir, "ld.so"), 0o755)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			prog := privateProgram(t, filepath.Join(dir))
			trace := filepath.Join(t.TempDir(), "portable.rwd")
			rec := recordOpts(t, runOpts{}, trace, prog, "one")
			if rec.Code != 0 || string(rec.Stdout) != "counter=499500 args=2\n" {
				t.Fatalf("record exited %d, stdout %q\nstderr:\n%s", rec.Code, rec.Stdout, tail(rec.Stderr))
			}
			events, progStderr := checkRecorded(t, rec.Stderr, trace, "")
			tc.after(t, dir)
			stdout, stderr, code := replayCheck(t, trace)
			checkReplayed(t, events, rec.Stdout, progStderr, stdout, stderr, code)
			debugAfterMove(t, trace, dir)
		})
	}
}

// TestPortableScripts records a program run through a shim (a shell script
// that runs another script, as pyenv's shims do) and a #! script, then
// deletes them all: the interpreter's reads of the scripts come from the
// recording, and the exec'd files from the stored copies.
func TestPortableScripts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prog := privateProgram(t, dir)
	script := filepath.Join(dir, "script.sh")
	shim := filepath.Join(dir, "shim")
	if err := os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\necho script \"$@\"\nexec %s \"$@\"\n", prog)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shim, []byte(fmt.Sprintf("#!/bin/sh\nexec %s \"$@\"\n", script)), 0o755); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "shim.rwd")
	rec := recordOpts(t, runOpts{}, trace, shim, "a", "b")
	if rec.Code != 0 || string(rec.Stdout) != "script a b\ncounter=499500 args=3\n" {
		t.Fatalf("record exited %d, stdout %q\nstderr:\n%s", rec.Code, rec.Stdout, tail(rec.Stderr))
	}
	events, progStderr := checkRecorded(t, rec.Stderr, trace, "")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := replayCheck(t, trace)
	checkReplayed(t, events, rec.Stdout, progStderr, stdout, stderr, code)
	debugAfterMove(t, trace, dir)
}

// alteredCopy copies an ELF file to dst with one byte of its build-id
// changed: a file that works as the original does, and is another.
func alteredCopy(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section(".note.gnu.build-id")
	if sec == nil || sec.Size < 17 {
		t.Skipf("%s has no build-id to change", src)
	}
	data[sec.Offset+sec.Size-1] ^= 0xff
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestPortableMountNamespace records, in a mount namespace, a program whose
// loader and libc are other files bound over the system's (as a container
// or a chroot has its own), and replays it outside, where the system's are.
func TestPortableMountNamespace(t *testing.T) {
	t.Parallel()
	unshare := need(t, "unshare")
	if r := run(t, runOpts{}, unshare, "-m", "true"); r.Code != 0 {
		t.Skipf("unshare -m cannot run here (no privilege?): %s", bytes.TrimSpace(r.Stderr))
	}
	loader, libc := systemLoader(t)
	prog := buildC(t, "portable.c")
	dir := t.TempDir()
	alteredCopy(t, loader, filepath.Join(dir, "ld.so"))
	alteredCopy(t, libc, filepath.Join(dir, "libc.so.6"))
	trace := filepath.Join(t.TempDir(), "ns.rwd")
	script := fmt.Sprintf("mount --bind %s/ld.so %s && mount --bind %s/libc.so.6 %s && exec %s record -o %s %s one",
		dir, loader, dir, libc, rewind(t), trace, prog)
	rec := run(t, runOpts{}, unshare, "-m", "--propagation", "private", "sh", "-c", script)
	if rec.Code != 0 || string(rec.Stdout) != "counter=499500 args=2\n" {
		t.Fatalf("record in a mount namespace exited %d, stdout %q\nstderr:\n%s", rec.Code, rec.Stdout, tail(rec.Stderr))
	}
	events, progStderr := checkRecorded(t, rec.Stderr, trace, "")
	stdout, stderr, code := replayCheck(t, trace)
	checkReplayed(t, events, rec.Stdout, progStderr, stdout, stderr, code)
	res := run(t, runOpts{}, rewind(t), "replay", "--batch", "-ex", "break main", "-ex", "continue",
		"-ex", "break portable.c:12", "-ex", "continue", "-ex", "watch counter", "-ex", "reverse-continue", "-ex", "print counter", "-ex", "bt", trace)
	for _, want := range []string{"Breakpoint 1, main (", "$1 = 499500", "#0  main ("} {
		if !strings.Contains(string(res.Stdout), want) {
			t.Errorf("batch output lacks %q\nstdout:\n%s\nstderr:\n%s", want, res.Stdout, tail(res.Stderr))
		}
	}
}

// TestPortableGDB: gdb over --gdbserver, on a recording whose program,
// loader and libc are gone, reads them from the recording (vFile, under
// gdb's default sysroot target:): its breakpoints, backtraces and
// libraries are the recorded program's.
func TestPortableGDB(t *testing.T) {
	need(t, "gdb")
	t.Parallel()
	dir := t.TempDir()
	prog := privateProgram(t, dir)
	trace := filepath.Join(t.TempDir(), "gdb.rwd")
	mustRecord(t, trace, prog, "one")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		cmd  string
		want string // a regexp its output must match
	}{
		{"break puts", `Breakpoint 1 at`},
		{"continue", `Breakpoint 1, .*puts \(str=0x[0-9a-f]+ "counter=499500 args=2"\)`},
		{"bt", `#1 +0x[0-9a-f]+ in main \(argc=2, argv=0x[0-9a-f]+\) at .*portable.c:14`},
		{"info sharedlibrary", `Yes.*target:` + regexp.QuoteMeta(filepath.Join(dir, "libc.so.6"))},
	}
	var cmds []string
	for _, s := range steps {
		cmds = append(cmds, s.cmd)
	}
	out := remoteGDB(t, prog, pipeTarget(t, trace), cmds)
	for i, s := range steps {
		if !regexp.MustCompile(s.want).MatchString(out[i]) {
			t.Errorf("%s: want %q in:\n%s", s.cmd, s.want, out[i])
		}
	}
}

// TestPortablePreemptFromCheckpoint: a threaded program whose spinner is
// preempted, its executable replaced after recording. Reaching the
// preemption from a checkpoint (goto end, then back to it) hashes the
// process's data from the recording's copy of the executable, as the first
// replay does: /proc/PID/exe of a restored copy names the vessel.
func TestPortablePreemptFromCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prog := filepath.Join(dir, "spin")
	copyFile(t, buildC(t, "spin.c"), prog, 0o755)
	trace := filepath.Join(t.TempDir(), "spin.rwd")
	mustRecord(t, trace, prog)
	copyFile(t, buildC(t, "portable.c"), prog, 0o755)
	r := run(t, runOpts{}, rewind(t), "events", "--json", trace)
	preempt := ""
	for _, l := range lines(r.Stdout) {
		var e struct {
			Event int64  `json:"event"`
			Type  string `json:"type"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && e.Type == "preempt" {
			preempt = fmt.Sprintf("goto #%d", e.Event+1)
			break
		}
	}
	if preempt == "" {
		t.Fatalf("no preemption recorded:\n%s", r.Stdout)
	}
	for i, res := range batch(t, trace, "goto end", preempt, "goto start", preempt) {
		if res["ok"] != true {
			t.Errorf("command %d (%v): %v", i, res["command"], res["error"])
		}
	}
}
