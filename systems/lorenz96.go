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
		Programs:   lorenz96Programs,
		Offers:     builtinPrograms,
	}, nil
}

// lorenz96Programs returns the hand-written derivative programs of
// Lorenz96. They keep no state (n is len(y)), so one set serves every
// goroutine and every size.
func lorenz96Programs() *ode.Programs {
	return &ode.Programs{F: lorenz96F, JVP: lorenz96JVP, VJP: lorenz96VJP, JacY: lorenz96JacY, DfDt: zeroDfDt}
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

// lorenz96Sites returns the neighbours i+1, i−2 and i−1 of site i on a
// circle of n ≥ 4 sites.
func lorenz96Sites(i, n int) (ip1, im2, im1 int) {
	ip1, im2, im1 = i+1, i-2, i-1
	if ip1 == n {
		ip1 = 0
	}
	if im2 < 0 {
		im2 += n
	}
	if im1 < 0 {
		im1 += n
	}
	return ip1, im2, im1
}

// lorenz96JVP writes J_y·v + J_p·w of Lorenz96 into out. Row i of J_y has
// four nonzeros (indices mod n, distinct since n ≥ 4),
//
//	∂f_i/∂x_{i+1} = x_{i−1},   ∂f_i/∂x_{i−2} = −x_{i−1},
//	∂f_i/∂x_{i−1} = x_{i+1} − x_{i−2},   ∂f_i/∂x_i = −1,
//
// and J_p = ∂f_i/∂F = 1 for every row, so
//
//	out_i = (v_{i+1} − v_{i−2})·x_{i−1} + (x_{i+1} − x_{i−2})·v_{i−1} − v_i + w₀.
func lorenz96JVP(_ float64, y, _, v, w, out []float64) {
	n := len(y)
	v, out = v[:n], out[:n]
	w0 := w[0]
	for i := range n {
		ip1, im2, im1 := lorenz96Sites(i, n)
		out[i] = float64((v[ip1]-v[im2])*y[im1]) + float64((y[ip1]-y[im2])*v[im1]) - v[i] + w0
	}
}

// lorenz96VJP writes uᵀJ_y into gy and uᵀJ_p into gp (J_y, J_p as in
// lorenz96JVP). Column j of J_y collects the entries of rows j−1, j+1,
// j+2 and j, so
//
//	gy_j = u_{j−1}·x_{j−2} + u_{j+1}·(x_{j+2} − x_{j−1}) − u_{j+2}·x_{j+1} − u_j
//	gp₀ = Σ_i u_i.
func lorenz96VJP(_ float64, y, _, u, gy, gp []float64) {
	n := len(y)
	u, gy = u[:n], gy[:n]
	var s float64
	for j := range n {
		jp1, jm2, jm1 := lorenz96Sites(j, n)
		jp2 := jp1 + 1
		if jp2 == n {
			jp2 = 0
		}
		gy[j] = float64(u[jm1]*y[jm2]) + float64(u[jp1]*(y[jp2]-y[jm1])) - float64(u[jp2]*y[jp1]) - u[j]
		s += u[j]
	}
	gp[0] = s
}

// lorenz96JacY writes J_y of Lorenz96 (the four nonzeros per row of
// lorenz96JVP, zeros elsewhere) row-major into jac.
func lorenz96JacY(_ float64, y, _, jac []float64) {
	n := len(y)
	jac = jac[:n*n]
	clear(jac)
	for i := range n {
		ip1, im2, im1 := lorenz96Sites(i, n)
		row := jac[i*n : i*n+n]
		row[ip1] = y[im1]
		row[im2] = -y[im1]
		row[im1] = y[ip1] - y[im2]
		row[i] = -1
	}
}
