//go:build linux && amd64

#include "textflag.h"

// func jitCall(code uintptr, a *jitArgs)
//
// Loads the block addresses of a into the registers the machine code
// expects (DI r, SI y, DX p, R8 v, R9 w, R10 u, R11 out, CX out2) and
// calls it. The code uses only these, AX and X0–X14, and no stack
// beyond its return address.
TEXT ·jitCall(SB), NOSPLIT, $0-16
	MOVQ a+8(FP), BX
	MOVQ 0(BX), DI
	MOVQ 8(BX), SI
	MOVQ 16(BX), DX
	MOVQ 24(BX), R8
	MOVQ 32(BX), R9
	MOVQ 40(BX), R10
	MOVQ 48(BX), R11
	MOVQ 56(BX), CX
	MOVQ code+0(FP), AX
	CALL AX
	RET

// func jitCallF(code uintptr, r, y, p, out, out2 unsafe.Pointer)
TEXT ·jitCallF(SB), NOSPLIT, $0-48
	MOVQ r+8(FP), DI
	MOVQ y+16(FP), SI
	MOVQ p+24(FP), DX
	MOVQ out+32(FP), R11
	MOVQ out2+40(FP), CX
	MOVQ code+0(FP), AX
	CALL AX
	RET
