package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestEmptyReservation opens the empty file that claims a trace's name
// while its recording runs (or after it was killed): the message says so,
// and names the .partial file that holds the events.
func TestEmptyReservation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p[1]-1.rwd") // a glob character in the name
	p, err := Reserve(path, true)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Start(testHeader())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	want := fmt.Sprintf("not a rewind trace: %s is empty: the name reserved by a recording that has not finished (still running, or killed); what it recorded is in %s",
		path, w.Partial())
	if !errors.Is(err, ErrNotTrace) || err == nil || err.Error() != want {
		t.Errorf("Open of the reservation: %v, want %q", err, want)
	}
	w.Abort()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(w.Partial()); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	if !errors.Is(err, ErrNotTrace) || !strings.Contains(err.Error(), path+" is empty (") {
		t.Errorf("Open of an empty file: %v", err)
	}
}

func TestAbort(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	path := filepath.Join(t.TempDir(), "t.trace")
	w := createTest(t, path)
	var want []*Event
	for _, e := range genEvents(rng, 3000, someFields) {
		want = append(want, canon(e))
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Abort()
	w.Abort() // harmless
	if err := w.Append(want[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Abort: %v", err)
	}
	if err := w.Close(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Close after Abort: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("final file exists after Abort: %v", err)
	}
	_, got, f, warn, err := ReadAll(w.Partial())
	if err != nil {
		t.Fatal(err)
	}
	compareEvents(t, got, want)
	if f != nil || warn != fmt.Sprintf("the recording did not finish (the trace has no footer); %d events usable", len(want)) {
		t.Errorf("footer %+v, warning %q", f, warn)
	}
}

func TestWriterError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.trace")
	w := createTest(t, path)
	if err := w.Flush(); err != nil { // the header written
		t.Fatal(err)
	}
	w.f.Close() // make every write fail
	e := &Event{Kind: KindSyscall, Tid: 1, Data: make([]byte, 1000)}
	var err error
	for i := 0; err == nil && i < 10000; i++ {
		err = w.Append(e)
	}
	if err == nil {
		err = w.Flush()
	}
	if !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), "cannot write the trace: writing frame 1 at offset") {
		t.Fatalf("no error surfaced: %v", err)
	}
	if err := w.Close(nil); err == nil {
		t.Error("Close succeeded")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("final file exists after a failed Close: %v", err)
	}
}

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestReserve checks how a trace takes its name and its .partial file, and
// what each way of ending leaves in the directory.
func TestReserve(t *testing.T) {
	partialRE := regexp.MustCompile(`^t\.rwd\.\d+\.partial$`)
	tests := []struct {
		name      string
		existing  string // "file" or "dir" at the trace's path beforehand
		exclusive bool
		end       string // "close", "abort", "discard"
		err       error  // of Reserve
		left      string // what is left at path: "trace", "old", "none", "empty"
		partial   bool   // a .partial file is left
	}{
		{name: "new name, closed", exclusive: true, end: "close", left: "trace"},
		{name: "new name, aborted", exclusive: true, end: "abort", left: "none", partial: true},
		{name: "new name, discarded", exclusive: true, end: "discard", left: "none"},
		{name: "taken name", existing: "file", exclusive: true, err: fs.ErrExist, left: "old"},
		{name: "replace, closed", existing: "file", end: "close", left: "trace"},
		{name: "replace, aborted", existing: "file", end: "abort", left: "old", partial: true},
		{name: "directory", existing: "dir", err: ErrWrite},
		{name: "directory, exclusive", existing: "dir", exclusive: true, err: fs.ErrExist},
		// -o /dev/null once replaced the device by the trace.
		{name: "FIFO", existing: "fifo", err: ErrWrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "t.rwd")
			switch tt.existing {
			case "file":
				writeTestFile(t, path, "old")
			case "dir":
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
			case "fifo":
				if err := syscall.Mkfifo(path, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Reserve(path, tt.exclusive)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("Reserve: %v, want %v", err, tt.err)
			}
			if err != nil {
				if names := dirNames(t, dir); len(names) != 1 || names[0] != "t.rwd" {
					t.Errorf("a failed Reserve left %q", names)
				}
				return
			}
			if !partialRE.MatchString(filepath.Base(p.Partial())) {
				t.Errorf("Partial() = %q", p.Partial())
			}
			if st, err := os.Stat(path); tt.exclusive && (err != nil || st.Size() != 0) {
				t.Errorf("the name is not reserved: %v", err)
			}
			switch tt.end {
			case "discard":
				p.Discard()
				p.Discard()
			default:
				w, err := p.Start(testHeader())
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Append(&Event{Kind: KindExec, Tid: 1}); err != nil {
					t.Fatal(err)
				}
				if tt.end == "close" {
					err = w.Close(nil)
				} else {
					w.Abort()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(path)
			var got string
			switch {
			case errors.Is(err, fs.ErrNotExist):
				got = "none"
			case err != nil:
				t.Fatal(err)
			case string(data) == "old":
				got = "old"
			case len(data) == 0:
				got = "empty"
			default:
				got = "trace"
				if st, err := Check(path); err != nil || st.Condition != Complete || st.Usable != 1 {
					t.Errorf("Check: %+v, %v", st, err)
				}
			}
			if got != tt.left {
				t.Errorf("left %s at the trace's path, want %s", got, tt.left)
			}
			var partials []string
			for _, n := range dirNames(t, dir) {
				if partialRE.MatchString(n) {
					partials = append(partials, n)
				}
			}
			if len(partials) != map[bool]int{false: 0, true: 1}[tt.partial] {
				t.Fatalf("left .partial files %q, want %v", partials, tt.partial)
			}
			if tt.partial {
				st, err := Check(filepath.Join(dir, partials[0]))
				if err != nil || st.Condition != Unfinished || st.Usable != 1 {
					t.Errorf("the .partial file: %+v, %v", st, err)
				}
			}
		})
	}
}

// TestReserveErrors checks the failures Reserve catches before a recording
// starts, and a Close that cannot put the trace in place.
func TestReserveErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Reserve(filepath.Join(dir, "missing", "t.rwd"), true); !errors.Is(err, ErrWrite) {
		t.Errorf("Reserve in a missing directory: %v, want ErrWrite", err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Reserve(sub, false); !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), "it is a directory") {
		t.Errorf("Reserve of a directory: %v", err)
	}

	// Something takes the trace's place during the recording: Close fails,
	// keeps the .partial file and does not remove what is there.
	path := filepath.Join(dir, "t.rwd")
	w := createTest(t, path)
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(nil); !errors.Is(err, ErrWrite) {
		t.Errorf("Close over a directory: %v, want ErrWrite", err)
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		t.Errorf("the directory is gone: %v", err)
	}
	if _, err := Check(w.Partial()); err != nil {
		t.Errorf("the .partial file: %v", err)
	}
}

// TestReserveConcurrent takes names as concurrent recordings do: each
// claims the first free t-N.rwd, and all get distinct, valid traces.
func TestReserveConcurrent(t *testing.T) {
	const n = 16
	dir := t.TempDir()
	paths := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for k := 1; ; k++ {
				path := filepath.Join(dir, fmt.Sprintf("t-%d.rwd", k))
				p, err := Reserve(path, true)
				if errors.Is(err, fs.ErrExist) {
					continue
				}
				if err != nil {
					errs[i] = err
					return
				}
				w, err := p.Start(testHeader())
				if err == nil {
					if err = w.Append(&Event{Kind: KindExec, Tid: int32(i + 1)}); err == nil {
						err = w.Close(nil)
					}
				}
				paths[i], errs[i] = path, err
				return
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if seen[paths[i]] {
			t.Errorf("%s taken twice", paths[i])
		}
		seen[paths[i]] = true
		_, evs, _, warn, err := ReadAll(paths[i])
		if err != nil || warn != "" || len(evs) != 1 || evs[0].Tid != int32(i+1) {
			t.Errorf("%s: %d events, %q, %v", paths[i], len(evs), warn, err)
		}
	}
	if names := dirNames(t, dir); len(names) != n {
		t.Errorf("directory holds %q, want the %d traces alone", names, n)
	}
}

// writeTestFile writes a file or fails the test.
func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHeaderLate: the fields Header.Late fills in reach the trace's
// header, learned on the writer's goroutine while the caller goes on; the
// caller's header is left as it was.
func TestHeaderLate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.trace")
	h := testHeader()
	learned := make(chan struct{})
	h.Late = func(h *Header) {
		<-learned // the caller goes on meanwhile
		h.ExeSHA256 = "late-sum"
	}
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&Event{Kind: KindSyscall, Tid: 1}); err != nil {
		t.Fatal(err)
	}
	close(learned)
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	got, _, _, _, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.ExeSHA256 != "late-sum" || h.ExeSHA256 == "late-sum" {
		t.Errorf("the trace's header has sha256 %q, the caller's %q: want the late one in the trace alone", got.ExeSHA256, h.ExeSHA256)
	}
}
