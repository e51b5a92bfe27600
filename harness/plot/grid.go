package plot

import (
	"image/color"
	"math"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Cell is one square of a grid: its fill and the text written in it.
type Cell struct {
	Color color.Color // nil leaves the cell blank
	Text  string
	// Ratio, when above 0 and Color is nil, fills the cell on the grid's
	// diverging scale (RatioSpan): green below 1, red above.
	Ratio float64
	// Header marks a repeat of the column labels (withHeaders).
	Header bool
	// Hollow draws a dashed frame inside the cell, as a hollow point or
	// bar; Note is added to its tooltip (the report: not verified).
	Hollow bool
	Note   string
}

// RatioSpan is the ratio at which the grid's diverging colours are full:
// the largest ratio (or inverse) among its cells, rounded up to a power of
// two and at least 2x, so no cell saturates and 1.5x and 6x look apart.
func RatioSpan(g Grid) float64 {
	top := 1.0 // log2 of the span
	for _, row := range g.Cells {
		for _, c := range row {
			if c.Ratio > 0 && c.Color == nil {
				top = max(top, math.Ceil(math.Abs(math.Log2(c.Ratio))))
			}
		}
	}
	return math.Exp2(top)
}

// Grid is a categorical heat map: Rows[i] by Cols[j] holds Cells[i][j].
// Row 0 is drawn at the top, as a table reads.
type Grid struct {
	Title, XLabel, YLabel string
	Rows, Cols            []string
	Cells                 [][]Cell
	// ColWidth, when above 0, is the width a column gets in the figure:
	// column labels wider than it are wrapped at spaces onto more lines
	// (measured in the charts' font), so neighbours never run together.
	ColWidth vg.Length
}

// FitColumns sets ColWidth for a figure w wide: what is left of w after
// the row labels, the axis label and the margins, shared by the columns.
func (g *Grid) FitColumns(w vg.Length) {
	widest := 0.0
	for _, r := range g.Rows {
		widest = max(widest, TextWidth(r, 9))
	}
	if len(g.Cols) > 0 {
		g.ColWidth = max(vg.Points(20), (w-vg.Points(widest+48))/vg.Length(len(g.Cols))-vg.Points(6))
	}
}

// HeaderEvery is how many rows a tall grid draws between repeats of its
// column labels: a reader of a 72-row heat map finds the backends' names
// above the rows they are reading, not only at the foot of the map.
const HeaderEvery = 20

// withHeaders is g with a row of column labels above its first row and
// again every HeaderEvery rows, when it has more than HeaderEvery rows.
func withHeaders(g Grid) Grid {
	if len(g.Rows) <= HeaderEvery {
		return g
	}
	header := make([]Cell, len(g.Cols))
	for j, c := range g.Cols {
		header[j] = Cell{Text: c, Header: true}
	}
	var out Grid = g
	out.Rows, out.Cells = nil, nil
	for i := range g.Rows {
		if i%HeaderEvery == 0 {
			out.Rows = append(out.Rows, "")
			out.Cells = append(out.Cells, header)
		}
		out.Rows = append(out.Rows, g.Rows[i])
		out.Cells = append(out.Cells, g.Cells[i])
	}
	return out
}

// Wrap breaks s at spaces into lines no wider than width in the charts'
// font at size points; a word wider than width stays whole on its line.
func Wrap(s string, width vg.Length, size float64) string {
	words := strings.Fields(s)
	if width <= 0 || len(words) == 0 {
		return s
	}
	var lines []string
	line := words[0]
	for _, w := range words[1:] {
		if TextWidth(line+" "+w, size) <= width.Points() {
			line += " " + w
			continue
		}
		lines = append(lines, line)
		line = w
	}
	return strings.Join(append(lines, line), "\n")
}

// GridPlot draws g with the labels on the axes and the text in the cells.
// gonum's HeatMap needs a numeric palette; statuses and ratios with their
// numbers written in are clearer drawn cell by cell.
func GridPlot(g Grid) *gplot.Plot {
	span := math.Log2(RatioSpan(g))
	for i, row := range g.Cells {
		for j, c := range row {
			if c.Ratio > 0 && c.Color == nil {
				g.Cells[i][j].Color = Diverging(math.Log2(c.Ratio) / span)
			}
		}
	}
	g = withHeaders(g)
	p := newPlot(g.Title, g.XLabel, g.YLabel)
	p.Add(gridPlotter{g, hoverLayerOf(p)})
	var xt, yt gplot.ConstantTicks
	for j, c := range g.Cols {
		xt = append(xt, gplot.Tick{Value: float64(j), Label: Wrap(c, g.ColWidth, p.X.Tick.Label.Font.Size.Points())})
	}
	for i, r := range g.Rows {
		yt = append(yt, gplot.Tick{Value: float64(len(g.Rows) - 1 - i), Label: r})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = xt, yt
	p.X.Tick.Length, p.Y.Tick.Length = 0, 0
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.LineStyle.Width, p.Y.LineStyle.Width = 0, 0
	return p
}

type gridPlotter struct {
	g      Grid
	hovers *hoverLayer // each cell's tooltip: its row, column and text
}

func (gp gridPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(gp.g.Cols)) - 0.5, -0.5, float64(len(gp.g.Rows)) - 0.5
}

func (gp gridPlotter) Plot(c draw.Canvas, plt *gplot.Plot) {
	trX, trY := plt.Transforms(&c)
	n := len(gp.g.Rows)
	border := draw.LineStyle{Color: color.White, Width: vg.Points(1)}
	for i, row := range gp.g.Cells {
		y := float64(n - 1 - i)
		for j, cell := range row {
			x := float64(j)
			x0, x1, y0, y1 := trX(x-0.5), trX(x+0.5), trY(y-0.5), trY(y+0.5)
			rect := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			if cell.Color != nil {
				c.FillPolygon(cell.Color, rect)
			}
			c.StrokeLines(border, append(rect, rect[0]))
			if cell.Hollow {
				in := vg.Points(2.5)
				frame := []vg.Point{{X: x0 + in, Y: y0 + in}, {X: x1 - in, Y: y0 + in}, {X: x1 - in, Y: y1 - in}, {X: x0 + in, Y: y1 - in}}
				c.StrokeLines(draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}},
					append(frame, frame[0]))
			}
			if !cell.Header && i < len(gp.g.Rows) && j < len(gp.g.Cols) {
				text := gp.g.Rows[i] + " / " + strings.ReplaceAll(gp.g.Cols[j], "\n", " ") + ": " + strings.ReplaceAll(cell.Text, "\n", " ")
				if cell.Note != "" {
					text += " [" + cell.Note + "]"
				}
				gp.hovers.addCell(vg.Rectangle{Min: vg.Point{X: min(x0, x1), Y: min(y0, y1)}, Max: vg.Point{X: max(x0, x1), Y: max(y0, y1)}}, text)
			}
			if cell.Text != "" {
				sty := draw.TextStyle{Color: textOn(cell.Color), Font: plt.Y.Tick.Label.Font,
					XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plt.Y.Tick.Label.Handler}
				sty.Font.Size = vg.Points(8)
				text := cell.Text
				if cell.Header {
					// A repeated column label: fitted to its cell, shrunk
					// to the cell's height if it needs more lines.
					text = Wrap(text, x1-x0-vg.Points(4), 8)
					if lines := float64(strings.Count(text, "\n") + 1); lines*sty.Font.Size.Points()*1.2 > math.Abs((y1 - y0).Points()) {
						sty.Font.Size = vg.Points(max(5, math.Abs((y1-y0).Points())/(1.2*lines)))
					}
				}
				c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, text)
			}
		}
	}
}

// textOn is black on light fills and white on dark ones.
func textOn(bg color.Color) color.Color {
	if bg == nil {
		return color.Black
	}
	r, g, b, _ := bg.RGBA()
	if 0.299*float64(r)+0.587*float64(g)+0.114*float64(b) < 0.5*0xffff {
		return color.White
	}
	return color.Black
}

// Diverging maps t in [-1, 1] to green (-1, better) through near-white
// (0) to red (+1, worse); values beyond are clamped.
func Diverging(t float64) color.Color {
	t = max(-1, min(1, t))
	white := [3]float64{247, 247, 247}
	end := [3]float64{215, 48, 39} // red
	if t < 0 {
		end, t = [3]float64{26, 152, 80}, -t // green
	}
	var c [3]uint8
	for k := range c {
		c[k] = uint8(white[k] + t*(end[k]-white[k]) + 0.5)
	}
	return color.RGBA{c[0], c[1], c[2], 255}
}
