package plot

import (
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// Text writes s on c in the charts' font at size points, its baseline's
// left end at at: for pages laid out around the charts (the report's PDF
// tables). One weight only: vgpdf cannot embed the bold face.
func Text(c vg.Canvas, at vg.Point, size float64, s string) {
	c.SetColor(color.Black)
	c.FillString(font.DefaultCache.Lookup(gplot.DefaultFont, vg.Points(size)), at, s)
}

// HLine strokes a thin grey horizontal line from x0 to x1 at y.
func HLine(c vg.Canvas, x0, x1, y vg.Length) {
	var p vg.Path
	p.Move(vg.Point{X: x0, Y: y})
	p.Line(vg.Point{X: x1, Y: y})
	c.SetColor(color.Gray{Y: 200})
	c.SetLineWidth(vg.Points(0.5))
	c.Stroke(p)
}
