//go:build linux && amd64

#include "textflag.h"

// func Call(entry uintptr, args *[8]unsafe.Pointer)
TEXT ·Call(SB), NOSPLIT, $0-16
	MOVQ args+8(FP), BX
	MOVQ 0(BX), DI
	MOVQ 8(BX), SI
	MOVQ 16(BX), DX
	MOVQ 24(BX), R8
	MOVQ 32(BX), R9
	MOVQ 40(BX), R10
	MOVQ 48(BX), R11
	MOVQ 56(BX), CX
	MOVQ entry+0(FP), AX
	CALL AX
	RET

// func Call16(entry uintptr, args *[16]unsafe.Pointer)
// Call's frame and arguments are the same: Call leaves args in BX.
TEXT ·Call16(SB), NOSPLIT, $0-16
	JMP ·Call(SB)

// func Call5(entry uintptr, a0, a1, a2, a3, a4 unsafe.Pointer)
TEXT ·Call5(SB), NOSPLIT, $0-48
	MOVQ a0+8(FP), DI
	MOVQ a1+16(FP), SI
	MOVQ a2+24(FP), DX
	MOVQ a3+32(FP), R11
	MOVQ a4+40(FP), CX
	MOVQ entry+0(FP), AX
	CALL AX
	RET

// func cpuid(eax, ecx uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eax+0(FP), AX
	MOVL ecx+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET
