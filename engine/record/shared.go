package record

// Shared memory. What a program reads from memory it shares with something
// outside the recording must be in the trace, as what it reads from a file
// is: the kernel (write() to a file it maps), an unrecorded process (a shell
// appending to the file, a forked child writing anonymous shared memory) or
// another attachment of a SysV segment can change it under the program.
//
// The tracker follows every shared mapping of the recorded processes (from
// the system calls that make them and /proc/PID/maps) and the object behind
// it: a file, a memfd, a SysV segment, an anonymous shared region. For each
// object it keeps a hash of each page as replay's copy of the object holds it
// (replay backs every object with a memfd of its own, mapped wherever the
// recording mapped the object: see engine/replay/shared.go). At the points
// where something else may have written an object (the exit of a system
// call that writes a file the program maps, or of one that may block, a
// signal, a preemption, a new mapping) it compares the object's pages with
// those hashes and logs the pages that differ in a KindSharedMem event,
// which replay writes into its copy. Pages the program changed itself are
// logged too when they are compared (replay has the same bytes there by
// then, so writing them again is harmless): the comparison cannot tell
// who wrote a page, only that it differs from what replay holds.

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// pageSize is the granule of the tracking: memory is mapped, shared and
// faulted in pages.
const pageSize = 4096

// maxSharedEvent bounds the bytes of one KindSharedMem event, so that a
// large object mapped with contents (a file of 100 MB) makes frames of a
// reasonable size.
const maxSharedEvent = 4 << 20

// sharedProc is a recorded process as the tracker needs it: its maps and
// memory. Every entry point takes the process rather than the recorder's
// single one, so that a process tree sharing memory (anonymous shared
// memory across fork, one memfd mapped in two processes) uses one tracker.
type sharedProc struct {
	pid int
	mem *ptrace.Mem
	// listed, where not nil, is the process's sharedListed, which a
	// rescan sets.
	listed *bool
}

// procOf returns the process of thread t.
func (r *Recorder) procOf(t *thread) sharedProc {
	return sharedProc{pid: t.proc.pid, mem: t.proc.mem, listed: &t.proc.sharedListed}
}

// objKey identifies a shared object while it exists: the device and inode
// of the file behind the mapping (memfds and anonymous shared memory have
// one on the kernel's internal tmpfs; a SysV segment's inode number is its
// id, which is why it is told apart).
type objKey struct {
	major, minor, ino uint64
	sysv              bool
}

// sharedObject is one object the recorded processes map shared.
type sharedObject struct {
	id   uint32
	key  objKey
	path string
	// file is the object opened by the recorder (nil if it could not be):
	// its size, and its pages read without faulting them into the program.
	file *os.File
	// size is the object's size as replay's copy has it.
	size uint64
	// pages maps a page index to the hash of what replay's copy holds
	// there; a missing page holds zeros.
	pages map[uint64]uint64
}

// sharedMapping is one shared mapping of a process: [start, end) maps the
// object from off.
type sharedMapping struct {
	start, end, off uint64
	obj             *sharedObject
}

// statSize takes the object's size from its file, where it has one that
// can be read: the file may have grown or shrunk since it was mapped.
func (o *sharedObject) statSize() {
	if o.file == nil {
		return
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(o.file.Fd()), &st); err == nil {
		o.size = uint64(st.Size)
	}
}

// traceMap is how the trace names the mapping and its object.
func (m *sharedMapping) traceMap() *trace.SharedMap {
	return &trace.SharedMap{Object: m.obj.id, Offset: m.off, Size: m.obj.size, Path: m.obj.path}
}

// sharedStats measure the tracker (REWIND_DEBUG prints them).
type sharedStats struct {
	checks          int
	compared, wrote int64
	spent           time.Duration
	// rescans read /proc/PID/maps; added mappings did not need to.
	rescans, added int
}

// sharedMem tracks the shared memory of the recorded processes.
type sharedMem struct {
	seed    maphash.Seed
	zero    uint64
	objects map[objKey]*sharedObject
	nextID  uint32
	maps    map[int][]sharedMapping // by pid, sorted by start
	// byFile finds an object by the device and inode stat gives its file
	// (which /proc/PID/maps may not show: overlayfs lists the file
	// beneath), for a new mapping of a file already mapped shared.
	byFile map[objKey]*sharedObject
	// changing: by pid, whether its mappings may change under it
	// (sharing), as last told to its hook.
	changing map[int]bool
	// published is the filesSignature every hook was last told of;
	// remap says the mappings changed since (setMaps, forget).
	published string
	remap     bool
	buf       []byte
	stats     sharedStats
	// hooked: the processes have the hook page (buffering), which must
	// leave the calls that change shared memory to the recorder.
	hooked bool
}

// roMapping is a mapping [start, end) of process pid that can never be
// written; pid 0: none.
type roMapping struct {
	pid        int
	start, end uint64
}

func newSharedMem() *sharedMem {
	sm := &sharedMem{seed: maphash.MakeSeed(), objects: map[objKey]*sharedObject{}, maps: map[int][]sharedMapping{}, byFile: map[objKey]*sharedObject{}, changing: map[int]bool{}}
	sm.zero = maphash.Bytes(sm.seed, make([]byte, pageSize))
	return sm
}

// sharedMem returns the tracker, made on first use.
func (r *Recorder) sharedMem() *sharedMem {
	if r.shared == nil {
		r.shared = newSharedMem()
		r.shared.hooked = r.filtered
	}
	return r.shared
}

// tracking reports whether process pid has shared mappings.
func (sm *sharedMem) tracking(pid int) bool { return sm != nil && len(sm.maps[pid]) > 0 }

// mayChange says whether process pid maps shared memory that may change
// under it (sharing): not only files it cannot write, mapped shared; or a
// file of its own (not a system file), which another process of the tree
// may write with write() while it reads its mapping (an LMDB reader and
// its writer): the processes then take turns on the serial queue, where
// the writer's write waits for the reader's turn to end (tiesAtEntry).
func (sm *sharedMem) mayChange(pid int) bool {
	if !sm.tracking(pid) {
		return false
	}
	for _, m := range sm.maps[pid] {
		if !systemFile(m.obj.path) {
			return true
		}
	}
	ch, known := sm.changing[pid]
	return ch || !known
}

// vma is one line of /proc/PID/maps.
type vma struct {
	start, end, off uint64
	key             objKey
	perms, path     string
}

// readMaps lists the shared mappings of process pid.
func readMaps(pid int) ([]vma, error) {
	maps, err := ptrace.ReadMaps(pid)
	if err != nil {
		return nil, err
	}
	var out []vma
	for _, m := range maps {
		if !m.Shared() {
			continue
		}
		out = append(out, vma{start: m.Start, end: m.End, off: m.Offset, perms: m.Perms, path: m.Path,
			key: objKey{major: m.Major, minor: m.Minor, ino: m.Inode, sysv: strings.HasPrefix(m.Path, "/SYSV")}})
	}
	return out, nil
}

// rescan rebuilds the shared mappings of p from /proc/PID/maps, meeting new
// objects on the way. file, when not nil, is the file behind the mapping
// just made (an mmap of an fd): it is kept for its object.
func (sm *sharedMem) rescan(p sharedProc, file *os.File) error {
	return sm.rescanMade(p, file, roMapping{})
}

// rescanMade is rescan after a mapping was made, readOnly when it can never
// be written (its file opened read-only): rescan need not read
// /proc/PID/smaps to learn it.
func (sm *sharedMem) rescanMade(p sharedProc, file *os.File, readOnly roMapping) error {
	sm.stats.rescans++
	vmas, err := readMaps(p.pid)
	if err != nil {
		return err
	}
	var fileKey objKey
	if file != nil {
		fileKey, err = keyOf(file)
		if err != nil {
			file.Close()
			file = nil
		}
	}
	var ms []sharedMapping
	for _, v := range vmas {
		if isDevice(v.path) {
			continue // not memory: reading it could have effects (warned at mmap)
		}
		obj := sm.objects[v.key]
		if obj == nil {
			sm.nextID++
			obj = &sharedObject{id: sm.nextID, key: v.key, path: v.path, pages: map[uint64]uint64{}}
			sm.objects[v.key] = obj
		}
		obj.path = v.path
		if obj.file == nil && file != nil && fileKey == v.key {
			obj.file, file = file, nil
		}
		if obj.file == nil {
			// A SysV segment or anonymous shared memory has no fd: the
			// mapping's own file is there for a privileged tracer.
			if f, err := os.Open(ptrace.ProcPath(p.pid, fmt.Sprintf("map_files/%x-%x", v.start, v.end))); err == nil {
				if k, err := keyOf(f); err == nil && k.ino == v.key.ino && isRegular(f) {
					obj.file = f
				} else {
					f.Close()
				}
			}
		}
		if obj.file == nil && !v.key.sysv && v.off+(v.end-v.start) > obj.size {
			// Without a file the size is what the mappings show (an
			// anonymous region is as large as its first mapping).
			obj.size = v.off + (v.end - v.start)
		}
		if obj.file == nil && v.key.sysv && obj.size == 0 {
			obj.size = v.end - v.start // shmat maps the whole segment
		}
		ms = append(ms, sharedMapping{start: v.start, end: v.end, off: v.off, obj: obj})
	}
	if file != nil {
		file.Close()
	}
	if p.listed != nil {
		*p.listed = true
	}
	return sm.setMaps(p, ms, readOnly)
}

// setMaps makes ms the shared mappings of p and tells its hook.
func (sm *sharedMem) setMaps(p sharedProc, ms []sharedMapping, readOnly roMapping) error {
	sm.remap = true
	if len(ms) == 0 {
		delete(sm.maps, p.pid)
	} else {
		sm.maps[p.pid] = ms
	}
	if sm.hooked && p.mem != nil {
		// No page yet (before its exec's exit): the exec drops the
		// mappings, and the flag with the old page.
		ch := sharing(p.pid, ms, readOnly)
		sm.changing[p.pid] = ch
		if err := hook.SetShared(p.mem, ch); err != nil {
			return err
		}
		if err := hook.SetSharedMaps(p.mem, sm.hookList(p.pid, ms)); err != nil {
			return err
		}
	}
	sm.release()
	return nil
}

// sharing says whether mappings ms of process pid share memory that may
// change under the program with no system call of its own to show it: the
// hook then leaves the calls around such changes to the recorder. A mapping
// that can never be written (no VM_MAYWRITE: a file opened read-only
// mapped MAP_SHARED, as glibc maps gconv-modules.cache for iconv and
// setlocale) of a file on disk sees what a private mapping of the file
// sees, which the hook's calls do not change either; memfds, POSIX and
// SysV shared memory and anonymous shared memory are there to be written.
// Whether a mapping may be written comes from /proc/PID/smaps (~0.5 ms),
// except for readOnly, a mapping just made of a file opened read-only.
func sharing(pid int, ms []sharedMapping, readOnly roMapping) bool {
	var smaps []ptrace.Smaps
	for _, m := range ms {
		o := m.obj
		if o.key.sysv || o.file == nil || strings.HasPrefix(o.path, "/memfd:") || strings.HasPrefix(o.path, "/dev/") {
			return true
		}
		if readOnly.pid == pid && readOnly.start == m.start && readOnly.end == m.end {
			continue // the mapping being made, of a file opened read-only
		}
		if smaps == nil {
			var err error
			if smaps, err = ptrace.ReadSmaps(pid); err != nil {
				return true
			}
		}
		if mayWrite(smaps, m.start) {
			return true
		}
	}
	return false
}

// hookList is what the hook of process pid is told of shared memory: its
// shared mappings ms, and, with no range, the files other processes map
// shared, so that its writes to them come to the recorder (tiesAtEntry)
// rather than being made in the hook while a process that maps the file
// runs beside it.
func (sm *sharedMem) hookList(pid int, ms []sharedMapping) []hook.SharedMap {
	out := hookShared(ms)
	own := map[*sharedObject]bool{}
	for _, m := range ms {
		own[m.obj] = true
	}
	for _, obj := range sm.othersFiles(pid) {
		if own[obj] {
			continue
		}
		for _, k := range sm.fileKeys(obj) {
			out = append(out, hook.SharedMap{Dev: unix.Mkdev(uint32(k.major), uint32(k.minor)), Ino: k.ino})
		}
	}
	return out
}

// othersFiles lists, by id, the objects with a file that processes other
// than pid map shared.
func (sm *sharedMem) othersFiles(pid int) []*sharedObject {
	seen := map[*sharedObject]bool{}
	var objs []*sharedObject
	for other, ms := range sm.maps {
		if other == pid {
			continue
		}
		for _, m := range ms {
			if o := m.obj; !seen[o] && o.file != nil && !o.key.sysv {
				seen[o] = true
				objs = append(objs, o)
			}
		}
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].id < objs[j].id })
	return objs
}

// fileKeys are the keys obj's file is known by: /proc/PID/maps's, and
// stat's where it differs (byFile).
func (sm *sharedMem) fileKeys(obj *sharedObject) []objKey {
	keys := []objKey{obj.key}
	for k, o := range sm.byFile {
		if o == obj && k != obj.key {
			keys = append(keys, k)
		}
	}
	return keys
}

// filesSignature names the set of objects with a file that some process
// maps shared: when it changes, every hook is told again (publishShared).
func (sm *sharedMem) filesSignature() string {
	var b strings.Builder
	for _, o := range sm.othersFiles(0) {
		fmt.Fprintf(&b, "%d,", o.id)
	}
	return b.String()
}

// mappedByOther says whether a process other than pid maps the object of
// the file stat calls key (by /proc/PID/maps's key or stat's), a file of
// the program's (a system file mapped so stays apart: docs/support.md).
func (sm *sharedMem) mappedByOther(pid int, key objKey) bool {
	obj := sm.objects[key]
	if obj == nil {
		obj = sm.byFile[key]
	}
	return obj != nil && !systemFile(obj.path) && slices.Contains(sm.othersFiles(pid), obj)
}

// userFileMapped says whether some process maps a file of the program's
// (not a system file) shared.
func (sm *sharedMem) userFileMapped() bool {
	if sm == nil {
		return false
	}
	for _, ms := range sm.maps {
		for _, m := range ms {
			if m.obj.file != nil && !systemFile(m.obj.path) {
				return true
			}
		}
	}
	return false
}

// systemFile says whether path is in one of the systemDirs.
func systemFile(path string) bool {
	for _, d := range systemDirs {
		if strings.HasPrefix(path, d) {
			return true
		}
	}
	return false
}

// hookShared lists mappings ms for the hook.
func hookShared(ms []sharedMapping) []hook.SharedMap {
	out := make([]hook.SharedMap, 0, len(ms))
	for _, m := range ms {
		k := m.obj.key
		out = append(out, hook.SharedMap{Start: m.start, End: m.end, Dev: unix.Mkdev(uint32(k.major), uint32(k.minor)), Ino: k.ino})
	}
	return out
}

// mayWrite says whether the mapping at start may be written (VmFlags mw),
// or is not listed.
func mayWrite(smaps []ptrace.Smaps, start uint64) bool {
	for _, s := range smaps {
		if s.Start == start {
			return slices.Contains(s.Flags, "mw")
		}
	}
	return true
}

// isDevice tells a mapping of a device (a frame buffer, a GPU's memory)
// from memory: anonymous shared memory shows as a deleted /dev/zero, POSIX
// shared memory lives in /dev/shm.
func isDevice(path string) bool {
	return strings.HasPrefix(path, "/dev/") && !strings.HasPrefix(path, "/dev/zero") && !strings.HasPrefix(path, "/dev/shm/")
}

// isRegular reports whether f is a regular file (memfds and the files of
// anonymous shared memory and SysV segments are).
func isRegular(f *os.File) bool {
	var st unix.Stat_t
	return unix.Fstat(int(f.Fd()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
}

// addMapping adds to the shared mappings of p, whose list is whole, a new
// mapping of an object the tracker knows by its open file, at a place
// where p mapped nothing shared: what rescan would read in
// /proc/PID/maps (~0.25 ms a process that maps gconv-modules.cache).
func (sm *sharedMem) addMapping(p sharedProc, m sharedMapping, readOnly roMapping) error {
	sm.stats.added++
	ms := sm.maps[p.pid]
	i := sort.Search(len(ms), func(i int) bool { return ms[i].start >= m.start })
	return sm.setMaps(p, slices.Insert(slices.Clone(ms), i, m), readOnly)
}

// release forgets the objects no process maps any more, and closes their
// files: a file kept open would keep a deleted file or a memfd alive. The
// kernel gives a freed inode (or a SysV segment's id) to the next object
// made, which must not meet the old one's pages: replay's copy of the old
// object holds what its processes wrote there, which the comparisons may
// not have seen (sqlite maps a new -shm file in each process, writes it,
// and unlinks it at its end). An object whose file is still linked is
// kept, with its file open (its inode can go to no other file), for the
// next mapping of the same file: glibc's gconv-modules.cache in each
// process of a shell or a make.
func (sm *sharedMem) release() {
	used := map[*sharedObject]bool{}
	for _, ms := range sm.maps {
		for _, m := range ms {
			used[m.obj] = true
		}
	}
	for key, obj := range sm.objects {
		if used[obj] || !key.sysv && linked(obj.file) {
			continue
		}
		if obj.file != nil {
			obj.file.Close()
			obj.file = nil
		}
		delete(sm.objects, key)
		for k, o := range sm.byFile {
			if o == obj {
				delete(sm.byFile, k)
			}
		}
	}
}

// linked says whether f, not nil, is a file with a name: not deleted, not
// a memfd or anonymous shared memory.
func linked(f *os.File) bool {
	var st unix.Stat_t
	return f != nil && unix.Fstat(int(f.Fd()), &st) == nil && st.Nlink > 0
}

// forget drops the mappings of process pid (an exec replaced its address
// space, or it ended: onProcessExit).
func (sm *sharedMem) forget(pid int) {
	if sm == nil || len(sm.maps[pid]) == 0 {
		return
	}
	delete(sm.maps, pid)
	delete(sm.changing, pid)
	sm.remap = true
	sm.release()
}

// keyOf identifies an open file.
func keyOf(f *os.File) (objKey, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return objKey{}, err
	}
	return objKey{major: uint64(unix.Major(st.Dev)), minor: uint64(unix.Minor(st.Dev)), ino: st.Ino}, nil
}

// mappingAt returns the shared mapping of pid that holds addr.
func (sm *sharedMem) mappingAt(pid int, addr uint64) *sharedMapping {
	ms := sm.maps[pid]
	i := sort.Search(len(ms), func(i int) bool { return ms[i].end > addr })
	if i < len(ms) && ms[i].start <= addr {
		return &ms[i]
	}
	return nil
}

// overlaps reports whether [lo, hi) meets a shared mapping of pid.
func (sm *sharedMem) overlaps(pid int, lo, hi uint64) bool {
	for _, m := range sm.maps[pid] {
		if m.start < hi && lo < m.end {
			return true
		}
	}
	return false
}

// objectsOf lists the objects mapped by pid with, for each, the page ranges
// of the object that are mapped, merged.
func (sm *sharedMem) objectsOf(pid int, only func(*sharedObject) bool) ([]*sharedObject, map[*sharedObject][][2]uint64) {
	ranges := map[*sharedObject][][2]uint64{}
	var objs []*sharedObject
	for _, m := range sm.maps[pid] {
		if only != nil && !only(m.obj) {
			continue
		}
		if _, ok := ranges[m.obj]; !ok {
			objs = append(objs, m.obj)
		}
		ranges[m.obj] = append(ranges[m.obj], [2]uint64{m.off / pageSize, (m.off + m.end - m.start + pageSize - 1) / pageSize})
	}
	for obj, rs := range ranges {
		ranges[obj] = mergeRanges(rs)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].id < objs[j].id })
	return objs, ranges
}

// check compares the objects p maps (those only accepts, all if nil) with
// what replay's copies hold, and returns the KindSharedMem events that
// bring the copies up to date (without Tid).
func (sm *sharedMem) check(p sharedProc, only func(*sharedObject) bool) ([]*trace.Event, error) {
	if !sm.tracking(p.pid) {
		return nil, nil
	}
	start := time.Now()
	defer func() { sm.stats.spent += time.Since(start) }()
	sm.stats.checks++
	if sm.buf == nil {
		sm.buf = make([]byte, 1<<20)
	}
	objs, ranges := sm.objectsOf(p.pid, only)
	var evs []*trace.Event
	for _, obj := range objs {
		oevs, err := sm.checkObject(p, obj, ranges[obj])
		if err != nil {
			return nil, err
		}
		evs = append(evs, oevs...)
	}
	return evs, nil
}

// checkObject compares the given page ranges of obj.
func (sm *sharedMem) checkObject(p sharedProc, obj *sharedObject, ranges [][2]uint64) ([]*trace.Event, error) {
	size := obj.size
	if obj.file != nil {
		var st unix.Stat_t
		if err := unix.Fstat(int(obj.file.Fd()), &st); err != nil {
			return nil, fmt.Errorf("shared memory %s: %w", obj.path, err)
		}
		size = uint64(st.Size)
	}
	var mems []trace.Mem
	resized := size != obj.size
	if size < obj.size {
		// Replay's copy shrinks too: what it held past the end is gone.
		end := (size + pageSize - 1) / pageSize
		for idx := range obj.pages {
			if idx >= end {
				delete(obj.pages, idx)
			}
		}
	}
	obj.size = size
	for _, rg := range sm.toCompare(p, obj, ranges) {
		for idx := rg[0]; idx < rg[1]; {
			n := min(rg[1]-idx, uint64(len(sm.buf)/pageSize))
			buf := sm.buf[:n*pageSize]
			got := sm.readPages(p, obj, idx, buf)
			sm.stats.compared += int64(got)
			for i := uint64(0); i < uint64(got)/pageSize; i++ {
				page := buf[i*pageSize : (i+1)*pageSize]
				h := maphash.Bytes(sm.seed, page)
				old, ok := obj.pages[idx+i]
				if !ok {
					old = sm.zero
				}
				if h == old {
					continue
				}
				if h == sm.zero {
					delete(obj.pages, idx+i)
				} else {
					obj.pages[idx+i] = h
				}
				off := (idx + i) * pageSize
				if l := len(mems) - 1; l >= 0 && mems[l].Addr+uint64(len(mems[l].Data)) == off && len(mems[l].Data) < maxSharedEvent {
					mems[l].Data = append(mems[l].Data, page...)
				} else {
					mems = append(mems, trace.Mem{Addr: off, Data: bytes.Clone(page)})
				}
			}
			if uint64(got) < n*pageSize {
				// A page that cannot be read (past the end of the file,
				// or not mapped any more) is skipped: the program cannot
				// read it either.
				idx += uint64(got)/pageSize + 1
				continue
			}
			idx += n
		}
	}
	if len(mems) == 0 && !resized {
		return nil, nil
	}
	var evs []*trace.Event
	shared := func() *trace.SharedMap { return &trace.SharedMap{Object: obj.id, Size: obj.size, Path: obj.path} }
	e := &trace.Event{Kind: trace.KindSharedMem, Shared: shared()}
	var n int
	for _, m := range mems {
		if n > 0 && n+len(m.Data) > maxSharedEvent {
			evs = append(evs, e)
			e, n = &trace.Event{Kind: trace.KindSharedMem, Shared: shared()}, 0
		}
		e.Mem = append(e.Mem, m)
		n += len(m.Data)
		sm.stats.wrote += int64(len(m.Data))
	}
	return append(evs, e), nil
}

// readPages reads the pages of obj from page idx into buf (a whole number
// of pages) and returns how many bytes it could read: through the
// object's file if it has one (a file's last page is completed with zeros,
// as a mapping shows it), else through the mappings of p.
func (sm *sharedMem) readPages(p sharedProc, obj *sharedObject, idx uint64, buf []byte) int {
	off := idx * pageSize
	if obj.file != nil {
		if off >= obj.size {
			return 0
		}
		want := min(uint64(len(buf)), obj.size-off)
		n, _ := obj.file.ReadAt(buf[:want], int64(off))
		if uint64(n) < want {
			return n / pageSize * pageSize
		}
		end := (n + pageSize - 1) / pageSize * pageSize
		clear(buf[n:end])
		return end
	}
	// Through the memory of p: the mapping that holds the first page, as
	// far as it goes.
	for _, m := range sm.maps[p.pid] {
		if m.obj != obj || off < m.off || off >= m.off+(m.end-m.start) {
			continue
		}
		l := min(uint64(len(buf)), m.off+(m.end-m.start)-off)
		n, _ := p.mem.ReadAt(buf[:l], m.start+(off-m.off))
		return n / pageSize * pageSize
	}
	return 0
}

// sharedReport describes what the tracker cost, for REWIND_DEBUG.
func (sm *sharedMem) report() string {
	if sm == nil {
		return ""
	}
	return fmt.Sprintf("shared memory: %d objects, %d checks compared %d KiB in %v, logged %d KiB; mappings: %d rescans, %d added",
		len(sm.objects), sm.stats.checks, sm.stats.compared>>10, sm.stats.spent, sm.stats.wrote>>10, sm.stats.rescans, sm.stats.added)
}
