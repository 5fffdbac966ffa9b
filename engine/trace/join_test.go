package trace

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"
)

// segmentSpec is one segment to write for TestJoin: a snapshot whose one
// region holds region, then events mapping files, then an exec whose
// image stores exe (read from a file whose key is exeKey) and holds stack.
type segmentSpec struct {
	region     []byte
	files      [][]byte // each mapped by one syscall event
	exe, stack []byte
	exeKey     FileKey
	last       bool // the recording's end, not a segment's
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
	if spec.exe != nil {
		exe, err := w.AddFileBlob(spec.exe, spec.exeKey)
		if err != nil {
			t.Fatal(err)
		}
		stack, err := w.AddBlob(spec.stack)
		if err != nil {
			t.Fatal(err)
		}
		data, err := EncodeImage(&Image{Exe: "/bin/prog", Regions: []Region{
			{Start: 0x400000, Size: 0x1000, Perms: "r-xp", Path: "/bin/prog", Stored: &MapFile{Blob: exe, Length: uint64(len(spec.exe))}},
			{Start: 0x7ff000, Size: 0x1000, Perms: "rw-p", Path: "[stack]", Blobs: []uint32{stack}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(&Event{Kind: KindExec, Tid: 7, Image: data}); err != nil {
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
		{region: []byte("third memory"), files: [][]byte{[]byte("libD")}, last: true,
			exe: []byte("prog's code"), stack: []byte("prog's stack"), exeKey: FileKey{Dev: 1, Ino: 42, Size: 11}},
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
	var region, exe, stack []byte
	var exeBlob uint32
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
		case KindExec:
			im, err := DecodeImage(e)
			if err != nil {
				t.Fatal(err)
			}
			exeBlob = im.Regions[0].Stored.Blob
			if exe, err = rd.Blob(exeBlob); err != nil {
				t.Fatal(err)
			}
			if stack, err = rd.Blob(im.Regions[1].Blobs[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []Kind{KindSnapshot, KindSyscall, KindSyscall, KindSyscall, KindSyscall, KindExec}
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
	// An exec's image names its files and bytes by blob too.
	if !bytes.Equal(exe, []byte("prog's code")) || !bytes.Equal(stack, []byte("prog's stack")) {
		t.Errorf("the exec image's file reads %q and its stack %q, want the segment's", exe, stack)
	}
	if key, ok := rd.BlobSource(exeBlob); !ok || key != specs[2].exeKey {
		t.Errorf("the exec image's file comes from %+v (%v), want %+v", key, ok, specs[2].exeKey)
	}
	if f := rd.Footer(); f == nil || !f.Exited || f.Interrupted != "" || f.Events != 6 {
		t.Errorf("joined footer %+v: want the last segment's end and 6 events", f)
	}
	if rd.Blobs() != 7 {
		t.Errorf("joined trace has %d blobs, want the 7 its events use", rd.Blobs())
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
