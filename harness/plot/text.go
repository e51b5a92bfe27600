package plot

import (
	"image/color"

	"golang.org/x/text/encoding/charmap"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgpdf"
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

// PDFCanvas is c with text encoded as vgpdf's fonts expect: vgpdf sets
// every font in code page 1252 but hands strings on as they are, so UTF-8
// text ("…", "·", "×") came out as mojibake ("â€¦"). Characters outside
// cp1252 become "?".
func PDFCanvas(c *vgpdf.Canvas) vg.Canvas { return cp1252Canvas{c} }

type cp1252Canvas struct{ *vgpdf.Canvas }

// FillString implements vg.Canvas.
func (c cp1252Canvas) FillString(f font.Face, at vg.Point, s string) {
	c.Canvas.FillString(f, at, toCP1252(s))
}

func toCP1252(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		b, ok := charmap.Windows1252.EncodeRune(r)
		if !ok {
			b = '?'
		}
		out = append(out, b)
	}
	return string(out)
}
