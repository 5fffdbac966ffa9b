package record

import (
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/rewind-debugger/rewind/engine/attach"
	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The ring buffer (record --keep-last D). The recording is cut into
// segments, each a trace file of its own that starts from a snapshot of
// the process (the first one from the exec or the attach). Every D/2 the
// recorder stops every thread at a point its log accounts for, snapshots
// the process and starts a new segment; a segment is deleted once the
// next one alone reaches back D. At the end the segments kept are joined
// into the trace (trace.Join): it holds between D and about 1.5 D of the
// end of the program's life, and the disk holds at most four segments
// (three, unless a late rotation leaves the second oldest just short of D;
// segments that start at least 3/4 of a period apart keep it to four).

// ring is the ring buffer's state.
type ring struct {
	keep time.Duration
	segs []segment // kept, oldest first; the last is being written
	next int       // number of the next segment file
	hdr  *trace.Header
	out  string // the trace the segments make up
}

// segment is one segment file.
type segment struct {
	path  string
	start time.Time
}

// rotateSignal stands, among the signals that reach the recorder's wait,
// for the ring buffer's timer.
const rotateSignal = durationElapsed - 1

// minRingPeriod keeps a tiny --keep-last from snapshotting all the time.
const minRingPeriod = 500 * time.Millisecond

// period is how often the ring starts a segment.
func (g *ring) period() time.Duration { return max(g.keep/2, minRingPeriod) }

// segmentPath names segment n of the trace at out.
func segmentPath(out string, n int) string { return fmt.Sprintf("%s.segment-%d", out, n) }

// startRing makes the first segment file the recording writes to, in
// place of the trace itself.
func (r *Recorder) startRing(h *trace.Header) (*trace.Writer, error) {
	g := &ring{keep: r.opts.KeepLast, hdr: h, out: r.opts.Output}
	r.ring = g
	return g.open()
}

// open starts the next segment file.
func (g *ring) open() (*trace.Writer, error) {
	path := segmentPath(g.out, g.next)
	g.next++
	h := *g.hdr
	h.Created = time.Now().UTC()
	w, err := trace.Create(path, &h)
	if err != nil {
		return nil, err
	}
	g.segs = append(g.segs, segment{path: path, start: time.Now()})
	return w, nil
}

// rotate closes the current segment and starts the next from a snapshot
// of the process, then drops the segments no longer needed. It runs
// between stops, with no thread of the recorder's half-handled.
func (r *Recorder) rotate() error {
	g := r.ring
	if n := len(g.segs); n > 0 && time.Since(g.segs[n-1].start) < g.period()*3/4 {
		// A tick that came soon after a late rotation: segments that
		// start at least 3/4 of a period apart keep the disk to four of
		// them. (Counted from the segment's start, not the rotation's:
		// a snapshot that took long under load would bring the next
		// start closer.)
		return nil
	}
	if len(r.procs) != 1 {
		// A snapshot holds one process: the tree waits for its
		// children to end before the ring turns.
		return nil
	}
	r.settleCurrent()
	r.pausing = true
	held, err := r.stopAll(true)
	r.pausing = false
	if err != nil {
		return fmt.Errorf("ring buffer: stop the threads: %w", err)
	}
	if r.done {
		return nil
	}
	var tids []int
	for tid, t := range r.threads {
		if t.state == gone {
			continue
		}
		for _, info := range held[tid] {
			t.held = append(t.held, heldSignal{sig: int(binary.LittleEndian.Uint32(info)), info: info})
		}
		t.injecting = nil
		tids = append(tids, tid)
	}
	sort.Ints(tids)
	for _, tid := range tids {
		if r.inHookNow(r.threads[tid]) {
			// In the middle of a call the hook records, which a snapshot
			// cannot hold (replay's hook would go on in record mode's
			// code): the ring turns a moment later.
			r.rotateDue = true
			return r.resumeStopped(tids)
		}
	}
	for _, c := range r.cpus {
		if c.current != nil {
			// The calls the hook recorded so far belong to this segment.
			if err := r.flushHook(c.current); err != nil {
				return err
			}
		}
	}
	var root *process
	for _, p := range r.procs {
		root = p
	}
	snap, err := attach.Adopt(root.pid, tids, root.mem).Snapshot()
	if err != nil {
		return fmt.Errorf("ring buffer: %w", err)
	}
	original(root, snap)
	snap.Ring = true
	if err := r.sharedRegions(root, snap); err != nil {
		return err
	}
	tid := r.pid
	if t := r.someCurrent(); t != nil {
		tid = t.tid
	}
	if err := r.log(&trace.Event{Kind: trace.KindEnd, Tid: int32(tid), Data: []byte(trace.SegmentEnd)}); err != nil {
		return err
	}
	if err := r.drainLog(); err != nil {
		return err
	}
	if err := r.w.Close(&trace.Footer{Interrupted: trace.SegmentEnd, Blobs: r.files.count()}); err != nil {
		return fmt.Errorf("ring buffer: %w", err)
	}
	// The segments the next one makes useless go first: the disk never
	// holds more than the ring needs.
	now := time.Now()
	for len(g.segs) >= 2 && now.Sub(g.segs[1].start) >= g.keep {
		os.Remove(g.segs[0].path)
		g.segs = g.segs[1:]
	}
	w, err := g.open()
	if err != nil {
		return fmt.Errorf("ring buffer: %w", err)
	}
	r.w, r.files = w, newFileStore(w)
	if r.filtered {
		// The files the hooks know are the last segment's, which the
		// new one does not hold.
		r.files.onStore = r.publishStored
		for _, p := range r.procs {
			if p.mem != nil {
				hook.SetStored(p.mem, 0, nil)
			}
		}
	}
	r.w.AutoPush(pushEvery)
	r.code.close()
	r.code = codeFiles{analyses: r.code.analyses} // its images are cached by blob id, which start again
	r.known = nil                                 // by image
	if err := r.writeSnapshot(snap); err != nil {
		return err
	}
	// Every thread goes on from where the snapshot has it.
	return r.resumeStopped(tids)
}

// resumeStopped lets the threads stopAll stopped go on from where they
// stand, as the recorder's scheduler decides.
func (r *Recorder) resumeStopped(tids []int) error {
	for _, c := range r.cpus {
		c.current, c.ready = nil, nil
	}
	for _, tid := range tids {
		t := r.threads[tid]
		t.state, t.park, t.inSyscall, t.split, t.refused = parked, parkResume, false, false, false
		t.haveRegs = ptrace.GetRegs(tid, &t.resumeRegs) == nil
		c := t.cpu()
		c.ready = append(c.ready, t)
	}
	return r.scheduleIdle()
}

// original puts back, in the snapshot's bytes, the code the recorder
// patched: replay patches the rebuilt process itself, from the original
// code, as the recorder did.
func original(p *process, snap *trace.Snapshot) {
	for i := range snap.Regions {
		reg := &snap.Regions[i]
		if reg.Data == nil {
			continue
		}
		if p.vdso != nil && reg.Start == p.vdso.Addr && len(reg.Data) == len(p.vdso.Orig) {
			copy(reg.Data, p.vdso.Orig)
			continue
		}
		runs := reg.Runs
		if runs == nil {
			runs = []trace.Run{{Off: 0, Len: reg.Size}}
		}
		at := uint64(0)
		for _, run := range runs {
			p.code.Original(reg.Data[at:at+run.Len], reg.Start+run.Off)
			at += run.Len
		}
	}
}

// finishRing closes the last segment with foot and joins the kept ones
// into the trace.
func (r *Recorder) finishRing(foot *trace.Footer) (*trace.Footer, error) {
	g := r.ring
	if err := r.w.Close(foot); err != nil {
		return nil, err
	}
	var paths []string
	for _, s := range g.segs {
		paths = append(paths, s.path)
	}
	w, err := r.createOutput(g.hdr)
	if err != nil {
		return nil, err
	}
	joined, err := trace.Join(w, paths)
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("ring buffer: %w (the segments are left in %s…)", err, paths[0])
	}
	if err := w.Close(joined); err != nil {
		return nil, err
	}
	for _, p := range paths {
		os.Remove(p)
	}
	joined.Events = w.Events()
	return joined, nil
}
