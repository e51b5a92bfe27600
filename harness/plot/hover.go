package plot

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"sync"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Hover values: a reader pointing at a point, a bar or a heat map cell
// sees what it is (series, value, interval, commit and date on the
// dashboard) without reading it off the axes. gonum's SVG has no
// tooltips, so each panel made by Lines, Bars or GridPlot carries a
// hoverLayer that records where its marks land while the figure is drawn,
// and Figure.SVG adds an invisible circle (a point) or rectangle (a bar or
// cell, class "bar" or "cell") with a <title> (the browser's native
// tooltip) over each; the PNG and PDF are unchanged.

// maxHovers bounds the tooltips of one figure, so a page stays a size a
// browser opens at once; it is above every committed report's largest
// figure (every GEMM shape of the sweep, 1704 points, about 200 KB of
// tooltips). A figure with more has none; its tables hold every value.
const maxHovers = 2000

type hoverMark struct {
	at   vg.Point
	text string
	box  vg.Rectangle // a bar's or a cell's extent; empty for a point
	kind string       // of a box: "bar" or "cell"
}

type hoverLayer struct {
	mu    sync.Mutex
	pts   []hoverPoint
	marks []hoverMark
}

type hoverPoint struct {
	x, y float64
	text string
}

var hoverLayers sync.Map // *gplot.Plot -> *hoverLayer

// Plot implements gplot.Plotter: it draws nothing and records where each
// point lands on the canvas.
func (h *hoverLayer) Plot(c draw.Canvas, plt *gplot.Plot) {
	trX, trY := plt.Transforms(&c)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.pts {
		h.marks = append(h.marks, hoverMark{at: vg.Point{X: trX(p.x), Y: trY(p.y)}, text: p.text})
	}
}

// hoverLayerOf is p's hover layer, added to p the first time.
func hoverLayerOf(p *gplot.Plot) *hoverLayer {
	v, loaded := hoverLayers.LoadOrStore(p, &hoverLayer{})
	h := v.(*hoverLayer)
	if !loaded {
		p.Add(h)
	}
	return h
}

// addBox records a bar's box on the canvas while it is drawn (bars.go).
func (h *hoverLayer) addBox(box vg.Rectangle, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.marks = append(h.marks, hoverMark{at: box.Min, text: text, box: box, kind: "bar"})
}

// addCell records a heat map cell's box while it is drawn (grid.go).
func (h *hoverLayer) addCell(box vg.Rectangle, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.marks = append(h.marks, hoverMark{at: box.Min, text: text, box: box, kind: "cell"})
}

// addHover gives p a tooltip per point of s that Lines draws.
func addHover(p *gplot.Plot, s Series, a Axes) {
	h := hoverLayerOf(p)
	for i := range s.X {
		x, y := s.X[i], s.Y[i]
		if !drawable(x, y, a) {
			continue
		}
		text := ""
		if i < len(s.Hover) {
			text = s.Hover[i]
		}
		if text == "" {
			xl := strconv.FormatFloat(x, 'g', 4, 64)
			for j, t := range a.XTicks {
				if t == x && j < len(a.XTickLabels) {
					xl = a.XTickLabels[j]
				}
			}
			text = fmt.Sprintf("%s: %s at %s %s", s.Name, strconv.FormatFloat(y, 'g', 4, 64), a.XLabel, xl)
			if i < len(s.Lo) && i < len(s.Hi) && !math.IsNaN(s.Lo[i]) && !math.IsNaN(s.Hi[i]) {
				text += fmt.Sprintf(" (95%%: %s to %s)", strconv.FormatFloat(s.Lo[i], 'g', 4, 64), strconv.FormatFloat(s.Hi[i], 'g', 4, 64))
			}
		}
		if i < len(s.Hollow) && s.Hollow[i] && s.HollowNote != "" {
			text += " [" + s.HollowNote + "]"
		}
		h.pts = append(h.pts, hoverPoint{x, y, text})
	}
}

// hoverLayersOf are the layers of f's panels, their marks cleared for a
// new drawing.
func (f Figure) hoverLayersOf() []*hoverLayer {
	var out []*hoverLayer
	for _, row := range f.Panels {
		for _, p := range row {
			if v, ok := hoverLayers.Load(p); ok {
				h := v.(*hoverLayer)
				h.mu.Lock()
				h.marks = nil
				h.mu.Unlock()
				out = append(out, h)
			}
		}
	}
	return out
}

// withHovers adds the layers' marks to svg, a drawing height points high
// (vgsvg's y runs up from the bottom; SVG's down from the top).
func withHovers(svg []byte, layers []*hoverLayer, height vg.Length) []byte {
	n := 0
	for _, h := range layers {
		n += len(h.marks)
	}
	if n == 0 || n > maxHovers {
		return svg
	}
	var b strings.Builder
	for _, h := range layers {
		for _, m := range h.marks {
			if s := m.box.Size(); s.X > 0 || s.Y > 0 {
				// A bar: its whole box answers, at least 2 points tall so
				// a bar near zero can still be pointed at.
				hgt := max(s.Y, vg.Points(2))
				fmt.Fprintf(&b, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>%s</title></rect>\n",
					m.kind, m.box.Min.X.Points(), (height - m.box.Min.Y - hgt).Points(), s.X.Points(), hgt.Points(), html.EscapeString(m.text))
				continue
			}
			fmt.Fprintf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>%s</title></circle>\n",
				m.at.X.Points(), (height - m.at.Y).Points(), html.EscapeString(m.text))
		}
	}
	s := string(svg)
	i := strings.LastIndex(s, "</svg>")
	if i < 0 {
		return svg
	}
	return []byte(s[:i] + "<g class=\"hover\" fill=\"transparent\">\n" + b.String() + "</g>\n" + s[i:])
}

// Hover gives a mark the caller drew on p itself (the dashboard's failure
// marks and steps) a tooltip at data point x, y.
func Hover(p *gplot.Plot, x, y float64, text string) {
	h := hoverLayerOf(p)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pts = append(h.pts, hoverPoint{x, y, text})
}
