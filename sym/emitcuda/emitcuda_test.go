package emitcuda_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// TestGenerateErrors checks that bad input gets an error naming what is
// wrong, in the terms of Options.
func TestGenerateErrors(t *testing.T) {
	set := readModel(t, examplePath(t, "halo.ode"))
	bad := *method.Tsit5
	bad.B = bad.B[:3]
	renamed := *method.DP5
	renamed.Name = "tsit-5"
	for _, c := range []struct {
		name string
		set  *tape.Set
		opts emitcuda.Options
		want string
	}{
		{"nil set", nil, emitcuda.Options{}, "nil tape.Set"},
		{"nil method", set, emitcuda.Options{Methods: []*method.Tableau{method.Tsit5, nil}}, "Options.Methods[1] is nil"},
		{"invalid method", set, emitcuda.Options{Methods: []*method.Tableau{&bad}}, "Options.Methods[0]"},
		{"same kernel name", set, emitcuda.Options{Methods: []*method.Tableau{method.Tsit5, &renamed}}, "kernel name gs_erk_tsit5"},
		{"no name", set, emitcuda.Options{Methods: []*method.Tableau{{Name: "–", C: method.DP5.C, A: method.DP5.A, B: method.DP5.B, E: method.DP5.E, Order: 5, ErrOrder: 4}}}, "no ASCII letter or digit"},
		{"no columns", set, emitcuda.Options{Sens: []emitcuda.Sens{{}}}, "Options.Sens[0] has no columns"},
		{"column out of range", set, emitcuda.Options{Sens: []emitcuda.Sens{{Cols: []int{0, 3}}}}, "Options.Sens[0].Cols[1] = 3"},
		{"column below -1", set, emitcuda.Options{Sens: []emitcuda.Sens{{Cols: []int{-2}}}}, "Options.Sens[0].Cols[0] = -2"},
	} {
		_, err := emitcuda.Generate(c.set, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

var (
	libraryCall    = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.])(exp|exp2|expm1|log|log2|log1p|pow|sin|cos|tan|tanh|atan|atan2|sinh|cosh|fma|fmin|fmax|cbrt|hypot|erf)f?\s*\(`)
	bareProduct    = regexp.MustCompile(`([A-Za-z0-9_.]+) \* `)
	integerOperand = map[string]bool{"i": true, "isave": true, "nsave": true, "blockIdx.x": true, "blockDim.x": true}
)

// TestGenerateSource checks what every compiler of the source relies
// on: it is the same for the same model and options, includes no
// header and calls no host library (NVRTC compiles it alone), rounds
// every product (no bare "*" between values: products are gs_mul or
// __dmul_rn), and names its kernels as Kernels says.
func TestGenerateSource(t *testing.T) {
	set := readModel(t, "testdata/funcs.ode")
	opts := emitcuda.Options{Sens: []emitcuda.Sens{{Cols: []int{0, -1}}}}
	a, err := emitcuda.Generate(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := emitcuda.Generate(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Code, b.Code) {
		t.Error("two Generates of one model give different sources")
	}
	code := string(a.Code)
	for _, line := range strings.Split(code, "\n") {
		l := strings.TrimSpace(line)
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[:i]
		}
		if strings.Contains(l, "#include") || strings.Contains(l, "std::") {
			t.Errorf("the source includes a header or uses the host library: %s", line)
		}
		// Only the exact library functions are called; the others are
		// pmath's (gs_exp, …) or control's (gs_log2, gs_exp2).
		if m := libraryCall.FindStringSubmatch(l); m != nil {
			t.Errorf("the source calls %s: %s", m[1], line)
		}
		// Every product of values is gs_mul or __dmul_rn: a bare " * "
		// multiplies integers of index arithmetic only.
		for _, m := range bareProduct.FindAllStringSubmatch(l, -1) {
			if !integerOperand[m[1]] {
				t.Errorf("a bare product %q: %s", m[0], line)
			}
		}
	}
	if got, want := len(a.Kernels), 8; got != want {
		t.Fatalf("%d kernels, want %d (4 methods, forward and sensitivities)", got, want)
	}
	for _, k := range a.Kernels {
		if !strings.Contains(code, "extern \"C\" __global__ void "+k.Name+"(gs_erk_job job)") {
			t.Errorf("kernel %s is not in the source", k.Name)
		}
	}
	if k := a.Kernels[5]; k.Name != "gs_erk_dp5_sens0" || k.Method != method.DP5 || k.Dim != 9 || k.NormDim != 3 || k.Sens != 0 {
		t.Errorf("kernel 5 is %+v, want gs_erk_dp5_sens0 of DP5, Dim 9, NormDim 3", k)
	}
}
