// Package plots writes PNG figures for the gradsolve application commands
// (stellar orbits, cosmology profile likelihoods, spin-precession
// distributions) on top of gonum.org/v1/plot.
//
// Every function renders one figure and writes it to a single PNG file. The
// image is rendered in memory first and then written atomically: the bytes
// go to a temporary file in the destination directory which is renamed over
// the final name only once it is complete, so a failed call never leaves a
// partial PNG under the requested name (nor a stray temporary file).
//
// Input handling, common to all functions:
//
//   - An empty list of series, a series without values, or a series whose X
//     and Y lengths differ is an error.
//   - NaN and ±Inf values are skipped point by point (a line is broken at the
//     gap rather than joined across it). CDF is the exception for ±Inf, see
//     its documentation.
//   - On a logarithmic axis, points whose coordinate on that axis is zero or
//     negative are skipped the same way (they cannot be drawn).
//   - A figure left with nothing drawable after skipping is an error.
//   - Reference marks (Options.HLines, Options.VLines) must be finite, and
//     positive on a logarithmic axis; otherwise it is an error.
//   - The destination path must end in ".png".
//
// Every error names the destination path. The functions do not panic on bad
// input; an unexpected panic inside the plotting library is recovered and
// returned as an error.
//
// Only series with a non-empty Name get a legend entry, so a figure with many
// anonymous series (e.g. 20 orbits) stays readable; the legend is placed in
// the corner of the axes that overlaps the fewest drawn segments. Series
// colors cycle through plotutil's default palette.
//
// Single-axes figures are 6×4.5 inches, Panels figures are 5 inches wide per
// panel (10×4.5 inches for two), at the default 96 DPI of vgimg.
package plots

// Series is a named line or point set. X and Y must have the same length.
// An empty Name keeps the series out of the legend.
type Series struct {
	// Name is the legend label; empty for no legend entry.
	Name string
	// X and Y are the coordinates of the points, in drawing order.
	X, Y []float64
}

// Mark is a reference value drawn as a dashed line across the axes, e.g. a
// tolerance requirement or a 68% threshold. A non-empty Name gives it a
// legend entry.
type Mark struct {
	// Name is the legend label; empty for no legend entry.
	Name string
	// At is the position of the line in data units of its axis.
	At float64
}

// Options are optional settings for a set of axes. A nil *Options means all
// defaults (linear axes, no marks).
type Options struct {
	// LogX and LogY make the corresponding axis logarithmic. Points that
	// are zero or negative on a logarithmic axis are skipped.
	LogX, LogY bool
	// Equal makes one data unit the same length on both axes (for orbits),
	// by widening the range of one axis. It is ignored when either axis is
	// logarithmic, and by CDF and Histogram.
	Equal bool
	// Markers draws a glyph at every point of a Lines series, of a shape
	// that differs between series, to tell apart series that share a
	// colour or cross often (work-precision diagrams).
	Markers bool
	// HLines are horizontal reference lines (at y = At) and VLines vertical
	// ones (at x = At), drawn dashed; the axis ranges are widened to show
	// them.
	HLines, VLines []Mark
}

// Panel is one set of axes of a Panels figure.
type Panel struct {
	// Title, XLabel and YLabel label this panel; units belong in the labels.
	Title, XLabel, YLabel string
	// Series are drawn as in Lines.
	Series []Series
	// Opt are this panel's options; nil means defaults.
	Opt *Options
}

// Lines draws the series as lines on one set of axes and writes the figure
// to path (6×4.5 in). A series whose valid points are isolated (a single
// point, or single points between NaNs) shows those points as small circles.
// xlabel and ylabel should carry units.
func Lines(path, title, xlabel, ylabel string, series []Series, opt *Options) (err error) {
	defer recoverTo(path, &err)
	return saveSingle(path, func() (*axes, error) { return linesAxes(title, xlabel, ylabel, series, opt) })
}

// maxPanels bounds the number of panels (and so the image width).
const maxPanels = 8

// Panels draws several panels side by side (e.g. an orbit in the x–y and
// x–z planes), each with its own title, labels, options and legend, under a
// common title, and writes the figure to path. The figure is 5 inches wide
// per panel and 4.5 inches high; at most 8 panels are accepted. Each panel
// follows the rules of Lines; an error names the panel (counting from 0).
func Panels(path, title string, panels []Panel) (err error) {
	defer recoverTo(path, &err)
	if err := checkPath(path); err != nil {
		return err
	}
	if len(panels) == 0 {
		return pathErr(path, errf("no panels"))
	}
	if len(panels) > maxPanels {
		return pathErr(path, errf("%d panels, at most %d are supported", len(panels), maxPanels))
	}
	axs := make([]*axes, len(panels))
	for i, pn := range panels {
		ax, err := linesAxes(pn.Title, pn.XLabel, pn.YLabel, pn.Series, pn.Opt)
		if err != nil {
			return pathErr(path, errf("panel %d: %v", i, err))
		}
		axs[i] = ax
	}
	data, err := renderPanels(title, axs)
	if err != nil {
		return pathErr(path, err)
	}
	return writeAtomic(path, data)
}

// CDF draws the empirical cumulative distribution function of each sample
// — the fraction of its values ≤ x — as a step curve, and writes the figure
// to path (6×4.5 in). Only the Y field of each sample is used (X is
// ignored) and Name labels it in the legend. A typical use is solver errors
// with opt.LogX, VLines for tolerance requirements and an HLines mark at
// 0.99. The y axis is labelled "fraction of samples ≤ x" and spans [0, 1]
// unless opt.LogY is set (then zero levels are not drawn).
//
// The fraction is exact with respect to the non-NaN values: NaN values are
// dropped (and counted in the legend entry of a named sample); +Inf values
// count in the denominator but are never ≤ x, so the curve ends below 1;
// -Inf values, and zero or negative values on a log x axis, are ≤ every
// drawn x and so raise the level at which the curve starts. Each curve is
// extended horizontally to the edges of the common x range.
func CDF(path, title, xlabel string, samples []Series, opt *Options) (err error) {
	defer recoverTo(path, &err)
	return saveSingle(path, func() (*axes, error) { return cdfAxes(title, xlabel, samples, opt) })
}

// maxBins bounds the number of histogram bins.
const maxBins = 10000

// Histogram draws normalised histograms of the samples on shared bins and
// writes the figure to path (6×4.5 in). Only the Y field of each sample is
// used (X is ignored) and Name labels it in the legend; the histograms are
// drawn with translucent fills so that overlapping ones stay visible.
//
// The bins span the common range of all drawable values, in bins equal
// intervals (equal in log10 x when opt.LogX is set). bins <= 0 chooses
// ceil(sqrt(n)) for the largest sample size n, clamped to [5, 100]; more
// than 10000 bins is an error. Each histogram is a probability density over
// its own drawable values: per unit of x ("probability density"), or per
// decade of x with opt.LogX ("probability density per decade"), which is
// the y-axis label. NaN, ±Inf (and, with LogX, non-positive) values are
// skipped and do not count in the normalisation. With opt.LogY empty bins
// are left blank.
func Histogram(path, title, xlabel string, samples []Series, bins int, opt *Options) (err error) {
	defer recoverTo(path, &err)
	return saveSingle(path, func() (*axes, error) { return histAxes(title, xlabel, samples, bins, opt) })
}

// saveSingle checks path, builds one set of axes, renders it and writes
// the PNG atomically; errors name the path.
func saveSingle(path string, build func() (*axes, error)) error {
	if err := checkPath(path); err != nil {
		return err
	}
	ax, err := build()
	if err != nil {
		return pathErr(path, err)
	}
	data, err := renderSingle(ax)
	if err != nil {
		return pathErr(path, err)
	}
	return writeAtomic(path, data)
}
