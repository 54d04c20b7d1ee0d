package plots

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outDir is where the figures of a test go: t.TempDir(), or the directory
// named by PLOTS_OUT to look at them (PLOTS_OUT=/tmp/figs go test ./plots).
func outDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("PLOTS_OUT"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// checkPNG decodes path and checks its size in pixels.
func checkPNG(t *testing.T, path string, wantW, wantH int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not a valid PNG: %v", path, err)
	}
	r := img.Bounds()
	if r.Dx() <= 0 || r.Dy() <= 0 {
		t.Fatalf("%s: empty image %v", path, r)
	}
	if wantW > 0 && (r.Dx() != wantW || r.Dy() != wantH) {
		t.Errorf("%s: size %dx%d, want %dx%d", path, r.Dx(), r.Dy(), wantW, wantH)
	}
}

// noLeftovers fails if dir holds anything but the named files.
func noLeftovers(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("directory %s holds %q, want %q", dir, got, want)
	}
}

// orbit returns an ellipse with semi-major axis a and eccentricity e, in the
// orbital plane tilted by inc about the x axis.
func orbit(a, e, inc float64, n int) (x, y, z []float64) {
	for i := range n {
		E := 2 * math.Pi * float64(i) / float64(n-1)
		px := a * (math.Cos(E) - e)
		py := a * math.Sqrt(1-e*e) * math.Sin(E)
		x = append(x, px)
		y = append(y, py*math.Cos(inc))
		z = append(z, py*math.Sin(inc))
	}
	return
}

func TestLines(t *testing.T) {
	dir := outDir(t)
	var xs, s1, s2, s3 []float64
	for i := range 200 {
		x := float64(i) / 10
		xs = append(xs, x)
		s1 = append(s1, math.Sin(x))
		s2 = append(s2, math.Cos(x)*math.Exp(-x/10))
		v := 0.5 * math.Sin(2*x)
		if i > 80 && i < 100 {
			v = math.NaN() // a gap: the line must break, not panic
		}
		s3 = append(s3, v)
	}
	path := filepath.Join(dir, "lines.png")
	err := Lines(path, "Lines: three series with a NaN gap", "time t [s]", "amplitude [m]", []Series{
		{Name: "sin t", X: xs, Y: s1},
		{Name: "cos t · exp(−t/10)", X: xs, Y: s2},
		{Name: "0.5 sin 2t (NaN gap)", X: xs, Y: s3},
		{X: []float64{5}, Y: []float64{0.8}}, // a lone unnamed point
	}, &Options{
		HLines: []Mark{{Name: "requirement 0.9 m", At: 0.9}},
		VLines: []Mark{{Name: "t = 15 s", At: 15}},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 576, 432)
}

func TestLinesManyOrbitsEqual(t *testing.T) {
	dir := outDir(t)
	var ss []Series
	for k := range 20 {
		x, y, _ := orbit(1+0.2*float64(k), 0.1+0.04*float64(k), 0, 120)
		ss = append(ss, Series{X: x, Y: y}) // anonymous: no legend entries
	}
	ss[0].Name = "innermost orbit"
	path := filepath.Join(dir, "orbits.png")
	if err := Lines(path, "20 orbits, equal aspect", "x [mpc]", "y [mpc]", ss, &Options{Equal: true}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 576, 432)
}

func TestPanels(t *testing.T) {
	dir := outDir(t)
	var xy, xz []Series
	for k := range 5 {
		x, y, z := orbit(1+0.5*float64(k), 0.3+0.1*float64(k), 0.3*float64(k), 150)
		name := ""
		if k == 0 {
			name = "S2"
		}
		xy = append(xy, Series{Name: name, X: x, Y: y})
		xz = append(xz, Series{Name: name, X: x, Y: z})
	}
	path := filepath.Join(dir, "panels.png")
	err := Panels(path, "Stellar orbits", []Panel{
		{Title: "x–y plane", XLabel: "x [mpc]", YLabel: "y [mpc]", Series: xy, Opt: &Options{Equal: true}},
		{Title: "x–z plane", XLabel: "x [mpc]", YLabel: "z [mpc]", Series: xz, Opt: &Options{Equal: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 960, 432)
}

// A panel whose data leaves no place for the legend inside the axes
// gets the legend under them, in columns, and the figure grows by that
// strip; the other panel keeps its legend inside.
func TestPanelsLegendUnder(t *testing.T) {
	dir := outDir(t)
	var dense, sparse []Series
	for k := range 12 {
		// Zigzags across the whole panel: every inside place is covered.
		x, y := make([]float64, 41), make([]float64, 41)
		for i := range x {
			x[i] = float64(i)
			y[i] = float64(k) + 6*float64(i%2)
		}
		dense = append(dense, Series{Name: fmt.Sprintf("curve %d", k), X: x, Y: y})
	}
	sparse = append(sparse, Series{Name: "one line", X: []float64{0, 1}, Y: []float64{0, 1}})
	path := filepath.Join(dir, "legend_under.png")
	if err := Panels(path, "Legends", []Panel{
		{Title: "dense", Series: dense},
		{Title: "sparse", Series: sparse},
	}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	// 12 entries in two or three columns: a strip of at least four rows
	// under the 432-pixel figure.
	if cfg.Width != 960 || cfg.Height < 432+4*14 {
		t.Errorf("size %dx%d: want 960 wide and taller than 432 by a legend strip", cfg.Width, cfg.Height)
	}
}

// errorSample returns n deterministic positive "errors" spread over decades.
func errorSample(n int, center, spread float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		u := (float64(i) + 0.5) / float64(n)
		// A logistic quantile function: log10 errors around center.
		out[i] = math.Pow(10, center+spread*math.Log(u/(1-u)))
	}
	return out
}

func TestCDF(t *testing.T) {
	dir := outDir(t)
	a := errorSample(300, -8, 0.5)
	b := errorSample(300, -6, 0.7)
	b[0], b[1], b[2] = math.NaN(), math.Inf(1), 0 // dropped, counted as failure, below every x
	path := filepath.Join(dir, "cdf.png")
	err := CDF(path, "Global error CDF", "relative error", []Series{
		{Name: "adjoint", Y: a},
		{Name: "forward", Y: b},
	}, &Options{
		LogX:   true,
		VLines: []Mark{{Name: "tolerance 1e-6", At: 1e-6}, {Name: "tolerance 1e-8", At: 1e-8}},
		HLines: []Mark{{Name: "99%", At: 0.99}},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 576, 432)

	// Linear axes, one unnamed sample, LogY.
	for _, o := range []*Options{nil, {LogY: true}} {
		path := filepath.Join(dir, "cdf-lin.png")
		if err := CDF(path, "", "x", []Series{{Y: []float64{3, 1, 2, 2}}}, o); err != nil {
			t.Fatal(err)
		}
		checkPNG(t, path, 576, 432)
	}
}

func TestCDFLevels(t *testing.T) {
	// -Inf and (on a log axis) 0 start the curve at 2/5; +Inf keeps it at
	// 4/5; NaN is not counted.
	ax, err := cdfAxes("", "", []Series{{Y: []float64{math.Inf(-1), 0, 1, 10, math.Inf(1), math.NaN()}}}, &Options{LogX: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(ax.occ) != 1 {
		t.Fatalf("got %d polylines", len(ax.occ))
	}
	pl := ax.occ[0]
	if first, last := pl[0].y, pl[len(pl)-1].y; first != 0.4 || last != 0.8 {
		t.Errorf("curve from %v to %v, want 0.4 to 0.8", first, last)
	}
}

func TestHistogram(t *testing.T) {
	dir := outDir(t)
	var a, b []float64
	for i := range 2000 {
		u := (float64(i) + 0.5) / 2000
		a = append(a, 180/math.Pi*math.Acos(1-2*u))   // isotropic tilts
		b = append(b, 60+25*math.Sin(7*u)+30*(u-0.5)) // concentrated tilts
	}
	b = append(b, math.NaN(), math.Inf(1))
	path := filepath.Join(dir, "hist.png")
	err := Histogram(path, "Spin tilt angles", "tilt θ₁ [deg]", []Series{
		{Name: "r = 1000 M", Y: a},
		{Name: "r = 6 M", Y: b},
	}, 36, &Options{VLines: []Mark{{Name: "90°", At: 90}}})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 576, 432)

	// Automatic bins, log axes, a degenerate sample.
	for _, o := range []*Options{{LogX: true}, {LogY: true}, {LogX: true, LogY: true}} {
		path := filepath.Join(dir, "hist-log.png")
		err := Histogram(path, "log", "x", []Series{{Y: errorSample(500, -3, 0.5)}, {Name: "constant", Y: []float64{2, 2, 2}}}, 0, o)
		if err != nil {
			t.Fatal(err)
		}
		checkPNG(t, path, 576, 432)
	}
}

// TestLogNonPositive: on a log axis non-positive points are skipped; a
// figure left with nothing, or a non-positive mark, is an error.
func TestLogNonPositive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.png")
	s := []Series{{Name: "mixed", X: []float64{-1, 0, 1, 2, 3, 4}, Y: []float64{1, 2, 0, -3, 4, 5}}}
	if err := Lines(path, "log", "x", "y", s, &Options{LogX: true, LogY: true}); err != nil {
		t.Fatalf("non-positive points should be skipped: %v", err)
	}
	checkPNG(t, path, 0, 0)
	if err := CDF(path, "", "x", []Series{{Y: []float64{-1, 0, 1e-3, 1}}}, &Options{LogX: true}); err != nil {
		t.Fatal(err)
	}
	if err := Histogram(path, "", "x", []Series{{Y: []float64{-1, 0, 1e-3, 1}}}, 5, &Options{LogX: true}); err != nil {
		t.Fatal(err)
	}

	bad := filepath.Join(dir, "bad.png")
	for name, f := range map[string]func() error{
		"all non-positive": func() error {
			return Lines(bad, "", "", "", []Series{{X: []float64{1, 2}, Y: []float64{0, -1}}}, &Options{LogY: true})
		},
		"non-positive mark": func() error {
			return Lines(bad, "", "", "", s, &Options{LogY: true, HLines: []Mark{{At: 0}}})
		},
		"cdf all non-positive": func() error {
			return CDF(bad, "", "", []Series{{Y: []float64{0, -1}}}, &Options{LogX: true})
		},
		"hist all non-positive": func() error {
			return Histogram(bad, "", "", []Series{{Y: []float64{0, -1}}}, 3, &Options{LogX: true})
		},
	} {
		err := f()
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: got %v, want an error naming %s", name, err, bad)
		}
	}
	noLeftovers(t, dir, "log.png")
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.png")
	one := []Series{{X: []float64{1, 2}, Y: []float64{1, 2}}}
	cases := map[string]func() error{
		"nil series":         func() error { return Lines(p, "", "", "", nil, nil) },
		"empty series":       func() error { return Lines(p, "", "", "", []Series{{Name: "e"}}, nil) },
		"mismatched lengths": func() error { return Lines(p, "", "", "", []Series{{X: []float64{1, 2}, Y: []float64{1}}}, nil) },
		"all NaN": func() error {
			return Lines(p, "", "", "", []Series{{X: []float64{math.NaN()}, Y: []float64{1}}}, nil)
		},
		"NaN mark":         func() error { return Lines(p, "", "", "", one, &Options{VLines: []Mark{{At: math.NaN()}}}) },
		"no panels":        func() error { return Panels(p, "t", nil) },
		"too many panels":  func() error { return Panels(p, "t", make([]Panel, maxPanels+1)) },
		"bad panel":        func() error { return Panels(p, "t", []Panel{{Series: one}, {}}) },
		"cdf no samples":   func() error { return CDF(p, "", "", nil, nil) },
		"cdf empty sample": func() error { return CDF(p, "", "", []Series{{Name: "x"}}, nil) },
		"cdf all NaN":      func() error { return CDF(p, "", "", []Series{{Y: []float64{math.NaN()}}}, nil) },
		"hist no samples":  func() error { return Histogram(p, "", "", nil, 10, nil) },
		"hist empty":       func() error { return Histogram(p, "", "", []Series{{}}, 10, nil) },
		"hist too many bins": func() error {
			return Histogram(p, "", "", []Series{{Y: []float64{1}}}, maxBins+1, nil)
		},
		"not png": func() error { return Lines(filepath.Join(dir, "out.pdf"), "", "", "", one, nil) },
	}
	for name, f := range cases {
		err := f()
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: error %q does not name the path", name, err)
		}
	}
	if err := Lines("", "", "", "", one, nil); err == nil {
		t.Error("empty path: no error")
	}
	noLeftovers(t, dir)
}

// TestWriteFailures: an unwritable destination is an error naming the path,
// leaves no temporary file and does not touch an existing file.
func TestWriteFailures(t *testing.T) {
	dir := t.TempDir()
	one := []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}

	// Missing directory.
	p := filepath.Join(dir, "missing", "out.png")
	if err := Lines(p, "", "", "", one, nil); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("missing directory: got %v", err)
	}

	// The destination is a directory: the rename fails after the
	// temporary file was written, which must then be removed.
	p = filepath.Join(dir, "taken.png")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Lines(p, "", "", "", one, nil); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("directory as destination: got %v", err)
	}
	noLeftovers(t, dir, "taken.png")

	// A failing call leaves an existing figure as it was.
	p = filepath.Join(dir, "keep.png")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Lines(p, "", "", "", []Series{{X: []float64{1}}}, nil); err == nil {
		t.Error("mismatched lengths: no error")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("existing file changed to %q", b)
	}

	// A read-only directory (not enforced for root, so probed first).
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(ro, "probe")
	if err := os.WriteFile(probe, nil, 0o644); err == nil {
		os.Remove(probe)
		t.Log("read-only directory is writable here (root); skipping that case")
	} else {
		p = filepath.Join(ro, "out.png")
		if err := Lines(p, "", "", "", one, nil); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("read-only directory: got %v", err)
		}
		noLeftovers(t, ro)
	}
}

// TestAwkwardData: extreme, degenerate and sparse inputs draw without
// error or panic.
func TestAwkwardData(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "odd.png")
	cases := map[string][]Series{
		"single point":  {{Name: "p", X: []float64{1}, Y: []float64{1}}},
		"constant":      {{X: []float64{1, 1, 1}, Y: []float64{2, 2, 2}}},
		"huge":          {{X: []float64{-1e300, 1e300}, Y: []float64{1e300, -1e300}}},
		"tiny":          {{X: []float64{1e-300, 2e-300}, Y: []float64{0, 1e-310}}},
		"isolated":      {{Name: "dots", X: []float64{1, 2, 3, 4}, Y: []float64{1, math.NaN(), 3, math.Inf(1)}}},
		"one finite":    {{X: []float64{math.NaN(), 2}, Y: []float64{1, 5}}, {Name: "empty after skip", X: []float64{math.NaN()}, Y: []float64{1}}},
		"long unicode":  {{Name: strings.Repeat("αβγ ", 30), X: []float64{0, 1}, Y: []float64{0, 1}}},
		"flat in z":     {{X: []float64{-3, 3}, Y: []float64{0, 0}}},
		"many segments": {{X: make([]float64, 20000), Y: make([]float64, 20000)}},
	}
	for name, s := range cases {
		for _, o := range []*Options{nil, {Equal: true}, {LogX: true, LogY: true}} {
			err := Lines(p, name, "x", "y", s, o)
			if o != nil && o.LogX && err != nil {
				continue // nothing positive to draw is a legitimate error
			}
			if err != nil {
				t.Errorf("%s %+v: %v", name, o, err)
			}
		}
	}
}

func TestLogTicks(t *testing.T) {
	for _, r := range [][2]float64{{1e-16, 1}, {1e-3, 1e3}, {2, 8}, {0.3, 3}, {1.01, 1.02}, {1e-300, 1e300}, {5e-324, 1e308}, {3e-5, 2e4}} {
		ticks := logTicks(r[0], r[1])
		labels := 0
		for _, tk := range ticks {
			if tk.Value <= 0 || tk.Value < r[0]*(1-1e-9) || tk.Value > r[1]*(1+1e-9) {
				t.Errorf("range %v: tick %v outside", r, tk.Value)
			}
			if tk.Label != "" {
				labels++
			}
		}
		if labels < 2 || labels > 10 || len(ticks) > 80 {
			t.Errorf("range %v: %d labels, %d ticks", r, labels, len(ticks))
		}
	}
	if logTicks(0, 1) != nil || logTicks(-1, 1) != nil {
		t.Error("non-positive range should give no ticks")
	}
}

func TestLinearTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string // the labels, comma-separated
	}{
		{0, 1, "0.0,0.2,0.4,0.6,0.8,1.0"},
		{3.7, 178, "25,50,75,100,125,150,175"},
		{0, 180, "0,25,50,75,100,125,150,175"},
		{-0.95, 0.95, "-0.75,-0.50,-0.25,0.00,0.25,0.50,0.75"},
		{0, 0.026, "0.000,0.005,0.010,0.015,0.020,0.025"},
		{1e-7, 1.2e-6, "2e-7,4e-7,6e-7,8e-7,1e-6,1.2e-6"},
		{0, 3e9, "0,5e8,1e9,1.5e9,2e9,2.5e9,3e9"},
	} {
		var labels []string
		for _, tk := range linearTicks(c.lo, c.hi) {
			if tk.Value < c.lo || tk.Value > c.hi {
				t.Errorf("[%v, %v]: tick %v outside", c.lo, c.hi, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, ","); got != c.want {
			t.Errorf("[%v, %v]: labels %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
	for _, r := range [][2]float64{{1, 1}, {2, 1}, {math.Inf(-1), 0}, {-1e308, 1e308}} {
		if ts := linearTicks(r[0], r[1]); len(ts) != 0 {
			t.Errorf("%v: got %d ticks, want none", r, len(ts))
		}
	}
}

func TestHits(t *testing.T) {
	r := rect{0, 0, 1, 1}
	for _, c := range []struct {
		s    segment
		want bool
	}{
		{segment{-1, 0.5, 2, 0.5}, true},    // crosses
		{segment{0.5, 0.5, 0.6, 0.6}, true}, // inside
		{segment{-1, 2, 2, 2}, false},       // above
		{segment{-1, -1, 2, 2}, true},       // diagonal through
		{segment{2, 0, 3, 1}, false},        // right of it
		{segment{1.5, 1.5, 1.5, 1.5}, false},
	} {
		if got := hits(c.s, r); got != c.want {
			t.Errorf("hits(%v) = %v, want %v", c.s, got, c.want)
		}
	}
}

// More series than colours, with markers: the styles past the palette
// are dashed, and every series gets a distinct glyph.
func TestLinesMarkersManySeries(t *testing.T) {
	dir := outDir(t)
	var ss []Series
	for k := range 11 {
		s := Series{Name: fmt.Sprintf("tool %d", k)}
		for i := range 6 {
			e := math.Pow(10, -float64(4+i))
			s.X = append(s.X, e)
			s.Y = append(s.Y, float64(k+1)*math.Pow(e, -0.2))
		}
		ss = append(ss, s)
	}
	path := filepath.Join(dir, "markers.png")
	if err := Lines(path, "work-precision", "error", "time [µs]", ss, &Options{LogX: true, LogY: true, Markers: true}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 576, 432)
	if a, b := seriesLine(2), seriesLine(2+nColors); a.Color != b.Color || len(a.Dashes) != 0 || len(b.Dashes) == 0 {
		t.Errorf("series %d and %d: want one colour, the second dashed; got %v %v and %v %v", 2, 2+nColors, a.Color, a.Dashes, b.Color, b.Dashes)
	}
}
