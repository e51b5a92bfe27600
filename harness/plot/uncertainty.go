package plot

import (
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Every chart of a measured value shows its 95% interval: a translucent
// band around a line (Series.Lo/Hi), a whisker on a bar (BarGroup.Lo/Hi).
// The interval is the one harness/stats computed from the samples; a
// point without one (fewer than six samples) has no band there.

// bandAlpha is the band's opacity: the line stays readable through it.
const bandAlpha = 0x38

// band adds the polygon between lo and hi under the series' line, one per
// run of consecutive points that have an interval.
func band(p *gplot.Plot, s Series, a Axes) {
	if len(s.Lo) != len(s.X) || len(s.Hi) != len(s.X) {
		return
	}
	r, g, b, _ := s.Color.RGBA()
	fill := color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: bandAlpha}
	var upper, lower plotter.XYs
	flush := func() {
		if len(upper) >= 2 {
			ring := append(append(plotter.XYs{}, upper...), reversed(lower)...)
			if poly, err := plotter.NewPolygon(ring); err == nil {
				poly.Color, poly.LineStyle.Width = fill, 0
				p.Add(poly)
			}
		}
		upper, lower = nil, nil
	}
	for i := range s.X {
		x, lo, hi := s.X[i], s.Lo[i], s.Hi[i]
		if !finite(x, lo, hi) || a.LogX && x <= 0 || a.LogY && lo <= 0 || hi < lo {
			flush()
			continue
		}
		upper, lower = append(upper, plotter.XY{X: x, Y: hi}), append(lower, plotter.XY{X: x, Y: lo})
	}
	flush()
}

func reversed(xys plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xys))
	for i, xy := range xys {
		out[len(xys)-1-i] = xy
	}
	return out
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
