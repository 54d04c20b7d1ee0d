package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// xy is one data point.
type xy struct{ x, y float64 }

// span is the extent of a set of values; ok is false while it is empty.
type span struct {
	min, max float64
	ok       bool
}

// add widens s to include v.
func (s *span) add(v float64) {
	if !s.ok {
		s.min, s.max, s.ok = v, v, true
		return
	}
	s.min = math.Min(s.min, v)
	s.max = math.Max(s.max, v)
}

// legendEntry is one line of a legend.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// axes is the description of one set of axes: what to draw, the data
// extents, and what the legend placement has to avoid.
//
// Logarithmic axes are drawn as linear axes over log10 of the values, with
// tick labels showing the values themselves: every coordinate stored here
// (plotters, extents, polylines, marks) is already transformed, see tx and
// ty. This keeps gonum's LogScale out, which panics on non-positive values
// and misplaces the axis-label padding on log axes.
type axes struct {
	title, xlabel, ylabel string
	logX, logY, equal     bool

	plotters []plot.Plotter
	legend   []legendEntry
	box      *legendBox // set by newPlot when there is a legend

	// occ holds polylines (data coordinates) that the legend box should
	// avoid; hmarks and vmarks the positions of the reference lines.
	occ            [][]xy
	hmarks, vmarks []float64

	// xr and yr are the data extents, marks included.
	xr, yr span
}

// Line styles.
var (
	seriesWidth = vg.Points(1.2)
	markWidth   = vg.Points(1.2)
	markDashes  = [][]vg.Length{
		{vg.Points(6), vg.Points(3)},
		{vg.Points(2), vg.Points(2)},
		{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
		{vg.Points(12), vg.Points(4)},
	}
	markColors = []color.Color{color.Black, color.Gray{Y: 90}}
)

// tx maps an x value to its drawing coordinate.
func (ax *axes) tx(v float64) float64 {
	if ax.logX {
		return math.Log10(v)
	}
	return v
}

// ty maps a y value to its drawing coordinate.
func (ax *axes) ty(v float64) float64 {
	if ax.logY {
		return math.Log10(v)
	}
	return v
}

// errf formats an error without the path prefix; pathErr adds it.
func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// label describes series i for error messages.
func label(kind string, i int, name string) string {
	if name == "" {
		return fmt.Sprintf("%s %d", kind, i)
	}
	return fmt.Sprintf("%s %d (%q)", kind, i, name)
}

// orDefault returns opt, or the zero Options when opt is nil.
func orDefault(opt *Options) Options {
	if opt == nil {
		return Options{}
	}
	return *opt
}

// drawable reports whether v can be placed on an axis (finite, and positive
// on a logarithmic axis).
func drawable(v float64, log bool) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	return !log || v > 0
}

// addMarks validates the reference lines of o and adds them to ax.
func (ax *axes) addMarks(o Options) error {
	k := 0
	add := func(m Mark, i int, horizontal bool) error {
		kind, log := "VLines", ax.logX
		if horizontal {
			kind, log = "HLines", ax.logY
		}
		if math.IsNaN(m.At) || math.IsInf(m.At, 0) {
			return errf("%s: value %v is not finite", label(kind, i, m.Name), m.At)
		}
		if log && m.At <= 0 {
			return errf("%s: value %v is not positive on a logarithmic axis", label(kind, i, m.Name), m.At)
		}
		sty := draw.LineStyle{
			Color:  markColors[k%len(markColors)],
			Width:  markWidth,
			Dashes: markDashes[k%len(markDashes)],
		}
		k++
		at := ax.tx(m.At)
		if horizontal {
			at = ax.ty(m.At)
			ax.yr.add(at)
			ax.hmarks = append(ax.hmarks, at)
		} else {
			ax.xr.add(at)
			ax.vmarks = append(ax.vmarks, at)
		}
		ax.plotters = append(ax.plotters, &markLine{horizontal: horizontal, at: at, style: sty})
		if m.Name != "" {
			ax.legend = append(ax.legend, legendEntry{m.Name, lineThumb{sty}})
		}
		return nil
	}
	for i, m := range o.VLines {
		if err := add(m, i, false); err != nil {
			return err
		}
	}
	for i, m := range o.HLines {
		if err := add(m, i, true); err != nil {
			return err
		}
	}
	return nil
}

// runs splits the points of a series into maximal runs of drawable points,
// transformed to drawing coordinates.
func (ax *axes) runs(xs, ys []float64) [][]xy {
	var out [][]xy
	var cur []xy
	for i := range xs {
		if drawable(xs[i], ax.logX) && drawable(ys[i], ax.logY) {
			cur = append(cur, xy{ax.tx(xs[i]), ax.ty(ys[i])})
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// toXYs converts points for gonum plotters.
func toXYs(pts []xy) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, p := range pts {
		out[i].X, out[i].Y = p.x, p.y
	}
	return out
}

// nothingErr is the error for a figure without a single drawable point.
func nothingErr(o Options) error {
	what := "NaN or ±Inf"
	if o.LogX || o.LogY {
		what += ", or not positive on a logarithmic axis"
	}
	return errf("nothing to draw: every value is %s", what)
}

// linesAxes builds the axes of Lines and of each panel of Panels.
func linesAxes(title, xlabel, ylabel string, series []Series, opt *Options) (*axes, error) {
	o := orDefault(opt)
	if len(series) == 0 {
		return nil, errf("no series")
	}
	ax := &axes{title: title, xlabel: xlabel, ylabel: ylabel, logX: o.LogX, logY: o.LogY}
	ax.equal = o.Equal && !o.LogX && !o.LogY
	drawn := 0
	for i, s := range series {
		if len(s.X) != len(s.Y) {
			return nil, errf("%s: len(X) = %d but len(Y) = %d", label("series", i, s.Name), len(s.X), len(s.Y))
		}
		if len(s.Y) == 0 {
			return nil, errf("%s is empty", label("series", i, s.Name))
		}
		ls := seriesLine(i)
		gs := draw.GlyphStyle{Color: plotutil.Color(i), Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		if o.Markers {
			gs.Shape = plotutil.Shape(i)
		}
		onlyPoints := true
		rs := ax.runs(s.X, s.Y)
		for _, r := range rs {
			if len(r) == 1 {
				ax.plotters = append(ax.plotters, &plotter.Scatter{XYs: toXYs(r), GlyphStyle: gs})
			} else {
				ax.plotters = append(ax.plotters, &plotter.Line{XYs: toXYs(r), LineStyle: ls})
				if o.Markers {
					ax.plotters = append(ax.plotters, &plotter.Scatter{XYs: toXYs(r), GlyphStyle: gs})
				}
				onlyPoints = false
			}
			for _, p := range r {
				ax.xr.add(p.x)
				ax.yr.add(p.y)
			}
			ax.occ = append(ax.occ, r)
			drawn += len(r)
		}
		if s.Name != "" {
			switch {
			case len(rs) == 0:
				ax.legend = append(ax.legend, legendEntry{s.Name + " (no drawable data)", lineThumb{ls}})
			case onlyPoints:
				ax.legend = append(ax.legend, legendEntry{s.Name, glyphThumb{gs}})
			case o.Markers:
				ax.legend = append(ax.legend, legendEntry{s.Name, lineGlyphThumb{ls, gs}})
			default:
				ax.legend = append(ax.legend, legendEntry{s.Name, lineThumb{ls}})
			}
		}
	}
	if drawn == 0 {
		return nil, nothingErr(o)
	}
	if err := ax.addMarks(o); err != nil {
		return nil, err
	}
	return ax, nil
}

// cdfAxes builds the axes of CDF.
func cdfAxes(title, xlabel string, samples []Series, opt *Options) (*axes, error) {
	o := orDefault(opt)
	if len(samples) == 0 {
		return nil, errf("no samples")
	}
	ax := &axes{title: title, xlabel: xlabel, ylabel: "fraction of samples ≤ x", logX: o.LogX, logY: o.LogY}
	type ecdf struct {
		xs       []float64 // drawable values (drawing coordinates), sorted
		n, below int       // non-NaN count; count ≤ every drawable x
		nan      int
		ls       draw.LineStyle
		name     string
	}
	cs := make([]ecdf, len(samples))
	for i, s := range samples {
		if len(s.Y) == 0 {
			return nil, errf("%s is empty", label("sample", i, s.Name))
		}
		c := &cs[i]
		c.name = s.Name
		c.ls = draw.LineStyle{Color: plotutil.Color(i), Width: seriesWidth}
		for _, v := range s.Y {
			switch {
			case math.IsNaN(v):
				c.nan++
				continue
			case math.IsInf(v, -1), o.LogX && v <= 0 && !math.IsInf(v, 0):
				c.below++
			case drawable(v, o.LogX):
				c.xs = append(c.xs, ax.tx(v))
				ax.xr.add(ax.tx(v))
			}
			c.n++
		}
		slices.Sort(c.xs)
	}
	if !ax.xr.ok {
		// No sample has a single value with a position on the x axis.
		return nil, nothingErr(o)
	}
	if err := ax.addMarks(o); err != nil {
		return nil, err
	}
	nm := len(ax.legend) // legend entries of named marks
	if !o.LogY {
		ax.yr.add(0)
	}
	ax.yr.add(ax.ty(1))
	x0, x1 := ax.xr.min, ax.xr.max
	var plotted []plot.Plotter
	for i := range cs {
		c := &cs[i]
		name := c.name
		if c.nan > 0 {
			name += fmt.Sprintf(" (%d NaN dropped)", c.nan)
		}
		if c.n == 0 {
			if c.name != "" {
				ax.legend = append(ax.legend, legendEntry{c.name + " (no data: all NaN)", lineThumb{c.ls}})
			}
			continue
		}
		n := float64(c.n)
		level := float64(c.below) / n
		pts := []xy{{x0, level}}
		for k, x := range c.xs {
			pts = append(pts, xy{x, float64(c.below+k+1) / n})
		}
		last := pts[len(pts)-1]
		pts = append(pts, xy{x1, last.y})
		if o.LogY {
			pts = slices.DeleteFunc(pts, func(p xy) bool { return p.y <= 0 })
			for k := range pts {
				pts[k].y = math.Log10(pts[k].y)
			}
		}
		if len(pts) > 0 {
			l := &plotter.Line{XYs: toXYs(pts), LineStyle: c.ls, StepStyle: plotter.PostStep}
			plotted = append(plotted, l)
			// The legend must avoid the drawn steps, not the chords.
			steps := make([]xy, 0, 2*len(pts))
			for k, p := range pts {
				if k > 0 {
					steps = append(steps, xy{p.x, pts[k-1].y})
				}
				steps = append(steps, p)
				ax.yr.add(p.y)
			}
			ax.occ = append(ax.occ, steps)
		}
		if c.name != "" {
			ax.legend = append(ax.legend, legendEntry{name, lineThumb{c.ls}})
		}
	}
	if len(plotted) == 0 {
		return nil, errf("nothing to draw: no sample has a positive cumulative fraction on the logarithmic y axis")
	}
	// Draw the curves over the reference lines added by addMarks.
	ax.plotters = append(ax.plotters, plotted...)
	// Keep the legend order: samples first, then marks.
	marks := slices.Clone(ax.legend[:nm])
	ax.legend = append(ax.legend[nm:], marks...)
	return ax, nil
}

// histAxes builds the axes of Histogram.
func histAxes(title, xlabel string, samples []Series, bins int, opt *Options) (*axes, error) {
	o := orDefault(opt)
	if len(samples) == 0 {
		return nil, errf("no samples")
	}
	if bins > maxBins {
		return nil, errf("%d bins requested, at most %d are supported", bins, maxBins)
	}
	ylabel := "probability density"
	if o.LogX {
		ylabel = "probability density per decade"
	}
	ax := &axes{title: title, xlabel: xlabel, ylabel: ylabel, logX: o.LogX, logY: o.LogY}
	// Bins are equal intervals of the drawing coordinate u = ax.tx(x).
	vals := make([][]float64, len(samples))
	var ur span
	nmax := 0
	for i, s := range samples {
		if len(s.Y) == 0 {
			return nil, errf("%s is empty", label("sample", i, s.Name))
		}
		for _, v := range s.Y {
			if drawable(v, o.LogX) {
				vals[i] = append(vals[i], ax.tx(v))
				ur.add(ax.tx(v))
			}
		}
		nmax = max(nmax, len(vals[i]))
	}
	if !ur.ok {
		return nil, nothingErr(o)
	}
	if bins <= 0 {
		bins = min(max(int(math.Ceil(math.Sqrt(float64(nmax)))), 5), 100)
	}
	lo, hi := ur.min, ur.max
	if lo == hi {
		d := math.Abs(lo) * 0.05
		if o.LogX || d == 0 {
			d = 0.5
		}
		lo, hi = lo-d, hi+d
	}
	width := (hi - lo) / float64(bins)
	edges := make([]float64, bins+1)
	for k := range edges {
		edges[k] = lo + float64(k)*width
	}
	edges[bins] = hi
	ax.xr.add(edges[0])
	ax.xr.add(edges[bins])
	if !o.LogY {
		ax.yr.add(0)
	}
	for i, s := range samples {
		col := plotutil.Color(i)
		r, g, b, _ := col.RGBA()
		fill := color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 90}
		ls := draw.LineStyle{Color: col, Width: seriesWidth}
		if len(vals[i]) == 0 {
			if s.Name != "" {
				ax.legend = append(ax.legend, legendEntry{s.Name + " (no drawable data)", boxThumb{fill, ls}})
			}
			continue
		}
		counts := make([]int, bins)
		for _, u := range vals[i] {
			k := int((u - lo) / width)
			counts[min(max(k, 0), bins-1)]++
		}
		h := &bars{fill: fill, line: ls}
		norm := 1 / (float64(len(vals[i])) * width)
		for k, cnt := range counts {
			if cnt == 0 {
				continue
			}
			w := ax.ty(float64(cnt) * norm)
			h.bins = append(h.bins, bar{edges[k], edges[k+1], w})
			ax.yr.add(w)
			// The legend should avoid the tops and the filled bars.
			mid, bottom := lo+(float64(k)+0.5)*width, 0.0
			if o.LogY {
				bottom = w - 1000 // below any log10 axis range
			}
			ax.occ = append(ax.occ,
				[]xy{{edges[k], w}, {edges[k+1], w}},
				[]xy{{mid, w}, {mid, bottom}},
			)
		}
		ax.plotters = append(ax.plotters, h)
		if s.Name != "" {
			ax.legend = append(ax.legend, legendEntry{s.Name, boxThumb{fill, ls}})
		}
	}
	if o.LogY && ax.yr.ok {
		// Leave room below the smallest non-empty bin.
		ax.yr.add(ax.yr.min - math.Log10(2))
	}
	if err := ax.addMarks(o); err != nil {
		return nil, err
	}
	return ax, nil
}

// nColors is the number of distinct series colours (plotutil's
// palette); later series repeat them with a dash pattern.
var nColors = len(plotutil.DefaultColors)

// seriesLine is the line style of series i: plotutil's colours, solid
// for the first nColors series and dashed for the ones that repeat a
// colour.
func seriesLine(i int) draw.LineStyle {
	ls := draw.LineStyle{Color: plotutil.Color(i), Width: seriesWidth}
	if i >= nColors {
		ls.Dashes = plotutil.Dashes(1 + (i/nColors-1)%4)
	}
	return ls
}
