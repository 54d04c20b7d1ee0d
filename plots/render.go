package plots

import (
	"bytes"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Figure geometry.
const (
	singleWidth  = 6 * vg.Inch
	panelWidth   = 5 * vg.Inch
	figureHeight = 4.5 * vg.Inch
)

// sans is the typeface of all text.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// textStyle returns a text style in the sans typeface at size points.
func textStyle(size float64, xa draw.XAlignment, ya draw.YAlignment) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(sans, vg.Points(size)),
		XAlign:  xa,
		YAlign:  ya,
		Handler: plot.DefaultTextHandler,
	}
}

// finalRange returns the axis range for the extent s (in drawing
// coordinates), widening an empty or degenerate extent: by half a decade on
// a log axis, else by 5% of the value (or 1 around 0).
func finalRange(s span, log bool) (lo, hi float64) {
	if !s.ok {
		return 0, 1
	}
	lo, hi = s.min, s.max
	if lo < hi {
		return lo, hi
	}
	if log {
		return lo - 0.5, hi + 0.5
	}
	d := math.Abs(lo) * 0.05
	if d == 0 {
		d = 1
	}
	return lo - d, hi + d
}

// newPlot builds the gonum plot of ax, ranges set.
func (ax *axes) newPlot() *plot.Plot {
	p := plot.New()
	p.Title.Text = ax.title
	p.Title.TextStyle.Font = font.From(sans, vg.Points(13))
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, vg.Points(11))
		a.Tick.Label.Font = font.From(sans, vg.Points(9.5))
	}
	p.X.Label.Text = ax.xlabel
	p.Y.Label.Text = ax.ylabel

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 215}
	grid.Horizontal.Color = color.Gray{Y: 215}
	grid.Vertical.Width = vg.Points(0.5)
	grid.Horizontal.Width = vg.Points(0.5)
	p.Add(grid)
	p.Add(ax.plotters...)
	if len(ax.legend) > 0 {
		ax.box = &legendBox{ax: ax}
		p.Add(ax.box)
	}

	p.X.Tick.Marker = plot.TickerFunc(linearTicks)
	p.Y.Tick.Marker = plot.TickerFunc(linearTicks)
	if ax.logX {
		p.X.Tick.Marker = plot.TickerFunc(log10Ticks)
	}
	if ax.logY {
		p.Y.Tick.Marker = plot.TickerFunc(log10Ticks)
	}
	p.X.Min, p.X.Max = finalRange(ax.xr, ax.logX)
	p.Y.Min, p.Y.Max = finalRange(ax.yr, ax.logY)
	return p
}

// equalize widens one axis range of p so that a data unit has the same
// length on both axes when p is drawn into c. The data area depends on the
// tick labels, which depend on the ranges, so it iterates a few times.
func equalize(p *plot.Plot, c draw.Canvas, x0, x1, y0, y1 float64) {
	for range 3 {
		dc := p.DataCanvas(c)
		w := float64(dc.Max.X - dc.Min.X)
		h := float64(dc.Max.Y - dc.Min.Y)
		if !(w > 0 && h > 0) {
			return
		}
		s := math.Max((x1-x0)/w, (y1-y0)/h) // data units per length
		if !(s > 0) || math.IsInf(s, 0) {
			return
		}
		cx, cy := x0/2+x1/2, y0/2+y1/2
		p.X.Min, p.X.Max = cx-s*w/2, cx+s*w/2
		p.Y.Min, p.Y.Max = cy-s*h/2, cy+s*h/2
	}
}

// encode writes the canvas as PNG bytes.
func encode(img *vgimg.Canvas) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, errf("encoding PNG: %v", err)
	}
	return buf.Bytes(), nil
}

// renderSingle draws one set of axes into a 6×4.5 in PNG.
func renderSingle(ax *axes) ([]byte, error) {
	p := ax.newPlot()
	img := vgimg.New(singleWidth, figureHeight)
	dc := draw.New(img)
	if ax.equal {
		equalize(p, dc, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	p.Draw(dc)
	return encode(img)
}

// renderPanels draws the axes side by side under a common title. A
// panel whose legend would cover data wherever it sat inside the axes
// gets it under the axes instead, in as many columns as fit: the figure
// grows by that strip.
func renderPanels(title string, axs []*axes) ([]byte, error) {
	n := len(axs)
	w := max(panelWidth*vg.Length(n), singleWidth)
	ps := make([]*plot.Plot, n)
	type rng struct{ x0, x1, y0, y1 float64 }
	ranges := make([]rng, n)
	for i, ax := range axs {
		ps[i] = ax.newPlot()
		ranges[i] = rng{ps[i].X.Min, ps[i].X.Max, ps[i].Y.Min, ps[i].Y.Max}
	}
	// Trial layout at the base height: which legends must go under?
	trial := vgimg.New(w, figureHeight)
	cs := layoutPanels(title, ps, axs, draw.New(trial))
	var strip vg.Length
	for i, ax := range axs {
		if ax.box == nil {
			continue
		}
		if _, _, _, score := ax.box.place(ps[i].DataCanvas(cs[0][i]), ps[i]); score > 0 {
			ax.box.outside = true
			_, bh, _ := ax.box.under(cs[0][i].Max.X - cs[0][i].Min.X)
			strip = max(strip, bh+2*legendInset)
		}
	}
	for i, r := range ranges { // undo the trial's equalisation
		ps[i].X.Min, ps[i].X.Max, ps[i].Y.Min, ps[i].Y.Max = r.x0, r.x1, r.y0, r.y1
	}
	img := vgimg.New(w, figureHeight+strip)
	dc := draw.New(img)
	plotArea := dc
	plotArea.Min.Y += strip
	cs = layoutPanels(title, ps, axs, plotArea)
	for i, p := range ps {
		p.Draw(cs[0][i])
		if b := axs[i].box; b != nil && b.outside {
			c := cs[0][i]
			bw, bh, cols := b.under(c.Max.X - c.Min.X)
			at := vg.Point{X: c.Min.X + (c.Max.X-c.Min.X-bw)/2, Y: dc.Min.Y + strip - legendInset - bh}
			b.draw(dc, at, bw, bh, cols)
		}
	}
	return encode(img)
}

// layoutPanels writes the title into dc and returns the tiles of the
// panels below it, with equal-aspect axes equalised.
func layoutPanels(title string, ps []*plot.Plot, axs []*axes, dc draw.Canvas) [][]draw.Canvas {
	if title != "" {
		sty := textStyle(14, draw.XCenter, draw.YTop)
		top := vg.Points(5)
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - top}, title)
		dc.Max.Y -= top + sty.Height(title) + vg.Points(4)
	}
	type rng struct{ x0, x1, y0, y1 float64 }
	base := make([]rng, len(ps))
	for i, p := range ps {
		base[i] = rng{p.X.Min, p.X.Max, p.Y.Min, p.Y.Max}
	}
	tiles := draw.Tiles{
		Rows: 1, Cols: len(ps),
		PadX:    vg.Points(24),
		PadTop:  vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(8), PadBottom: vg.Points(4),
	}
	grid := [][]*plot.Plot{ps}
	cs := plot.Align(grid, tiles, dc)
	for range 2 {
		for i, ax := range axs {
			if ax.equal {
				b := base[i]
				equalize(ps[i], cs[0][i], b.x0, b.x1, b.y0, b.y1)
			}
		}
		cs = plot.Align(grid, tiles, dc)
	}
	return cs
}

// log10Ticks is logTicks for an axis drawn over log10 of the values: lo and
// hi are decimal exponents and so are the returned tick values.
func log10Ticks(lo, hi float64) []plot.Tick {
	lo, hi = math.Max(lo, -323), math.Min(hi, 308) // keep 10^x finite, non-zero
	ts := logTicks(math.Pow(10, lo), math.Pow(10, hi))
	for i := range ts {
		ts[i].Value = math.Log10(ts[i].Value)
	}
	return ts
}

// logTicks marks decades on a logarithmic axis: every decade labelled when
// the range spans at most 8 of them (with minor ticks at 2…9), every 2nd,
// 3rd, 5th, 10th, … otherwise (with fewer minor ticks); narrow ranges also
// label 2× and 5×, and ranges too narrow for two labels fall back to linear
// ticks. Only ticks inside [min, max] are
// returned, so none can be non-positive.
func logTicks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	e0 := int(math.Floor(math.Log10(lo)))
	e1 := int(math.Ceil(math.Log10(hi)))
	nd := e1 - e0
	// Label every step-th decade and tick every sub-th, for at most about
	// 8 labels and 40 ticks.
	step, sub := 1, 1
	for _, s := range [][2]int{{2, 1}, {3, 1}, {5, 1}, {10, 2}, {20, 5}, {30, 10}, {50, 10}, {100, 20}, {200, 50}} {
		if nd <= 8*step {
			break
		}
		step, sub = s[0], s[1]
	}
	in := func(v float64) bool { return v >= lo*(1-1e-12) && v <= hi*(1+1e-12) }
	var ticks []plot.Tick
	labelled := 0
	for e := e0; e <= e1; e++ {
		v := math.Pow10(e)
		if in(v) && mod(e, sub) == 0 {
			t := plot.Tick{Value: v}
			if mod(e, step) == 0 {
				t.Label = decadeLabel(e)
				labelled++
			}
			ticks = append(ticks, t)
		}
		if nd <= 8 && e < e1 {
			for m := 2; m <= 9; m++ {
				if u := float64(m) * v; in(u) {
					ticks = append(ticks, plot.Tick{Value: u})
				}
			}
		}
	}
	if labelled >= 2 {
		return ticks
	}
	for i, t := range ticks {
		m := t.Value / math.Pow10(int(math.Floor(math.Log10(t.Value)+1e-9)))
		if t.Label == "" && (math.Abs(m-2) < 1e-6 || math.Abs(m-5) < 1e-6) {
			ticks[i].Label = strconv.FormatFloat(t.Value, 'g', 3, 64)
			labelled++
		}
	}
	if labelled >= 2 {
		return ticks
	}
	var lin []plot.Tick
	for _, t := range linearTicks(lo, hi) {
		if t.Value > 0 {
			lin = append(lin, t)
		}
	}
	return lin
}

// linearTicks labels "nice" values (1, 2, 2.5 or 5 × 10^k apart, the
// smallest spacing giving at most 8 intervals, so 4 to 9 labels) in
// [lo, hi], with unlabelled minor ticks between them. Labels share their
// number of decimals, or use exponent form for very large or small
// magnitudes.
func linearTicks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsInf(hi-lo, 0) {
		return nil
	}
	const maxIntervals = 8
	raw := (hi - lo) / maxIntervals
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	step, minor := 10*mag, 2
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw*(1-1e-9) {
			step = m * mag
			if m == 2.5 {
				minor = 5
			}
			break
		}
	}
	k0, k1 := math.Ceil(lo/step-1e-9), math.Floor(hi/step+1e-9)
	if !(k1-k0 < 100) {
		return nil
	}
	format := tickFormat(math.Max(math.Abs(lo), math.Abs(hi)), step)
	var ticks []plot.Tick
	for k := k0 - 1; k <= k1; k++ {
		v := k * step
		if k >= k0 {
			if math.Abs(v) < step*1e-9 {
				v = 0
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: format(v)})
		}
		for j := 1; j < minor; j++ {
			if u := v + float64(j)*step/float64(minor); u >= lo && u <= hi {
				ticks = append(ticks, plot.Tick{Value: u})
			}
		}
	}
	return ticks
}

// tickFormat returns the label format for ticks step apart on an axis
// whose values reach magnitude big.
func tickFormat(big, step float64) func(float64) string {
	// Significant decimals of step: 0.25 needs 2, 0.2 needs 1, 50 needs 0.
	dec := 0
	for ; dec < 15; dec++ {
		s := step * math.Pow10(dec)
		if math.Abs(s-math.Round(s)) < 1e-6*s {
			break
		}
	}
	if big >= 1e6 || big < 1e-3 {
		// Exponent form with enough significant digits to tell ticks apart.
		e := math.Floor(math.Log10(step))
		sig := int(math.Floor(math.Log10(big))-e) + 1
		if math.Abs(step/math.Pow10(int(e))-2.5) < 1e-6 {
			sig++ // the 2.5 mantissa needs one more digit
		}
		sig = min(max(sig, 1), 15)
		return func(v float64) string {
			if v == 0 {
				return "0"
			}
			return shortExp(strconv.FormatFloat(v, 'e', sig-1, 64))
		}
	}
	return func(v float64) string { return strconv.FormatFloat(v, 'f', dec, 64) }
}

// shortExp writes "1.50e-06" as "1.5e-6" and "2.0e+10" as "2e10".
func shortExp(s string) string {
	i := strings.IndexByte(s, 'e')
	if i < 0 {
		return s
	}
	mant, exp := s[:i], s[i+1:]
	if strings.Contains(mant, ".") {
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
	}
	sign := ""
	if exp[0] == '-' || exp[0] == '+' {
		if exp[0] == '-' {
			sign = "-"
		}
		exp = exp[1:]
	}
	exp = strings.TrimLeft(exp, "0")
	if exp == "" {
		exp = "0"
	}
	return mant + "e" + sign + exp
}

// mod is the non-negative remainder of e / m.
func mod(e, m int) int { return ((e % m) + m) % m }

// decadeLabel formats 10^e compactly: plain for 1e-3 … 1e4, else "1e-6".
func decadeLabel(e int) string {
	if e >= -3 && e <= 4 {
		return strconv.FormatFloat(math.Pow10(e), 'f', -1, 64)
	}
	return "1e" + strconv.Itoa(e)
}

// markLine is a reference line across the data area.
type markLine struct {
	horizontal bool
	at         float64
	style      draw.LineStyle
}

// Plot implements plot.Plotter.
func (m *markLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	if m.horizontal {
		y := trY(m.at)
		c.StrokeLine2(m.style, c.Min.X, y, c.Max.X, y)
		return
	}
	x := trX(m.at)
	c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
}

// bar is one histogram bin, in drawing coordinates.
type bar struct{ x0, x1, h float64 }

// bars draws histogram bins as filled, outlined bars rising from the bottom
// of the data area (y = 0 on a linear axis, whose range includes 0).
type bars struct {
	bins []bar
	fill color.Color
	line draw.LineStyle
}

// Plot implements plot.Plotter.
func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, bn := range b.bins {
		x0, x1, y := trX(bn.x0), trX(bn.x1), trY(bn.h)
		pts := []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: y}, {X: x0, Y: y}}
		c.FillPolygon(b.fill, c.ClipPolygonXY(pts))
		c.StrokeLines(b.line, c.ClipLinesXY(append(pts, pts[0]))...)
	}
}

// lineThumb is a legend thumbnail showing a line style.
type lineThumb struct{ style draw.LineStyle }

// Thumbnail implements plot.Thumbnailer.
func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(t.style, c.Min.X, y, c.Max.X, y)
}

// lineGlyphThumb is a legend thumbnail showing a line with a glyph on it.
type lineGlyphThumb struct {
	line  draw.LineStyle
	glyph draw.GlyphStyle
}

// Thumbnail implements plot.Thumbnailer.
func (t lineGlyphThumb) Thumbnail(c *draw.Canvas) {
	lineThumb{t.line}.Thumbnail(c)
	c.DrawGlyph(t.glyph, c.Center())
}

// glyphThumb is a legend thumbnail showing a point glyph.
type glyphThumb struct{ style draw.GlyphStyle }

// Thumbnail implements plot.Thumbnailer.
func (t glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(t.style, c.Center()) }

// boxThumb is a legend thumbnail showing a filled, outlined box.
type boxThumb struct {
	fill color.Color
	line draw.LineStyle
}

// Thumbnail implements plot.Thumbnailer.
func (t boxThumb) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	pts := []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}
	c.FillPolygon(t.fill, pts)
	c.StrokeLines(t.line, append(pts, r.Min))
}

// legendBox draws the legend of an axes inside its data area, on a white
// box, at the place along the border (a corner first) that overlaps the
// fewest drawn segments. When outside is set (renderPanels found no
// place free of data) it draws nothing: the legend goes under the axes.
type legendBox struct {
	ax      *axes
	outside bool
}

// rect is an axis-aligned rectangle in canvas coordinates.
type rect struct{ x0, y0, x1, y1 float64 }

// Legend geometry.
const legendFontSize = 9.5

var (
	legendThumbW = vg.Points(22)
	legendGap    = vg.Points(5)
	legendPad    = vg.Points(5)
	legendInset  = vg.Points(6)
	legendColGap = vg.Points(12)
)

func legendStyle() text.Style { return textStyle(legendFontSize, draw.XLeft, draw.YCenter) }

func legendRowH() vg.Length { return legendStyle().FontExtents().Height * 1.2 }

// entryWidth is the width of one legend column: thumbnail, gap, the
// longest name.
func (l *legendBox) entryWidth() vg.Length {
	sty := legendStyle()
	var textW vg.Length
	for _, e := range l.ax.legend {
		textW = max(textW, sty.Width(e.name))
	}
	return legendThumbW + legendGap + textW
}

// place returns where a one-column legend box of size bw×bh would sit
// inside the data canvas c, and how many drawn segments it would cover.
func (l *legendBox) place(c draw.Canvas, p *plot.Plot) (at vg.Point, bw, bh vg.Length, score int) {
	bw = 2*legendPad + l.entryWidth()
	bh = 2*legendPad + legendRowH()*vg.Length(len(l.ax.legend))
	left, right := c.Min.X+legendInset, c.Max.X-legendInset-bw
	top, bottom := c.Max.Y-legendInset-bh, c.Min.Y+legendInset
	// The corners first (the usual places, and preferred on ties), then
	// the edges' midpoints and inner positions: a work-precision diagram
	// crosses every corner but often leaves a band free.
	var places []vg.Point
	for _, f := range [][2]vg.Length{{1, 1}, {0, 1}, {1, 0}, {0, 0}, {0.5, 1}, {0.5, 0}, {0, 0.5}, {1, 0.5},
		{0.25, 1}, {0.75, 1}, {0.25, 0}, {0.75, 0}, {0, 0.75}, {0, 0.25}, {1, 0.75}, {1, 0.25}} {
		places = append(places, vg.Point{X: left + f[0]*(right-left), Y: bottom + f[1]*(top-bottom)})
	}
	at, score = places[0], math.MaxInt
	segs := l.segments(c, p)
	for _, pt := range places {
		r := rect{float64(pt.X), float64(pt.Y), float64(pt.X + bw), float64(pt.Y + bh)}
		n := 0
		for _, s := range segs {
			if hits(s, r) {
				n++
			}
		}
		if n < score {
			at, score = pt, n
		}
	}
	return at, bw, bh, score
}

// Plot implements plot.Plotter.
func (l *legendBox) Plot(c draw.Canvas, p *plot.Plot) {
	if l.outside {
		return
	}
	at, bw, bh, _ := l.place(c, p)
	l.draw(c, at, bw, bh, 1)
}

// draw draws the legend in a box of size bw×bh with its lower-left
// corner at at, its entries in cols columns filled top to bottom.
func (l *legendBox) draw(c draw.Canvas, at vg.Point, bw, bh vg.Length, cols int) {
	sty := legendStyle()
	rowH := legendRowH()
	rows := (len(l.ax.legend) + cols - 1) / cols
	colW := l.entryWidth() + legendColGap
	box := []vg.Point{at, {X: at.X + bw, Y: at.Y}, {X: at.X + bw, Y: at.Y + bh}, {X: at.X, Y: at.Y + bh}}
	c.FillPolygon(color.NRGBA{R: 255, G: 255, B: 255, A: 230}, box)
	c.StrokeLines(draw.LineStyle{Color: color.Gray{Y: 150}, Width: vg.Points(0.5)}, append(box, at))
	for k, e := range l.ax.legend {
		row, col := k%rows, k/rows
		mid := at.Y + bh - legendPad - rowH*(vg.Length(row)+0.5)
		x := at.X + legendPad + colW*vg.Length(col)
		tc := &draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: mid - rowH*0.35},
			Max: vg.Point{X: x + legendThumbW, Y: mid + rowH*0.35},
		}}
		e.thumb.Thumbnail(tc)
		c.FillText(sty, vg.Point{X: x + legendThumbW + legendGap, Y: mid}, e.name)
	}
}

// under returns the size of the legend laid out in as many columns as
// fit in width, to go under the axes.
func (l *legendBox) under(width vg.Length) (bw, bh vg.Length, cols int) {
	colW := l.entryWidth() + legendColGap
	cols = max(1, min(len(l.ax.legend), int((width-2*legendPad+legendColGap)/colW)))
	rows := (len(l.ax.legend) + cols - 1) / cols
	bw = 2*legendPad + colW*vg.Length(cols) - legendColGap
	bh = 2*legendPad + legendRowH()*vg.Length(rows)
	return bw, bh, cols
}

// segment is a line segment in canvas coordinates.
type segment struct{ x0, y0, x1, y1 float64 }

// maxSegs bounds the segments considered per polyline for legend placement.
const maxSegs = 4000

// segments returns what the legend should avoid, in canvas coordinates:
// the (subsampled) polylines of the data and the reference lines.
func (l *legendBox) segments(c draw.Canvas, p *plot.Plot) []segment {
	trX, trY := p.Transforms(&c)
	var out []segment
	for _, pl := range l.ax.occ {
		stride := max(1, len(pl)/maxSegs)
		px, py := float64(trX(pl[0].x)), float64(trY(pl[0].y))
		if len(pl) == 1 {
			out = append(out, segment{px, py, px, py})
			continue
		}
		for j := stride; ; j += stride {
			j = min(j, len(pl)-1)
			qx, qy := float64(trX(pl[j].x)), float64(trY(pl[j].y))
			out = append(out, segment{px, py, qx, qy})
			px, py = qx, qy
			if j == len(pl)-1 {
				break
			}
		}
	}
	for _, v := range l.ax.hmarks {
		y := float64(trY(v))
		out = append(out, segment{float64(c.Min.X), y, float64(c.Max.X), y})
	}
	for _, v := range l.ax.vmarks {
		x := float64(trX(v))
		out = append(out, segment{x, float64(c.Min.Y), x, float64(c.Max.Y)})
	}
	return out
}

// hits reports whether segment s meets rectangle r (Liang–Barsky clipping).
func hits(s segment, r rect) bool {
	dx, dy := s.x1-s.x0, s.y1-s.y0
	ps := [4]float64{-dx, dx, -dy, dy}
	qs := [4]float64{s.x0 - r.x0, r.x1 - s.x0, s.y0 - r.y0, r.y1 - s.y0}
	t0, t1 := 0.0, 1.0
	for i, pv := range ps {
		q := qs[i]
		if pv == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		t := q / pv
		if pv < 0 {
			if t > t1 {
				return false
			}
			t0 = math.Max(t0, t)
		} else {
			if t < t0 {
				return false
			}
			t1 = math.Min(t1, t)
		}
	}
	return true
}
