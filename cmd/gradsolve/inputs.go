package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/ode"
)

// sweep is one --param NAME=LO:HI.
type sweep struct {
	name   string
	index  int
	lo, hi float64
}

// inputs is the ensemble the flags describe.
type inputs struct {
	ens    *gradsolve.Ensemble
	sweeps []sweep
	nFrom  string // the file that gave n, or "" for --n and the default
	k      int    // save times per trajectory
}

// isNpy reports whether a flag value names a .npy file.
func isNpy(s string) bool { return strings.HasSuffix(strings.ToLower(s), ".npy") }

// loaded is a .npy file read for a flag.
type loaded struct {
	flag, path string
	a          *npy.Array
}

func (l *loaded) name() string { return "--" + l.flag + " " + l.path }

// load reads the .npy file of a flag; every number in it must be
// finite.
func load(flag, path string) (*loaded, error) {
	a, err := npy.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	l := &loaded{flag, path, a}
	for i, v := range a.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: element %s = %g is not finite", l.name(), index(a.Shape, i), v)
		}
	}
	return l, nil
}

// index writes the flat index i of an array of the given shape as
// NumPy's [i0, i1, …].
func index(shape []int, i int) string {
	if len(shape) == 0 {
		return "[]"
	}
	idx := make([]string, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = strconv.Itoa(i % max(shape[d], 1))
		i /= max(shape[d], 1)
	}
	return "[" + strings.Join(idx, ", ") + "]"
}

// buildEnsemble turns the flags into an ensemble for pr. It calls check
// with the ensemble's size and save times once they are known, before
// it builds anything of that size.
func buildEnsemble(pr *ode.Problem, fl *solveFlags, builtin bool, check func(sizeFlags) error) (*inputs, error) {
	dim, m := pr.Dim, pr.NumParams
	var files []*loaded
	get := func(flag, v string) (*loaded, error) {
		if v == "" || !isNpy(v) {
			return nil, nil
		}
		l, err := load(flag, v)
		if err == nil {
			files = append(files, l)
		}
		return l, err
	}
	pf, err := get("params", fl.paramsFile)
	if err != nil {
		return nil, err
	}
	if fl.paramsFile != "" && pf == nil {
		return nil, fmt.Errorf("--params %s: want a .npy file", fl.paramsFile)
	}
	yf, err := get("y0", fl.y0)
	if err != nil {
		return nil, err
	}
	if fl.y0 != "" && yf == nil {
		return nil, fmt.Errorf("--y0 %s: want a .npy file", fl.y0)
	}
	t0f, err := get("t0", fl.t0)
	if err != nil {
		return nil, err
	}
	t1f, err := get("t1", fl.t1)
	if err != nil {
		return nil, err
	}
	sf, err := get("saveat", fl.saveat)
	if err != nil {
		return nil, err
	}

	// The ensemble size: --n, or the leading axis of per-trajectory files.
	n := fl.n
	if n < 0 {
		return nil, fmt.Errorf("--n = %d: must be ≥ 1", n)
	}
	nFrom := "--n"
	for _, l := range files {
		rows := -1
		switch {
		case l == pf || l == yf:
			width := dim
			if l == pf {
				width = m
			}
			switch {
			case l.a.Dims() == 2:
				rows = l.a.Shape[0]
			case width == 1 && l.a.Dims() == 1 && l.a.Shape[0] != 1:
				rows = l.a.Shape[0] // (n,): one value per trajectory
			}
		case l == t0f || l == t1f:
			if l.a.Dims() == 1 && l.a.Shape[0] != 1 {
				rows = l.a.Shape[0]
			}
		case l == sf:
			if l.a.Dims() == 2 {
				rows = l.a.Shape[0]
			}
		}
		if rows < 0 {
			continue
		}
		if n == 0 {
			n, nFrom = rows, l.name()
		} else if rows != n {
			return nil, fmt.Errorf("%s has %d rows but %s gives n = %d", l.name(), rows, nFrom, n)
		}
	}
	if n == 0 {
		n = 1
		if builtin {
			n = 10000
		}
	}
	if fl.n == 0 && n < 1 {
		return nil, fmt.Errorf("%s: n = %d: need at least one trajectory", nFrom, n)
	}
	in := &inputs{ens: &gradsolve.Ensemble{N: n}}
	if nFrom != "--n" {
		in.nFrom = nFrom
	}
	ens := in.ens

	// Save times, first: their number sets the size of the job.
	var saveList []float64
	sizes := sizeFlags{n: n, nFrom: nFrom}
	switch {
	case sf != nil:
		if sf.a.Dims() == 2 {
			if err := shapeErr(sf, "(n × k)", []int{n, -1}); err != nil {
				return nil, err
			}
			in.k = sf.a.Shape[1]
		} else {
			if err := shapeErr(sf, "(k)", []int{-1}, []int{n, -1}); err != nil {
				return nil, err
			}
			in.k = len(sf.a.Data)
		}
		sizes.kFrom = sf.name()
	case fl.saveat != "":
		if saveList, err = parseNumberList(fl.saveat); err != nil {
			return nil, fmt.Errorf("--saveat: %v: want T1,T2,… or a .npy file", err)
		}
		in.k, sizes.kFrom = len(saveList), "--saveat"
	}
	sizes.k = in.k
	if err := check(sizes); err != nil {
		return nil, err
	}

	// Parameters: defaults or --params, then each --param on top.
	if pf != nil {
		if err := shapeErr(pf, "(n × params)", perRow(n, m)...); err != nil {
			return nil, err
		}
		ens.P = pf.a.Data
	}
	owned := false // ens.P is a copy of ours
	for _, spec := range fl.params {
		name, val, ok := strings.Cut(spec, "=")
		if !ok {
			return nil, fmt.Errorf("--param %q: want NAME=VALUE or NAME=LO:HI", spec)
		}
		j := slices.Index(pr.ParamNames, name)
		if j < 0 {
			return nil, fmt.Errorf("--param %q: %s has no parameter %q (parameters: %s)", spec, pr.Name, name, strings.Join(pr.ParamNames, ", "))
		}
		lo, hi := val, val
		if a, b, ok := strings.Cut(val, ":"); ok {
			lo, hi = a, b
		}
		vlo, err1 := strconv.ParseFloat(lo, 64)
		vhi, err2 := strconv.ParseFloat(hi, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("--param %q: want NAME=VALUE or NAME=LO:HI with numbers", spec)
		}
		if math.IsInf(vlo, 0) || math.IsInf(vhi, 0) || math.IsNaN(vlo) || math.IsNaN(vhi) {
			return nil, fmt.Errorf("--param %q: the values must be finite", spec)
		}
		if ens.P == nil {
			if pr.P == nil {
				return nil, fmt.Errorf("--param %q: %s has no default parameters; give --params FILE.npy", spec, pr.Name)
			}
			ens.P = append([]float64(nil), pr.P...)
			owned = true
		}
		if len(ens.P) == m && (vlo != vhi) && n > 1 {
			ens.P, owned = repeatRows(ens.P, n), true
		}
		if !owned { // the --params file's array: change a copy
			ens.P, owned = append([]float64(nil), ens.P...), true
		}
		if len(ens.P) == m {
			ens.P[j] = vlo
			continue
		}
		for i := range n {
			v := vlo
			if n > 1 {
				v = vlo + (vhi-vlo)*float64(i)/float64(n-1)
			}
			ens.P[i*m+j] = v
		}
		if vlo != vhi {
			in.sweeps = append(in.sweeps, sweep{name, j, vlo, vhi})
		}
	}

	// Initial states.
	if yf != nil {
		if err := shapeErr(yf, "(n × states)", perRow(n, dim)...); err != nil {
			return nil, err
		}
		ens.Y0 = yf.a.Data
	}

	// Time span.
	span := func(flag, v string, f *loaded) ([]float64, error) {
		switch {
		case f != nil:
			if err := shapeErr(f, "(n)", []int{n}, []int{1}, []int{}); err != nil {
				return nil, err
			}
			return f.a.Data, nil
		case v != "":
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("--%s %q: want a number or a .npy file", flag, v)
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("--%s %q: the time must be finite", flag, v)
			}
			return []float64{x}, nil
		}
		return nil, nil
	}
	if ens.T0, err = span("t0", fl.t0, t0f); err != nil {
		return nil, err
	}
	if ens.T1, err = span("t1", fl.t1, t1f); err != nil {
		return nil, err
	}
	if ens.T0 != nil || ens.T1 != nil {
		if pr.T0 == pr.T1 && (ens.T0 == nil || ens.T1 == nil) {
			return nil, fmt.Errorf("%s has no span: give both --t0 and --t1", pr.Name)
		}
		if ens.T0 == nil {
			ens.T0 = []float64{pr.T0}
		}
		if ens.T1 == nil {
			ens.T1 = []float64{pr.T1}
		}
		if err := checkSpanLength(ens, n, fl.t0, fl.t1, t0f, t1f); err != nil {
			return nil, err
		}
	}

	// Save times.
	switch {
	case sf != nil:
		ens.Save, ens.SavePerTrajectory = sf.a.Data, sf.a.Dims() == 2
	case saveList != nil:
		ens.Save = saveList
	}
	return in, nil
}

// checkSpanLength refuses a span whose length t1 − t0 is not a finite
// number (times of opposite signs near ±1.8e308), naming the flags or
// files and the row.
func checkSpanLength(ens *gradsolve.Ensemble, n int, t0, t1 string, t0f, t1f *loaded) error {
	source := func(flag, v string, f *loaded, times []float64, i int) string {
		switch {
		case f != nil && len(times) > 1:
			return fmt.Sprintf("%s (row %d: %g)", f.name(), i, times[i])
		case f != nil:
			return fmt.Sprintf("%s (%g)", f.name(), times[0])
		case v != "":
			return fmt.Sprintf("--%s %s", flag, v)
		}
		return fmt.Sprintf("the problem's %s = %g", flag, times[0])
	}
	for i := range n {
		a, b := ens.T0[min(i, len(ens.T0)-1)], ens.T1[min(i, len(ens.T1)-1)]
		if math.IsInf(b-a, 0) {
			return fmt.Errorf("%s and %s: the span's length t1 − t0 overflows to ±Inf: give times whose difference is a finite number",
				source("t0", t0, t0f, ens.T0, i), source("t1", t1, t1f, ens.T1, i))
		}
		if len(ens.T0) == 1 && len(ens.T1) == 1 {
			break
		}
	}
	return nil
}

func shapeErr(l *loaded, meaning string, shapes ...[]int) error {
	if err := l.a.Check(l.name(), shapes...); err != nil {
		return fmt.Errorf("%w %s", err, meaning)
	}
	return nil
}

// perRow are the shapes of a file of width values per trajectory: one
// row per trajectory (n × width) or one row for all (width); for
// width 1 also (n,), which NumPy users write for one value per
// trajectory (np.array([…]) rather than a column).
func perRow(n, width int) [][]int {
	shapes := [][]int{{n, width}, {width}}
	if width == 1 && n > 1 {
		shapes = append(shapes, []int{n})
	}
	return shapes
}

func repeatRows(row []float64, n int) []float64 {
	out := make([]float64, 0, n*len(row))
	for range n {
		out = append(out, row...)
	}
	return out
}
