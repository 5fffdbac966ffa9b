package ptrace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/internal/gccimage"
)

func TestMain(m *testing.M) {
	MaybeRunHelper() // the Go helper, where there is no native one
	os.Exit(m.Run())
}

// TestStartHelpers starts a shell through each exec helper, the native one
// and rewind itself (where there is no memfd, or it cannot be executed),
// under the seccomp filter, and runs it to its end: it has the
// environment, stack limit, ignored signals and ASLR off that Start asks
// for, in the directory.
func TestStartHelpers(t *testing.T) {
	noexec := func() *os.File {
		fd, err := unix.MemfdCreate(helperName, unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL)
		if err != nil {
			return nil
		}
		f := os.NewFile(uintptr(fd), helperName)
		f.Write(helperImage)
		return f
	}
	for _, tc := range []struct {
		name   string
		helper func() *os.File // nil: the default
	}{
		{"native", nil},
		{"go", func() *os.File { return nil }},
		{"memfd not executable", noexec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.helper == nil && helperFile() == nil:
				t.Skip("no executable memfd here")
			case tc.helper != nil:
				f := tc.helper()
				if f == nil && tc.name != "go" {
					t.Skip("no MFD_NOEXEC_SEAL here")
				}
				saved := helperFile
				helperFile = func() *os.File { return f }
				defer func() { helperFile = saved }()
			}
			out := filepath.Join(t.TempDir(), "out")
			f, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			dir := t.TempDir()
			sh := "/bin/sh"
			// Builtins only: a child would stop, traced, for nobody.
			script := `echo "X=$X"; ulimit -s; read p </proc/self/personality; echo "$p"; ` +
				`while read k v; do [ "$k" = SigIgn: ] && echo "SigIgn=$v"; done </proc/self/status; pwd`
			th := NewThread()
			defer th.Close()
			var code int
			th.Do(func() {
				var pid int
				pid, err = Start(&Spec{Path: sh, Args: []string{"sh", "-c", script}, Env: []string{"X=from the sync pipe"},
					Dir: dir, StackLimit: 4 << 20, Ignored: 1 << (unix.SIGINT - 1), CPU: -1, Filter: true, Stdout: f, Stderr: f})
				if err != nil {
					return
				}
				if err = Cont(pid, 0); err != nil { // from the exec stop
					return
				}
				for {
					st, _, werr := Wait(pid, false)
					if werr != nil {
						err = werr
						return
					}
					if st.Kind == Exited || st.Kind == Killed {
						code = st.Code
						return
					}
					sig := 0
					if st.Kind == StopSignal {
						sig = st.Sig
					}
					if err = Cont(pid, sig); err != nil {
						return
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(out)
			for _, want := range []string{"X=from the sync pipe\n", "\n4096\n", "00040000", "SigIgn=0000000000000002", dir} {
				if !bytes.Contains(got, []byte(want)) {
					t.Errorf("exit %d, output lacks %q:\n%s", code, want, got)
				}
			}
		})
	}
}

// TestStartFailure: a program that cannot be executed is a clear error
// from either helper.
func TestStartFailure(t *testing.T) {
	errOut, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errOut.Close()
	th := NewThread()
	defer th.Close()
	th.Do(func() {
		_, err = Start(&Spec{Path: "/nonexistent/prog", Args: []string{"prog"}, CPU: -1, Ignored: -1, Filter: true, Stderr: errOut})
	})
	if err == nil || !strings.Contains(err.Error(), "exit status 127") {
		t.Errorf("start of a missing program: %v, want exit status 127", err)
	}
	if said, _ := os.ReadFile(errOut.Name()); string(said) != "rewind: exec /nonexistent/prog: no such file or directory\n" {
		t.Errorf("the helper said %q", said)
	}
}

// TestHelperImage rebuilds the native helper and compares it with
// helper.bin, when the compiler is the one it was built with.
func TestHelperImage(t *testing.T) {
	gccimage.Check(t, helperImage, "helper.bin", "helper/build.sh", "./engine/ptrace")
}

// TestWakers starts each kind of waker (the native helper's mode, rewind
// itself), in a process group of its own, and wakes it: a blocking Wait returns with its death, and not
// before; then its alarms: a cancelled one does not ring, the last one
// set does.
func TestWakers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		native bool
	}{{"native", true}, {"go", false}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.native && helperFile() == nil {
				t.Skip("no executable memfd here")
			}
			if !tc.native {
				saved := helperFile
				helperFile = func() *os.File { return nil }
				defer func() { helperFile = saved }()
			}
			th := NewThread()
			defer th.Close()
			th.Do(func() {
				w, err := StartWaker()
				if err != nil {
					t.Error(err)
					return
				}
				if _, ok, err := Wait(w.Pid(), true); ok || err != nil {
					t.Errorf("the waker ended before it was woken (%v)", err)
				}
				if pg, err := unix.Getpgid(w.Pid()); err != nil || pg == unix.Getpgrp() {
					t.Errorf("waker's process group %d (%v): the terminal's Ctrl-C to rewind's group (%d) would kill it", pg, err, unix.Getpgrp())
				}
				w.Wake()
				st, ok, err := Wait(w.Pid(), false)
				if err != nil || !ok || st.Kind != Exited || st.Code != 0 {
					t.Errorf("woken waker: %+v %v %v, want an exit with status 0", st, ok, err)
				}
				w.Close(true)

				if w, err = StartWaker(); err != nil {
					t.Error(err)
					return
				}
				w.Alarm(300 * time.Millisecond)
				w.Alarm(-1)
				time.Sleep(500 * time.Millisecond)
				if _, ok, err := Wait(w.Pid(), true); ok || err != nil {
					t.Errorf("a cancelled alarm rang (%v)", err)
				}
				w.Alarm(time.Hour)
				w.Alarm(time.Millisecond)
				st, ok, err = Wait(w.Pid(), false)
				if err != nil || !ok || st.Kind != Exited || st.Code != 0 {
					t.Errorf("alarm: %+v %v %v, want an exit with status 0", st, ok, err)
				}
				w.Close(true)
			})
		})
	}
}
