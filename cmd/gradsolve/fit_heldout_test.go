package main

// Held-out data: gradsolve fit on data that others wrote. The targets
// come from closed-form solutions (never from gradsolve's own solver)
// plus seeded Gaussian noise of known σ, and every .npy file the fit
// reads is built here byte by byte as NumPy's np.save lays it out
// (numpy.lib.format), not with package npy's writer.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const logisticODE = "testdata/fit/logistic.ode" // y' = r·y·(1 − y/K), y0 = 0.1, r = 0.8, K = 2, t ∈ [0, 10]

// Closed forms of the test problems.

// oscillatorExact is the underdamped solution (c < 2w) of
// d²x/dt² = −w²·x − c·dx/dt from (x0, v0): with γ = c/2, ω = √(w² − γ²),
// x = e^(−γt)·(A cos ωt + B sin ωt), A = x0, B = (v0 + γ·x0)/ω, v = dx/dt.
func oscillatorExact(x0, v0, w, c, t float64) (x, v float64) {
	g := c / 2
	om := math.Sqrt(w*w - g*g)
	a, b := x0, (v0+g*x0)/om
	e, co, si := math.Exp(-g*t), math.Cos(om*t), math.Sin(om*t)
	x = e * (a*co + b*si)
	v = e * ((om*b-g*a)*co - (g*b+om*a)*si)
	return x, v
}

// logisticExact solves y' = r·y·(1 − y/K): y = K·y0·e^(rt)/(K + y0·(e^(rt) − 1)).
func logisticExact(y0, r, K, t float64) float64 {
	e := math.Exp(r * t)
	return K * y0 * e / (K + y0*(e-1))
}

// decayExact solves y' = −k·y: y = y0·e^(−kt).
func decayExact(y0, k, t float64) float64 { return y0 * math.Exp(-k*t) }

// A .npy file as others write it.

// npyFile describes a .npy file built byte by byte.
type npyFile struct {
	descr   string // dtype: "<f8", ">f4", "<i8", …; a Python literal when it starts with '['
	fortran bool   // data in Fortran order (first index fastest), as np.save writes np.asfortranarray(a) or a.T
	version byte   // format version 1, 2 or 3 (0 means 1)
	shape   []int
}

// bytes lays out values (given in C order, the natural reading of
// shape) as np.save would: magic, version, header length (uint16 for
// 1.0, uint32 for 2.0 and 3.0), the header dict padded with spaces to a
// multiple of 64 bytes and ended by '\n', then the elements in the
// file's order and dtype.
func (f npyFile) bytes(t *testing.T, values []float64) []byte {
	t.Helper()
	descr := f.descr
	if !strings.HasPrefix(descr, "[") {
		descr = "'" + descr + "'"
	}
	order := "False"
	if f.fortran {
		order = "True"
	}
	dims := make([]string, len(f.shape))
	for i, d := range f.shape {
		dims[i] = strconv.Itoa(d)
	}
	shape := "(" + strings.Join(dims, ", ")
	if len(f.shape) == 1 {
		shape += ","
	}
	shape += ")"
	hdr := fmt.Sprintf("{'descr': %s, 'fortran_order': %s, 'shape': %s, }", descr, order, shape)
	version := max(f.version, 1)
	pre := 10
	if version > 1 {
		pre = 12
	}
	hdr += strings.Repeat(" ", 63-(pre+len(hdr))%64) + "\n"
	b := append([]byte("\x93NUMPY"), version, 0)
	if version == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	}
	b = append(b, hdr...)
	if f.fortran {
		values = cToFortran(values, f.shape)
	}
	return append(b, encodeElements(t, f.descr, values)...)
}

// write writes the file into dir and returns its path.
func (f npyFile) write(t *testing.T, dir, name string, values []float64) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, f.bytes(t, values), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// f8 is the plain file np.save writes for a float64 array.
func f8(shape ...int) npyFile { return npyFile{descr: "<f8", shape: shape} }

// encodeElements encodes values in the dtype descr; integer dtypes
// need integer values in range. Dtypes it has no encoder for (complex,
// strings, objects, …) get zero bytes of the size the descr names, or
// 8 per element: the reader must refuse them from the header.
func encodeElements(t *testing.T, descr string, values []float64) []byte {
	t.Helper()
	var order binary.AppendByteOrder = binary.LittleEndian
	if descr[0] == '>' {
		order = binary.BigEndian
	}
	var b []byte
	for _, v := range values {
		integer := func(lo, hi float64) uint64 {
			if v != math.Trunc(v) || v < lo || v > hi {
				t.Fatalf("%g does not fit %s", v, descr)
			}
			return uint64(int64(v))
		}
		switch descr[1:] {
		case "f8":
			b = order.AppendUint64(b, math.Float64bits(v))
		case "f4":
			b = order.AppendUint32(b, math.Float32bits(float32(v)))
		case "i8":
			b = order.AppendUint64(b, integer(-1<<53, 1<<53))
		case "i4":
			b = order.AppendUint32(b, uint32(integer(math.MinInt32, math.MaxInt32)))
		case "i2":
			b = order.AppendUint16(b, uint16(integer(math.MinInt16, math.MaxInt16)))
		case "u1", "i1":
			b = append(b, byte(integer(-128, 255)))
		default:
			size := 8 // objects ('|O'), datetimes ('<M8[s]'), structured
			digits := strings.TrimRight(descr[2:], "[]abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
			if n, err := strconv.Atoi(digits); err == nil {
				size = n
				if descr[1] == 'U' { // UCS-4 characters
					size *= 4
				}
			}
			b = append(b, make([]byte, size)...)
		}
	}
	return b
}

// cToFortran reorders values, in C order for shape, into Fortran order.
func cToFortran(values []float64, shape []int) []float64 {
	out := make([]float64, 0, len(values))
	idx := make([]int, len(shape))
	for range values {
		off := 0
		for d := range shape {
			off = off*shape[d] + idx[d]
		}
		out = append(out, values[off])
		for d := range idx { // first index fastest
			if idx[d]++; idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// noisy returns y plus independent N(0, σ²) noise from rng.
func noisy(rng *rand.Rand, sigma float64, y []float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = v + sigma*rng.NormFloat64()
	}
	return out
}

func parseTimes(t *testing.T, list string) []float64 {
	t.Helper()
	var ts []float64
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, v)
	}
	return ts
}

// fitResult is what a held-out fit gave: per group, the estimates,
// standard errors and covariance (p × p), with the loss.
type fitResult struct {
	r   *fitReport
	est []float64 // G × p
	cov []float64 // G × p × p
}

// runHeldOut runs gradsolve fit with --fisher and reads its output.
func runHeldOut(t *testing.T, groups, p int, args ...string) *fitResult {
	t.Helper()
	out := t.TempDir()
	if _, _, err := runCmd(append(append([]string{"fit"}, args...), "--fisher", "--out", out, "-q")...); err != nil {
		t.Fatal(err)
	}
	r, _ := readFitJSON(t, out)
	if r.Groups != groups || len(r.StdErr) != groups {
		t.Fatalf("fit.json: %d groups, %d stderr rows, want %d", r.Groups, len(r.StdErr), groups)
	}
	for g := range groups {
		if !r.Converged[g] {
			t.Errorf("group %d: %s", g, r.Status[g])
		}
	}
	return &fitResult{r: r, est: readNpy(t, filepath.Join(out, "params_fit.npy"), groups, p),
		cov: readNpy(t, filepath.Join(out, "covariance.npy"), groups, p, p)}
}

// The held-out fits: shared, per trajectory (--each) and grouped
// (--groups), on final states and on --saveat states. Every estimate
// must lie within 3.5 of its reported standard errors of the truth.
//
// Why 3.5: the estimates are, to first order in σ, Gaussian about the
// truth with the Fisher covariance that --fisher reports (the noise is
// small enough here, relative errors of 1e-3 to 1e-2, that the
// curvature of the model adds a bias of order σ², far below a standard
// error). A Gaussian pull exceeds 3.5 with probability 4.7e-4, so over
// the 50 estimates of this test a correct fit fails for about 1 seed in
// 40 (1 − (1 − 4.7e-4)^50 = 2.3%), while an error bar too small by 2× or a bias of a few standard
// errors fails at once. The seeds are fixed, so the test is
// deterministic; the 3.5 leaves room to change them. The solver's own
// error at the default rtol 1e-8 is a bias of order 1e-8 in the states,
// 1e-5 standard errors.
func TestFitHeldOut(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(15, 1))
	save := parseTimes(t, oscSave)
	k := len(save)

	type heldOut struct {
		name   string
		groups int
		args   []string
		truth  [][]float64 // per group
	}
	var cases []heldOut

	// Shared, saved states: the oscillator from 6 initial states, one
	// (w, c) = (1.1, 0.25) for all, σ = 0.01.
	{
		y0 := []float64{1, 0, 0.5, 0, 2, 0, -1, 0.5, 0, 1, 1.5, -0.5}
		n := len(y0) / 2
		var y []float64
		for i := range n {
			for _, s := range save {
				x, v := oscillatorExact(y0[2*i], y0[2*i+1], 1.1, 0.25, s)
				y = append(y, x, v)
			}
		}
		cases = append(cases, heldOut{"shared/saved", 1, []string{oscODE,
			"--y0", f8(n, 2).write(t, dir, "osc_y0.npy", y0),
			"--data", f8(n, k, 2).write(t, dir, "osc_shared.npy", noisy(rng, 0.01, y)),
			"--saveat", oscSave, "--fit", "w,c", "--sigma", "0.01"}, [][]float64{{1.1, 0.25}}})
	}
	// Shared, final states: logistic growth observed once per
	// trajectory at its own t1 (from y0 = 0.1), r = 0.6 and K = 1.5
	// shared, σ = 0.005, from the start (0.8, 2) of the file.
	{
		t1 := []float64{1, 2, 3, 4, 5, 6, 7, 8, 10, 12}
		var y []float64
		for _, s := range t1 {
			y = append(y, logisticExact(0.1, 0.6, 1.5, s))
		}
		n := len(t1)
		cases = append(cases, heldOut{"shared/final", 1, []string{logisticODE,
			"--t1", f8(n).write(t, dir, "log_t1.npy", t1),
			"--data", f8(n, 1).write(t, dir, "log_shared.npy", noisy(rng, 0.005, y)),
			"--fit", "r,K", "--sigma", "0.005"}, [][]float64{{0.6, 1.5}}})
	}
	// Per trajectory, saved states: 8 logistic curves, each its own
	// (r, K), observed at t = 1 … 10, σ = 0.01; each starts at the
	// file's (0.8, 2).
	{
		save := "1,2,3,4,5,6,7,8,9,10"
		ts := parseTimes(t, save)
		var truth [][]float64
		var y []float64
		for i := range 8 {
			r, K := 0.5+0.1*float64(i), 1+0.25*float64(i)
			truth = append(truth, []float64{r, K})
			for _, s := range ts {
				y = append(y, logisticExact(0.1, r, K, s))
			}
		}
		cases = append(cases, heldOut{"each/saved", 8, []string{logisticODE,
			"--data", f8(8, len(ts), 1).write(t, dir, "log_each.npy", noisy(rng, 0.01, y)),
			"--saveat", save, "--fit", "r,K", "--each", "--sigma", "0.01", "--transform", "r=log,K=log"}, truth})
	}
	// Per trajectory, final states: 16 decays from y0 = 1, each its own
	// rate k, observed at t1 = 2, σ = 0.002.
	{
		var truth [][]float64
		var y []float64
		for i := range 16 {
			kk := 0.2 + 0.05*float64(i)
			truth = append(truth, []float64{kk})
			y = append(y, decayExact(1, kk, 2))
		}
		cases = append(cases, heldOut{"each/final", 16, []string{decayODE,
			"--data", f8(16, 1).write(t, dir, "decay_each.npy", noisy(rng, 0.002, y)),
			"--fit", "k", "--each", "--sigma", "0.002"}, truth})
	}
	// Groups, saved states: three groups of the oscillator, each two
	// initial states, group indices written as int64 as np.save writes
	// np.array([0, 0, 1, 1, 2, 2]).
	{
		truth := [][]float64{{0.9, 0.1}, {1.2, 0.3}, {1.5, 0.2}}
		y0 := []float64{1, 0, 2, -1}
		var y []float64
		for i := range 6 {
			g, j := i/2, i%2
			for _, s := range save {
				x, v := oscillatorExact(y0[2*j], y0[2*j+1], truth[g][0], truth[g][1], s)
				y = append(y, x, v)
			}
		}
		cases = append(cases, heldOut{"groups/saved", 3, []string{oscODE,
			"--y0", f8(6, 2).write(t, dir, "osc_y0g.npy", []float64{1, 0, 2, -1, 1, 0, 2, -1, 1, 0, 2, -1}),
			"--data", f8(6, k, 2).write(t, dir, "osc_groups.npy", noisy(rng, 0.01, y)),
			"--groups", npyFile{descr: "<i8", shape: []int{6}}.write(t, dir, "osc_groups_idx.npy", []float64{0, 0, 1, 1, 2, 2}),
			"--saveat", oscSave, "--fit", "w,c", "--sigma", "0.01", "--start", "w=1.2,c=0.2"}, truth})
	}
	// Groups, final states: four groups of decays, each group observed
	// at t1 = 0.5, 1, 1.5, 2 and fitting its own initial value and rate,
	// the groups interleaved (trajectory i in group i mod 4).
	{
		truth := [][]float64{{0.3, 1}, {0.5, 2}, {0.8, 0.5}, {1.2, 1.5}}
		var t1, y, idx []float64
		for i := range 16 {
			g, s := i%4, 0.5*float64(i/4+1)
			t1 = append(t1, s)
			idx = append(idx, float64(g))
			y = append(y, decayExact(truth[g][1], truth[g][0], s))
		}
		cases = append(cases, heldOut{"groups/final", 4, []string{decayODE,
			"--t1", f8(16).write(t, dir, "decay_t1.npy", t1),
			"--data", f8(16, 1).write(t, dir, "decay_groups.npy", noisy(rng, 0.003, y)),
			"--groups", npyFile{descr: "<i8", shape: []int{16}}.write(t, dir, "decay_groups_idx.npy", idx),
			"--fit", "k,y0.y", "--sigma", "0.003"}, truth})
	}

	worst := 0.0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := len(c.truth[0])
			res := runHeldOut(t, c.groups, p, c.args...)
			for g, truth := range c.truth {
				for j, want := range truth {
					est, se := res.est[g*p+j], res.r.StdErr[g][j]
					if !(se > 0) || math.Abs(se-math.Sqrt(res.cov[(g*p+j)*p+j])) > 1e-12*se {
						t.Errorf("group %d %s: stderr %g, covariance diagonal %g", g, res.r.Parameters[j], se, res.cov[(g*p+j)*p+j])
						continue
					}
					pull := (est - want) / se
					worst = math.Max(worst, math.Abs(pull))
					if math.Abs(pull) > 3.5 {
						t.Errorf("group %d %s = %.6g ± %.2g: %.2f standard errors from the truth %g", g, res.r.Parameters[j], est, se, pull, want)
					}
				}
			}
		})
	}
	t.Logf("largest |estimate − truth|/stderr: %.2f", worst)
}

// calibrationM is the number of independent noisy data sets of each
// calibration run.
const calibrationM = 2000

// Calibration of --fisher: M independent noisy data sets of one truth,
// fitted in one run as M fits (--each: one per trajectory; --groups: M
// groups of trajectories sharing their values). The standardized pulls
// z = (estimate − truth)/stderr of each fitted quantity must have mean
// 0 and standard deviation 1, and the quadratic form
// q = Δᵀ C⁻¹ Δ with the reported covariance C, which is χ² with p
// degrees of freedom, mean p.
//
// Tolerances, from M alone: for M independent N(0, 1) pulls the sample
// mean has standard deviation 1/√M and the sample standard deviation
// about 1/√(2M); the mean of q has standard deviation √(2p/M). Each is
// allowed 3 of its standard deviations: |mean z| ≤ 3/√M,
// |sd z − 1| ≤ 3/√(2M), |mean q − p| ≤ 3·√(2p/M). With M = 2000 these
// are 0.067, 0.047 and 0.134 (p = 2): error bars off by 5% or more fail
// (7.5% too small, from a --sigma of 0.0185 for noise of 0.02, gives
// sd 1.06 and mean q 2.30). The Gaussian approximation itself (first
// order in σ) is good to well under that here: the relative errors of
// the estimates are about 1% or less. The 2 × 2000 fits take under a
// second.
func TestFitHeldOutCalibration(t *testing.T) {
	M := calibrationM
	dir := t.TempDir()
	save := parseTimes(t, oscSave)
	k := len(save)

	type calibration struct {
		name  string
		p     int
		args  []string
		truth []float64
	}
	var cases []calibration
	// Per trajectory, saved states: the oscillator from (1, 0) with
	// (w, c) = (1.1, 0.25), each trajectory its own data set, σ = 0.02.
	{
		rng := rand.New(rand.NewPCG(15, 2))
		var y []float64
		for range M {
			for _, s := range save {
				x, v := oscillatorExact(1, 0, 1.1, 0.25, s)
				y = append(y, x, v)
			}
		}
		cases = append(cases, calibration{"each/saved", 2, []string{oscODE,
			"--data", f8(M, k, 2).write(t, dir, "osc_cal.npy", noisy(rng, 0.02, y)),
			"--saveat", oscSave, "--fit", "w,c", "--each", "--sigma", "0.02"}, []float64{1.1, 0.25}})
	}
	// Groups, final states: logistic growth (r, K) = (0.6, 1.5) from
	// y0 = 0.1, each group three trajectories observed once at t1 = 3,
	// 6, 12, σ = 0.01.
	{
		rng := rand.New(rand.NewPCG(15, 3))
		var y, t1, idx []float64
		for g := range M {
			for _, s := range []float64{3, 6, 12} {
				t1 = append(t1, s)
				idx = append(idx, float64(g))
				y = append(y, logisticExact(0.1, 0.6, 1.5, s))
			}
		}
		n := len(y)
		cases = append(cases, calibration{"groups/final", 2, []string{logisticODE,
			"--t1", f8(n).write(t, dir, "log_cal_t1.npy", t1),
			"--data", f8(n, 1).write(t, dir, "log_cal.npy", noisy(rng, 0.01, y)),
			"--groups", npyFile{descr: "<i8", shape: []int{n}}.write(t, dir, "log_cal_groups.npy", idx),
			"--fit", "r,K", "--sigma", "0.01"}, []float64{0.6, 1.5}})
	}

	mTol, sdTol := 3/math.Sqrt(float64(M)), 3/math.Sqrt(2*float64(M))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			res := runHeldOut(t, M, p, c.args...)
			var sum, sum2 [8]float64
			qSum := 0.0
			for g := range M {
				d := make([]float64, p)
				for j := range p {
					d[j] = res.est[g*p+j] - c.truth[j]
					z := d[j] / res.r.StdErr[g][j]
					sum[j] += z
					sum2[j] += z * z
				}
				qSum += quadInv(res.cov[g*p*p:(g+1)*p*p], d)
			}
			for j := range p {
				mean := sum[j] / float64(M)
				sd := math.Sqrt((sum2[j] - float64(M)*mean*mean) / float64(M-1))
				t.Logf("%s: M = %d, pulls: mean %+.3f (±%.3f allowed), sd %.3f (1 ± %.3f allowed)", res.r.Parameters[j], M, mean, mTol, sd, sdTol)
				if math.Abs(mean) > mTol || math.Abs(sd-1) > sdTol {
					t.Errorf("%s: pulls over %d data sets have mean %.3f, sd %.3f: want 0 ± %.3f and 1 ± %.3f", res.r.Parameters[j], M, mean, sd, mTol, sdTol)
				}
			}
			qMean, qTol := qSum/float64(M), 3*math.Sqrt(2*float64(p)/float64(M))
			t.Logf("Δᵀ C⁻¹ Δ: mean %.3f (%d ± %.3f allowed)", qMean, p, qTol)
			if math.Abs(qMean-float64(p)) > qTol {
				t.Errorf("Δᵀ C⁻¹ Δ over %d data sets: mean %.3f, want %d ± %.3f", M, qMean, p, qTol)
			}
		})
	}
}

// quadInv returns dᵀ C⁻¹ d for a symmetric positive definite C
// (len(d) × len(d), row-major), by Cholesky factorization.
func quadInv(c, d []float64) float64 {
	p := len(d)
	l := make([]float64, p*p)
	for i := range p {
		for j := 0; j <= i; j++ {
			s := c[i*p+j]
			for m := range j {
				s -= l[i*p+m] * l[j*p+m]
			}
			if i == j {
				l[i*p+i] = math.Sqrt(s)
			} else {
				l[i*p+j] = s / l[j*p+j]
			}
		}
	}
	q := 0.0
	y := make([]float64, p)
	for i := range p { // L y = d
		s := d[i]
		for m := range i {
			s -= l[i*p+m] * y[m]
		}
		y[i] = s / l[i*p+i]
		q += y[i] * y[i]
	}
	return q
}

// f32 rounds values to float32, as a '<f4' file holds them.
func f32(values []float64) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		out[i] = float64(float32(v))
	}
	return out
}

// runBits runs a command that writes --out DIR and returns the bytes
// of the named output files, concatenated.
func runBits(t *testing.T, files []string, args ...string) []byte {
	t.Helper()
	out := t.TempDir()
	if _, _, err := runCmd(append(args, "--out", out, "-q")...); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var b []byte
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, data...)
	}
	return b
}

// The .npy files others write: float32, big-endian, Fortran order,
// format versions 1.0, 2.0 and 3.0, integer and bool group indices,
// (n,) and (n, k) arrays for a one-state problem. Each variant holds
// the same numbers as the plain '<f8' C-order file of the baseline (or,
// for float32, the float32-rounded numbers), so the fit's estimates
// and covariance must be bitwise those of the baseline. The files go
// to every file flag of gradsolve fit; solve, which reads --y0 and
// --params with the same reader, is checked too.
func TestFitForeignNpy(t *testing.T) {
	dir := t.TempDir()
	fitOut := []string{"params_fit.npy", "covariance.npy"}
	rng := rand.New(rand.NewPCG(15, 4))
	save := parseTimes(t, oscSave)
	k := len(save)
	file := func(f npyFile, values []float64) string {
		return f.write(t, dir, fmt.Sprintf("f%d.npy", rng.Uint64()), values)
	}

	// The oscillator: 4 trajectories in groups 0 0 1 1, saved states,
	// every input from a file. The inputs other than the data are
	// float32-exact, so that their '<f4' files hold the same numbers.
	type input struct {
		flag   string
		shape  []int
		values []float64
	}
	var data []float64
	y0 := []float64{1, 0, 2, -1, 0.5, 0.25, -1, 0.5}
	for i := range 4 {
		for _, s := range save {
			x, v := oscillatorExact(y0[2*i], y0[2*i+1], 1.1, 0.2, s)
			data = append(data, x, v)
		}
	}
	data = noisy(rng, 0.01, data)
	var weights []float64
	for s := range k {
		for d := range 2 {
			weights = append(weights, 5000*float64(int(1)<<((s+2*d)%3))) // 5000, 10000, 20000: not symmetric under transposition
		}
	}
	inputs := []input{
		{"--data", []int{4, k, 2}, data},
		{"--y0", []int{4, 2}, y0},
		{"--params", []int{4, 2}, []float64{1.25, 0.25, 1.25, 0.25, 1.5, 0.125, 1.5, 0.125}},
		{"--weights", []int{k, 2}, weights},
		{"--groups", []int{4}, []float64{0, 0, 1, 1}},
	}
	oscArgs := func(files map[string]string) []string {
		args := []string{"fit", oscODE, "--saveat", oscSave, "--fit", "w,c", "--fisher"}
		for _, in := range inputs {
			args = append(args, in.flag, files[in.flag])
		}
		return args
	}
	plain := map[string]string{}
	for _, in := range inputs {
		plain[in.flag] = file(f8(in.shape...), in.values)
	}
	base := runBits(t, fitOut, oscArgs(plain)...)
	plainF32 := map[string]string{}
	for flag, path := range plain {
		plainF32[flag] = path
	}
	plainF32["--data"] = file(f8(4, k, 2), f32(data))
	baseF32 := runBits(t, fitOut, oscArgs(plainF32)...)
	if string(base) == string(baseF32) {
		t.Fatal("float32-rounded data gave the same fit: the float32 cases would test nothing")
	}

	variants := []struct {
		name    string
		descr   string
		fortran bool
		version byte
	}{
		{"big-endian >f8", ">f8", false, 1},
		{"Fortran order", "<f8", true, 1},
		{"Fortran order, big-endian", ">f8", true, 1},
		{"version 2.0", "<f8", false, 2},
		{"version 3.0", "<f8", false, 3},
		{"version 3.0, Fortran, big-endian", ">f8", true, 3},
		{"float32 <f4", "<f4", false, 1},
		{"float32 >f4, Fortran", ">f4", true, 1},
		{"int64 <i8", "<i8", false, 1},
		{"int32 <i4", "<i4", false, 1},
		{"int64 >i8, Fortran", ">i8", true, 2},
		{"int16 <i2", "<i2", false, 1},
		{"uint8 |u1", "|u1", false, 1},
		{"int8 |i1", "|i1", false, 1},
	}
	for _, in := range inputs {
		for _, v := range variants {
			integer := v.descr[1] == 'i' || v.descr[1] == 'u'
			if integer && in.flag != "--groups" && in.flag != "--weights" {
				continue // float data as integers: not the same numbers
			}
			if in.flag == "--weights" && integer && v.descr[2] != '8' && v.descr[2] != '4' {
				continue // 20000 does not fit 1 or 2 bytes
			}
			t.Run(in.flag+"/"+v.name, func(t *testing.T) {
				files := map[string]string{}
				for flag, path := range plain {
					files[flag] = path
				}
				f := npyFile{descr: v.descr, fortran: v.fortran, version: v.version, shape: in.shape}
				files[in.flag] = file(f, in.values)
				want := base
				if in.flag == "--data" && v.descr[1:] == "f4" {
					want = baseF32
				}
				if got := runBits(t, fitOut, oscArgs(files)...); string(got) != string(want) {
					t.Errorf("%s as %s (fortran %v, version %d): the fit differs from the plain file's", in.flag, v.descr, v.fortran, v.version)
				}
			})
		}
	}
	// Group indices as bool, np.array([False, False, True, True]).
	t.Run("--groups/bool |b1", func(t *testing.T) {
		files := map[string]string{}
		for flag, path := range plain {
			files[flag] = path
		}
		b := npyFile{descr: "|b1", shape: []int{4}}.bytes(t, nil)
		files["--groups"] = filepath.Join(dir, "groups_bool.npy")
		if err := os.WriteFile(files["--groups"], append(b, 0, 0, 1, 1), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := runBits(t, fitOut, oscArgs(files)...); string(got) != string(base) {
			t.Error("--groups as bool: the fit differs from the plain file's")
		}
	})

	// A one-state problem: (n,) for (n, 1) and (n, k) for (n, k, 1).
	t.Run("one state", func(t *testing.T) {
		t1 := []float64{1, 2, 3, 4, 5, 6}
		y0d := []float64{1, 2, 1.5, 0.5, 1, 2}
		var yd []float64
		for i, s := range t1 {
			yd = append(yd, decayExact(y0d[i], 0.4, s))
		}
		yd = noisy(rng, 0.003, yd)
		wd := []float64{1e5, 2e5, 1e5, 5e4, 1e5, 2e5}
		decay := func(data, t1f, y0f, wf, pf string) []string {
			return []string{"fit", decayODE, "--data", data, "--t1", t1f, "--y0", y0f, "--weights", wf, "--params", pf, "--fit", "k", "--fisher"}
		}
		p := []float64{0.3, 0.3, 0.3, 0.3, 0.3, 0.3}
		want := runBits(t, fitOut, decay(file(f8(6, 1), yd), file(f8(6), t1), file(f8(6, 1), y0d), file(f8(6, 1), wd), file(f8(6, 1), p))...)
		for _, c := range []struct {
			name string
			args []string
		}{
			{"(n,) data, y0, weights, params", decay(file(f8(6), yd), file(f8(6), t1), file(f8(6), y0d), file(f8(6), wd), file(f8(6), p))},
			{"Fortran (n, 1), int64 t1", decay(file(npyFile{descr: "<f8", fortran: true, shape: []int{6, 1}}, yd),
				file(npyFile{descr: "<i8", shape: []int{6}}, t1), file(f8(6, 1), y0d), file(f8(6, 1), wd), file(f8(6, 1), p))},
			{"int32 t1, >f8 y0, <f4 weights", decay(file(f8(6, 1), yd), file(npyFile{descr: "<i4", shape: []int{6}}, t1),
				file(npyFile{descr: ">f8", shape: []int{6}}, y0d), file(npyFile{descr: "<f4", shape: []int{6}}, wd), file(f8(6), p))},
		} {
			if got := runBits(t, fitOut, c.args...); string(got) != string(want) {
				t.Errorf("decay, %s: the fit differs from the (n, 1) files'", c.name)
			}
		}

		// Saved states: logistic growth, (n, k) data and (k,) weights.
		const ls = "1,2,4,8"
		var yl []float64
		for i := range 3 {
			for _, s := range parseTimes(t, ls) {
				yl = append(yl, logisticExact(0.1, 0.5+0.1*float64(i), 1.5, s))
			}
		}
		yl = noisy(rng, 0.01, yl)
		wl := []float64{1e4, 2e4, 1e4, 5e3}
		logistic := func(data, w string) []string {
			return []string{"fit", logisticODE, "--data", data, "--weights", w, "--saveat", ls, "--fit", "r,K", "--each", "--fisher"}
		}
		want = runBits(t, fitOut, logistic(file(f8(3, 4, 1), yl), file(f8(4, 1), wl))...)
		if got := runBits(t, fitOut, logistic(file(f8(3, 4), yl), file(f8(4), wl))...); string(got) != string(want) {
			t.Error("logistic: (n, k) data and (k,) weights: the fit differs from the (n, k, 1) and (k, 1) files'")
		}
		if got := runBits(t, fitOut, logistic(file(npyFile{descr: ">f8", fortran: true, shape: []int{3, 4}}, yl), file(f8(3, 4), repeatRows(wl, 3)))...); string(got) != string(want) {
			t.Error("logistic: Fortran (n, k) data and (n, k) weights: the fit differs from the (n, k, 1) and (k, 1) files'")
		}
		if got := runBits(t, fitOut, logistic(file(f8(3, 4, 1), yl), file(npyFile{descr: "<f4", shape: []int{1, 4}}, wl))...); string(got) != string(want) {
			t.Error("logistic: (1, k) float32 weights: the fit differs from the (k, 1) file's")
		}
	})

	// solve reads --y0 and --params with the same reader.
	t.Run("solve", func(t *testing.T) {
		solve := func(y0f, pf string) []string {
			return []string{"solve", oscODE, "--y0", y0f, "--params", pf}
		}
		y := []string{"y_final.npy"}
		want := runBits(t, y, solve(plain["--y0"], plain["--params"])...)
		got := runBits(t, y, solve(file(npyFile{descr: ">f8", fortran: true, version: 3, shape: []int{4, 2}}, y0),
			file(npyFile{descr: "<f4", fortran: true, shape: []int{4, 2}}, inputs[2].values))...)
		if string(got) != string(want) {
			t.Error("solve: Fortran big-endian --y0 and float32 --params give other final states than the plain files")
		}
		// A one-state problem's (n,) initial states give n, as (n, 1) does.
		y0d := []float64{1, 2, 3}
		want = runBits(t, y, "solve", decayODE, "--y0", file(f8(3, 1), y0d))
		if got := runBits(t, y, "solve", decayODE, "--y0", file(f8(3), y0d)); string(got) != string(want) {
			t.Error("solve: (n,) --y0 of a one-state problem differs from (n, 1)")
		}
	})
}

// What a .npy reader cannot hold is refused with a line naming the
// flag, the file and what is wrong.
func TestFitForeignNpyRefused(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, f npyFile, n int) string {
		return f.write(t, dir, name, make([]float64, n))
	}
	final := f8(4, 1).write(t, dir, "final.npy", []float64{1, 0.9, 0.8, 0.7})
	base := []string{"fit", decayODE, "--data", final, "--fit", "k"}
	with := func(args ...string) []string { return append(append([]string{}, base...), args...) }
	var cases []msgCase
	add := func(args []string, flag, path, what string) {
		cases = append(cases, msgCase{args, flag + ": " + path + ": " + what})
	}
	p := file("complex.npy", npyFile{descr: "<c16", shape: []int{4, 1}}, 4)
	add([]string{"fit", decayODE, "--data", p, "--fit", "k"}, "--data", p, `complex dtype "<c16" is not supported; want a real numeric array`)
	p = file("object.npy", npyFile{descr: "|O", shape: []int{4, 1}}, 4)
	add([]string{"fit", decayODE, "--data", p, "--fit", "k"}, "--data", p, `object dtype "|O" (pickled Python objects) is not supported`)
	p = file("v4.npy", npyFile{descr: "<f8", version: 4, shape: []int{4, 1}}, 4)
	add([]string{"fit", decayODE, "--data", p, "--fit", "k"}, "--data", p, "unsupported .npy format version 4.0 (want 1.0, 2.0 or 3.0)")
	p = file("native.npy", npyFile{descr: "=f8", shape: []int{4, 1}}, 4)
	add([]string{"fit", decayODE, "--data", p, "--fit", "k"}, "--data", p, `dtype "=f8" has native byte order`)
	p = file("groups_str.npy", npyFile{descr: "<U1", shape: []int{4}}, 4)
	add(with("--groups", p), "--groups", p, `string dtype "<U1" is not supported`)
	p = file("groups_bytes.npy", npyFile{descr: "|S1", shape: []int{4}}, 4)
	add(with("--groups", p), "--groups", p, `string dtype "|S1" is not supported`)
	p = file("weights_f16.npy", npyFile{descr: "<f16", shape: []int{4, 1}}, 4)
	add(with("--weights", p), "--weights", p, `extended-precision float dtype "<f16" (np.longdouble) is not supported`)
	p = file("y0_struct.npy", npyFile{descr: "[('y', '<f8')]", shape: []int{4}}, 4)
	add(with("--y0", p), "--y0", p, "structured dtype (descr is a list of fields) is not supported")
	p = file("params_c8.npy", npyFile{descr: "<c8", shape: []int{4, 1}}, 4)
	add(with("--params", p), "--params", p, `complex dtype "<c8" is not supported`)
	p = file("t1_dt.npy", npyFile{descr: "<M8[s]", shape: []int{4}}, 4)
	add(with("--t1", p), "--t1", p, `datetime/timedelta dtype "<M8[s]" is not supported`)
	p = file("solve_y0.npy", npyFile{descr: "<c16", shape: []int{4, 1}}, 4)
	add([]string{"solve", decayODE, "--y0", p}, "--y0", p, `complex dtype "<c16" is not supported`)
	checkMessages(t, cases, true, true)
}
