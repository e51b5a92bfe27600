package plot

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one named line (or set of points).
type Series struct {
	Name       string
	Color      color.Color
	X, Y       []float64
	PointsOnly bool // a scatter, no connecting line
	Shape      int  // glyph shape index (marker, glyphs.go)
	// Lo and Hi, when as long as X, are each point's 95% interval, drawn
	// as a band (NaN where a point has none).
	Lo, Hi []float64
	// Hover, when set, is each point's tooltip in the SVG; otherwise it
	// names the series, the value, the x and the interval (hover.go).
	Hover []string
	// Hollow, when as long as X, marks points drawn as an outline of the
	// series' glyph (a ring for a dot); HollowNote says why in their
	// tooltip (the report: not verified).
	Hollow     []bool
	HollowNote string
}

// Axes labels a panel and picks its scales.
type Axes struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	// XTicks, when set, puts ticks exactly at these values (the sweep's
	// sequence lengths, say) instead of powers of ten.
	XTicks []float64
	// XTickLabels, when as long as XTicks, labels them (model sizes).
	XTickLabels []string
	// LegendOutside leaves no headroom for a legend in the data area:
	// the figure draws it beside the panel (Figure.LegendOutside).
	LegendOutside bool
	// SharedLegend leaves the panel without a legend of its own: the
	// figure draws one for all its panels above them (legend.go).
	SharedLegend bool
}

// addLegend adds an entry to p's legend, or to the figure's when a.SharedLegend.
func addLegend(p *gplot.Plot, a Axes, name string, thumbs ...gplot.Thumbnailer) {
	if a.SharedLegend {
		addShared(p, name, thumbs...)
		return
	}
	p.Legend.Add(name, thumbs...)
}

// Lines draws series against shared axes. Points that a log axis cannot
// show (zero, negative, NaN) are dropped rather than failing the chart.
func Lines(a Axes, series []Series) (*gplot.Plot, error) {
	p := newPlot(a.Title, a.XLabel, a.YLabel)
	setScales(p, a)
	for i, s := range series {
		xys := points(s, a)
		if len(xys) == 0 {
			continue
		}
		addHover(p, s, a)
		glyph := draw.GlyphStyle{Color: s.Color, Radius: vg.Points(2.5), Shape: marker{shape: s.Shape}}
		solid, hollow := splitHollow(s, a)
		var thumbs []gplot.Thumbnailer
		if !s.PointsOnly {
			band(p, s, a)
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("plot %q series %d (%s): %w", a.Title, i, s.Name, err)
			}
			l.LineStyle.Color, l.LineStyle.Width = s.Color, vg.Points(1.5)
			p.Add(l)
			thumbs = append(thumbs, l)
		}
		// The legend shows the solid glyph; the caption says what an
		// outline means.
		legendGlyph := &plotter.Scatter{GlyphStyle: glyph}
		for _, part := range []struct {
			xys   plotter.XYs
			shape draw.GlyphDrawer
		}{{solid, glyph.Shape}, {hollow, marker{shape: s.Shape, hollow: true}}} {
			if len(part.xys) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(part.xys)
			if err != nil {
				return nil, fmt.Errorf("plot %q series %d (%s): %w", a.Title, i, s.Name, err)
			}
			sc.GlyphStyle = glyph
			sc.GlyphStyle.Shape = part.shape
			p.Add(sc)
		}
		addLegend(p, a, s.Name, append(thumbs, legendGlyph)...)
	}
	p.Add(plotter.NewGrid())
	p.Legend.Left = true
	if !a.LegendOutside && !a.SharedLegend {
		headroom(p, a.LogY)
	}
	// One point (or one value) leaves an empty range, which gonum widens
	// by one either side: below zero on a log axis. Widen by a factor.
	for _, ax := range []struct {
		ax  *gplot.Axis
		log bool
	}{{&p.X, a.LogX}, {&p.Y, a.LogY}} {
		if ax.log && ax.ax.Min == ax.ax.Max && ax.ax.Min > 0 {
			ax.ax.Min, ax.ax.Max = ax.ax.Min/2, ax.ax.Max*2
		}
	}
	return p, nil
}

// headroom raises the top of the y axis so the legend, which gonum draws
// inside the data area, sits above the data whichever way the lines run.
func headroom(p *gplot.Plot, logY bool) {
	if logY {
		if p.Y.Min > 0 {
			p.Y.Min /= 1.5
		}
		p.Y.Max *= 4
		return
	}
	p.Y.Max += 0.3 * (p.Y.Max - p.Y.Min)
}

func setScales(p *gplot.Plot, a Axes) {
	if a.LogX {
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	if a.LogY {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	if len(a.XTicks) > 0 {
		var ticks gplot.ConstantTicks
		for i, t := range a.XTicks {
			label := strconv.FormatFloat(t, 'g', -1, 64)
			if len(a.XTickLabels) == len(a.XTicks) {
				label = a.XTickLabels[i]
			}
			ticks = append(ticks, gplot.Tick{Value: t, Label: label})
		}
		sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
		p.X.Tick.Marker = ticks
	}
}

// splitHollow parts the points Lines draws into solid and hollow ones.
func splitHollow(s Series, a Axes) (solid, hollow plotter.XYs) {
	all := points(s, a)
	if len(s.Hollow) != len(s.X) {
		return all, nil
	}
	k := 0
	for i := range s.X {
		if !drawable(s.X[i], s.Y[i], a) {
			continue
		}
		if s.Hollow[i] {
			hollow = append(hollow, all[k])
		} else {
			solid = append(solid, all[k])
		}
		k++
	}
	return solid, hollow
}

// drawable says whether a point can be shown on a's axes.
func drawable(x, y float64, a Axes) bool {
	return !(math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) || a.LogX && x <= 0 || a.LogY && y <= 0)
}

func points(s Series, a Axes) plotter.XYs {
	var xys plotter.XYs
	for i := range s.X {
		if drawable(s.X[i], s.Y[i], a) {
			xys = append(xys, plotter.XY{X: s.X[i], Y: s.Y[i]})
		}
	}
	return xys
}

// Ceiling is one roof: a compute peak and the memory bandwidth under it.
type Ceiling struct {
	Name       string
	Color      color.Color
	PeakTFLOPs float64 // TFLOP/s
	TBps       float64 // memory bandwidth, TB/s
}

// Roofline draws achieved TFLOP/s against arithmetic intensity (FLOP per
// byte) on log-log axes, under each ceiling min(peak, bandwidth *
// intensity). The x range covers the points and every ridge point. Its
// figure should set LegendOutside: the plot leaves no room for a legend.
func Roofline(title string, pts []Series, ceilings []Ceiling) (*gplot.Plot, error) {
	a := Axes{Title: title, XLabel: "arithmetic intensity (FLOP/byte)", YLabel: "achieved TFLOP/s", LogX: true, LogY: true, LegendOutside: true}
	for i := range pts {
		pts[i].PointsOnly = true
	}
	p, err := Lines(a, pts)
	if err != nil {
		return nil, err
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range pts {
		for _, x := range s.X {
			if x > 0 {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	for _, c := range ceilings {
		if c.TBps > 0 && c.PeakTFLOPs > 0 {
			ridge := c.PeakTFLOPs / c.TBps
			lo, hi = math.Min(lo, ridge), math.Max(hi, ridge)
		}
	}
	if math.IsInf(lo, 0) {
		return p, nil
	}
	lo, hi = lo/4, hi*4
	for _, c := range ceilings {
		if c.TBps <= 0 || c.PeakTFLOPs <= 0 {
			continue
		}
		ridge := c.PeakTFLOPs / c.TBps
		xys := plotter.XYs{{X: lo, Y: c.TBps * lo}, {X: ridge, Y: c.PeakTFLOPs}, {X: hi, Y: c.PeakTFLOPs}}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("roofline %q ceiling %s: %w", title, c.Name, err)
		}
		l.LineStyle.Color, l.LineStyle.Width = c.Color, vg.Points(1.2)
		l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(c.Name, l)
	}
	// The highest roof in view, a little below the top.
	for _, c := range ceilings {
		p.Y.Max = math.Max(p.Y.Max, 1.5*c.PeakTFLOPs)
	}
	return p, nil
}
