package emitcuda_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/cudaemu"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

// recordCases are the cases of the record and adjoint tests.
var recordCases = []string{"lorenz", "halo", "funcs", "kepler_ecc"}

// cpuRecord records ens on cpu-erk with the kernel's method.
func cpuRecord(t *testing.T, prob *ode.Problem, ens *ensemble, k emitcuda.Kernel, maxSteps int) *gradsolve.Recording {
	t.Helper()
	o := gradsolve.Options{Method: k.Method, Engine: "cpu-erk", MaxSteps: maxSteps}
	e := &gradsolve.Ensemble{N: ensembleSize, Y0: ens.y0, P: ens.p, T0: ens.t0, T1: ens.t1, Save: ens.save, SavePerTrajectory: true}
	rec, err := gradsolve.Record(context.Background(), prob, e, &o)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Result.Engine != "cpu-erk" {
		t.Fatalf("recorded on %s, want cpu-erk", rec.Result.Engine)
	}
	return rec
}

// kernelOf returns the index of the kernel of kind and method name m.
func kernelOf(t *testing.T, src *emitcuda.Source, kind emitcuda.KernelKind, m string) int {
	t.Helper()
	for i, k := range src.Kernels {
		if k.Kind == kind && !k.Float32 && k.Method.Name == m {
			return i
		}
	}
	t.Fatalf("no kernel of kind %d for %s", kind, m)
	return -1
}

// TestRecordAdjointBitwise records each case's ensemble with every
// method on cpu-erk (gradsolve.Record) and with the record kernels in
// emulation, and compares the forward results and the meshes (T, H, Y
// and the number of steps) bit for bit; then it runs the reverse
// replay (Recording.Gradient) and the adjoint kernels on the recorded
// meshes with random cotangents of the final and the saved states (and
// with none of the saved states), and compares ∂L/∂y0 and ∂L/∂p bit for
// bit. It also checks the memory of the meshes: (steps + 1)·Dim states,
// steps + 1 times and steps step sizes per trajectory, what the CPU's
// Recording.MeshBytes counts.
func TestRecordAdjointBitwise(t *testing.T) {
	for _, c := range forwardCases {
		if !contains(recordCases, c.name) || testing.Short() && !shortCases[c.name] {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			set := readModel(t, casePath(t, c.file))
			src, err := emitcuda.Generate(set, emitcuda.Options{Record: true, Adjoint: true})
			if err != nil {
				t.Fatal(err)
			}
			prog := compile(t, src)
			prob := set.Problem()
			ens := makeEnsemble(prob, c, 5)
			dim, np := prob.Dim, prob.NumParams
			rng := rand.New(rand.NewPCG(uint64(len(c.name)), 3))
			cotY := make([]float64, ensembleSize*dim)
			cotS := make([]float64, ensembleSize*ens.k*dim)
			for _, v := range [][]float64{cotY, cotS} {
				for j := range v {
					v[j] = rng.Float64() - 0.5
				}
			}
			for _, fk := range src.Kernels {
				if fk.Kind != emitcuda.Forward {
					continue
				}
				rec := cpuRecord(t, prob, ens, fk, c.maxSteps)
				ki := kernelOf(t, src, emitcuda.Record, fk.Method.Name)
				kern := src.Kernels[ki]
				capSteps := 0
				var bytes uint64
				for i := range ensembleSize {
					capSteps = max(capSteps, rec.Mesh(i).Steps())
				}
				j := kernelJob(ki, kern, &rec.Result.Options, ens, ens.y0)
				j.cap = capSteps
				got := prog.solve(t, j)
				what := fmt.Sprintf("%s %s", c.name, kern.Name)
				compareResults(t, what, expected(rec.Result), got, ens, dim)
				statuses := map[ode.Status]int{}
				for i := range ensembleSize {
					statuses[rec.Result.Status[i]]++
					ms := rec.Mesh(i)
					n := ms.Steps()
					if got.steps[i] != int64(n) {
						t.Errorf("%s: trajectory %d: %d steps recorded, want %d", what, i, got.steps[i], n)
						continue
					}
					gT := got.meshT[i*(capSteps+1) : i*(capSteps+1)+n+1]
					gH := got.meshH[i*capSteps : i*capSteps+n]
					gY := got.meshY[i*(capSteps+1)*dim : (i*(capSteps+1)+n+1)*dim]
					if !testutil.EqualBits(gT, ms.T) || !testutil.EqualBits(gH, ms.H) || !testutil.EqualBits(gY, ms.Y) {
						t.Errorf("%s: trajectory %d: mesh differs: %s; %s; %s", what, i,
							testutil.DiffReport("T", gT, ms.T, 0), testutil.DiffReport("H", gH, ms.H, 0), testutil.DiffReport("Y", gY, ms.Y, 0))
					}
					// The memory of a mesh: (n+1)·Dim states, n+1 times, n steps.
					bytes += 8 * uint64((n+1)*dim+(n+1)+n)
				}
				if mb := rec.MeshBytes(); bytes != mb {
					t.Errorf("%s: the meshes hold %d bytes ((steps+1)·(Dim+1) + steps values each), the CPU's recording %d", what, bytes, mb)
				}
				if statuses[ode.Success] == 0 || statuses[ode.MaxStepsReached] == 0 {
					t.Errorf("%s: statuses %v: want successes and MaxStepsReached", what, statuses)
				}

				// The adjoint on the kernel's meshes.
				ai := kernelOf(t, src, emitcuda.Adjoint, fk.Method.Name)
				var prev []float64 // ∂L/∂p with the saved states' cotangents
				for _, withSaved := range []bool{true, false} {
					cot := gradsolve.Cotangents{Y: cotY}
					if withSaved {
						cot.Saved = cotS
					}
					g, err := rec.Gradient(context.Background(), cot)
					if err != nil {
						t.Fatal(err)
					}
					gy0, gp := prog.adjoint(t, ai, ens, capSteps, got, cot)
					// Not vacuous: the gradients of the successes are
					// nonzero, and the saved states' cotangents change them.
					nonzero, changed := 0, 0
					for i := range ensembleSize {
						if rec.Result.Status[i] != ode.Success {
							continue
						}
						for q := i * np; q < (i+1)*np; q++ {
							if gp[q] != 0 {
								nonzero++
							}
							if prev != nil && gp[q] != prev[q] {
								changed++
							}
						}
					}
					if nonzero == 0 || (prev != nil && changed == 0) {
						t.Errorf("%s: %d nonzero parameter gradients, %d changed by the saved cotangents: want some of each", src.Kernels[ai].Name, nonzero, changed)
					}
					prev = gp
					for i := range ensembleSize {
						wy, wp := g.Y0[i*dim:(i+1)*dim], g.P[i*np:(i+1)*np]
						hy, hp := gy0[i*dim:(i+1)*dim], gp[i*np:(i+1)*np]
						if !testutil.EqualBits(hy, wy) || !testutil.EqualBits(hp, wp) {
							t.Errorf("%s (saved cotangents %t): trajectory %d (%v): %s; %s", src.Kernels[ai].Name, withSaved, i, rec.Result.Status[i],
								testutil.DiffReport("dL/dy0", hy, wy, 0), testutil.DiffReport("dL/dp", hp, wp, 0))
						}
					}
				}

				// A mesh too small: the trajectories that need more steps end
				// with Cancelled and steps −1; the others are as before.
				j.cap = capSteps / 2
				small := prog.solve(t, j)
				full := 0
				for i := range ensembleSize {
					n := rec.Mesh(i).Steps()
					switch {
					case n > j.cap:
						full++
						if small.steps[i] != -1 || ode.Status(small.status[i]) != ode.Cancelled || small.accepted[i] != int64(j.cap+1) {
							t.Errorf("%s cap %d: trajectory %d (%d steps): steps %d, status %v, accepted %d: want -1, Cancelled, %d",
								what, j.cap, i, n, small.steps[i], ode.Status(small.status[i]), small.accepted[i], j.cap+1)
						}
					case small.steps[i] != int64(n) || small.status[i] != got.status[i]:
						t.Errorf("%s cap %d: trajectory %d (%d steps): steps %d, status %v: want %d, %v",
							what, j.cap, i, n, small.steps[i], ode.Status(small.status[i]), n, ode.Status(got.status[i]))
					}
				}
				if full == 0 {
					t.Errorf("%s cap %d: no trajectory filled its mesh", what, j.cap)
				}
			}
		})
	}
}

// adjoint runs adjoint kernel ki on the meshes and statuses of the
// record kernel's result r (capacity c) with the cotangents cot, and
// returns ∂L/∂y0 and ∂L/∂p.
func (p *program) adjoint(t testing.TB, ki int, ens *ensemble, c int, r *result, cot gradsolve.Cotangents) (gy0, gp []float64) {
	t.Helper()
	k := p.src.Kernels[ki]
	n := len(ens.t0)
	var e cudaemu.Encoder
	for _, v := range []int{6, p.slot[ki], k.Dim, n, ens.k, ens.k, c, 3, 16} {
		e.Int(int64(v))
	}
	for _, v := range [][]float64{ens.p, ens.save, r.meshT, r.meshH, r.meshY} {
		e.Floats(v)
	}
	for _, v := range [][]int64{r.steps, r.status} {
		for _, x := range v {
			e.Int(x)
		}
	}
	e.Floats(cot.Y)
	if cot.Saved != nil {
		e.Int(1)
		e.Floats(cot.Saved)
	} else {
		e.Int(0)
	}
	out, err := cudaemu.Run(context.Background(), p.exe, e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	d := cudaemu.NewDecoder(out)
	gy0, gp = d.Floats(n*k.Dim), d.Floats(n*p.src.NumParams)
	if d.Err != nil || d.Rest() != 0 {
		t.Fatalf("%s: output: %v, %d bytes left over", k.Name, d.Err, d.Rest())
	}
	return gy0, gp
}
