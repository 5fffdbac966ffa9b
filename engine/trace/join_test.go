package trace

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"
)

// segmentSpec is one segment to write for TestJoin: a snapshot whose one
// region holds region, then events mapping files.
type segmentSpec struct {
	region []byte
	files  [][]byte // each mapped by one syscall event
	last   bool     // the recording's end, not a segment's
}

// writeSegment writes a segment trace and returns its path.
func writeSegment(t *testing.T, dir string, n int, spec segmentSpec) string {
	t.Helper()
	path := filepath.Join(dir, "seg")
	path += string(rune('0' + n))
	w, err := Create(path, &Header{Program: "/bin/prog"})
	if err != nil {
		t.Fatal(err)
	}
	// A blob no event refers to: ids of the joined trace must not follow
	// a segment's own.
	if _, err := w.AddBlob([]byte("unused")); err != nil {
		t.Fatal(err)
	}
	id, err := w.AddBlob(spec.region)
	if err != nil {
		t.Fatal(err)
	}
	snap := &Snapshot{Pid: 7, Exe: "/bin/prog", Threads: []ThreadState{{Tid: 7}},
		Regions: []Region{{Start: 0x1000, Size: uint64(len(spec.region)), Perms: "rw-p", Blobs: []uint32{id}}}}
	e, err := EncodeSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(e); err != nil {
		t.Fatal(err)
	}
	for _, f := range spec.files {
		id, err := w.AddBlob(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(&Event{Kind: KindSyscall, Tid: 7, Syscall: 9, Map: &MapFile{Blob: id, Length: uint64(len(f))}}); err != nil {
			t.Fatal(err)
		}
	}
	foot := &Footer{Exited: spec.last}
	if !spec.last {
		foot.Interrupted = SegmentEnd
		if err := w.Append(&Event{Kind: KindEnd, Tid: 7, Data: []byte(SegmentEnd)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(foot); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestJoin(t *testing.T) {
	dir := t.TempDir()
	specs := []segmentSpec{
		{region: []byte("first memory"), files: [][]byte{[]byte("libA"), []byte("libB")}},
		{region: []byte("second memory"), files: [][]byte{[]byte("libC")}},
		{region: []byte("third memory"), files: [][]byte{[]byte("libD")}, last: true},
	}
	var paths []string
	for i, s := range specs {
		paths = append(paths, writeSegment(t, dir, i, s))
	}
	out := filepath.Join(dir, "joined.rwd")
	w, err := Create(out, &Header{Program: "/bin/prog"})
	if err != nil {
		t.Fatal(err)
	}
	foot, err := Join(w, paths)
	if err != nil {
		t.Fatal(err)
	}
	rd := closeAndOpen(t, w, foot, out)
	defer rd.Close()
	var kinds []Kind
	var files [][]byte
	var region []byte
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, e.Kind)
		switch e.Kind {
		case KindSnapshot:
			s, err := DecodeSnapshot(e)
			if err != nil {
				t.Fatal(err)
			}
			if region, err = rd.Blob(s.Regions[0].Blobs[0]); err != nil {
				t.Fatal(err)
			}
		case KindSyscall:
			b, err := rd.Blob(e.Map.Blob)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, b)
		}
	}
	want := []Kind{KindSnapshot, KindSyscall, KindSyscall, KindSyscall, KindSyscall}
	if len(kinds) != len(want) {
		t.Fatalf("joined events: %v, want %v (one snapshot, no segment ends)", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("joined events: %v, want %v", kinds, want)
		}
	}
	if !bytes.Equal(region, []byte("first memory")) {
		t.Errorf("the snapshot's region reads %q, want the first segment's", region)
	}
	for i, w := range []string{"libA", "libB", "libC", "libD"} {
		if !bytes.Equal(files[i], []byte(w)) {
			t.Errorf("mapped file %d reads %q, want %q", i, files[i], w)
		}
	}
	if f := rd.Footer(); f == nil || !f.Exited || f.Interrupted != "" || f.Events != 5 {
		t.Errorf("joined footer %+v: want the last segment's end and 5 events", f)
	}
	if rd.Blobs() != 5 {
		t.Errorf("joined trace has %d blobs, want the 5 its events use", rd.Blobs())
	}
}

func TestLateBlobs(t *testing.T) {
	// Late blobs get their ids at once, may follow the events that name
	// them, and come before any blob added after them.
	path := filepath.Join(t.TempDir(), "late.rwd")
	w, err := Create(path, &Header{})
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("memory"), 1<<20)
	ids, err := w.AddLateBlobs([][]byte{big, []byte("small")})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&Event{Kind: KindSyscall, Tid: 1, Map: &MapFile{Blob: ids[1], Length: 5}}); err != nil {
		t.Fatal(err)
	}
	w.Push()
	later, err := w.AddBlob([]byte("later"))
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != 0 || ids[1] != 1 || later != 2 {
		t.Errorf("ids %v then %d, want 0 1 then 2", ids, later)
	}
	rd := closeAndOpen(t, w, nil, path)
	defer rd.Close()
	for id, want := range [][]byte{big, []byte("small"), []byte("later")} {
		got, err := rd.Blob(uint32(id))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("blob %d: %d bytes, %v; want %d bytes", id, len(got), err, len(want))
		}
	}
	if e, err := rd.Next(); err != nil || e.Map == nil || e.Map.Blob != 1 {
		t.Errorf("the event naming a late blob: %+v %v", e, err)
	}
	if f := rd.Footer(); f == nil || f.Blobs != 3 {
		t.Errorf("footer %+v, want 3 blobs", f)
	}
}
