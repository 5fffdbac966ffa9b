package trace

// Events frames stored as they are. zstd's fastest level compresses
// 150–250 MB a second on one CPU of a VM, and a program that only moves
// data (cat, wc or grep of a big file, a copy) reads faster than that: its
// reads' bytes filled the writer's queue, and the program waited at its
// stops for the compression of each frame before it (cat of a 50 MB file:
// 13 ms natively, 0.4 s recorded, 60% of it zstd's). Where frames wait
// behind the one the writer takes (the program is ahead), that one is
// written in raw blocks (appendRawFrame: a copy), which every reader
// reads; the frames after it are compressed again once the writer keeps
// up. The trace is larger by what those frames would have saved.

// behind is how many events frames must wait in the writer's queue for the
// one it takes to be stored raw: the queue holds queueLen.
const behind = 2

// RawFrames returns how many events frames were stored uncompressed
// because the program's data came faster than it compressed.
func (w *Writer) RawFrames() int64 { return w.rawFrames.Load() }

// rawEvents says whether frame fi holds events uncompressed: a zstd frame
// of raw blocks is larger than what it holds.
func rawEvents(fi frameInfo) bool { return fi.typ == FrameEvents && fi.clen > fi.ulen }

// RawEvents returns how many bytes of events the trace holds in frames
// stored uncompressed (the recording's writer behind, or data that does
// not compress), which rewind pack compresses where they shrink.
func (r *Reader) RawEvents() int64 {
	var n int64
	for _, fi := range r.frames {
		if rawEvents(fi) {
			n += int64(fi.ulen)
		}
	}
	return n
}
