package replay

import (
	"testing"

	"github.com/rewind-debugger/rewind/engine/trace"
)

func TestPastEnd(t *testing.T) {
	const addr = 0x10000
	for _, tc := range []struct {
		name                  string
		offset, size, length  uint64
		wantStart, wantLength uint64
	}{
		{"inside the file", 0, 3 * pageSize, 2 * pageSize, 0, 0},
		{"the file's last page partly", 0, 5, pageSize, 0, 0},
		{"two pages past a short file", 0, 5, 3 * pageSize, addr + pageSize, 2 * pageSize},
		{"an unaligned length", 0, 5, 2*pageSize + 1, addr + pageSize, 2 * pageSize},
		{"starting past the end", 2 * pageSize, pageSize, pageSize, addr, pageSize},
		{"an empty file", 0, 0, pageSize, addr, pageSize},
		{"from an offset, ending in the file", pageSize, 3 * pageSize, 2 * pageSize, 0, 0},
	} {
		start, n := pastEnd(&trace.MapFile{Offset: tc.offset}, tc.size, addr, tc.length)
		if start != tc.wantStart || n != tc.wantLength {
			t.Errorf("%s: past the end %#x+%#x, want %#x+%#x", tc.name, start, n, tc.wantStart, tc.wantLength)
		}
	}
}
