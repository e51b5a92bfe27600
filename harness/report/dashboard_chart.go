package report

// The dashboard's charts: one per configuration group, every backend's
// series over the runs with its failures and steps marked.

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/xbench/xbench/harness/history"
	"github.com/xbench/xbench/harness/plot"
	"github.com/xbench/xbench/harness/result"
)

// notOK are the point kinds drawn on the chart's floor, with their glyphs.
var notOK = []struct {
	name     string
	statuses []result.Status
	glyph    draw.GlyphDrawer
}{
	{"failed, oom, timeout", []result.Status{result.StatusFailed, result.StatusOOM, result.StatusTimeout}, draw.CrossGlyph{}},
	{"unsupported, skipped", []result.Status{result.StatusUnsupported, result.StatusSkipped}, draw.RingGlyph{}},
	{"missing", []result.Status{history.StatusMissing}, draw.PlusGlyph{}},
}

// dashChart draws a group's series over the runs: each backend's medians
// and intervals, its failed, unsupported and missing runs as marks of its
// colour on the floor, and each step it took as a dashed line of its
// colour before the first bad run, named in the legend. It returns the
// SVG and the figure's width.
func dashChart(h *history.History, g dashGroup, opt DashboardOptions) ([]byte, vg.Length, error) {
	n := len(h.Runs)
	var series []plot.Series
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range g.Series {
		ps := plot.Series{Name: s.Backend, Color: plot.Color(i), Shape: i}
		for _, p := range s.Points {
			if p.OK() {
				ps.X, ps.Y = append(ps.X, float64(p.Run)), append(ps.Y, p.Median)
				run := h.Runs[p.Run]
				ps.Hover = append(ps.Hover, fmt.Sprintf("%s: %.4g ms (95%% CI %.4g to %.4g), commit %s, %s",
					s.Backend, p.Median, p.Lo, p.Hi, shortHash(run.Commit, 10), run.Date.UTC().Format("2006-01-02 15:04")))
				lo, hi = math.Min(lo, p.Lo), math.Max(hi, p.Hi)
			}
		}
		series = append(series, ps)
	}
	// Ticks: short commits over their dates, thinned so no two labels meet.
	every := max(1, (n+7)/8)
	var ticks []float64
	var labels []string
	for i := 0; i < n; i += every {
		ticks = append(ticks, float64(i))
		labels = append(labels, shortHash(h.Runs[i].Commit, 7)+"\n"+h.Runs[i].Date.UTC().Format("2006-01-02"))
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	logY := (opt.LogY || hi > 10*lo) && lo > 0
	yLabel := "median ms (95% CI)"
	if logY {
		yLabel += ", log scale"
	}
	p, err := plot.Lines(plot.Axes{XLabel: "commit and date (oldest to newest)", YLabel: yLabel, XTicks: ticks, XTickLabels: labels, LogY: logY, LegendOutside: true}, series)
	if err != nil {
		return nil, 0, fmt.Errorf("dashboard chart %s: %w", g.Title, err)
	}
	floor := lo - 0.08*(hi-lo+1e-9)
	if logY {
		floor = lo / 1.25
	}
	for i, s := range g.Series {
		var errs plotter.XYs
		var yerr plotter.YErrors
		for _, pt := range s.Points {
			if pt.OK() {
				errs = append(errs, plotter.XY{X: float64(pt.Run), Y: pt.Median})
				yerr = append(yerr, struct{ Low, High float64 }{pt.Median - pt.Lo, pt.Hi - pt.Median})
			}
		}
		if len(errs) > 0 {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{errs, yerr})
			if err != nil {
				return nil, 0, fmt.Errorf("dashboard chart %s: %w", g.Title, err)
			}
			eb.LineStyle.Color, eb.CapWidth = plot.Color(i), vg.Points(4)
			p.Add(eb)
		}
	}
	// A failure's mark is its backend's colour, its glyph the kind; the
	// legend names the kinds (in black) and the tooltip the backend.
	for _, kind := range notOK {
		drawn := false
		for i, s := range g.Series {
			var xys plotter.XYs
			for _, pt := range s.Points {
				if slices.Contains(kind.statuses, pt.Status) {
					xys = append(xys, plotter.XY{X: float64(pt.Run), Y: floor})
					run := h.Runs[pt.Run]
					plot.Hover(p, float64(pt.Run), floor, fmt.Sprintf("%s: %s, commit %s, %s", s.Backend, pt.Status,
						shortHash(run.Commit, 10), run.Date.UTC().Format("2006-01-02 15:04")))
				}
			}
			if len(xys) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, 0, fmt.Errorf("dashboard chart %s: %w", g.Title, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: plot.Color(i), Radius: vg.Points(3), Shape: kind.glyph}
			p.Add(sc)
			drawn = true
		}
		if drawn {
			p.Legend.Add(kind.name, &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: plot.Color(7), Radius: vg.Points(3), Shape: kind.glyph}})
		}
	}
	top := hi
	if math.IsInf(top, 0) {
		top = 1
	}
	for i, s := range g.Series {
		for _, st := range s.Steps {
			x := float64(st.FirstBad) - 0.5
			l, err := plotter.NewLine(plotter.XYs{{X: x, Y: floor}, {X: x, Y: top}})
			if err != nil {
				return nil, 0, fmt.Errorf("dashboard chart %s: %w", g.Title, err)
			}
			l.LineStyle = draw.LineStyle{Color: plot.Color(i), Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
			p.Add(l)
			bad := h.Runs[st.FirstBad]
			p.Legend.Add(fmt.Sprintf("%s step %+.1f%%, first bad %s", s.Backend, 100*(st.Ratio-1), shortHash(bad.Commit, 7)), l)
			plot.Hover(p, float64(st.FirstBad), st.After, fmt.Sprintf("%s: step %+.1f%% (95%% CI %+.1f%% to %+.1f%%), %.4g -> %.4g ms; first bad commit %s (%s), last good %s",
				s.Backend, 100*(st.Ratio-1), 100*(st.Lo-1), 100*(st.Hi-1), st.Before, st.After, shortHash(bad.Commit, 10),
				bad.Date.UTC().Format("2006-01-02"), shortHash(h.Runs[st.LastGood].Commit, 10)))
		}
	}
	// The floor row in view; the legend goes beside the plot, never on the data.
	if logY {
		p.Y.Min, p.Y.Max = math.Min(p.Y.Min, floor/1.1), math.Max(p.Y.Max, hi*1.1)
	} else {
		p.Y.Min = math.Min(p.Y.Min, floor-0.05*(hi-lo+1e-9))
		p.Y.Max = hi + 0.05*(hi-p.Y.Min)
	}
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	fig := plot.Single(g.ID, g.Title, p, 22*vg.Centimeter, 9*vg.Centimeter)
	fig.LegendOutside = true
	svg, err := fig.SVG()
	w, _ := fig.Size()
	return svg, w, err
}

// shortHash is the first n characters of a commit, or "?" for none.
func shortHash(c string, n int) string {
	if c == "" {
		return "?"
	}
	return c[:min(n, len(c))]
}
