package emitcuda

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// The tape's programs as device functions.
//
// A program becomes a function template over the floating-point type
// real (double or float): one const local per instruction, in the
// program's order (static single assignment: s<k> holds instruction
// k's result), the inputs read from the argument arrays, the constants
// written as exact hexadecimal literals, and the outputs stored at the
// end. Each instruction is the operation sym.Eval applies: + − ÷ as
// C++'s IEEE operators, every product gs_mul (rounded on its own, never
// fused into a multiply–add), √, |x|, floor and ceil as the exact
// library functions, the other math functions as pmath's (pmath.go),
// and the comparisons, select and sign as conditional expressions with
// sym.Eval's cases. In double the function therefore gives the tape's
// results bit for bit; in float every operation is float's, on the
// constants rounded to float, and the math functions are the double
// ones on the widened argument, rounded.

// The input blocks of a register file, in Layout order.
const (
	blockT = iota
	blockY
	blockP
	blockV
	blockW
	blockU
	numBlocks
)

// programFunc describes one emitted function.
type programFunc struct {
	name   string            // the function's name
	doc    string            // what it computes, for its comment
	pg     *tape.Program     // the program
	inputs [numBlocks]string // the argument holding each input block; "" where the function takes none
	out    string            // the output array
}

// literal returns a C++ expression of type real whose value is x: a
// hexadecimal literal, exact in double; the bits themselves for NaNs
// (with their payload), infinities and −0.
func literal(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || (x == 0 && math.Signbit(x)) {
		return fmt.Sprintf("gs_bits<real>(0x%016xULL)", math.Float64bits(x))
	}
	return "real(" + strconv.FormatFloat(x, 'x', -1, 64) + ")"
}

// usedMath adds to used the math functions pg's instructions call.
func usedMath(pg *tape.Program, used map[sym.Op]bool) {
	for _, in := range pg.Code() {
		if _, ok := mathFuncs[in.Op]; ok {
			used[in.Op] = true
		}
	}
}

// writeProgram writes f as a device function template and a functor
// type <name>_fn that calls it (the kernels take the right-hand side as
// a type).
func writeProgram(w *bytes.Buffer, f programFunc) error {
	pg := f.pg
	lay := pg.Layout()
	nIn := lay.NumInputs()
	consts := pg.Consts()
	nFixed := nIn + int32(len(consts))
	starts := [numBlocks]int32{lay.T(), lay.Y(), lay.P(), lay.V(), lay.W(), lay.U()}
	names := [numBlocks]string{"t", "y", "p", "v", "w", "u"}
	value := map[int32]int{} // temporary register → the instruction whose local holds it
	operand := func(r int32) (string, error) {
		switch {
		case r < 0:
			return "", fmt.Errorf("negative register %d", r)
		case r < nIn:
			b := numBlocks - 1
			for b > 0 && r < starts[b] {
				b--
			}
			if f.inputs[b] == "" {
				return "", fmt.Errorf("reads input register %d (%s), which %s does not take", r, names[b], f.name)
			}
			if b == blockT {
				return f.inputs[b], nil
			}
			return fmt.Sprintf("%s[%d]", f.inputs[b], r-starts[b]), nil
		case r < nFixed:
			return literal(consts[r-nIn]), nil
		}
		k, ok := value[r]
		if !ok {
			return "", fmt.Errorf("reads register %d before any instruction writes it", r)
		}
		return fmt.Sprintf("s%d", k), nil
	}

	var params []string
	for b, name := range f.inputs {
		switch {
		case name == "":
		case b == blockT:
			params = append(params, "real "+name)
		default:
			params = append(params, "const real* "+name)
		}
	}
	params = append(params, "real* "+f.out)
	plist := ""
	for i, p := range params {
		if i > 0 {
			plist += ", "
		}
		plist += p
	}

	fmt.Fprintf(w, "// %s writes %s into %s: the %d instructions of the tape program %q, in order.\n",
		f.name, f.doc, f.out, len(pg.Code()), pg.Name)
	fmt.Fprintf(w, "template <typename real>\n__device__ __forceinline__ void %s(%s) {\n", f.name, plist)
	for k, in := range pg.Code() {
		if in.Dst < nFixed {
			return fmt.Errorf("%s: instruction %d writes input or constant register %d", f.name, k, in.Dst)
		}
		n := in.Op.Arity()
		if n == 0 {
			return fmt.Errorf("%s: instruction %d has the leaf operation %v", f.name, k, in.Op)
		}
		var a [3]string
		for i, r := range []int32{in.A, in.B, in.C}[:n] {
			var err error
			if a[i], err = operand(r); err != nil {
				return fmt.Errorf("%s: instruction %d: %w", f.name, k, err)
			}
		}
		x, err := expression(in.Op, a)
		if err != nil {
			return fmt.Errorf("%s: instruction %d: %w", f.name, k, err)
		}
		fmt.Fprintf(w, "  const real s%d = %s;\n", k, x)
		value[in.Dst] = k
	}
	for i, o := range pg.Outputs() {
		x, err := operand(o)
		if err != nil {
			return fmt.Errorf("%s: output %d: %w", f.name, i, err)
		}
		fmt.Fprintf(w, "  %s[%d] = %s;\n", f.out, i, x)
	}
	w.WriteString("}\n\n")

	fmt.Fprintf(w, "struct %s_fn {\n  template <typename real>\n  __device__ __forceinline__ void operator()(%s) const {\n    %s<real>(", f.name, plist, f.name)
	first := true
	for _, name := range append(f.inputs[:], f.out) {
		if name == "" {
			continue
		}
		if !first {
			w.WriteString(", ")
		}
		first = false
		w.WriteString(name)
	}
	w.WriteString(");\n  }\n};\n\n")
	return nil
}

// expression returns the C++ expression of op applied to the operands,
// with sym.Eval's semantics.
func expression(op sym.Op, a [3]string) (string, error) {
	switch op {
	case sym.OpNeg:
		return "-" + a[0], nil
	case sym.OpAdd:
		return a[0] + " + " + a[1], nil
	case sym.OpSub:
		return a[0] + " - " + a[1], nil
	case sym.OpMul:
		return "gs_mul(" + a[0] + ", " + a[1] + ")", nil
	case sym.OpDiv:
		return a[0] + " / " + a[1], nil
	case sym.OpSqrt:
		return "sqrt(" + a[0] + ")", nil
	case sym.OpAbs:
		return "fabs(" + a[0] + ")", nil
	case sym.OpFloor:
		return "floor(" + a[0] + ")", nil
	case sym.OpCeil:
		return "ceil(" + a[0] + ")", nil
	case sym.OpSelect: // sym.Eval: b where a > 0, else c (also for a NaN)
		return fmt.Sprintf("(%s > real(0)) ? %s : %s", a[0], a[1], a[2]), nil
	case sym.OpLt, sym.OpLe, sym.OpEq, sym.OpNe: // IEEE's comparisons: false with a NaN, except !=
		c := map[sym.Op]string{sym.OpLt: "<", sym.OpLe: "<=", sym.OpEq: "==", sym.OpNe: "!="}[op]
		return fmt.Sprintf("(%s %s %s) ? real(1) : real(0)", a[0], c, a[1]), nil
	case sym.OpSign: // sym.Eval: 1, −1, or the operand itself (±0, NaN)
		return fmt.Sprintf("(%s > real(0)) ? real(1) : ((%s < real(0)) ? real(-1) : %s)", a[0], a[0], a[0]), nil
	}
	if fn, ok := mathFuncs[op]; ok {
		if fn.steps.Args == 2 {
			return fn.name + "(" + a[0] + ", " + a[1] + ")", nil
		}
		return fn.name + "(" + a[0] + ")", nil
	}
	return "", fmt.Errorf("unsupported operation %v", op)
}
