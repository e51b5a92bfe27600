package plot

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

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
	// Hollow, when as long as Values, marks bars drawn as a pale fill
	// inside an outline of the group's colour; HollowNote says why in
	// their tooltip (the report: not verified).
	Hollow     []bool
	HollowNote string
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
		one[i] = BarGroup{Name: g.Name, Color: g.Color, Values: nans(len(groups)), HollowNote: g.HollowNote}
		if len(g.Values) > 0 {
			one[i].Values[i] = g.Values[0]
		}
		if len(g.Lo) > 0 && len(g.Hi) > 0 {
			one[i].Lo, one[i].Hi = nans(len(groups)), nans(len(groups))
			one[i].Lo[i], one[i].Hi[i] = g.Lo[0], g.Hi[0]
		}
		if len(g.Hollow) > 0 {
			one[i].Hollow = make([]bool, len(groups))
			one[i].Hollow[i] = g.Hollow[0]
		}
	}
	return bars(a, names, one, false)
}

func bars(a Axes, categories []string, groups []BarGroup, clustered bool) (*gplot.Plot, error) {
	p := newPlot(a.Title, a.XLabel, a.YLabel)
	if len(groups) == 0 {
		return p, nil
	}
	for _, g := range groups {
		for _, s := range [][]float64{g.Values, g.Lo, g.Hi} {
			if len(s) > len(categories) {
				return nil, fmt.Errorf("bars %q group %s: %d values for %d categories", a.Title, g.Name, len(s), len(categories))
			}
		}
	}
	p.Add(plotter.NewGrid()) // under the bars
	layer := &barLayer{groups: groups, n: len(categories), clustered: clustered, categories: categories, ylabel: a.YLabel, hovers: hoverLayerOf(p)}
	p.Add(layer)
	if clustered {
		for _, g := range groups {
			addLegend(p, a, g.Name, barThumb{g.Color})
		}
	}
	p.NominalX(categories...)
	if clustered && !a.SharedLegend {
		headroom(p, false)
	}
	p.X.Tick.Label.Rotation = math.Pi / 5
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	return p, nil
}

// barLayer draws every group's bars in data units: category j spans
// j-0.5 to j+0.5, of which the middle barSpan is split into one slot per
// group. Each bar therefore has a slot of its own at any figure width
// (bars of a fixed width in points ran into the next category's when a
// panel was narrow), and the x range ends half a category past the last
// one, so the last cluster is never cut at the axis.
type barLayer struct {
	groups     []BarGroup
	categories []string
	ylabel     string
	n          int
	clustered  bool
	hovers     *hoverLayer // the tooltips' layer, registered before any drawing
}

// barSpan is the share of a category its cluster takes; the rest is the
// gap to the next cluster.
const barSpan = 0.8

// slot is the x extent of group i's bar on category j, in data units.
func (b *barLayer) slot(i, j int) (x0, x1 float64) {
	if !b.clustered {
		return float64(j) - 0.3, float64(j) + 0.3
	}
	w := barSpan / float64(len(b.groups))
	x0 = float64(j) - barSpan/2 + float64(i)*w
	return x0, x0 + w
}

// Plot implements gplot.Plotter.
func (b *barLayer) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	base := math.Max(0, p.Y.Min)
	whisker := draw.LineStyle{Color: color.Gray{Y: 40}, Width: vg.Points(1)}
	for i, g := range b.groups {
		for j, v := range g.Values {
			if !finite(v) {
				continue
			}
			x0, x1 := b.slot(i, j)
			// A hair of white between neighbours, when the slot is wide
			// enough to spare it, so touching bars read as two.
			l, r := trX(x0), trX(x1)
			if r-l > vg.Points(4) {
				l, r = l+vg.Points(0.5), r-vg.Points(0.5)
			}
			y0, y1 := trY(base), trY(v)
			rect := c.ClipPolygonY([]vg.Point{{X: l, Y: y0}, {X: r, Y: y0}, {X: r, Y: y1}, {X: l, Y: y1}})
			hollow := j < len(g.Hollow) && g.Hollow[j]
			if hollow {
				c.FillPolygon(tint(g.Color), rect)
				c.StrokeLines(draw.LineStyle{Color: g.Color, Width: vg.Points(1)}, append(rect, rect[0]))
			} else {
				c.FillPolygon(g.Color, rect)
			}
			text := fmt.Sprintf("%s: %s (%s) at %s", g.Name, strconv.FormatFloat(v, 'g', 4, 64), b.ylabel, b.categories[j])
			if j < len(g.Lo) && j < len(g.Hi) && finite(g.Lo[j], g.Hi[j]) {
				lo, hi := g.Lo[j], g.Hi[j]
				text += fmt.Sprintf(" (95%%: %s to %s)", strconv.FormatFloat(lo, 'g', 4, 64), strconv.FormatFloat(hi, 'g', 4, 64))
				if hi >= lo {
					x, cap := (l+r)/2, min(vg.Points(2.5), (r-l)/2)
					ya, yb := trY(lo), trY(hi)
					c.StrokeLine2(whisker, x, ya, x, yb)
					c.StrokeLine2(whisker, x-cap, ya, x+cap, ya)
					c.StrokeLine2(whisker, x-cap, yb, x+cap, yb)
				}
			}
			if hollow && g.HollowNote != "" {
				text += " [" + g.HollowNote + "]"
			}
			b.hovers.addBox(vg.Rectangle{Min: vg.Point{X: l, Y: min(y0, y1)}, Max: vg.Point{X: r, Y: max(y0, y1)}}, text)
		}
	}
}

// DataRange implements gplot.DataRanger: every category whole, from zero
// to the highest bar or whisker.
func (b *barLayer) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = 0, 0
	for _, g := range b.groups {
		for _, s := range [][]float64{g.Values, g.Hi} {
			for _, v := range s {
				if finite(v) {
					ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
				}
			}
		}
	}
	return -0.5, float64(b.n) - 0.5, ymin, ymax
}

// tint is c at a quarter of its strength over white: a hollow bar's fill.
func tint(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(255 - (255-v>>8)/4) }
	return color.RGBA{mix(r), mix(g), mix(b), 255}
}

// barThumb is a bar group's legend entry: a filled box of its colour.
type barThumb struct{ color color.Color }

// Thumbnail implements gplot.Thumbnailer.
func (t barThumb) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(t.color, c.ClipPolygonY(pts))
}

func nans(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
