package systems

import (
	"fmt"
	"math"
	"strconv"

	"github.com/gradsolve/gradsolve/ode"
)

const (
	lorenz96DefaultN = 8
	lorenz96DefaultF = 8.0
	lorenz96Perturb  = 0.01
)

// Lorenz96 returns the Lorenz (1996) model with n sites on a circle
//
//	x_i' = (x_{i+1} − x_{i−2})·x_{i−1} − x_i + F,   i = 0, …, n−1,
//
// with indices taken modulo n, states x0, …, x{n−1} and one parameter F
// (the forcing). All quantities are dimensionless; one time unit is
// about five days of atmospheric time in Lorenz's reading.
//
//	F  forcing, default the forcing argument, or 8 if forcing == 0
//
// Default initial state x_i = F for all i, with x_0 = F + 0.01 (the usual
// perturbation of the unstable equilibrium x ≡ F); default span [0, 1].
// For F = 8 and n ≥ 8 the dynamics are chaotic. The problem is named
// "lorenz96_<n>".
//
// It returns an error wrapping ErrInvalid if n < 4 (the stencil needs
// sites i−2, i−1, i, i+1 to be distinct) or forcing is not finite.
//
// Source: E. N. Lorenz, "Predictability — a problem partly solved",
// Proc. ECMWF Seminar on Predictability, Reading, 1996, vol. 1, 1–18;
// reprinted in T. Palmer & R. Hagedorn (eds.), Predictability of Weather
// and Climate, CUP 2006, doi:10.1017/CBO9780511617652.004.
func Lorenz96(n int, forcing float64) (*ode.Problem, error) {
	if n < 4 {
		return nil, fmt.Errorf("%w: Lorenz96: n = %d: must be ≥ 4", ErrInvalid, n)
	}
	if math.IsNaN(forcing) || math.IsInf(forcing, 0) {
		return nil, fmt.Errorf("%w: Lorenz96: forcing = %g: must be finite", ErrInvalid, forcing)
	}
	if forcing == 0 {
		forcing = lorenz96DefaultF
	}
	names := make([]string, n)
	y0 := make([]float64, n)
	for i := range n {
		names[i] = "x" + strconv.Itoa(i)
		y0[i] = forcing
	}
	y0[0] += lorenz96Perturb
	return &ode.Problem{
		Name:       "lorenz96_" + strconv.Itoa(n),
		Dim:        n,
		NumParams:  1,
		F:          lorenz96F,
		StateNames: names,
		ParamNames: []string{"F"},
		Y0:         y0,
		P:          []float64{forcing},
		T0:         0,
		T1:         1,
	}, nil
}

// lorenz96F takes n from len(y), so one function serves every size.
func lorenz96F(_ float64, y, p, dy []float64) {
	n := len(y)
	dy = dy[:n]
	f := p[0]
	// The three wrapped sites first, then the interior without modulo.
	// Products are rounded before they are added: no FMA on any architecture.
	dy[0] = float64((y[1]-y[n-2])*y[n-1]) - y[0] + f
	dy[1] = float64((y[2]-y[n-1])*y[0]) - y[1] + f
	dy[n-1] = float64((y[0]-y[n-3])*y[n-2]) - y[n-1] + f
	for i := 2; i < n-1; i++ {
		dy[i] = float64((y[i+1]-y[i-2])*y[i-1]) - y[i] + f
	}
}
