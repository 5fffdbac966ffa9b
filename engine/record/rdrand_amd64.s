#include "textflag.h"

// func rdrand() (v uint64, ok bool)
TEXT ·rdrand(SB),NOSPLIT,$0-9
	RDRANDQ AX
	SETCS ok+8(FP)
	MOVQ AX, v+0(FP)
	RET

// func rdseed() (v uint64, ok bool)
TEXT ·rdseed(SB),NOSPLIT,$0-9
	RDSEEDQ AX
	SETCS ok+8(FP)
	MOVQ AX, v+0(FP)
	RET
