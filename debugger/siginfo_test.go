package debugger

import (
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/dwarf"
)

// TestSiginfoLayout: the synthesized struct siginfo lays its fields where
// the kernel's siginfo_t has them on x86-64, in its 128 bytes.
func TestSiginfoLayout(t *testing.T) {
	si := siginfoType()
	if si.Size != siginfoSize {
		t.Fatalf("size %d, want %d", si.Size, siginfoSize)
	}
	for _, c := range []struct {
		path []string
		off  int64
	}{
		{[]string{"si_code"}, 8},
		{[]string{"_sifields"}, 16},
		{[]string{"_sifields", "_pad"}, 16},
		{[]string{"_sifields", "_kill", "si_uid"}, 20},
		{[]string{"_sifields", "_timer", "si_sigval"}, 24},
		{[]string{"_sifields", "_sigchld", "si_utime"}, 32},
		{[]string{"_sifields", "_sigfault", "si_addr"}, 16},
		{[]string{"_sifields", "_sigfault", "_addr_lsb"}, 24},
		{[]string{"_sifields", "_sigfault", "_addr_bnd", "_upper"}, 40},
		{[]string{"_sifields", "_sigpoll", "si_fd"}, 24},
		{[]string{"_sifields", "_sigsys", "_arch"}, 28},
	} {
		t.Run(strings.Join(c.path, "."), func(t *testing.T) {
			typ, off := si, int64(0)
			for _, name := range c.path {
				found := false
				for _, f := range typ.Fields {
					if f.Name == name {
						typ, off, found = f.Type, off+f.Offset, true
						break
					}
				}
				if !found {
					t.Fatalf("no field %s in %s", name, typ.Name)
				}
			}
			if off != c.off {
				t.Errorf("offset %d, want %d", off, c.off)
			}
		})
	}
	if got := dwarf.Ptype(si); !strings.Contains(got, "int _pad __attribute__ ((vector_size(28)));") || !strings.Contains(got, "struct {...} _sigfault;") {
		t.Errorf("ptype:\n%s", got)
	}
}
