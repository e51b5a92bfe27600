package plot

import (
	"image/color"
	"sync"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A figure of several panels draws one legend for all of them, above the
// panels and off their data: gonum's legend sits inside each panel, over
// the lines unless the axis is stretched for it, and repeats in every
// panel. Panels made with Axes.SharedLegend record their entries here
// instead (keyed by the panel), and Figure.draw lays them out in rows as
// wide as the figure, each entry as wide as its text measures in the
// charts' font, wrapping to a new row rather than running into the next.

type legendEntry struct {
	name   string
	thumbs []gplot.Thumbnailer
}

var sharedLegends sync.Map // *gplot.Plot -> []legendEntry

func addShared(p *gplot.Plot, name string, thumbs ...gplot.Thumbnailer) {
	old, _ := sharedLegends.Load(p)
	entries, _ := old.([]legendEntry)
	sharedLegends.Store(p, append(entries, legendEntry{name, thumbs}))
}

// Legend sizes, in points.
const (
	legendFont  = 9.0
	legendThumb = 14.0 // thumbnail width
	legendGap   = 4.0  // thumbnail to text
	legendSpace = 14.0 // between entries
	legendRow   = 14.0 // row height
	legendPad   = 6.0  // around the strip
)

// figureLegend is the entries of every panel of f that shares its legend,
// each name once, in the order the panels first name them.
func (f Figure) figureLegend() []legendEntry {
	var out []legendEntry
	seen := map[string]bool{}
	for _, row := range f.Panels {
		for _, p := range row {
			v, _ := sharedLegends.Load(p)
			entries, _ := v.([]legendEntry)
			for _, e := range entries {
				if !seen[e.name] {
					seen[e.name] = true
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// legendRows places entries in rows no wider than width: x offsets per
// entry and the number of rows.
func legendRows(entries []legendEntry, width float64) (xs []float64, rows []int, n int) {
	x, row := legendPad, 0
	for _, e := range entries {
		w := legendThumb + legendGap + TextWidth(e.name, legendFont)
		if x > legendPad && x+w > width-legendPad {
			x, row = legendPad, row+1
		}
		xs, rows = append(xs, x), append(rows, row)
		x += w + legendSpace
	}
	return xs, rows, row + 1
}

// legendHeight is the height of the strip the legend takes on c.
func legendHeight(entries []legendEntry, width vg.Length) vg.Length {
	if len(entries) == 0 {
		return 0
	}
	_, _, n := legendRows(entries, width.Points())
	return vg.Points(float64(n)*legendRow + 2*legendPad)
}

// drawLegend draws entries in rows along the top of c.
func drawLegend(c draw.Canvas, entries []legendEntry) {
	xs, rows, _ := legendRows(entries, c.Size().X.Points())
	sty := draw.TextStyle{Color: color.Black, Font: newPlot("", "", "").Legend.TextStyle.Font,
		XAlign: draw.XLeft, YAlign: draw.YCenter, Handler: newPlot("", "", "").Legend.TextStyle.Handler}
	sty.Font.Size = vg.Points(legendFont)
	top := c.Max.Y - vg.Points(legendPad)
	for i, e := range entries {
		x := c.Min.X + vg.Points(xs[i])
		yc := top - vg.Points((float64(rows[i])+0.5)*legendRow)
		h := vg.Points(legendRow * 0.7)
		box := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: yc - h/2}, Max: vg.Point{X: x + vg.Points(legendThumb), Y: yc + h/2}}}
		for _, t := range e.thumbs {
			t.Thumbnail(&box)
		}
		c.FillText(sty, vg.Point{X: x + vg.Points(legendThumb+legendGap), Y: yc}, e.name)
	}
}
