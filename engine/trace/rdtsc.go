package trace

// Instruction lengths of the trapped counter reads.
const (
	rdtscLen  = 2 // 0f 31
	rdtscpLen = 3 // 0f 01 f9
)

// ApplyRdtsc sets regs as the trapped instruction of a KindRdtsc event did:
// edx:eax the counter (upper halves cleared), ecx TSC_AUX for rdtscp, rip past
// the instruction. Recording and replay share it so that they cannot disagree.
func (e *Event) ApplyRdtsc(regs *Regs) {
	regs[RAX] = e.Value & 0xffffffff
	regs[RDX] = e.Value >> 32
	if e.Flags&FlagRdtscp != 0 {
		regs[RCX] = e.Aux & 0xffffffff
		regs[RIP] += rdtscpLen
	} else {
		regs[RIP] += rdtscLen
	}
}
