// Package plot draws the report's charts with gonum.org/v1/plot. It knows
// nothing about results: callers hand it named series, bar groups and
// grids of cells, and it returns figures rendered as SVG and PNG. Keeping
// it generic keeps the drawing testable on its own and the report's
// choices (what to plot) in harness/report.
package plot

import (
	"bytes"
	"fmt"
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

func init() {
	// The SVGs embed this font (see font.go); Liberation Sans is also
	// metric-compatible with Arial, the fallback of viewers that ignore
	// an embedded font.
	gplot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

// Palette is colour-blind safe (Okabe-Ito), in the order colours are
// handed to backends.
var Palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 158, 115, 255},   // bluish green
	color.RGBA{204, 121, 167, 255}, // reddish purple
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{240, 228, 66, 255},  // yellow
	color.RGBA{0, 0, 0, 255},       // black
}

// Color is the i-th palette colour, cycling.
func Color(i int) color.Color { return Palette[i%len(Palette)] }

// Figure is one chart file: a grid of panels (row-major) drawn together.
type Figure struct {
	Name   string // file name without extension
	Title  string
	Panels [][]*gplot.Plot
	Width  vg.Length
	Height vg.Length
	// LegendOutside draws a single panel's legend to the right of it,
	// off the data and the grid lines.
	LegendOutside bool
}

// Single is a figure of one panel.
func Single(name, title string, p *gplot.Plot, w, h vg.Length) Figure {
	return Figure{Name: name, Title: title, Panels: [][]*gplot.Plot{{p}}, Width: w, Height: h}
}

func (f Figure) draw(c draw.Canvas) {
	rows := len(f.Panels)
	cols := 0
	for _, r := range f.Panels {
		cols = max(cols, len(r))
	}
	if rows == 1 && cols == 1 && len(f.figureLegend()) == 0 {
		if f.LegendOutside {
			drawLegendOutside(f.Panels[0][0], c)
			return
		}
		f.Panels[0][0].Draw(c)
		return
	}
	if entries := f.figureLegend(); len(entries) > 0 {
		h := legendHeight(entries, c.Size().X)
		drawLegend(draw.Crop(c, 0, 0, c.Size().Y-h, 0), entries)
		c = draw.Crop(c, 0, 0, 0, -h)
	}
	// Align needs a full grid; missing cells stay empty.
	grid := make([][]*gplot.Plot, rows)
	for i, r := range f.Panels {
		grid[i] = make([]*gplot.Plot, cols)
		copy(grid[i], r)
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := gplot.Align(grid, tiles, c)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
}

// Size is the figure's width and height: Height for the panels and room
// above them for a shared legend.
func (f Figure) Size() (w, h vg.Length) {
	return f.Width, f.Height + legendHeight(f.figureLegend(), f.Width)
}

// SVG renders the figure as a standalone SVG document with its font
// embedded.
func (f Figure) SVG() ([]byte, error) {
	w, h := f.Size()
	c := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true))
	hovers := f.hoverLayersOf()
	f.draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("render %s as svg: %w", f.Name, err)
	}
	return withHovers(svgFonts(buf.Bytes()), hovers, h), nil
}

// PNG renders the figure at dpi dots per inch on a white background.
func (f Figure) PNG(dpi int) ([]byte, error) {
	w, h := f.Size()
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	f.draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("render %s as png: %w", f.Name, err)
	}
	return buf.Bytes(), nil
}

// drawLegendOutside draws p without its legend on the left of c and the
// legend in a column on the right, as wide as its longest entry.
func drawLegendOutside(p *gplot.Plot, c draw.Canvas) {
	leg := p.Legend
	leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
	leg.Padding = vg.Points(4) // between entries: gonum's 0 lets one entry's glyph touch the next one's text
	pad := vg.Millimeter * 3
	w := leg.Rectangle(c).Size().X + 2*pad
	bare := *p
	bare.Legend = gplot.NewLegend()
	bare.Draw(draw.Crop(c, 0, -w, 0, 0))
	// Top-aligned with the data area: below the title.
	title := p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
	leg.Draw(draw.Crop(c, c.Size().X-w+pad, 0, 0, -title-pad))
}

// newPlot is a panel with the common styling.
func newPlot(title, xlabel, ylabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Label.TextStyle.Font.Size = vg.Points(10)
	p.Y.Label.TextStyle.Font.Size = vg.Points(10)
	p.X.Tick.Label.Font.Size = vg.Points(9)
	p.Y.Tick.Label.Font.Size = vg.Points(9)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.Top = true
	return p
}

// DrawAt draws the figure on c with its lower left corner at at, scaled
// by scale: a page of a multi-page document (the report's PDF).
func (f Figure) DrawAt(c vg.Canvas, at vg.Point, scale float64) {
	c.Push()
	defer c.Pop()
	c.Translate(at)
	c.Scale(scale, scale)
	w, h := f.Size()
	f.draw(draw.Canvas{Canvas: c, Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}})
}
