package record

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestMatchStream checks which writes count as the program's stdout or
// stderr, whatever descriptor they go through.
func TestMatchStream(t *testing.T) {
	pipeOut := fileID{dev: 12, ino: 100, ok: true}
	pipeErr := fileID{dev: 12, ino: 101, ok: true}
	pts3 := unix.Mkdev(136, 3)
	tty := fileID{dev: 24, ino: 6, rdev: pts3, ok: true}
	for _, tc := range []struct {
		name string
		id   fileID
		fd   int
		ids  [3]fileID
		want int
	}{
		{"stdout", pipeOut, 1, [3]fileID{{}, pipeOut, pipeErr}, 1},
		{"stderr", pipeErr, 2, [3]fileID{{}, pipeOut, pipeErr}, 2},
		{"dup of stdout", pipeOut, 10, [3]fileID{{}, pipeOut, pipeErr}, 1},
		{"dup of stderr", pipeErr, 11, [3]fileID{{}, pipeOut, pipeErr}, 2},
		{"stderr dup2'd onto 1", pipeErr, 1, [3]fileID{{}, pipeOut, pipeErr}, 2},
		{"another pipe", fileID{dev: 12, ino: 7, ok: true}, 1, [3]fileID{{}, pipeOut, pipeErr}, 0},
		{"2>&1, fd 2", pipeOut, 2, [3]fileID{{}, pipeOut, pipeOut}, 2},
		{"2>&1, a dup", pipeOut, 5, [3]fileID{{}, pipeOut, pipeOut}, 1},
		{"terminal opened by name", fileID{dev: 24, ino: 6, rdev: pts3, ok: true}, 7, [3]fileID{{}, tty, tty}, 1},
		{"/dev/tty as the controlling terminal", fileID{rdev: pts3, ok: true}, 7, [3]fileID{{}, tty, tty}, 1},
		{"another terminal", fileID{dev: 24, ino: 9, rdev: unix.Mkdev(136, 4), ok: true}, 1, [3]fileID{{}, tty, tty}, 0},
		{"/dev/tty, no terminal streams", fileID{rdev: pts3, ok: true}, 7, [3]fileID{{}, pipeOut, pipeErr}, 0},
		{"streams unknown", pipeOut, 1, [3]fileID{}, 0},
	} {
		if got := matchStream(tc.id, tc.fd, &tc.ids); got != tc.want {
			t.Errorf("%s: matchStream = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestDecodeTTYNr checks the decoding of /proc/PID/stat's tty_nr.
func TestDecodeTTYNr(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want uint64
	}{
		{136<<8 | 3, unix.Mkdev(136, 3)},                            // /dev/pts/3
		{4<<8 | 1, unix.Mkdev(4, 1)},                                // /dev/tty1
		{300&0xff | 136<<8 | (300&^0xff)<<12, unix.Mkdev(136, 300)}, // /dev/pts/300
	} {
		if got := decodeTTYNr(tc.n); got != tc.want {
			t.Errorf("decodeTTYNr(%d) = %#x, want %#x", tc.n, got, tc.want)
		}
	}
}
