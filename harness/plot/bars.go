package plot

import (
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarGroup is one series of a grouped bar chart: a value per category
// (NaN where it has none).
type BarGroup struct {
	Name   string
	Color  color.Color
	Values []float64
	// Lo and Hi, when as long as Values, are each value's 95% interval,
	// drawn as a whisker on its bar (NaN where it has none).
	Lo, Hi []float64
}

// Bars draws one cluster per category, one bar per group, with the
// category labels slanted so long configuration names fit.
func Bars(a Axes, categories []string, groups []BarGroup) (*gplot.Plot, error) {
	return bars(a, categories, groups, true)
}

// NamedBars draws one bar per name in its group's colour, each labelled on
// the axis, without a legend: the chart of a single category.
func NamedBars(a Axes, groups []BarGroup) (*gplot.Plot, error) {
	var names []string
	one := make([]BarGroup, len(groups))
	for i, g := range groups {
		names = append(names, g.Name)
		one[i] = BarGroup{Name: g.Name, Color: g.Color, Values: nans(len(groups))}
		if len(g.Values) > 0 {
			one[i].Values[i] = g.Values[0]
		}
		if len(g.Lo) > 0 && len(g.Hi) > 0 {
			one[i].Lo, one[i].Hi = nans(len(groups)), nans(len(groups))
			one[i].Lo[i], one[i].Hi[i] = g.Lo[0], g.Hi[0]
		}
	}
	return bars(a, names, one, false)
}

func bars(a Axes, categories []string, groups []BarGroup, clustered bool) (*gplot.Plot, error) {
	p := newPlot(a.Title, a.XLabel, a.YLabel)
	if len(groups) == 0 {
		return p, nil
	}
	w := vg.Points(math.Max(4, math.Min(14, 60/float64(len(groups)))))
	if !clustered {
		w = vg.Points(28)
	}
	for i, g := range groups {
		vals := make(plotter.Values, len(categories))
		for j := range vals {
			if j < len(g.Values) && !math.IsNaN(g.Values[j]) {
				vals[j] = g.Values[j]
			}
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, fmt.Errorf("bars %q group %s: %w", a.Title, g.Name, err)
		}
		b.Color, b.LineStyle.Width = g.Color, 0
		p.Add(b)
		if clustered {
			b.Offset = w * vg.Length(float64(i)-float64(len(groups)-1)/2)
			addLegend(p, a, g.Name, b)
		}
		if len(g.Lo) == len(categories) && len(g.Hi) == len(categories) {
			p.Add(whiskers{lo: g.Lo, hi: g.Hi, offset: b.Offset, color: color.Gray{Y: 40}})
		}
	}
	p.NominalX(categories...)
	if clustered && !a.SharedLegend {
		headroom(p, false)
	}
	p.X.Tick.Label.Rotation = math.Pi / 5
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	p.Add(plotter.NewGrid())
	return p, nil
}

func nans(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
