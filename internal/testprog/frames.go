package testprog

import "encoding/binary"

// Frame is one frame of a trace file, found by walking the frame headers as
// the format describes them (engine/trace/format.go): tests cut and damage
// traces at chosen frames with it.
type Frame struct {
	Off  int64 // where its header starts
	Type byte  // 1 header, 2 events, 3 blob, 4 footer
	Len  int64 // its size, header included
}

// Trace file layout: the magic and version, then frames of a 13-byte header
// (type, compressed length, uncompressed length, CRC) and their payload.
const (
	preambleSize    = 12
	frameHeaderSize = 13
)

// Frames lists the frames of a trace file's contents, up to the first one
// the data does not hold whole.
func Frames(data []byte) []Frame {
	var out []Frame
	for off := int64(preambleSize); off+frameHeaderSize <= int64(len(data)); {
		n := frameHeaderSize + int64(binary.LittleEndian.Uint32(data[off+1:]))
		if off+n > int64(len(data)) {
			break
		}
		out = append(out, Frame{Off: off, Type: data[off], Len: n})
		off += n
	}
	return out
}
