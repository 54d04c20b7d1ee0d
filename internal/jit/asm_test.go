package jit

import (
	"bytes"
	"testing"
	"unsafe"
)

// Each encoding against the bytes GNU objdump reads back as the
// instruction in the comment.
func TestEncodings(t *testing.T) {
	for _, c := range []struct {
		asm  string
		emit func(a *Asm)
		want []byte
	}{
		{"movsd 0x8(%rsi),%xmm0", func(a *Asm) { a.SSEMem(PSD, OpLoad, 0, Mem{SI, 8}) }, []byte{0xf2, 0x0f, 0x10, 0x46, 0x08}},
		{"movsd 0x140(%rdi),%xmm0", func(a *Asm) { a.SSEMem(PSD, OpLoad, 0, Mem{DI, 0x140}) }, []byte{0xf2, 0x0f, 0x10, 0x87, 0x40, 0x01, 0x00, 0x00}},
		{"movsd 0x8(%rsp),%xmm1", func(a *Asm) { a.SSEMem(PSD, OpLoad, 1, Mem{SP, 8}) }, []byte{0xf2, 0x0f, 0x10, 0x4c, 0x24, 0x08}},
		{"movsd %xmm2,0x0(%r11)", func(a *Asm) { a.SSEMem(PSD, OpSt, 2, Mem{R11, 0}) }, []byte{0xf2, 0x41, 0x0f, 0x11, 0x53, 0x00}},
		{"mulsd 0x10(%rdx),%xmm9", func(a *Asm) { a.SSEMem(PSD, OpMul, 9, Mem{DX, 16}) }, []byte{0xf2, 0x44, 0x0f, 0x59, 0x4a, 0x10}},
		{"movapd %xmm0,%xmm1", func(a *Asm) { a.SSE(PPD, OpMov, 1, 0) }, []byte{0x66, 0x0f, 0x28, 0xc8}},
		{"xorpd %xmm14,%xmm1", func(a *Asm) { a.SSE(PPD, OpXor, 1, 14) }, []byte{0x66, 0x41, 0x0f, 0x57, 0xce}},
		{"movabs $0x8000000000000000,%r12", func(a *Asm) { a.MovImm64(R12, 1<<63) }, []byte{0x49, 0xbc, 0, 0, 0, 0, 0, 0, 0, 0x80}},
		{"movq %r12,%xmm14", func(a *Asm) { a.MovqToX(14, R12) }, []byte{0x66, 0x4d, 0x0f, 0x6e, 0xf4}},
		{"vmovq %r12,%xmm13", func(a *Asm) { a.VMovqToX(13, R12) }, []byte{0xc4, 0x41, 0xf9, 0x6e, 0xec}},
		{"lea 0x60(%rsi),%rsi", func(a *Asm) { a.Lea(SI, Mem{SI, 0x60}) }, []byte{0x48, 0x8d, 0x76, 0x60}},
		{"lea 0x1000(%r11),%r11", func(a *Asm) { a.Lea(R11, Mem{R11, 0x1000}) }, []byte{0x4d, 0x8d, 0x9b, 0x00, 0x10, 0x00, 0x00}},
		{"vmovq %rax,%xmm1", func(a *Asm) { a.VMovqToX(1, AX) }, []byte{0xc4, 0xe1, 0xf9, 0x6e, 0xc8}},
		{"{vex3} vmovq %r12,%xmm1", func(a *Asm) { a.VMovqToX(1, R12) }, []byte{0xc4, 0xc1, 0xf9, 0x6e, 0xcc}},
		{"mov 0x8(%rdx),%rax", func(a *Asm) { a.Load64(AX, Mem{DX, 8}) }, []byte{0x48, 0x8b, 0x42, 0x08}},
		{"jmp *%r12", func(a *Asm) { a.JmpReg(R12) }, []byte{0x41, 0xff, 0xe4}},
		{"vbroadcastsd 0x0(%r11),%ymm14", func(a *Asm) { a.VRM(VexPP66, Map0F38, true, 0x19, 14, 0, Mem{R11, 0}) }, []byte{0xc4, 0x42, 0x7d, 0x19, 0x73, 0x00}},
		{"vmulpd 0x0(%rdi),%ymm2,%ymm0", func(a *Asm) { a.VRM(VexPP66, Map0F, true, OpMul, 0, 2, Mem{DI, 0}) }, []byte{0xc4, 0xe1, 0x6d, 0x59, 0x47, 0x00}},
		{"vaddpd %ymm1,%ymm0,%ymm0", func(a *Asm) { a.VRR(VexPP66, Map0F, true, OpAdd, 0, 0, 1) }, []byte{0xc4, 0xe1, 0x7d, 0x58, 0xc1}},
		{"vmulsd 0x20(%rdi),%xmm2,%xmm0", func(a *Asm) { a.VRM(VexPPF2, Map0F, false, OpMul, 0, 2, Mem{DI, 0x20}) }, []byte{0xc4, 0xe1, 0x6b, 0x59, 0x47, 0x20}},
		{"vmovupd %ymm0,0x0(%rdx)", func(a *Asm) { a.VRM(VexPP66, Map0F, true, OpSt, 0, 0, Mem{DX, 0}) }, []byte{0xc4, 0xe1, 0x7d, 0x11, 0x42, 0x00}},
		{"vzeroupper", func(a *Asm) { a.Vzeroupper() }, []byte{0xc5, 0xf8, 0x77}},
		{"mov %rbx,%r13", func(a *Asm) { a.MovRR(R13, BX) }, []byte{0x49, 0x89, 0xdd}},
		{"ret", func(a *Asm) { a.Ret() }, []byte{0xc3}},
		{"vptest %ymm15,%ymm15", func(a *Asm) { a.VPtest(15, 15) }, []byte{0xc4, 0x42, 0x7d, 0x17, 0xff}},
		{"vptest %ymm2,%ymm1", func(a *Asm) { a.VPtest(1, 2) }, []byte{0xc4, 0xe2, 0x7d, 0x17, 0xca}},
		{"decq 0x1f8(%r14)", func(a *Asm) { a.DecMem64(Mem{R14, 0x1f8}) }, []byte{0x49, 0xff, 0x8e, 0xf8, 0x01, 0x00, 0x00}},
		{"decq 0x8(%rax)", func(a *Asm) { a.DecMem64(Mem{AX, 8}) }, []byte{0x48, 0xff, 0x48, 0x08}},
		{"jnz .+6 (to its own end)", func(a *Asm) { a.Jnz32(6) }, []byte{0x0f, 0x85, 0, 0, 0, 0}},
		{"jnz .-10", func(a *Asm) { a.Jnz32(-1); a.Patch32(2, -4) }, []byte{0x0f, 0x85, 0xf6, 0xff, 0xff, 0xff}},
		{"jz .+6 (to its own end)", func(a *Asm) { a.Jz32(6) }, []byte{0x0f, 0x84, 0, 0, 0, 0}},
		{"vptest %ymm15,%ymm15", func(a *Asm) { a.VPtest(15, 15) }, []byte{0xc4, 0x42, 0x7d, 0x17, 0xff}},
		{"vptest %ymm2,%ymm1", func(a *Asm) { a.VPtest(1, 2) }, []byte{0xc4, 0xe2, 0x7d, 0x17, 0xca}},
		{"decq 0x1f8(%r14)", func(a *Asm) { a.DecMem64(Mem{R14, 0x1f8}) }, []byte{0x49, 0xff, 0x8e, 0xf8, 0x01, 0x00, 0x00}},
		{"decq 0x8(%rax)", func(a *Asm) { a.DecMem64(Mem{AX, 8}) }, []byte{0x48, 0xff, 0x48, 0x08}},
		{"jnz .+6 (to its own end)", func(a *Asm) { a.Jnz32(6) }, []byte{0x0f, 0x85, 0, 0, 0, 0}},
		{"jnz .-10", func(a *Asm) { a.Jnz32(-1); a.Patch32(2, -4) }, []byte{0x0f, 0x85, 0xf6, 0xff, 0xff, 0xff}},
		// The moves of single lanes (the round tails' gathers and scatters).
		{"vmovsd 0x8(%rdx),%xmm12", func(a *Asm) { a.VMovsdLoad(12, Mem{DX, 8}) }, []byte{0xc4, 0x61, 0x7b, 0x10, 0x62, 0x08}},
		{"vmovsd 0x0(%r12),%xmm1", func(a *Asm) { a.VMovsdLoad(1, Mem{R12, 0}) }, []byte{0xc4, 0xc1, 0x7b, 0x10, 0x4c, 0x24, 0x00}},
		{"vmovhpd 0x10(%r10),%xmm12,%xmm12", func(a *Asm) { a.VMovhpdLoad(12, 12, Mem{R10, 16}) }, []byte{0xc4, 0x41, 0x19, 0x16, 0x62, 0x10}},
		{"vmovsd %xmm3,0x18(%r11)", func(a *Asm) { a.VMovsdStore(Mem{R11, 0x18}, 3) }, []byte{0xc4, 0xc1, 0x7b, 0x11, 0x5b, 0x18}},
		{"vmovhpd %xmm13,0x0(%rdx)", func(a *Asm) { a.VMovhpdStore(Mem{DX, 0}, 13) }, []byte{0xc4, 0x61, 0x79, 0x17, 0x6a, 0x00}},
		{"vinsertf128 $0x1,%xmm13,%ymm12,%ymm12", func(a *Asm) { a.VInsertHigh(12, 12, 13) }, []byte{0xc4, 0x43, 0x1d, 0x18, 0xe5, 0x01}},
		{"vextractf128 $0x1,%ymm4,%xmm13", func(a *Asm) { a.VExtractHigh(13, 4) }, []byte{0xc4, 0xc3, 0x7d, 0x19, 0xe5, 0x01}},
		{"vmovq %xmm12,%rdx", func(a *Asm) { a.VMovqFromX(DX, 12) }, []byte{0xc4, 0x61, 0xf9, 0x7e, 0xe2}},
		{"vmovq %xmm1,%r12", func(a *Asm) { a.VMovqFromX(R12, 1) }, []byte{0xc4, 0xc1, 0xf9, 0x7e, 0xcc}},
		{"vpextrq $0x1,%xmm12,%r10", func(a *Asm) { a.VPextrq1(R10, 12) }, []byte{0xc4, 0x43, 0xf9, 0x16, 0xe2, 0x01}},
		{"vpextrq $0x1,%xmm2,%rax", func(a *Asm) { a.VPextrq1(AX, 2) }, []byte{0xc4, 0xe3, 0xf9, 0x16, 0xd0, 0x01}},
		// The forms of the lane controller (control.NextLanes), as GNU as
		// assembles them with {vex3} (and {disp8} for a zero displacement).
		{"vminpd %ymm11,%ymm8,%ymm1", func(a *Asm) { a.VRR(VexPP66, Map0F, true, OpMin, 1, 8, 11) }, []byte{0xc4, 0xc1, 0x3d, 0x5d, 0xcb}},
		{"vmaxpd 0x20(%rcx),%ymm2,%ymm10", func(a *Asm) { a.VRM(VexPP66, Map0F, true, OpMax, 10, 2, Mem{CX, 0x20}) }, []byte{0xc4, 0x61, 0x6d, 0x5f, 0x51, 0x20}},
		{"vmovmskpd %ymm9,%eax", func(a *Asm) { a.VRR(VexPP66, Map0F, true, OpMovmsk, AX, 0, 9) }, []byte{0xc4, 0xc1, 0x7d, 0x50, 0xc1}},
		{"vpand 0x40(%rcx),%ymm0,%ymm0", func(a *Asm) { a.VRM(VexPP66, Map0F, true, OpPAnd, 0, 0, Mem{CX, 0x40}) }, []byte{0xc4, 0xe1, 0x7d, 0xdb, 0x41, 0x40}},
		{"vpor %ymm12,%ymm3,%ymm9", func(a *Asm) { a.VRR(VexPP66, Map0F, true, OpPOr, 9, 3, 12) }, []byte{0xc4, 0x41, 0x65, 0xeb, 0xcc}},
		{"vpcmpeqq 0x0(%rcx),%ymm0,%ymm1", func(a *Asm) { a.VRM(VexPP66, Map0F38, true, OpPCmpEqQ, 1, 0, Mem{CX, 0}) }, []byte{0xc4, 0xe2, 0x7d, 0x29, 0x49, 0x00}},
		{"vpbroadcastq 0x0(%r10),%ymm0", func(a *Asm) { a.VRM(VexPP66, Map0F38, true, OpBcastQ, 0, 0, Mem{R10, 0}) }, []byte{0xc4, 0xc2, 0x7d, 0x59, 0x42, 0x00}},
		{"vroundpd $0xb,%ymm3,%ymm12", func(a *Asm) { a.VRRI(VexPP66, Map0F3A, true, OpRound, 12, 0, 3, 0x0b) }, []byte{0xc4, 0x63, 0x7d, 0x09, 0xe3, 0x0b}},
		{"vcmpgepd 0x120(%rcx),%ymm4,%ymm13", func(a *Asm) { a.VRMI(VexPP66, Map0F, true, OpCmp, 13, 4, Mem{CX, 0x120}, 0x0d) }, []byte{0xc4, 0x61, 0x5d, 0xc2, 0xa9, 0x20, 0x01, 0x00, 0x00, 0x0d}},
		{"vcmpunordpd %ymm10,%ymm10,%ymm2", func(a *Asm) { a.VRRI(VexPP66, Map0F, true, OpCmp, 2, 10, 10, 3) }, []byte{0xc4, 0xc1, 0x2d, 0xc2, 0xd2, 0x03}},
		{"vblendvpd %ymm12,%ymm4,%ymm3,%ymm11", func(a *Asm) { a.VBlendv(11, 3, 4, 12) }, []byte{0xc4, 0x63, 0x65, 0x4b, 0xdc, 0xc0}},
		{"vblendvpd %ymm2,%ymm9,%ymm11,%ymm3", func(a *Asm) { a.VBlendv(3, 11, 9, 2) }, []byte{0xc4, 0xc3, 0x25, 0x4b, 0xd9, 0x20}},
		{"vpsrlq $0x34,%ymm0,%ymm2", func(a *Asm) { a.VShiftQ(ShiftRightQ, 2, 0, 52) }, []byte{0xc4, 0xe1, 0x6d, 0x73, 0xd0, 0x34}},
		{"vpsllq $0x34,%ymm12,%ymm9", func(a *Asm) { a.VShiftQ(ShiftLeftQ, 9, 12, 52) }, []byte{0xc4, 0xc1, 0x35, 0x73, 0xf4, 0x34}},
		{"mov %rax,0x8(%r10)", func(a *Asm) { a.Store64(Mem{R10, 8}, AX) }, []byte{0x49, 0x89, 0x42, 0x08}},
		{"mov %rax,0x10(%rsp)", func(a *Asm) { a.Store64(Mem{SP, 0x10}, AX) }, []byte{0x48, 0x89, 0x44, 0x24, 0x10}},
	} {
		var a Asm
		c.emit(&a)
		if !bytes.Equal(a.B, c.want) {
			t.Errorf("%s: % x, want % x", c.asm, a.B, c.want)
		}
	}
}

func ptr(x []float64) unsafe.Pointer { return unsafe.Pointer(&x[0]) }

// Code runs through both trampolines with the registers they document,
// and AVX code where HasAVX says so.
func TestCall(t *testing.T) {
	if !Enabled() {
		t.Skip("no machine code here")
	}
	// out = y + p, from SI, DX into R11.
	var a Asm
	a.SSEMem(PSD, OpLoad, 0, Mem{SI, 0})
	a.SSEMem(PSD, OpAdd, 0, Mem{DX, 0})
	a.SSEMem(PSD, OpSt, 0, Mem{R11, 0})
	a.Ret()
	// out2 = r·y·p from DI, SI, DX into CX (Call5: a0 DI, a1 SI, a2 DX, a3 R11, a4 CX).
	second := len(a.B)
	a.SSEMem(PSD, OpLoad, 1, Mem{DI, 0})
	a.SSEMem(PSD, OpMul, 1, Mem{SI, 0})
	a.SSEMem(PSD, OpMul, 1, Mem{DX, 0})
	a.SSEMem(PSD, OpSt, 1, Mem{CX, 0})
	a.SSEMem(PSD, OpSt, 1, Mem{R11, 0})
	a.Ret()
	code, err := NewCode(a.B)
	if err != nil {
		t.Skipf("no executable memory (the packages fall back to Go): %v", err)
	}
	r, y, p, out, out2 := []float64{2}, []float64{3}, []float64{5}, []float64{0}, []float64{0}
	args := [8]unsafe.Pointer{ptr(r), ptr(y), ptr(p), nil, nil, nil, ptr(out), ptr(out2)}
	Call(code.Addr(0), &args)
	if out[0] != 8 {
		t.Errorf("Call: y + p = %v, want 8", out[0])
	}
	Call5(code.Addr(second), ptr(r), ptr(y), ptr(p), ptr(out), ptr(out2))
	if out[0] != 30 || out2[0] != 30 {
		t.Errorf("Call5: r·y·p = %v, %v, want 30", out[0], out2[0])
	}
	if !HasAVX() {
		return
	}
	// Four copies of y into out4 (DI, SI from Call's arguments).
	var v Asm
	v.VRM(VexPP66, Map0F38, true, 0x19, 0, 0, Mem{SI, 0})
	v.VRM(VexPP66, Map0F, true, OpSt, 0, 0, Mem{R11, 0})
	v.Vzeroupper()
	v.Ret()
	vc, err := NewCode(v.B)
	if err != nil {
		t.Fatal(err)
	}
	out4 := make([]float64, 4)
	args[6] = ptr(out4)
	Call(vc.Addr(0), &args)
	for i, x := range out4 {
		if x != 3 {
			t.Errorf("AVX broadcast: out[%d] = %v, want 3", i, x)
		}
	}
}
