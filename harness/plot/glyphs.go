package plot

import (
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// marker is a point's glyph: one of markerOutlines' shapes, filled (a
// verified point, or any where nothing is hollow) or as an outline (a
// point Series.Hollow marks). gonum's own glyphs mix the two (its square
// and triangle are outlines, its circle is filled), which cannot tell a
// hollow point from a solid one of another series.
type marker struct {
	shape  int
	hollow bool
}

// markerShapes is how many shapes there are: circle, square, triangle,
// diamond, triangle pointing down.
const markerShapes = 5

// DrawGlyph implements draw.GlyphDrawer.
func (m marker) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	var p vg.Path
	polygon := func(corners int, turn float64, scale vg.Length) {
		for k := range corners {
			a := turn + 2*math.Pi*float64(k)/float64(corners)
			q := vg.Point{X: pt.X + scale*r*vg.Length(math.Cos(a)), Y: pt.Y + scale*r*vg.Length(math.Sin(a))}
			if k == 0 {
				p.Move(q)
			} else {
				p.Line(q)
			}
		}
		p.Close()
	}
	switch m.shape % markerShapes {
	case 0:
		p.Move(vg.Point{X: pt.X + r, Y: pt.Y})
		p.Arc(pt, r, 0, 2*math.Pi)
		p.Close()
	case 1:
		polygon(4, math.Pi/4, math.Sqrt2*0.9)
	case 2:
		polygon(3, math.Pi/2, 1.25)
	case 3:
		polygon(4, 0, 1.25)
	case 4:
		polygon(3, -math.Pi/2, 1.25)
	}
	if m.hollow {
		c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)})
		c.Stroke(p)
		return
	}
	c.SetColor(sty.Color)
	c.Fill(p)
}
