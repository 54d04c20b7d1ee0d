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
	integerOperand = map[string]bool{"i": true, "isave": true, "nsave": true, "blockIdx.x": true, "blockDim.x": true,
		"k": true, "q": true, "K": true} // the mesh's step, a save's index, the save count (erkrecord.cuh)
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
	checkSourceLines(t, code)
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

	// With the float32, record and adjoint kernels: the same rules, and
	// the kernels after the double ones, each with its job.
	opts.Float32, opts.Record, opts.Adjoint = true, true, true
	all, err := emitcuda.Generate(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	code = string(all.Code)
	checkSourceLines(t, code)
	if got, want := len(all.Kernels), 24; got != want {
		t.Fatalf("%d kernels with Float32, Record and Adjoint, want %d", got, want)
	}
	for i, k := range all.Kernels {
		if i < 8 && (k.Name != a.Kernels[i].Name || k.Kind != a.Kernels[i].Kind || k.Float32) {
			t.Errorf("kernel %d is %s, want %s as without the options", i, k.Name, a.Kernels[i].Name)
		}
		job := map[emitcuda.KernelKind]string{emitcuda.Forward: "gs_erk_job", emitcuda.Sensitivities: "gs_erk_job",
			emitcuda.Record: "gs_erk_record_job", emitcuda.Adjoint: "gs_erk_adjoint_job"}[k.Kind]
		if k.Float32 {
			job = "gs_erk_job_f32"
		}
		if !strings.Contains(code, "extern \"C\" __global__ void "+k.Name+"("+job+" job)") {
			t.Errorf("kernel %s(%s) is not in the source", k.Name, job)
		}
	}
	for i, want := range map[int]string{8: "gs_erk_tsit5_f32", 13: "gs_erk_dp5_f32_sens0", 16: "gs_erk_tsit5_record", 23: "gs_erk_dp8_adjoint"} {
		if k := all.Kernels[i]; k.Name != want {
			t.Errorf("kernel %d is %s, want %s", i, k.Name, want)
		}
	}
}

// checkSourceLines checks each line of a generated source: no header,
// no host library, no inexact library function, no bare product.
func checkSourceLines(t *testing.T, code string) {
	t.Helper()
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
}
