package trace

// Instruction lengths of the trapped instructions.
const (
	rdtscLen  = 2 // 0f 31
	rdtscpLen = 3 // 0f 01 f9
	cpuidLen  = 2 // 0f a2
	xgetbvLen = 3 // 0f 01 d0
)

// TrapName names the instruction of a KindRdtsc, KindCpuid or KindRdrand event.
func (e *Event) TrapName() string {
	switch {
	case e.Kind == KindCpuid && e.Flags&FlagXgetbv != 0:
		return "xgetbv"
	case e.Kind == KindCpuid:
		return "cpuid"
	case e.Kind == KindRdrand && e.Flags&FlagRdseed != 0:
		return "rdseed"
	case e.Kind == KindRdrand:
		return "rdrand"
	case e.Flags&FlagRdtscp != 0:
		return "rdtscp"
	}
	return "rdtsc"
}

// TrapOutputs are the registers the trapped instruction of e writes
// without reading: what they held before it is dead, and may differ on
// another machine (glibc leaves XGETBV's answer, this CPU's, in rdx before
// a cpuid) without the program seeing it. nil for rdrand, whose
// destination the instruction names.
func (e *Event) TrapOutputs() []int {
	switch e.TrapName() {
	case "cpuid":
		return []int{RBX, RDX} // eax and ecx are its questions
	case "rdtsc", "xgetbv":
		return []int{RAX, RDX}
	case "rdtscp":
		return []int{RAX, RDX, RCX}
	}
	return nil
}

// ApplyTrap sets regs as the trapped instruction of a KindRdtsc or KindCpuid
// event did: the results in their registers (upper halves cleared) and rip
// past the instruction. Recording and replay share it so that they cannot
// disagree.
func (e *Event) ApplyTrap(regs *Regs) {
	if e.Kind == KindCpuid && e.Flags&FlagXgetbv != 0 {
		regs[RAX] = e.Value & 0xffffffff
		regs[RDX] = e.Value >> 32
		regs[RIP] += xgetbvLen
		return
	}
	if e.Kind == KindCpuid {
		regs[RAX] = e.Value & 0xffffffff
		regs[RBX] = e.Value >> 32
		regs[RCX] = e.Aux & 0xffffffff
		regs[RDX] = e.Aux >> 32
		regs[RIP] += cpuidLen
		return
	}
	regs[RAX] = e.Value & 0xffffffff
	regs[RDX] = e.Value >> 32
	if e.Flags&FlagRdtscp != 0 {
		regs[RCX] = e.Aux & 0xffffffff
		regs[RIP] += rdtscpLen
	} else {
		regs[RIP] += rdtscLen
	}
}
