#include "textflag.h"

// func rdtsc() uint64
TEXT ·rdtsc(SB),NOSPLIT,$0-8
	RDTSC
	SHLQ $32, DX
	ORQ DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func rdtscp() (tsc uint64, aux uint32)
TEXT ·rdtscp(SB),NOSPLIT,$0-12
	RDTSCP
	SHLQ $32, DX
	ORQ DX, AX
	MOVQ AX, tsc+0(FP)
	MOVL CX, aux+8(FP)
	RET
