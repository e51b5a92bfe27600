package report

import (
	"github.com/xbench/xbench/harness/workload"

	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/plot"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/verify"
)

// The single-panel figures: backward over forward, the two heat maps and
// the roofline.

func (r *Report) backwardForward() (*Chart, error) {
	var cats, factors []string
	vals := make([][]float64, len(r.Backends))
	los, his := make([][]float64, len(r.Backends)), make([][]float64, len(r.Backends))
	hollows := make([][]bool, len(r.Backends)) // a bar is solid when both its phases passed verify
	for _, c := range r.Configs {
		if c.Phase != workload.PhaseForward {
			continue
		}
		bc := c
		bc.Phase = workload.PhaseBackward
		if _, ok := r.byConfig[compare.ConfigKey(bc)]; !ok {
			continue
		}
		cats = append(cats, r.label(c))
		// The FLOP factor is each workload's own (TTT 3x, attention 2.5x),
		// read from its cost model rather than assumed.
		if fc, err := workload.CostOf(c); err == nil && fc.FLOPs > 0 {
			if bcost, err := workload.CostOf(bc); err == nil {
				f := fmt.Sprintf("%.3gx (%s)", bcost.FLOPs/fc.FLOPs, c.Workload)
				if !slices.Contains(factors, f) {
					factors = append(factors, f)
				}
			}
		}
		for i, b := range r.Backends {
			v := r.median(b, bc) / r.median(b, c)
			hollow := r.notVerified(b, c) || r.notVerified(b, bc)
			r.drewHollow = r.drewHollow || hollow && !math.IsNaN(v)
			vals[i], hollows[i] = append(vals[i], v), append(hollows[i], hollow)
			lo, hi := r.ratioInterval(b, c, b, bc)
			los[i], his[i] = append(los[i], lo), append(his[i], hi)
		}
	}
	if len(cats) == 0 {
		return nil, nil
	}
	var groups []plot.BarGroup
	for i, b := range r.Backends {
		if len(cats) > 1 || !math.IsNaN(vals[i][0]) {
			groups = append(groups, plot.BarGroup{Name: b, Color: r.color(b), Values: vals[i], Lo: los[i], Hi: his[i], Hollow: hollows[i], HollowNote: hollowNote})
		}
	}
	a := plot.Axes{SharedLegend: true, Title: "Backward / forward time", YLabel: "backward median / forward median"}
	bars, w := plot.Bars, vg.Length(math.Max(7, 1+0.45*float64(len(cats))))*vg.Inch
	if len(cats) == 1 {
		// One configuration: a bar per backend that ran both phases,
		// named on the axis, the configuration in the title.
		a.Title += ": " + cats[0]
		bars = func(a plot.Axes, _ []string, g []plot.BarGroup) (*gplot.Plot, error) { return plot.NamedBars(a, g) }
		w = vg.Length(math.Max(4.5, 2.5+0.6*float64(len(groups)))) * vg.Inch
	}
	if len(cats) > barsPerPanel {
		// Small multiples: a hundred groups of bars in one panel leave
		// three pixels a label; panels of barsPerPanel stay readable.
		var rows [][]*gplot.Plot
		for lo := 0; lo < len(cats); lo += barsPerPanel {
			hi := min(lo+barsPerPanel, len(cats))
			part := make([]plot.BarGroup, len(groups))
			for i, g := range groups {
				part[i] = plot.BarGroup{Name: g.Name, Color: g.Color, Values: g.Values[lo:hi], Lo: g.Lo[lo:hi], Hi: g.Hi[lo:hi],
					Hollow: g.Hollow[lo:hi], HollowNote: g.HollowNote}
			}
			pa := a
			pa.Title = fmt.Sprintf("%s (%d-%d of %d)", a.Title, lo+1, hi, len(cats))
			p, err := plot.Bars(pa, cats[lo:hi], part)
			if err != nil {
				return nil, err
			}
			rows = append(rows, []*gplot.Plot{p})
		}
		return &Chart{Figure: plot.Figure{Name: "backward-forward", Title: "Backward against forward", Panels: rows,
			Width: 11 * vg.Inch, Height: vg.Length(len(rows)) * 4.2 * vg.Inch}, Caption: bfCaption(factors)}, nil
	}
	p, err := bars(a, cats, groups)
	if err != nil {
		return nil, err
	}
	return &Chart{Figure: plot.Single("backward-forward", "Backward against forward", p, w, 4.5*vg.Inch),
		Caption: bfCaption(factors)}, nil
}

// barsPerPanel is the most configurations one bar panel holds.
const barsPerPanel = 16

// bfCaption says what a bar is and what the cost model expects of it.
func bfCaption(factors []string) string {
	c := "Median time of the backward phase over the forward median of the same configuration, per backend, the whisker its 95% Hodges-Lehmann interval (as xbench compare computes it) (what the backward phase times is the workload's: TTT's runs forward and gradients, attention's the gradients alone)."
	if len(factors) > 0 {
		c += " The cost model counts the backward at " + strings.Join(factors, ", ") + " the forward's FLOPs: a bar near that is as efficient in both phases."
	}
	return c + " A missing bar: one of the two did not finish."
}

func (r *Report) heatmapSize() (vg.Length, vg.Length) {
	return vg.Length(math.Max(7, 3.5+1.4*float64(len(r.Backends)))) * vg.Inch,
		vg.Length(1.4+0.26*float64(len(r.Configs))) * vg.Inch
}

func (r *Report) ratioHeatmap() (*Chart, error) {
	if r.Baseline == "" {
		return nil, nil // a device kind the baseline backend did not run on
	}
	g := plot.Grid{Title: "Time ratio to " + r.Baseline + " (green faster, red slower)", Cols: r.Backends}
	for _, t := range r.Tables() {
		g.Rows = append(g.Rows, t.Label)
		row := make([]plot.Cell, len(r.Backends))
		for _, x := range t.Rows {
			j := slices.Index(r.Backends, x.Backend)
			switch {
			case !math.IsNaN(x.Ratio):
				row[j] = plot.Cell{Ratio: x.Ratio, Text: fmt.Sprintf("%.2fx", x.Ratio)}
				// A ratio is as verified as the less verified of its two results.
				if r.notVerified(x.Backend, t.Config) || r.notVerified(r.Baseline, t.Config) {
					row[j].Hollow, row[j].Note = true, hollowNote
					r.drewHollow = true
				}
			case x.Status != result.StatusOK:
				row[j] = plot.Cell{Color: color.Gray{Y: 225}, Text: string(x.Status)}
			default:
				row[j] = plot.Cell{Color: color.Gray{Y: 225}, Text: "no baseline"}
			}
		}
		for j := range row {
			if why := r.hiddenWhy(r.Backends[j], t.Config); why != "" {
				row[j] = plot.Cell{Color: color.Gray{Y: 225}, Text: why}
			} else if row[j].Text == "" {
				row[j] = plot.Cell{Text: "-"}
			}
		}
		g.Cells = append(g.Cells, row)
	}
	w, h := r.heatmapSize()
	g.FitColumns(w)
	c := &Chart{Figure: plot.Single("ratio-heatmap", "Time ratio heat map", plot.GridPlot(g), w, h),
		Caption: fmt.Sprintf("Median time over the baseline's median on the same configuration; colour is log2 of the ratio, full at %gx either way (the largest ratio in the map, so no cell saturates).", plot.RatioSpan(g))}
	c.PDFPages = gridPages(c.Name, c.Title, g, w)
	return c, nil
}

// pdfGridRows is the most rows of a heat map one PDF page holds at a
// size its cell text can be read at (A4 landscape).
const pdfGridRows = 24

// gridPages cuts g, already coloured by plot.GridPlot (so every part
// keeps the whole map's colour scale), into figures of pdfGridRows rows
// for the PDF; nil when it fits one page.
func gridPages(name, title string, g plot.Grid, w vg.Length) []plot.Figure {
	if len(g.Rows) <= pdfGridRows {
		return nil
	}
	var out []plot.Figure
	for lo := 0; lo < len(g.Rows); lo += pdfGridRows {
		hi := min(lo+pdfGridRows, len(g.Rows))
		part := g
		part.Rows, part.Cells = g.Rows[lo:hi], g.Cells[lo:hi]
		part.Title = fmt.Sprintf("%s (rows %d-%d of %d)", g.Title, lo+1, hi, len(g.Rows))
		out = append(out, plot.Single(name, title, plot.GridPlot(part), w, vg.Length(1.4+0.26*float64(hi-lo))*vg.Inch))
	}
	return out
}

// statusColors are the feasibility map's fills.
var statusColors = map[result.Status]color.Color{
	result.StatusOK:          color.RGBA{166, 219, 160, 255},
	result.StatusOOM:         color.RGBA{214, 96, 77, 255},
	result.StatusUnsupported: color.RGBA{186, 186, 186, 255},
	result.StatusFailed:      color.RGBA{253, 184, 99, 255},
	result.StatusTimeout:     color.RGBA{253, 184, 99, 255},
	result.StatusSkipped:     color.RGBA{224, 224, 224, 255},
}

func (r *Report) feasibility() (*Chart, error) {
	g := plot.Grid{Title: "Which configurations fit (out of memory in red)", Cols: r.Backends}
	for _, c := range r.Configs {
		g.Rows = append(g.Rows, r.label(c))
		row := make([]plot.Cell, len(r.Backends))
		for j, b := range r.Backends {
			row[j] = plot.Cell{Text: "-"}
			if res, ok := r.anyResult(b, c); ok {
				row[j] = plot.Cell{Color: statusColors[res.Status], Text: string(res.Status)}
				if why := r.hiddenWhy(b, c); why != "" {
					row[j] = plot.Cell{Color: statusColors[result.StatusFailed], Text: "ok, " + why}
				}
			}
		}
		g.Cells = append(g.Cells, row)
	}
	w, h := r.heatmapSize()
	g.FitColumns(w)
	c := &Chart{Figure: plot.Single("feasibility", "Out-of-memory feasibility map", plot.GridPlot(g), w, h),
		Caption: "Status of every backend on every configuration: ok, oom (out of memory), unsupported, failed or timeout; - was not run."}
	c.PDFPages = gridPages(c.Name, c.Title, g, w)
	return c, nil
}

func (r *Report) roofline() (*Chart, error) {
	var dev result.Device
	dtypes := map[string]bool{}
	for _, t := range r.Tables() {
		for _, x := range t.Rows {
			if !math.IsNaN(x.TFLOPs) {
				dtypes[t.Config.Dtype()] = true
			}
		}
	}
	if len(dtypes) == 0 {
		return nil, nil
	}
	var names []string
	for d := range dtypes {
		names = append(names, d)
	}
	slices.Sort(names)
	// One series per backend and dtype: the colour is the backend's, the
	// glyph the dtype's, and the legend names both.
	var series []plot.Series
	for _, b := range r.Backends {
		for di, d := range names {
			s := plot.Series{Name: b + ", " + d, Color: r.color(b), Shape: di, HollowNote: hollowNote}
			for _, t := range r.Tables() {
				if t.Config.Dtype() != d {
					continue
				}
				for _, x := range t.Rows {
					if x.Backend == b && !math.IsNaN(x.TFLOPs) {
						s.X, s.Y = append(s.X, x.Cost.Intensity()), append(s.Y, x.TFLOPs)
						s.Hollow = append(s.Hollow, x.Verified != verify.Pass)
						r.drewHollow = r.drewHollow || x.Verified != verify.Pass
						if res, ok := r.Result(b, t.Config); ok && dev.Kind == "" {
							dev = res.Device
						}
					}
				}
			}
			if len(s.X) > 0 {
				series = append(series, s)
			}
		}
	}
	var ceilings []plot.Ceiling
	caption := "Achieved FLOP/s (the workload's FLOP count over the median) against arithmetic intensity (FLOPs over compulsory bytes). "
	cal, ok := r.Calibration(dev)
	if ok {
		for i, d := range names {
			if peak := cal.MatmulTFLOPs[d]; peak > 0 && cal.CopyGBps > 0 {
				ceilings = append(ceilings, plot.Ceiling{Name: fmt.Sprintf("%s roof: %.4g TFLOP/s, %.4g GB/s", d, peak, cal.CopyGBps),
					Color: color.Gray{Y: uint8(40 + 60*i)}, PeakTFLOPs: peak, TBps: cal.CopyGBps / 1000})
			}
		}
		caption += fmt.Sprintf("Ceilings measured by xbench calibrate through %s on %s.", cal.Backend, cal.Device.Name)
	} else {
		caption += "No calibration in this folder: run xbench calibrate to draw the device's ceilings."
	}
	p, err := plot.Roofline("Roofline", series, ceilings)
	if err != nil {
		return nil, err
	}
	f := plot.Single("roofline", "Roofline", p, 10*vg.Inch, 5.5*vg.Inch)
	f.LegendOutside = true
	return &Chart{Figure: f, Caption: caption + " Colour is the backend, the glyph the dtype."}, nil
}
