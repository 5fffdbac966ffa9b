package testprog

import (
	"encoding/binary"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// Frame is one frame of a trace file, found by walking the frame headers as
// the format describes them (engine/trace/format.go): tests cut and damage
// traces at chosen frames with it.
type Frame struct {
	Off  int64 // where its header starts
	Type byte  // trace.FrameHeader, FrameEvents, FrameBlob or FrameFooter
	Len  int64 // its size, header included
}

// Frames lists the frames of a trace file's contents, up to the first one
// the data does not hold whole.
func Frames(data []byte) []Frame {
	var out []Frame
	for off := int64(trace.PreambleSize); off+trace.FrameHeaderSize <= int64(len(data)); {
		n := trace.FrameHeaderSize + int64(binary.LittleEndian.Uint32(data[off+1:]))
		if off+n > int64(len(data)) {
			break
		}
		out = append(out, Frame{Off: off, Type: data[off], Len: n})
		off += n
	}
	return out
}
