package gdbserver

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestReader: the frames a byte stream from gdb gives, bad ones included.
func TestReader(t *testing.T) {
	tests := []struct {
		name, in string
		want     []frame
	}{
		{"plain", "$g#67", []frame{{data: "g"}}},
		{"acks and garbage skipped", "++-xyz$?#3f", []frame{{data: "?"}}},
		{"interrupt", "\x03$?#3f", []frame{{interrupt: true}, {data: "?"}}},
		{"bad checksum", "$g#00$g#67", []frame{{err: errChecksum}, {data: "g"}}},
		{"not hex checksum", "$g#zz", []frame{{err: errChecksum}}},
		{"escape", "$X}]#" + sumOf("X}]"), []frame{{data: "X}"}}},
		{"run length", "$0* #" + sumOf("0* "), []frame{{data: "0000"}}},
		{"restart inside a packet", "$gar$g#67", []frame{{data: "g"}}},
		{"too long", "$" + strings.Repeat("a", MaxPacket+1) + "#00$g#67", []frame{{err: errTooLong}, {data: "g"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newReader(strings.NewReader(tc.in))
			for i, want := range tc.want {
				got, err := r.next()
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if got != want {
					t.Errorf("frame %d: %+v, want %+v", i, got, want)
				}
			}
			if _, err := r.next(); err == nil {
				t.Error("more frames than expected")
			}
		})
	}
}

// sumOf is the checksum of a payload as written on the wire.
func sumOf(s string) string {
	var sum byte
	for i := 0; i < len(s); i++ {
		sum += s[i]
	}
	return fmt.Sprintf("%02x", sum)
}

// TestEncodeRoundTrip: what the server sends reads back the same, special
// bytes included.
func TestEncodeRoundTrip(t *testing.T) {
	for _, p := range []string{"OK", "", "l<a>$#}*</a>", "T05thread:1f;swbreak:;"} {
		got, err := newReader(strings.NewReader(string(encodePacket(p)))).next()
		if err != nil || got.data != p || got.err != nil {
			t.Errorf("%q: got %+v, %v", p, got, err)
		}
	}
}

// TestEngineWatches: gdb's ranges become aligned debug-register ranges.
func TestEngineWatches(t *testing.T) {
	tests := []struct {
		w    watchpoint
		want string
	}{
		{watchpoint{'2', 0x1000, 8}, "1000/8 "},
		{watchpoint{'2', 0x1004, 4}, "1004/4 "},
		{watchpoint{'4', 0x1003, 6}, "1003/1 rw 1004/4 rw 1008/1 rw "},
		{watchpoint{'3', 0x1000, 16}, "1000/8 rw 1008/8 rw "},
	}
	for _, tc := range tests {
		var b strings.Builder
		for _, w := range engineWatches([]watchpoint{tc.w}) {
			fmt.Fprintf(&b, "%x/%d", w.Addr, w.Len)
			if w.ReadWrite {
				b.WriteString(" rw")
			}
			b.WriteString(" ")
		}
		if b.String() != tc.want {
			t.Errorf("%+v: %q, want %q", tc.w, b.String(), tc.want)
		}
	}
}

// TestBreakpointKinds inserts and removes software (Z0) and hardware (Z1)
// breakpoints at one address: removing one kind leaves the other.
func TestBreakpointKinds(t *testing.T) {
	cases := []struct {
		packets []string // "+0": insert Z0, "-1": remove Z1…
		armed   bool
		hw      uint8
	}{
		{[]string{"+0"}, true, 1},
		{[]string{"+0", "+1", "-1"}, true, 1},
		{[]string{"+1", "+0", "-0"}, true, 2},
		{[]string{"+0", "+1", "-0", "-1"}, false, 0},
		{[]string{"+0", "+0", "-0"}, false, 0},
		{[]string{"-1"}, false, 0},
	}
	for _, c := range cases {
		sv := &Server{hw: map[uint64]uint8{}}
		for _, p := range c.packets {
			if got := sv.breakpoint(p[0] == '+', p[1:]+",401000,1"); got != "OK" {
				t.Fatalf("%v: %s answered %q", c.packets, p, got)
			}
		}
		if armed := slices.Contains(sv.bps, 0x401000); armed != c.armed || sv.hw[0x401000] != c.hw {
			t.Errorf("%v: armed %v kinds %d, want %v %d", c.packets, armed, sv.hw[0x401000], c.armed, c.hw)
		}
	}
}

// TestXferParts reads a qXfer object in parts: each part continues the copy
// the first read made, the last one is marked 'l'.
func TestXferParts(t *testing.T) {
	sv := &Server{hw: map[uint64]uint8{}}
	var got strings.Builder
	for off := 0; ; {
		r := sv.xfer(fmt.Sprintf("features:read:target.xml:%x,64", off))
		if r == "" || (r[0] != 'm' && r[0] != 'l') {
			t.Fatalf("part at %d: %q", off, r)
		}
		got.WriteString(r[1:])
		if r[0] == 'l' {
			break
		}
		off += len(r) - 1
	}
	if want := targetXML(false); got.String() != want {
		t.Errorf("the parts make %d bytes, want the %d of target.xml", got.Len(), len(want))
	}
}
