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

// inputs is the ensemble the flags describe, made part by part (part)
// so that no array of n rows need exist: the values every trajectory
// shares, the per-trajectory rows of the input files, and the --param
// specs, applied to each row as it is made.
type inputs struct {
	ens      *gradsolve.Ensemble // the whole ensemble, once whole made it
	n        int                 // trajectories of the run (of its shard, with one)
	total    int                 // trajectories of the whole ensemble
	off      int                 // the run's first row in the whole ensemble
	dim, m   int
	shared   gradsolve.Ensemble // the shared values (N unset)
	pRows    *rowSource         // --params, n×m; nil when shared
	y0Rows   *rowSource         // --y0, n×dim; nil when shared
	t0Rows   *rowSource         // --t0 FILE, n; nil when shared
	t1Rows   *rowSource         // --t1 FILE, n; nil when shared
	saveRows *rowSource         // --saveat FILE, n×k; nil when shared
	specs    []sweep            // every --param in order (lo = hi for NAME=VALUE)
	sweeps   []sweep            // the specs with lo ≠ hi
	nFrom    string             // the file that gave n, or "" for --n and the default
	k        int                // save times per trajectory
}

// isNpy reports whether a flag value names a .npy file.
func isNpy(s string) bool { return strings.HasSuffix(strings.ToLower(s), ".npy") }

// loaded is a .npy file read for a flag: held whole (a.Data), or, for
// solve's and grad's per-trajectory inputs, open for reading by rows
// (rows; a.Data nil until data reads it whole).
type loaded struct {
	flag, path string
	a          *npy.Array
	rows       *npy.Rows
	off        int // a shard's first row in the file (streamed; take)
}

func (l *loaded) name() string { return "--" + l.flag + " " + l.path }

// load reads the .npy file of a flag; every number in it must be
// finite.
func load(flag, path string) (*loaded, error) {
	a, err := npy.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	l := &loaded{flag: flag, path: path, a: a}
	for i, v := range a.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: element %s = %g is not finite", l.name(), index(a.Shape, i), v)
		}
	}
	return l, nil
}

// openInput opens the .npy file of a flag for reading by rows, after a
// pass over it that checks, a block of rows at a time, what load checks
// (every number finite, exactly a float64): so its rows can be read a
// chunk at a time later, and its errors are load's, in load's words. A
// file that has no rows (a scalar) is loaded whole.
func openInput(flag, path string) (*loaded, error) {
	return openChecked(flag, path, false)
}

// openChecked is openInput; weights also refuses negative values, as
// loadWeights does.
func openChecked(flag, path string, weights bool) (*loaded, error) {
	r, err := npy.OpenRows(path)
	if err != nil {
		if weights {
			return loadWeights(flag, path)
		}
		return load(flag, path) // load words what is wrong (or reads a scalar)
	}
	l := &loaded{flag: flag, path: path, a: &npy.Array{Shape: r.Shape()}, rows: r}
	n, w := l.a.Shape[0], r.RowLen()
	block := max(1, (1<<16)/max(w, 1))
	var buf []float64
	for lo := 0; lo < n; lo += block {
		if buf, err = r.Read(lo, min(n, lo+block), buf); err != nil {
			r.Close()
			return nil, fmt.Errorf("--%s: %w", flag, err)
		}
		for i, v := range buf {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				r.Close()
				return nil, fmt.Errorf("%s: element %s = %g is not finite", l.name(), index(l.a.Shape, lo*w+i), v)
			}
		}
		for i, v := range buf {
			if weights && v < 0 {
				r.Close()
				return nil, fmt.Errorf("%s: element %s = %g: weights must be finite and ≥ 0", l.name(), index(l.a.Shape, lo*w+i), v)
			}
		}
	}
	return l, nil
}

// sharedRow reports whether a file of perRow's shapes holds the one
// row of width values every trajectory shares (shape (width)), not a
// row per trajectory.
func sharedRow(l *loaded, width, n int) bool {
	return l.a.Dims() == 1 && l.a.Shape[0] == width && (width != n || n == 1)
}

// data returns the file's values (of a shard's rows, after take),
// reading them whole if they were not.
func (l *loaded) data() ([]float64, error) {
	if l.a.Data == nil && l.rows != nil {
		v, err := l.rows.Read(l.off, l.off+l.a.Shape[0], nil)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", l.flag, err)
		}
		l.a.Data = v
		l.rows.Close()
		l.rows = nil
	}
	return l.a.Data, nil
}

// source makes the file a per-trajectory input read a chunk of rows at
// a time.
func (l *loaded) source() *rowSource {
	return &rowSource{l: l}
}

// rowSource is a per-trajectory input file, read by rows as the chunks
// of the run need them.
type rowSource struct {
	l *loaded
}

// get returns the rows [lo, hi) of the whole ensemble (a new slice:
// the chunk's ensemble keeps it while it is solved).
func (s *rowSource) get(lo, hi int) ([]float64, error) {
	if s.l.rows == nil { // read whole (data)
		w := len(s.l.a.Data) / max(s.l.a.Shape[0], 1)
		return s.l.a.Data[lo*w : hi*w : hi*w], nil
	}
	v, err := s.l.rows.Read(s.l.off+lo, s.l.off+hi, nil)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", s.l.flag, err)
	}
	return v, nil
}

// close closes the input files still open.
func (in *inputs) close() {
	for _, s := range []*rowSource{in.pRows, in.y0Rows, in.t0Rows, in.t1Rows, in.saveRows} {
		if s != nil && s.l.rows != nil {
			s.l.rows.Close()
		}
	}
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
		l, err := openInput(flag, v)
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
	in := &inputs{n: n, total: n, dim: dim, m: m}
	if nFrom != "--n" {
		in.nFrom = nFrom
	}
	sh := &in.shared

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
			in.k = sf.a.Shape[0]
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

	// Parameters: defaults or --params, then each --param on top. The
	// rows are made when a part of the ensemble is asked for (part),
	// so a sweep of n trajectories takes no memory of n.
	if pf != nil {
		if err := shapeErr(pf, "(n × params)", perRow(n, m)...); err != nil {
			return nil, err
		}
		if sharedRow(pf, m, n) {
			if sh.P, err = pf.data(); err != nil {
				return nil, err
			}
		} else {
			in.pRows = pf.source()
		}
	}
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
		if sh.P == nil && in.pRows == nil {
			if pr.P == nil {
				return nil, fmt.Errorf("--param %q: %s has no default parameters; give --params FILE.npy", spec, pr.Name)
			}
			sh.P = slices.Clone(pr.P)
		} else if sh.P != nil && len(in.specs) == 0 {
			sh.P = slices.Clone(sh.P) // the --params file's row: change a copy
		}
		in.specs = append(in.specs, sweep{name, j, vlo, vhi})
		if vlo != vhi {
			in.sweeps = append(in.sweeps, sweep{name, j, vlo, vhi})
		}
		if in.pRows == nil && !in.perRowP() {
			sh.P[j] = vlo // shared by every trajectory
		}
	}

	// Initial states.
	if yf != nil {
		if err := shapeErr(yf, "(n × states)", perRow(n, dim)...); err != nil {
			return nil, err
		}
		if sharedRow(yf, dim, n) {
			if sh.Y0, err = yf.data(); err != nil {
				return nil, err
			}
		} else {
			in.y0Rows = yf.source()
		}
	}

	// Time span: a number, a file of one value, or a file of n (read
	// by rows; its spans checked a block at a time).
	span := func(flag, v string, f *loaded) ([]float64, *rowSource, error) {
		switch {
		case f != nil:
			if err := shapeErr(f, "(n)", []int{n}, []int{1}, []int{}); err != nil {
				return nil, nil, err
			}
			if f.a.Dims() == 1 && f.a.Shape[0] == n && n > 1 {
				return nil, f.source(), nil
			}
			d, err := f.data()
			return d, nil, err
		case v != "":
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, nil, fmt.Errorf("--%s %q: want a number or a .npy file", flag, v)
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, nil, fmt.Errorf("--%s %q: the time must be finite", flag, v)
			}
			return []float64{x}, nil, nil
		}
		return nil, nil, nil
	}
	t0, t0s, err := span("t0", fl.t0, t0f)
	if err != nil {
		return nil, err
	}
	t1, t1s, err := span("t1", fl.t1, t1f)
	if err != nil {
		return nil, err
	}
	if t0 != nil || t1 != nil || t0s != nil || t1s != nil {
		if pr.T0 == pr.T1 && (t0 == nil && t0s == nil || t1 == nil && t1s == nil) {
			return nil, fmt.Errorf("%s has no span: give both --t0 and --t1", pr.Name)
		}
		if t0 == nil && t0s == nil {
			t0 = []float64{pr.T0}
		}
		if t1 == nil && t1s == nil {
			t1 = []float64{pr.T1}
		}
		const block = 1 << 16
		for lo := 0; lo < n; lo += block {
			hi := min(n, lo+block)
			b0, b1 := t0, t1
			if t0s != nil {
				if b0, err = t0s.get(lo, hi); err != nil {
					return nil, err
				}
			}
			if t1s != nil {
				if b1, err = t1s.get(lo, hi); err != nil {
					return nil, err
				}
			}
			if err := checkSpanLength(b0, b1, lo, hi-lo, fl.t0, fl.t1, t0f, t1f); err != nil {
				return nil, err
			}
			if len(b0) == 1 && len(b1) == 1 {
				break
			}
		}
		sh.T0, sh.T1, in.t0Rows, in.t1Rows = t0, t1, t0s, t1s
	}

	// Save times.
	switch {
	case sf != nil && sf.a.Dims() == 2:
		in.saveRows, sh.SavePerTrajectory = sf.source(), true
	case sf != nil:
		if sh.Save, err = sf.data(); err != nil {
			return nil, err
		}
	case saveList != nil:
		sh.Save = saveList
	}
	return in, nil
}

// perRowP reports whether the trajectories' parameters differ from row
// to row: a --params file of n rows, or a --param sweep (LO ≠ HI) over
// more than one trajectory.
func (in *inputs) perRowP() bool {
	if in.pRows != nil {
		return true
	}
	for _, s := range in.specs {
		if s.lo != s.hi && in.total > 1 {
			return true
		}
	}
	return false
}

// part returns the trajectories [lo, hi) of the run (of its shard,
// with one) as an ensemble: rows of the per-trajectory inputs, and the
// shared ones as they are. A --param sweep's values are those of the
// rows' places in the whole ensemble: vlo + (vhi − vlo)·i/(n − 1).
func (in *inputs) part(lo, hi int) (*gradsolve.Ensemble, error) {
	if lo < 0 || hi > in.n || lo >= hi {
		return nil, fmt.Errorf("gradsolve: internal error: part [%d, %d) of %d trajectories", lo, hi, in.n)
	}
	g0, g1 := in.off+lo, in.off+hi
	sh := &in.shared
	e := &gradsolve.Ensemble{N: hi - lo, P: sh.P, Y0: sh.Y0, T0: sh.T0, T1: sh.T1, Save: sh.Save, SavePerTrajectory: sh.SavePerTrajectory}
	if in.perRowP() {
		m := in.m
		var file []float64
		if in.pRows != nil {
			var err error
			if file, err = in.pRows.get(g0, g1); err != nil {
				return nil, err
			}
		}
		p := make([]float64, 0, (hi-lo)*m)
		for i := g0; i < g1; i++ {
			if file != nil {
				p = append(p, file[(i-g0)*m:(i-g0+1)*m]...)
			} else {
				p = append(p, sh.P...)
			}
			row := p[len(p)-m:]
			for _, s := range in.specs {
				v := s.lo
				if in.total > 1 {
					v = s.lo + (s.hi-s.lo)*float64(i)/float64(in.total-1)
				}
				row[s.index] = v
			}
		}
		e.P = p
	}
	for _, f := range []struct {
		src *rowSource
		dst *[]float64
	}{{in.y0Rows, &e.Y0}, {in.t0Rows, &e.T0}, {in.t1Rows, &e.T1}, {in.saveRows, &e.Save}} {
		if f.src == nil {
			continue
		}
		v, err := f.src.get(g0, g1)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	return e, nil
}

// whole returns the run's whole ensemble (made once, then kept in
// in.ens): for the commands that hold it all (fit, --accuracy's pilot
// of a small ensemble).
func (in *inputs) whole() (*gradsolve.Ensemble, error) {
	if in.ens == nil {
		e, err := in.part(0, in.n)
		if err != nil {
			return nil, err
		}
		in.ens = e
	}
	return in.ens, nil
}

// gather returns the trajectories idx (increasing) of the run as one
// ensemble: the sample of --ref and of the --accuracy pilot.
func (in *inputs) gather(idx []int) (*gradsolve.Ensemble, error) {
	out := &gradsolve.Ensemble{N: len(idx), SavePerTrajectory: in.shared.SavePerTrajectory}
	for c, i := range idx {
		e, err := in.part(i, i+1)
		if err != nil {
			return nil, err
		}
		add := func(dst *[]float64, v []float64, perRow bool) {
			switch {
			case perRow:
				*dst = append(*dst, v...)
			case c == 0:
				*dst = v
			}
		}
		add(&out.P, e.P, in.perRowP())
		add(&out.Y0, e.Y0, in.y0Rows != nil)
		add(&out.T0, e.T0, in.t0Rows != nil)
		add(&out.T1, e.T1, in.t1Rows != nil)
		add(&out.Save, e.Save, in.saveRows != nil)
	}
	return out, nil
}

// setShard makes the run the rows [lo, hi) of the ensemble.
func (in *inputs) setShard(lo, hi int) {
	in.off, in.n, in.ens = lo, hi-lo, nil
}

// sharedSpan reports the span every trajectory shares, if they share
// one.
func (in *inputs) sharedSpan() (t0, t1 float64, ok bool) {
	sh := &in.shared
	if len(sh.T0) == 1 && len(sh.T1) == 1 {
		return sh.T0[0], sh.T1[0], true
	}
	return 0, 0, false
}

// checkSpanLength refuses a span whose length t1 − t0 is not a finite
// number (times of opposite signs near ±1.8e308), naming the flags or
// files and the row. T0 and T1 hold the times of the count trajectories
// from row off, or one value for all.
func checkSpanLength(T0, T1 []float64, off, count int, t0, t1 string, t0f, t1f *loaded) error {
	source := func(flag, v string, f *loaded, times []float64, i int) string {
		switch {
		case f != nil && len(times) > 1:
			return fmt.Sprintf("%s (row %d: %g)", f.name(), off+i, times[i])
		case f != nil:
			return fmt.Sprintf("%s (%g)", f.name(), times[0])
		case v != "":
			return fmt.Sprintf("--%s %s", flag, v)
		}
		return fmt.Sprintf("the problem's %s = %g", flag, times[0])
	}
	for i := range count {
		a, b := T0[min(i, len(T0)-1)], T1[min(i, len(T1)-1)]
		if math.IsInf(b-a, 0) {
			return fmt.Errorf("%s and %s: the span's length t1 − t0 overflows to ±Inf: give times whose difference is a finite number",
				source("t0", t0, t0f, T0, i), source("t1", t1, t1f, T1, i))
		}
		if len(T0) == 1 && len(T1) == 1 {
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
