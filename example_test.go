package gradsolve_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/systems"
)

// Solve an ensemble of Lorenz systems, one per value of ρ, with the
// initial state and time span shared.
func ExampleSolve() {
	pr := systems.Lorenz() // parameters (σ, ρ, β)
	ens := &gradsolve.Ensemble{
		N:  3,
		Y0: []float64{1, 0, 0},
		P: []float64{
			10, 5, 8.0 / 3,
			10, 15, 8.0 / 3,
			10, 28, 8.0 / 3,
		},
		T0: []float64{0}, T1: []float64{1},
	}
	res, err := gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{RTol: 1e-10, ATol: 1e-12})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range res.N {
		y := res.Row(i)
		fmt.Printf("ρ = %2.0f: %v, y(1) = (%.5f, %.5f, %.5f)\n", ens.P[3*i+1], res.Status[i], y[0], y[1], y[2])
	}
	// Output:
	// ρ =  5: Success, y(1) = (3.43920, 4.09611, 2.00233)
	// ρ = 15: Success, y(1) = (-0.36767, -0.74897, 9.49275)
	// ρ = 28: Success, y(1) = (-9.40845, -9.09620, 28.58163)
}

// Record the state at chosen times, integrate backwards in time, and use
// a different method. Save times are ordered in the direction of
// integration.
func ExampleSolve_saveTimes() {
	pr := systems.Kepler() // a 0.5-eccentric orbit of period 2π
	ens := &gradsolve.Ensemble{
		N:    1,
		T0:   []float64{0},
		T1:   []float64{-2 * math.Pi}, // one period backwards
		Save: []float64{-math.Pi / 2, -math.Pi, -3 * math.Pi / 2},
	}
	res, err := gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{Method: method.DP8, RTol: 1e-12, ATol: 1e-12})
	if err != nil {
		fmt.Println(err)
		return
	}
	for k, t := range ens.Save {
		y := res.SavedRow(0, k)
		fmt.Printf("t = %6.3f: x = %+.6f, y = %+.6f\n", t, round6(y[0]), round6(y[1]))
	}
	y := res.Row(0)
	fmt.Printf("after one period: x = %+.6f, y = %+.6f (started at x = 0.5, y = 0)\n", round6(y[0]), round6(y[1]))
	// Output:
	// t = -1.571: x = -0.935131, y = -0.779741
	// t = -3.142: x = -1.500000, y = +0.000000
	// t = -4.712: x = -0.935131, y = +0.779741
	// after one period: x = +0.500000, y = +0.000000 (started at x = 0.5, y = 0)
}

// Options.Method takes a method of either family: here the Rosenbrock
// method Rodas5P for Robertson's stiff kinetics (Hairer & Wanner II,
// §IV.10: y(40) ≈ (0.7158271, 9.185535e-6, 0.2841637)). The router
// runs it on the engine of its family; Options.Engine names an engine,
// and one that does not run the method says so.
func ExampleSolve_stiff() {
	pr := systems.Robertson()
	ens := &gradsolve.Ensemble{N: 1, T0: []float64{0}, T1: []float64{40}}
	res, err := gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{Method: method.Rodas5P, RTol: 1e-8, ATol: 1e-12})
	if err != nil {
		fmt.Println(err)
		return
	}
	y := res.Row(0)
	// (res.EngineReason says why that engine: the registered engine for
	// Rosenbrock methods, the lane engine passed over for one trajectory.)
	fmt.Printf("%s on %s: y(40) = (%.7f, %.6e, %.7f)\n", res.Method, res.Engine, y[0], y[1], y[2])
	_, err = gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{Method: method.Rodas5P, Engine: "cpu-erk"})
	fmt.Println(err)
	// Output:
	// Rodas5P on cpu-ros: y(40) = (0.7158271, 9.185535e-06, 0.2841637)
	// gradsolve: invalid input: Options.Engine = "cpu-erk" does not run Rodas5P (of the Rosenbrock family)
}

// A trajectory that fails gets its own status and error; the others
// complete.
func ExampleResult_Errs() {
	// y' = p·y², y(0) = 1 blows up at t = 1/p.
	pr := &gradsolve.Problem{Name: "blowup", Dim: 1, NumParams: 1,
		F: func(t float64, y, p, dy []float64) { dy[0] = p[0] * y[0] * y[0] }}
	ens := &gradsolve.Ensemble{N: 3, Y0: []float64{1}, P: []float64{0.25, 1, 0.4}, T0: []float64{0}, T1: []float64{2}}
	res, err := gradsolve.Solve(context.Background(), pr, ens, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range res.N {
		fmt.Printf("p = %.2f: %v\n", ens.P[i], res.Status[i])
	}
	fmt.Println(res.Failed())
	// Output:
	// p = 0.25: Success
	// p = 1.00: StepUnderflow
	// p = 0.40: Success
	// [1]
}

// round6 rounds to 6 decimals and turns −0 into +0 for printing.
func round6(v float64) float64 { return math.Round(v*1e6)/1e6 + 0 }

// Solve 100 000 Lorenz systems, one per value of ρ, 10 000 at a
// time, keeping only a running sum of the final z: the inputs of each
// chunk are built when it is solved, and its results are dropped once
// reduced.
func ExampleSolveChunks() {
	pr := systems.Lorenz() // parameters (σ, ρ, β)
	const n = 100_000
	part := func(lo, hi int) (*gradsolve.Ensemble, error) {
		p := make([]float64, 0, 3*(hi-lo))
		for i := lo; i < hi; i++ {
			p = append(p, 10, 5+20*float64(i)/(n-1), 8.0/3) // ρ from 5 to 25
		}
		return &gradsolve.Ensemble{N: hi - lo, P: p, Y0: []float64{1, 0, 0}, T0: []float64{0}, T1: []float64{0.1}}, nil
	}
	var sum float64
	err := gradsolve.SolveChunks(context.Background(), pr, n, 10_000, part, nil, func(lo int, res *gradsolve.Result) error {
		for i := range res.N {
			sum += res.Row(i)[2]
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("mean z(0.1) over %d trajectories: %.4f\n", n, sum/n)
	// Output:
	// mean z(0.1) over 100000 trajectories: 0.0451
}

// GradientChunks differentiates a loss over more trajectories than one
// wants to record at once: each chunk is recorded, replayed and dropped,
// and the rows of the gradient of the parameter every trajectory shares
// are summed as they come.
func ExampleGradientChunks() {
	pr := systems.Lorenz() // parameters (σ, ρ, β)
	const n = 20_000
	part := func(lo, hi int) (*gradsolve.Ensemble, error) {
		y0 := make([]float64, 0, 3*(hi-lo))
		for i := lo; i < hi; i++ {
			y0 = append(y0, 1+float64(i)/n, 0, 0) // x(0) from 1 to 2
		}
		return &gradsolve.Ensemble{N: hi - lo, Y0: y0, T0: []float64{0}, T1: []float64{0.1}}, nil
	}
	var dLdrho float64
	loss, err := gradsolve.GradientChunks(context.Background(), pr, n, 5_000, part, nil, gradsolve.SumSquaresChunks(),
		func(lo int, res *gradsolve.Result, g *gradsolve.Gradient) error {
			for i := range res.N {
				dLdrho += g.P[i*3+1] // ρ is shared: its gradient is the sum of the rows
			}
			return nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("L = %.6g, dL/dρ = %.6g\n", loss, dLdrho)
	// Output:
	// L = 189410, dL/dρ = 17448.3
}
