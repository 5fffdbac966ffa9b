package patch

import (
	"bytes"
	"testing"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestRandInsn recognizes rdrand and rdseed at each operand size and
// register, and nothing that only looks like them.
func TestRandInsn(t *testing.T) {
	for _, c := range []struct {
		name  string
		bytes []byte
		op    Op // 0: not one
		reg   int
		size  int
	}{
		{"rdrand eax", []byte{0x0f, 0xc7, 0xf0}, Rdrand, trace.RAX, 4},
		{"rdrand rax", []byte{0x48, 0x0f, 0xc7, 0xf0}, Rdrand, trace.RAX, 8},
		{"rdrand ax", []byte{0x66, 0x0f, 0xc7, 0xf0}, Rdrand, trace.RAX, 2},
		{"rdrand edx", []byte{0x0f, 0xc7, 0xf2}, Rdrand, trace.RDX, 4},
		{"rdrand r9", []byte{0x49, 0x0f, 0xc7, 0xf1}, Rdrand, trace.R9, 8},
		{"rdrand r15w", []byte{0x66, 0x41, 0x0f, 0xc7, 0xf7}, Rdrand, trace.R15, 2},
		{"rdseed ecx", []byte{0x0f, 0xc7, 0xf9}, Rdseed, trace.RCX, 4},
		{"rdseed rdi", []byte{0x48, 0x0f, 0xc7, 0xff}, Rdseed, trace.RDI, 8},
		{"rdseed r12d", []byte{0x41, 0x0f, 0xc7, 0xfc}, Rdseed, trace.R12, 4},
		{"rdpid rax (f3)", []byte{0xf3, 0x0f, 0xc7, 0xf8}, 0, 0, 0},
		{"senduipi (f3 /6)", []byte{0xf3, 0x0f, 0xc7, 0xf0}, 0, 0, 0},
		{"lock rdrand (invalid)", []byte{0xf0, 0x0f, 0xc7, 0xf0}, 0, 0, 0},
		{"cmpxchg8b [rax] (memory form)", []byte{0x0f, 0xc7, 0x08}, 0, 0, 0},
		{"vmptrld (memory /6)", []byte{0x0f, 0xc7, 0x30}, 0, 0, 0},
		{"group 9 /1 register form", []byte{0x0f, 0xc7, 0xc8}, 0, 0, 0},
	} {
		n, err := insnLen(c.bytes)
		if err != nil {
			n = len(c.bytes)
		}
		s, ok := randInsn(c.bytes, n)
		if c.op == 0 {
			if ok {
				t.Errorf("%s: recognized as %s", c.name, s.Op)
			}
			continue
		}
		if !ok || s.Op != c.op || s.Reg != c.reg || s.Size != c.size || !bytes.Equal(s.Orig, c.bytes) {
			t.Errorf("%s: got %+v (%v), want %s reg %s size %d", c.name, s, ok, c.op, trace.RegNames[c.reg], c.size)
		}
		trap := s.Trap()
		if len(trap) != len(c.bytes) || trap[0] != 0x0f || trap[1] != 0x0b {
			t.Errorf("%s: trap % x", c.name, trap)
		}
		if m, err := insnLen(trap); err != nil || m != 2 {
			t.Errorf("%s: the trap does not start with a 2-byte ud2 (% x)", c.name, trap)
		}
	}
}

// TestEmulate sets the destination as the CPU does at each size, CF from
// success (and a zero destination on failure), clears the other arithmetic
// flags and moves rip past the original instruction.
func TestEmulate(t *testing.T) {
	const flagsIn = 0x202 | flagZF | flagSF | flagOF | flagPF | flagAF // IF, reserved bit 1 and arithmetic flags set
	for _, c := range []struct {
		name     string
		insn     []byte
		value    uint64
		ok       bool
		reg      int
		want     uint64
		wantCF   bool
		wantRIP  uint64
		regStart uint64
	}{
		{"64-bit", []byte{0x48, 0x0f, 0xc7, 0xf0}, 0x1122334455667788, true, trace.RAX, 0x1122334455667788, true, 0x1004, 0xdead},
		{"32-bit zero-extends", []byte{0x0f, 0xc7, 0xf2}, 0x1122334455667788, true, trace.RDX, 0x55667788, true, 0x1003, 0xffffffffffffffff},
		{"16-bit keeps the upper bits", []byte{0x66, 0x41, 0x0f, 0xc7, 0xf1}, 0xabcd1234, true, trace.R9, 0xffffffffffff1234, true, 0x1005, 0xffffffffffffffff},
		{"failure zeroes, CF clear", []byte{0x48, 0x0f, 0xc7, 0xf8}, 0x1234, false, trace.RAX, 0, false, 0x1004, 0xdead},
		{"16-bit failure zeroes the low bits only", []byte{0x66, 0x0f, 0xc7, 0xf8}, 0x1234, false, trace.RAX, 0xffffffffffff0000, false, 0x1004, 0xffffffffffffffff},
	} {
		s, ok := randInsn(c.insn, len(c.insn))
		if !ok {
			t.Fatalf("%s: % x not recognized", c.name, c.insn)
		}
		s.Addr = 0x1000
		var regs trace.Regs
		regs[trace.RIP], regs[trace.EFLAGS], regs[c.reg] = 0x1000, flagsIn, c.regStart
		regs[trace.RBX] = 0x77
		s.Emulate(&regs, c.value, c.ok)
		if regs[c.reg] != c.want {
			t.Errorf("%s: %s = %#x, want %#x", c.name, trace.RegNames[c.reg], regs[c.reg], c.want)
		}
		if cf := regs[trace.EFLAGS]&flagCF != 0; cf != c.wantCF {
			t.Errorf("%s: CF %v, want %v", c.name, cf, c.wantCF)
		}
		if rest := regs[trace.EFLAGS] &^ flagCF; rest != 0x202 {
			t.Errorf("%s: eflags %#x: the other arithmetic flags must be clear, IF kept", c.name, regs[trace.EFLAGS])
		}
		if regs[trace.RIP] != c.wantRIP || regs[trace.RBX] != 0x77 {
			t.Errorf("%s: rip %#x rbx %#x, want rip %#x and rbx untouched", c.name, regs[trace.RIP], regs[trace.RBX], c.wantRIP)
		}
	}
}
