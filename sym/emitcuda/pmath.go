package emitcuda

import (
	"bytes"
	"fmt"

	"github.com/gradsolve/gradsolve/pmath"
	"github.com/gradsolve/gradsolve/sym"
)

// The math functions of the problem language, as device functions.
//
// Each is pmath's function, ported operation by operation: the C++ is
// written from the function's straight-line form (pmath.Program, the
// same steps the machine code of package sym/tape runs for the CPU
// engines), one statement per step, every value a 64-bit register
// holding a double's bits. Executing the steps gives the Go function's
// bits for every argument (pmath's TestStepsMatchFunctions), so the
// device function does too, provided each step is the IEEE operation it
// names: the products are __dmul_rn (never fused into a multiply–add),
// the rounding step is rint/floor/ceil/trunc, the comparisons are
// IEEE's. TestMathFunctionsBits checks the compiled functions against
// package pmath on special values and random bit patterns.

// mathFunc is a math function of the problem language: its device
// function's name and its straight-line form.
type mathFunc struct {
	name  string
	steps *pmath.Program
}

// mathFuncs maps the operations that call a function to it.
var mathFuncs = map[sym.Op]mathFunc{
	sym.OpExp:   {"gs_exp", pmath.ExpSteps()},
	sym.OpLog:   {"gs_log", pmath.LogSteps()},
	sym.OpPow:   {"gs_pow", pmath.PowSteps()},
	sym.OpSin:   {"gs_sin", pmath.SinSteps()},
	sym.OpCos:   {"gs_cos", pmath.CosSteps()},
	sym.OpTan:   {"gs_tan", pmath.TanSteps()},
	sym.OpTanh:  {"gs_tanh", pmath.TanhSteps()},
	sym.OpAtan2: {"gs_atan2", pmath.Atan2Steps()},
	sym.OpMin:   {"gs_min", pmath.MinSteps()},
	sym.OpMax:   {"gs_max", pmath.MaxSteps()},
}

// maxInlineSteps is the most steps of a math function that is inlined
// where it is called (min and max); longer ones are device functions
// of their own.
const maxInlineSteps = 32

// mathOrder is the order in which the functions are written.
var mathOrder = []sym.Op{sym.OpExp, sym.OpLog, sym.OpPow, sym.OpSin, sym.OpCos, sym.OpTan, sym.OpTanh, sym.OpAtan2, sym.OpMin, sym.OpMax}

// writeMathFunc writes fn as a double device function and its float
// overload (the double function on the argument widened, the result
// rounded to float).
func writeMathFunc(w *bytes.Buffer, fn mathFunc) error {
	p := fn.steps
	if p.Args < 1 || p.Args > 2 || p.Regs > 16 || int(p.Result) >= p.Regs {
		return fmt.Errorf("emitcuda: %s: malformed straight-line form (%d arguments, %d registers, result %d)", fn.name, p.Args, p.Regs, p.Result)
	}
	gather := false
	for _, s := range p.Steps {
		gather = gather || s.Op == pmath.StepGather
	}
	if gather {
		// The table of a gather: the function's constants, in one array
		// (a gather's index is in its table's range for every argument).
		fmt.Fprintf(w, "__device__ const gs_u64 %s_k[%d] = {", fn.name, len(p.Consts))
		for i, c := range p.Consts {
			if i%4 == 0 {
				w.WriteString("\n   ")
			}
			fmt.Fprintf(w, " 0x%016xULL,", c)
		}
		w.WriteString("\n};\n\n")
	}
	params, call := "double x", "(double)x"
	if p.Args == 2 {
		params, call = "double x, double y", "(double)x, (double)y"
	}
	// A function of more than a few dozen steps is called, not inlined:
	// a kernel evaluates f at a dozen places or more (every stage, the
	// re-steps, the initial step), and f may call it many times; its
	// arguments are values, so a call costs no local memory.
	qual := "__device__ __forceinline__"
	if len(p.Steps) > maxInlineSteps {
		qual = "__device__ __noinline__"
	}
	fmt.Fprintf(w, "// %s is pmath's function in its straight-line form: %d steps.\n", fn.name, len(p.Steps))
	fmt.Fprintf(w, "%s double %s(%s) {\n", qual, fn.name, params)
	fmt.Fprintf(w, "  gs_u64 r0 = gs_u(x)")
	if p.Args == 2 {
		w.WriteString(", r1 = gs_u(y)")
	}
	for r := p.Args; r < p.Regs; r++ {
		fmt.Fprintf(w, ", r%d = 0", r)
	}
	w.WriteString(";\n")
	operand := func(b int8) string {
		if b < 0 {
			return fmt.Sprintf("0x%016xULL", p.Consts[-1-int(b)])
		}
		return fmt.Sprintf("r%d", b)
	}
	indent := "  "
	for k, s := range p.Steps {
		if s.Op == pmath.StepEnd {
			if indent == "  " {
				return fmt.Errorf("emitcuda: %s: step %d ends a block that was not opened", fn.name, k)
			}
			indent = "  "
			w.WriteString("  }\n")
			continue
		}
		if s.Op == pmath.StepIfAny {
			if indent != "  " {
				return fmt.Errorf("emitcuda: %s: step %d opens a block inside a block", fn.name, k)
			}
			fmt.Fprintf(w, "  if (r%d >> 63) {\n", s.C)
			indent = "    "
			continue
		}
		if s.Dst < int8(p.Args) || int(s.Dst) >= p.Regs || s.A < 0 || int(s.A) >= p.Regs || int(s.B) >= p.Regs || s.C < 0 || int(s.C) >= p.Regs {
			return fmt.Errorf("emitcuda: %s: step %d has a register out of range", fn.name, k)
		}
		a, b := fmt.Sprintf("r%d", s.A), operand(s.B)
		fa, fb := "gs_d("+a+")", "gs_d("+b+")"
		var x string
		switch s.Op {
		case pmath.StepLoad:
			x = b
		case pmath.StepAdd:
			x = fmt.Sprintf("gs_u(%s + %s)", fa, fb)
		case pmath.StepSub:
			x = fmt.Sprintf("gs_u(%s - %s)", fa, fb)
		case pmath.StepMul:
			x = fmt.Sprintf("gs_u(__dmul_rn(%s, %s))", fa, fb)
		case pmath.StepDiv:
			x = fmt.Sprintf("gs_u(%s / %s)", fa, fb)
		case pmath.StepMax:
			x = fmt.Sprintf("(%s > %s) ? %s : %s", fa, fb, a, b)
		case pmath.StepMin:
			x = fmt.Sprintf("(%s < %s) ? %s : %s", fa, fb, a, b)
		case pmath.StepAnd:
			x = fmt.Sprintf("%s & %s", a, b)
		case pmath.StepOr:
			x = fmt.Sprintf("%s | %s", a, b)
		case pmath.StepAndNot:
			x = fmt.Sprintf("~%s & %s", a, b)
		case pmath.StepXor:
			x = fmt.Sprintf("%s ^ %s", a, b)
		case pmath.StepIAdd:
			x = fmt.Sprintf("%s + %s", a, b)
		case pmath.StepISub:
			x = fmt.Sprintf("%s - %s", a, b)
		case pmath.StepShl:
			x = fmt.Sprintf("%s << %d", a, s.Imm)
		case pmath.StepShr:
			x = fmt.Sprintf("%s >> %d", a, s.Imm)
		case pmath.StepShlV:
			x = fmt.Sprintf("(%s < 64) ? %s << %s : 0ULL", b, a, b)
		case pmath.StepShrV:
			x = fmt.Sprintf("(%s < 64) ? %s >> %s : 0ULL", b, a, b)
		case pmath.StepLT:
			x = fmt.Sprintf("gs_mask(%s < %s)", fa, fb)
		case pmath.StepGE:
			x = fmt.Sprintf("gs_mask(%s >= %s)", fa, fb)
		case pmath.StepGT:
			x = fmt.Sprintf("gs_mask(%s > %s)", fa, fb)
		case pmath.StepEQ:
			x = fmt.Sprintf("gs_mask(%s == %s)", fa, fb)
		case pmath.StepNGE:
			x = fmt.Sprintf("gs_mask(!(%s >= %s))", fa, fb)
		case pmath.StepUnord:
			x = fmt.Sprintf("gs_mask(%s != %s || %s != %s)", fa, fa, fb, fb)
		case pmath.StepIEq:
			x = fmt.Sprintf("gs_mask(%s == %s)", a, b)
		case pmath.StepIGT:
			x = fmt.Sprintf("gs_mask((gs_i64)%s > (gs_i64)%s)", a, b)
		case pmath.StepBlend:
			x = fmt.Sprintf("(r%d >> 63) ? %s : %s", s.C, b, a)
		case pmath.StepRound:
			f := [...]string{"rint", "floor", "ceil", "trunc"}[min(int(s.Imm), 3)]
			x = fmt.Sprintf("gs_u(%s(%s))", f, fa)
		case pmath.StepGather:
			if s.B >= 0 {
				return fmt.Errorf("emitcuda: %s: step %d gathers from a register", fn.name, k)
			}
			x = fmt.Sprintf("%s_k[%d + (gs_i64)%s]", fn.name, -1-int(s.B), a)
		default:
			return fmt.Errorf("emitcuda: %s: step %d has the unknown operation %d", fn.name, k, s.Op)
		}
		fmt.Fprintf(w, "%sr%d = %s;\n", indent, s.Dst, x)
	}
	if indent != "  " {
		return fmt.Errorf("emitcuda: %s: a block is not closed", fn.name)
	}
	fmt.Fprintf(w, "  return gs_d(r%d);\n}\n", p.Result)
	fmt.Fprintf(w, "__device__ __forceinline__ float %s(%s) { return (float)%s(%s); }\n\n", fn.name, floatParams(p.Args), fn.name, call)
	return nil
}

func floatParams(args int) string {
	if args == 2 {
		return "float x, float y"
	}
	return "float x"
}
