package insn

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name      string
		code      []byte
		steppable bool
		movable   bool
		len       int
		relOff    int
	}{
		{"mov eax,[rip+d]", []byte{0x8b, 0x05, 0xe0, 0x2e, 0x00, 0x00}, true, true, 6, 2},
		{"mov dword [rip+d],imm", []byte{0xc7, 0x05, 0x10, 0, 0, 0, 5, 0, 0, 0}, true, true, 10, 2},
		{"lea rdi,[rip+d]", []byte{0x48, 0x8d, 0x3d, 0x00, 0x01, 0x00, 0x00}, true, true, 7, 3},
		{"cmp dword [rbp-4],imm32", []byte{0x81, 0x7d, 0xfc, 0x00, 0x10, 0x00, 0x00}, true, true, 7, -1},
		{"movabs rax,imm64", []byte{0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, true, true, 10, -1},
		{"cmp rax,imm32", []byte{0x48, 0x3d, 0x78, 0x56, 0x34, 0x12}, true, true, 6, -1},
		{"add eax,1 (short)", []byte{0x83, 0xc0, 0x01, 0x90, 0x90, 0x90}, true, false, 0, 0},
		{"jne rel32", []byte{0x0f, 0x85, 0, 0, 0, 0}, true, false, 0, 0},
		{"call rel32", []byte{0xe8, 0, 0, 0, 0}, true, false, 0, 0},
		{"jmp rel32", []byte{0xe9, 0, 0, 0, 0}, true, false, 0, 0},
		{"call [rip+d]", []byte{0xff, 0x15, 0, 0, 0, 0}, true, false, 0, 0},
		{"syscall", []byte{0x0f, 0x05, 0x90, 0x90, 0x90}, false, false, 0, 0},
		{"int 0x80", []byte{0xcd, 0x80, 0x90, 0x90, 0x90}, false, false, 0, 0},
		{"rdtsc", []byte{0x0f, 0x31, 0x90, 0x90, 0x90}, false, false, 0, 0},
		{"cpuid", []byte{0x0f, 0xa2, 0x90, 0x90, 0x90}, false, false, 0, 0},
		{"pushfq", []byte{0x9c, 0x90, 0x90, 0x90, 0x90}, false, false, 0, 0},
		{"int3", []byte{0xcc, 0x90, 0x90, 0x90, 0x90}, false, false, 0, 0},
		{"ud2", []byte{0x0f, 0x0b, 0x90, 0x90, 0x90}, false, false, 0, 0},
		{"vmovdqu ymm0,[rax+d32]", []byte{0xc5, 0xfe, 0x6f, 0x80, 0, 1, 0, 0}, true, false, 0, 0},
		{"empty", nil, false, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Steppable(tt.code); got != tt.steppable {
				t.Errorf("Steppable = %v, want %v", got, tt.steppable)
			}
			m, ok := CanMove(tt.code)
			if ok != tt.movable {
				t.Fatalf("CanMove = %v, want %v", ok, tt.movable)
			}
			if ok && (m.Len != tt.len || m.RelOff != tt.relOff) {
				t.Errorf("CanMove = %+v, want len %d relOff %d", m, tt.len, tt.relOff)
			}
		})
	}
}

func TestMove(t *testing.T) {
	code := []byte{0x8b, 0x05, 0x10, 0x00, 0x00, 0x00} // mov eax,[rip+0x10]
	m, ok := CanMove(code)
	if !ok {
		t.Fatal("not movable")
	}
	const from = 0x401000
	tests := []struct {
		name string
		to   uint64
		ok   bool
	}{
		{"below", from - 0x10000, true},
		{"above", from + 0x7000_0000, true},
		{"out of reach", from + 0x1_0000_0000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := Move(code, m, from, tt.to)
			if ok != tt.ok {
				t.Fatalf("Move ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if got, want := Target(out, m, tt.to), Target(code, m, from); got != want {
				t.Errorf("moved operand points to %#x, want %#x", got, want)
			}
			if !bytes.Equal(out[:2], code[:2]) {
				t.Errorf("opcode changed: % x", out)
			}
		})
	}
	if b, ok := Jump(0x1000, 0x2000); !ok || !bytes.Equal(b, []byte{0xe9, 0xfb, 0x0f, 0, 0}) {
		t.Errorf("Jump = % x %v", b, ok)
	}
	if _, ok := Jump(0x1000, 0x2_0000_0000); ok {
		t.Error("Jump out of reach accepted")
	}
}

func TestPlanPatch(t *testing.T) {
	// -O0 loop body: mov rax,[rbp-8]; add rax,1; mov [rbp-8],rax; jmp
	loop := []byte{0x48, 0x8b, 0x45, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0x48, 0x89, 0x45, 0xf8, 0xeb, 0xf2}
	tests := []struct {
		name   string
		code   []byte
		at     uint64
		ok     bool
		len    int
		bounds []int
	}{
		{"one long instruction", []byte{0x8b, 0x05, 0xe0, 0x2e, 0x00, 0x00}, 0x401000, true, 6, nil},
		{"two 4-byte instructions", loop, 0x401000, true, 8, []int{4}},
		{"ends in a branch", loop[8:], 0x401008, false, 0, nil},
		{"starts with a branch", loop[12:], 0x40100c, false, 0, nil},
		// push rbx; mov rbx,rsp; nop: a boundary at 1 falls on the low
		// byte of the displacement, which at sets: -(0x401000+5) ends in
		// 0xfb (no trap), -(0x40102f+5) in 0xcc (int3).
		{"boundary at 1 that cannot trap", []byte{0x53, 0x48, 0x89, 0xe3, 0x90, 0x90}, 0x401000, false, 0, nil},
		{"boundary at 1 that can trap", []byte{0x53, 0x48, 0x89, 0xe3, 0x90, 0x90}, 0x40102f, true, 5, []int{1, 4}},
		// push rbp; mov rbp,rsp: no branch goes to a frame prologue's
		// second instruction.
		{"frame prologue", []byte{0x55, 0x48, 0x89, 0xe5, 0x90, 0x90}, 0x401000, true, 5, []int{1, 4}},
		// mov eax,[rbp-4]; pop rbp; ret: a return completes a run (its
		// boundaries at 3 and 4 fall on displacement bytes the page sets).
		{"ends with ret", []byte{0x8b, 0x45, 0xfc, 0x5d, 0xc3, 0x90}, 0x401000, true, 5, []int{3, 4}},
		{"ret too early", []byte{0x5d, 0xc3, 0x90, 0x90, 0x90, 0x90}, 0x401000, false, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := PlanPatch(tt.code, tt.at)
			if ok != tt.ok {
				t.Fatalf("PlanPatch = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if p.Len != tt.len || !slices.Equal(p.Boundaries(), tt.bounds) {
				t.Errorf("PlanPatch = len %d boundaries %v, want %d %v", p.Len, p.Boundaries(), tt.len, tt.bounds)
			}
		})
	}
}

func TestRepString(t *testing.T) {
	tests := []struct {
		name string
		code []byte
		want bool
	}{
		{"rep stosq", []byte{0xf3, 0x48, 0xab, 0xe9, 0, 0, 0, 0}, true},
		{"rep movsb", []byte{0xf3, 0xa4, 0x90}, true},
		{"repne scasb", []byte{0xf2, 0xae, 0x90}, true},
		{"repe cmpsb", []byte{0xf3, 0xa6, 0x90}, true},
		{"rep stosd with addr32", []byte{0x67, 0xf3, 0xab, 0x90}, true},
		{"stosq without rep", []byte{0x48, 0xab, 0x90}, false},
		{"movsb without rep", []byte{0xa4, 0x90}, false},
		{"pause (f3 90)", []byte{0xf3, 0x90}, false},
		{"movss (f3 0f 10)", []byte{0xf3, 0x0f, 0x10, 0xc1}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RepString(tt.code); got != tt.want {
				t.Errorf("RepString = %v, want %v", got, tt.want)
			}
		})
	}
	// A rep string instruction is never the start of a patch, even with
	// movable instructions after it (a thread stopped inside it has its rip).
	code := []byte{0xf3, 0x48, 0xab, 0x48, 0x8b, 0x05, 0, 0, 0, 0, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90}
	if _, ok := PlanPatch(code, 0x401000); ok {
		t.Errorf("PlanPatch accepted a run starting with rep stosq")
	}
}

func TestFlow(t *testing.T) {
	const at = 0x401000
	for _, c := range []struct {
		name         string
		code         []byte
		next, target uint64
	}{
		{"add", []byte{0x48, 0x83, 0xc3, 0x01}, at + 4, 0},
		{"jle back", []byte{0x7e, 0xe0}, at + 2, at + 2 - 0x20},
		{"jmp", []byte{0xeb, 0x05}, 0, at + 7},
		{"jmp rel32", []byte{0xe9, 0x00, 0x01, 0x00, 0x00}, 0, at + 5 + 0x100},
		{"call", []byte{0xe8, 0x10, 0x00, 0x00, 0x00}, at + 5, 0},
		{"ret", []byte{0xc3}, 0, 0},
	} {
		next, target, ok := Flow(c.code, at)
		if !ok || next != c.next || target != c.target {
			t.Errorf("%s: next %#x target %#x ok %v; want %#x %#x", c.name, next, target, ok, c.next, c.target)
		}
	}
}

func TestCallBefore(t *testing.T) {
	for _, c := range []struct {
		name   string
		before []byte
		want   int // the call's length; 0 for none or ambiguous
		isCall bool
	}{
		{"call rel32", []byte{0x90, 0x90, 0xe8, 0x10, 0x00, 0x00, 0x00}, 5, true},
		{"call rax", []byte{0x90, 0xff, 0xd0}, 2, true},
		{"call [rip+x]", []byte{0x90, 0xff, 0x15, 0x10, 0x20, 0x00, 0x00}, 6, true},
		{"call r8 (or rax)", []byte{0x41, 0xff, 0xd0}, 0, true},
		{"mov", []byte{0x48, 0x89, 0xc3}, 0, false},
		{"data", []byte{0x00, 0x00, 0x00, 0x00}, 0, false},
	} {
		if got := CallLenBefore(c.before); got != c.want {
			t.Errorf("%s: call of %d bytes, want %d", c.name, got, c.want)
		}
		if got := CallBefore(c.before); got != c.isCall {
			t.Errorf("%s: %v, want %v", c.name, got, c.isCall)
		}
	}
}

// TestMoveBranches: a counter's run may hold relative branches; their
// copies, re-encoded with 32-bit displacements, go where the originals
// went, and a call's copy pushes the original return address.
func TestMoveBranches(t *testing.T) {
	const from, to = 0x401000, 0x7000_0000
	tests := []struct {
		name   string
		code   []byte
		kind   BranchKind
		target uint64
	}{
		{"jle rel8", []byte{0x7e, 0x2c}, BranchJcc, from + 2 + 0x2c},
		{"jne rel32", []byte{0x0f, 0x85, 0x10, 0xff, 0xff, 0xff}, BranchJcc, from + 6 - 0xf0},
		{"jmp rel8", []byte{0xeb, 0xf0}, BranchJmp, from + 2 - 0x10},
		{"call rel32", []byte{0xe8, 0x00, 0x01, 0x00, 0x00}, BranchCall, from + 5 + 0x100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, target, ok := branch(tt.code, from)
			if !ok || m.Branch != tt.kind || target != tt.target || m.Len != len(tt.code) {
				t.Fatalf("branch = %+v %#x %v, want kind %d to %#x", m, target, ok, tt.kind, tt.target)
			}
			out, ok := Move(tt.code, m, from, to)
			if !ok {
				t.Fatal("Move failed")
			}
			end := to + uint64(len(out))
			if got := end + uint64(int64(int32(binary.LittleEndian.Uint32(out[len(out)-4:])))); got != tt.target {
				t.Errorf("the copy goes to %#x, want %#x (% x)", got, tt.target, out)
			}
			switch tt.kind {
			case BranchJcc:
				cc := tt.code[0] & 0xf
				if tt.code[0] == 0x0f {
					cc = tt.code[1] & 0xf
				}
				if out[0] != 0x0f || out[1] != 0x80|cc {
					t.Errorf("condition changed: % x from % x", out, tt.code)
				}
			case BranchCall:
				lo := binary.LittleEndian.Uint32(out[8:])
				hi := binary.LittleEndian.Uint32(out[16:])
				if ret := uint64(hi)<<32 | uint64(lo); ret != from+5 {
					t.Errorf("the copy pushes %#x, want the return address %#x", ret, from+5)
				}
			}
		})
	}
	// test; jle; xor: a run with a conditional jump inside; a call ends one.
	if p, ok := PlanPatchBranches([]byte{0x85, 0xff, 0x7e, 0x2c, 0x45, 0x31, 0xc0, 0x90}, 0x401000); !ok || p.Len != 7 {
		t.Errorf("PlanPatchBranches(test; jle; xor) = %+v %v, want a run of 7", p, ok)
	}
	if _, ok := PlanPatchBranches([]byte{0xe8, 0, 1, 0, 0, 0x90}, 0x401000); !ok {
		t.Error("PlanPatchBranches(call) refused")
	}
	if _, ok := PlanPatchBranches([]byte{0xeb, 0x10, 0x90, 0x90, 0x90, 0x90}, 0x401000); ok {
		t.Error("PlanPatchBranches accepted a run going on after a jump")
	}
	if _, ok := PlanPatch([]byte{0x85, 0xff, 0x7e, 0x2c, 0x45, 0x31, 0xc0, 0x90}, 0x401000); ok {
		t.Error("PlanPatch (preemption searches) accepted a branch")
	}
}
