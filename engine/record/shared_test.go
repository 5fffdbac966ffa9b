package record

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestSharedCheck runs the tracker on this test's own process: a memfd
// mapped twice (the second mapping an alias of its last page) is changed
// one way after another, and each check must log exactly the pages whose
// contents differ from what replay's copy holds, with the object's size.
// It runs with the object's file (how a privileged recorder reads it) and
// without (through the process's memory).
func TestSharedCheck(t *testing.T) {
	for _, viaFile := range []bool{true, false} {
		t.Run(fmt.Sprintf("file=%v", viaFile), func(t *testing.T) { sharedCheckSteps(t, viaFile) })
	}
}

// sink keeps a read of memory that only faults a page in.
var sink byte

func sharedCheckSteps(t *testing.T, viaFile bool) {
	name := fmt.Sprintf("rewind-test-%v", viaFile)
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, 3*pageSize); err != nil {
		t.Fatal(err)
	}
	m1, err := unix.Mmap(fd, 0, 3*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m1)
	m2, err := unix.Mmap(fd, 2*pageSize, pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m2)
	mem, err := ptrace.OpenMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	p := sharedProc{pid: os.Getpid(), mem: mem}
	sm := newSharedMem()
	if err := sm.rescan(p, nil); err != nil {
		t.Fatal(err)
	}
	ours := func(o *sharedObject) bool { return strings.HasPrefix(o.path, "/memfd:"+name+" ") }
	var obj *sharedObject
	for _, o := range sm.objects {
		if ours(o) {
			obj = o
		}
	}
	if obj == nil {
		t.Fatalf("the memfd is not among the tracked objects")
	}
	if !viaFile && obj.file != nil {
		obj.file.Close()
		obj.file = nil
	}
	obj.size = 3 * pageSize // as the mmap's event told replay
	if viaFile && obj.file == nil {
		t.Skip("/proc/PID/map_files cannot be opened here (not privileged)")
	}

	page := func(fill func(b []byte)) []byte {
		b := make([]byte, pageSize)
		fill(b)
		return b
	}
	steps := []struct {
		name     string
		change   func() error
		want     []trace.Mem // offsets in the object
		wantSize uint64      // 0: no size in the event (no event unless want)
		noFile   bool        // only through the file (size changes)
	}{
		{name: "a new zero object needs nothing"},
		// The page is in the mapping first: without the file, a check
		// sees the pages the process has present.
		{name: "pwrite", change: func() error { sink = m1[0]; _, err := unix.Pwrite(fd, []byte("abc"), 10); return err },
			want: []trace.Mem{{Addr: 0, Data: page(func(b []byte) { copy(b[10:], "abc") })}}},
		{name: "through the mapping", change: func() error { m1[pageSize+5] = 'x'; return nil },
			want: []trace.Mem{{Addr: pageSize, Data: page(func(b []byte) { b[5] = 'x' })}}},
		{name: "through the alias, logged once", change: func() error { m2[7] = 'y'; m1[0] = 'z'; return nil },
			want: []trace.Mem{
				{Addr: 0, Data: page(func(b []byte) { b[0] = 'z'; copy(b[10:], "abc") })},
				{Addr: 2 * pageSize, Data: page(func(b []byte) { b[7] = 'y' })}}},
		{name: "unchanged"},
		{name: "adjacent pages in one range", change: func() error { m1[pageSize] = 'a'; m1[2*pageSize] = 'b'; return nil },
			want: []trace.Mem{{Addr: pageSize, Data: append(page(func(b []byte) { b[0] = 'a'; b[5] = 'x' }), page(func(b []byte) { b[0] = 'b'; b[7] = 'y' })...)}}},
		{name: "a hole punched reads zero", change: func() error {
			return unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, pageSize, pageSize)
		}, want: []trace.Mem{{Addr: pageSize, Data: make([]byte, pageSize)}}},
		{name: "past the end to be", change: func() error { m2[100] = 'q'; return nil },
			want: []trace.Mem{{Addr: 2 * pageSize, Data: page(func(b []byte) { b[0] = 'b'; b[7] = 'y'; b[100] = 'q' })}}},
		{name: "shrunk: the tail of the last page is gone", noFile: true, change: func() error { return unix.Ftruncate(fd, 2*pageSize+10) },
			want: []trace.Mem{{Addr: 2 * pageSize, Data: page(func(b []byte) { b[0] = 'b'; b[7] = 'y' })}}, wantSize: 2*pageSize + 10},
		{name: "grown: only the size", noFile: true, change: func() error { return unix.Ftruncate(fd, 3*pageSize) },
			want: []trace.Mem{}, wantSize: 3 * pageSize},
	}
	for _, st := range steps {
		if st.noFile && !viaFile {
			continue
		}
		if st.change != nil {
			if err := st.change(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		evs, err := sm.check(p, ours)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.want == nil && st.wantSize == 0 {
			if len(evs) != 0 {
				t.Errorf("%s: %d events, want none: %+v", st.name, len(evs), evs[0].Mem)
			}
			continue
		}
		if len(evs) != 1 {
			t.Fatalf("%s: %d events, want 1", st.name, len(evs))
		}
		e := evs[0]
		if e.Kind != trace.KindSharedMem || e.Shared == nil || e.Shared.Object != obj.id {
			t.Fatalf("%s: event %+v, want KindSharedMem of object %d", st.name, e, obj.id)
		}
		if st.wantSize != 0 && e.Shared.Size != st.wantSize {
			t.Errorf("%s: size %d, want %d", st.name, e.Shared.Size, st.wantSize)
		}
		if len(e.Mem) != len(st.want) {
			t.Fatalf("%s: %d ranges, want %d", st.name, len(e.Mem), len(st.want))
		}
		for i, m := range e.Mem {
			if m.Addr != st.want[i].Addr || !bytes.Equal(m.Data, st.want[i].Data) {
				t.Errorf("%s: range %d at %#x (%d bytes), want %#x (%d bytes) or other contents", st.name, i, m.Addr, len(m.Data), st.want[i].Addr, len(st.want[i].Data))
			}
		}
	}
}

// TestObjectsOfMerges: the pages of an object mapped several times are
// compared once, in merged ranges.
func TestObjectsOfMerges(t *testing.T) {
	a, b := &sharedObject{id: 1}, &sharedObject{id: 2}
	tests := []struct {
		name string
		maps []sharedMapping
		want map[*sharedObject][][2]uint64
	}{
		{"one mapping", []sharedMapping{{start: 0x10000, end: 0x12000, off: 0, obj: a}},
			map[*sharedObject][][2]uint64{a: {{0, 2}}}},
		{"overlapping aliases", []sharedMapping{{start: 0x10000, end: 0x13000, off: 0, obj: a}, {start: 0x20000, end: 0x22000, off: 0x2000, obj: a}},
			map[*sharedObject][][2]uint64{a: {{0, 4}}}},
		{"disjoint parts, two objects", []sharedMapping{{start: 0x10000, end: 0x11000, off: 0x5000, obj: a}, {start: 0x20000, end: 0x21000, off: 0, obj: a},
			{start: 0x30000, end: 0x31000, off: 0, obj: b}},
			map[*sharedObject][][2]uint64{a: {{0, 1}, {5, 6}}, b: {{0, 1}}}},
		{"touching ranges", []sharedMapping{{start: 0x10000, end: 0x11000, off: 0, obj: a}, {start: 0x20000, end: 0x21000, off: 0x1000, obj: a}},
			map[*sharedObject][][2]uint64{a: {{0, 2}}}},
	}
	for _, tt := range tests {
		sm := newSharedMem()
		sm.maps[1] = tt.maps
		objs, ranges := sm.objectsOf(1, nil)
		if len(objs) != len(tt.want) {
			t.Errorf("%s: %d objects, want %d", tt.name, len(objs), len(tt.want))
		}
		for obj, want := range tt.want {
			if fmt.Sprint(ranges[obj]) != fmt.Sprint(want) {
				t.Errorf("%s: object %d ranges %v, want %v", tt.name, obj.id, ranges[obj], want)
			}
		}
	}
}

// TestReadOnlyFd tells descriptors opened read-only, whose shared
// mappings can never be written, from the others.
func TestReadOnlyFd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		flag int
		want bool
	}{
		{"read-only", os.O_RDONLY, true},
		{"read-write", os.O_RDWR, false},
		{"write-only", os.O_WRONLY, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.OpenFile(path, tc.flag, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := readOnlyFd(os.Getpid(), int(f.Fd())); got != tc.want {
				t.Errorf("readOnlyFd = %v, want %v", got, tc.want)
			}
		})
	}
	if readOnlyFd(os.Getpid(), 1<<20) {
		t.Errorf("a descriptor that is not open is read-only")
	}
}
