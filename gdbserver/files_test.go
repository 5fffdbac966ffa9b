package gdbserver

import "testing"

// TestVFileRefusals: what gdb's vFile packets get without a file to read:
// a write-mode open is refused before any file is looked at, descriptors
// never opened are bad, malformed arguments invalid, and the packets the
// server leaves out are unsupported (empty).
func TestVFileRefusals(t *testing.T) {
	sv := &Server{}
	for _, tc := range []struct{ packet, want string }{
		{"setfs:0", "F0"},
		{"open:2f746d702f78,1,1a4", "F-1,d"}, // O_WRONLY: EACCES
		{"open:2f746d702f78,2,1a4", "F-1,d"}, // O_RDWR
		{"open:zz,0,0", "F-1,16"},            // not hex: EINVAL
		{"open:2f", "F-1,16"},
		{"pread:5,100,0", "F-1,9"}, // never opened: EBADF
		{"pread:x,100,0", "F-1,9"},
		{"fstat:5", "F-1,9"},
		{"close:5", "F-1,9"},
		{"pwrite:1,0,00", ""},
		{"unlink:2f746d70", ""},
	} {
		if got := sv.vFile(tc.packet); got != tc.want {
			t.Errorf("vFile:%s = %q, want %q", tc.packet, got, tc.want)
		}
	}
}

// TestVFileRead: pread parts of an open file and its fstat, as gdb asks.
func TestVFileRead(t *testing.T) {
	sv := &Server{open: openFiles{next: 7, files: map[int][]byte{7: []byte("0123456789$#}*")}}}
	for _, tc := range []struct{ packet, want string }{
		{"pread:7,4,2", "F4;2345"},
		{"pread:7,100,a", "F4;$#}*"}, // (escaped when framed)
		{"pread:7,4,e", "F0;"},       // at the end
		{"pread:7,4,ff", "F0;"},
		{"close:7", "F0"},
		{"pread:7,4,0", "F-1,9"},
	} {
		if got := sv.vFile(tc.packet); got != tc.want {
			t.Errorf("vFile:%s = %q, want %q", tc.packet, got, tc.want)
		}
	}
	sv.open.files = map[int][]byte{1: make([]byte, 1000)}
	st := sv.vFile("fstat:1")
	if len(st) != len("F40;")+fioStatSize || st[:4] != "F40;" || st[4+28+6:4+36] != "\x03\xe8" {
		t.Errorf("fstat of a 1000-byte file: %q", st)
	}
}
