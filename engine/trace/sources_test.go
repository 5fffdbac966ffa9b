package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// packFixture writes a finished trace that maps two blobs, and source and
// debug files to pack into it, in a temporary directory.
type packFixture struct {
	dir, trace string
	events     []*Event
	blobs      [][]byte
	src, hdr   string // small sources
	big        string // a source over the test's limit
	debug      string // a debug file
	missing    string // a source that does not exist
}

func newPackFixture(t *testing.T) *packFixture {
	t.Helper()
	f := &packFixture{dir: t.TempDir()}
	f.trace = filepath.Join(f.dir, "prog.rwd")
	w, err := Create(f.trace, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	f.blobs = [][]byte{[]byte("\x7fELF the executable"), bytes.Repeat([]byte("library "), 1000)}
	for i, b := range f.blobs {
		id, err := w.AddBlob(b)
		if err != nil {
			t.Fatal(err)
		}
		e := &Event{Kind: KindSyscall, Tid: 1, Syscall: 9, Time: int64(i + 1), Map: &MapFile{Blob: id, Length: uint64(len(b)), Path: "/lib/x" + string(rune('a'+i))}}
		f.events = append(f.events, canon(e))
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	e := &Event{Kind: KindExit, Tid: 1, Time: 10}
	f.events = append(f.events, canon(e))
	if err := w.Append(e); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(&Footer{Exited: true}); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(f.dir, "src")
	os.MkdirAll(src, 0o755)
	write := func(name, text string) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.src = write("main.c", "int main(void)\n{\n\treturn 0;\n}\n")
	f.hdr = write("util.h", "#define ANSWER 42\n")
	f.big = write("huge.c", strings.Repeat("/* padding */\n", 100))
	f.debug = write("prog.debug", "\x7fELF debug sections")
	f.missing = filepath.Join(src, "gone.c")
	return f
}

func (f *packFixture) wants() []PackWant {
	return []PackWant{
		{Kind: PackedSource, Path: f.src},
		{Kind: PackedSource, Path: f.big},
		{Kind: PackedSource, Path: f.hdr},
		{Kind: PackedSource, Path: f.missing},
		{Kind: PackedSource, Path: f.src}, // named twice: stored once
		{Kind: PackedDebug, Path: f.debug, Image: "/lib/xa", BuildID: "abcd"},
	}
}

var testLimits = PackLimits{MaxSource: 1000, MaxDebug: 1000, MaxTotal: 1 << 20}

// checkIntact reads the trace back: the same events and blobs, a sound
// footer, and the packed files' bytes as they were on disk (want).
func (f *packFixture) checkIntact(t *testing.T, want map[string]string) {
	t.Helper()
	h, evs, foot, warn, err := ReadAll(f.trace)
	if err != nil || warn != "" {
		t.Fatalf("read back: %v %q", err, warn)
	}
	if !reflect.DeepEqual(h, testHeader()) {
		t.Errorf("header changed: %+v", h)
	}
	if !reflect.DeepEqual(evs, f.events) {
		t.Errorf("events changed:\n got %+v\nwant %+v", evs, f.events)
	}
	if !foot.Exited || foot.Events != int64(len(f.events)) {
		t.Errorf("footer changed: %+v", foot)
	}
	st, err := Check(f.trace)
	if err != nil || st.Condition != Complete {
		t.Fatalf("status %+v %v", st, err)
	}
	r, err := Open(f.trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for id, b := range f.blobs {
		got, err := r.Blob(uint32(id))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("blob %d: %q %v", id, got, err)
		}
	}
	if r.Blobs() != len(f.blobs)+len(want) || r.Footer().Blobs != r.Blobs() {
		t.Errorf("blobs %d, footer %d, want %d", r.Blobs(), r.Footer().Blobs, len(f.blobs)+len(want))
	}
	got := map[string]string{}
	for _, p := range r.Packed() {
		data, err := r.ReadPacked(p)
		if err != nil {
			t.Fatal(err)
		}
		got[p.Kind+" "+p.Path] = string(data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("packed files:\n got %q\nwant %q", got, want)
	}
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256Hex(b)
}

// TestPack stores sources and a debug file, skips the one over the limit
// and reports the missing one; the trace reads back as it was, with them.
func TestPack(t *testing.T) {
	f := newPackFixture(t)
	rep, err := Pack(f.trace, f.wants(), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Rewritten || len(rep.Added) != 3 || len(rep.Kept) != 0 {
		t.Errorf("report %+v", rep)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Path != f.big || !strings.Contains(rep.Skipped[0].Reason, "limit") || rep.Skipped[0].Size != 1400 {
		t.Errorf("skipped %+v, want %s over the limit", rep.Skipped, f.big)
	}
	if len(rep.Missing) != 1 || rep.Missing[0].Path != f.missing {
		t.Errorf("missing %+v, want %s", rep.Missing, f.missing)
	}
	want := map[string]string{
		"source " + f.src:  "int main(void)\n{\n\treturn 0;\n}\n",
		"source " + f.hdr:  "#define ANSWER 42\n",
		"debug " + f.debug: "\x7fELF debug sections",
	}
	f.checkIntact(t, want)

	r, err := Open(f.trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if p, ok := r.PackedSource(f.hdr); !ok || p.Size != 18 {
		t.Errorf("PackedSource(%s) = %+v %v", f.hdr, p, ok)
	}
	if _, ok := r.PackedSource(f.big); ok {
		t.Errorf("the skipped file is packed")
	}
}

// TestPackAgain: packing the same files leaves the file as it is; a
// changed source is stored again; a packed file gone from this machine
// stays in the trace.
func TestPackAgain(t *testing.T) {
	f := newPackFixture(t)
	if _, err := Pack(f.trace, f.wants(), testLimits); err != nil {
		t.Fatal(err)
	}
	sum := fileSum(t, f.trace)
	rep, err := Pack(f.trace, f.wants(), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rewritten || len(rep.Added) != 0 || len(rep.Kept) != 3 {
		t.Errorf("second pack: %+v", rep)
	}
	if fileSum(t, f.trace) != sum {
		t.Errorf("packing twice changed the trace")
	}
	// Tighter limits drop nothing already packed.
	tight := testLimits
	tight.MaxSource, tight.MaxDebug = 10, 10
	if rep, err = Pack(f.trace, f.wants(), tight); err != nil || rep.Rewritten || len(rep.Kept) != 3 || len(rep.Skipped) != 1 {
		t.Errorf("pack with tighter limits: %+v %v, want the 3 files kept and only huge.c skipped", rep, err)
	}

	os.WriteFile(f.src, []byte("int main(void) { return 1; }\n"), 0o644)
	os.Remove(f.hdr)
	rep, err = Pack(f.trace, f.wants(), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Rewritten || len(rep.Added) != 1 || rep.Added[0].Path != f.src || len(rep.Kept) != 2 {
		t.Errorf("pack after a change: %+v", rep)
	}
	f.checkIntact(t, map[string]string{
		"source " + f.src:  "int main(void) { return 1; }\n",
		"source " + f.hdr:  "#define ANSWER 42\n",
		"debug " + f.debug: "\x7fELF debug sections",
	})
}

// TestPackTotalLimit: files that would pass the total are skipped, named,
// with the reason.
func TestPackTotalLimit(t *testing.T) {
	f := newPackFixture(t)
	lim := testLimits
	lim.MaxTotal = 40 // main.c (30 bytes) fits, util.h (18) does not
	rep, err := Pack(f.trace, f.wants(), lim)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, s := range rep.Skipped {
		skipped = append(skipped, filepath.Base(s.Path)+": "+s.Reason)
	}
	got := strings.Join(skipped, "\n")
	for _, want := range []string{"huge.c: larger than", "util.h: would take the packed files past their 40 bytes total", "prog.debug: would take"} {
		if !strings.Contains(got, want) {
			t.Errorf("skipped:\n%s\nwant %q", got, want)
		}
	}
	f.checkIntact(t, map[string]string{"source " + f.src: "int main(void)\n{\n\treturn 0;\n}\n"})
}

// TestPackRefusesUnfinished: a recording still under way (or killed) has
// no footer to index packed files, and is refused in one line.
func TestPackRefusesUnfinished(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prog.rwd")
	w := createTest(t, path)
	if err := w.Append(&Event{Kind: KindSyscall, Tid: 1, Syscall: 39}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	partial := w.Partial()
	defer w.Abort()
	before := fileSum(t, partial)
	for _, p := range []string{path, partial} {
		_, err := Pack(p, nil, DefaultPackLimits)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("Pack(%s) = %v, want a one-line error", filepath.Base(p), err)
		}
	}
	if fileSum(t, partial) != before {
		t.Errorf("the unfinished trace was changed")
	}
}

// TestPackTruncated: a packed trace cut inside its packed files keeps all
// its events; only the index of the packed files (the footer) is lost.
func TestPackTruncated(t *testing.T) {
	f := newPackFixture(t)
	if _, err := Pack(f.trace, f.wants(), testLimits); err != nil {
		t.Fatal(err)
	}
	r, err := Open(f.trace)
	if err != nil {
		t.Fatal(err)
	}
	last := r.Packed()[len(r.Packed())-1]
	cut := r.frames[r.blobs[last.Blob]].off + FrameHeaderSize + 2 // inside the last packed file
	r.Close()
	if err := os.Truncate(f.trace, cut); err != nil {
		t.Fatal(err)
	}
	_, evs, foot, warn, err := ReadAll(f.trace)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(evs, f.events) || foot != nil {
		t.Errorf("events %+v footer %+v, want all events and no footer", evs, foot)
	}
	st, err := Check(f.trace)
	if err != nil || st.Condition != Unfinished || st.Usable != int64(len(f.events)) {
		t.Errorf("status %+v %v, want unfinished with every event usable (%s)", st, err, warn)
	}
	r, err = Open(f.trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if p := r.Packed(); p != nil {
		t.Errorf("packed files without a footer: %+v", p)
	}
	if _, err := Pack(f.trace, f.wants(), testLimits); err == nil {
		t.Errorf("a cut trace was packed")
	}
}

// TestPackedDebug finds a debug file by build-id when both sides have one,
// else by the image's path.
func TestPackedDebug(t *testing.T) {
	f := newPackFixture(t)
	wants := []PackWant{
		{Kind: PackedDebug, Path: f.debug, Image: "/lib/xa", BuildID: "abcd"},
		{Kind: PackedDebug, Path: f.src, Image: "/bin/noid"},
	}
	if _, err := Pack(f.trace, wants, testLimits); err != nil {
		t.Fatal(err)
	}
	r, err := Open(f.trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		image, id, want string
	}{
		{"/lib/xa", "abcd", f.debug},
		{"/elsewhere/xa", "abcd", f.debug}, // the same contents moved
		{"/lib/xa", "ef01", ""},            // the same path rebuilt
		{"/lib/xa", "", f.debug},
		{"/bin/noid", "", f.src},
		{"/bin/noid", "1234", f.src},
		{"/bin/other", "", ""},
	} {
		p, ok := r.PackedDebug(c.image, c.id)
		if ok != (c.want != "") || p.Path != c.want {
			t.Errorf("PackedDebug(%s, %q) = %q %v, want %q", c.image, c.id, p.Path, ok, c.want)
		}
	}
}
