package report

// The sections a workload adds to its report (workload.Reporter): the
// workload decides what to show in plain data (harness/workload/view);
// this file only draws it. Workloads are found through the registry, never
// by name, so the report holds no workload's parameter names.

import (
	"image/color"
	"math"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/xbench/xbench/harness/plot"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/view"
)

// workloadResults is the read-only view one workload gets of a report:
// its own configurations only.
type workloadResults struct {
	r       *Report
	configs []result.Config
}

var _ view.Results = workloadResults{}

func (v workloadResults) Backends() []string       { return v.r.Backends }
func (v workloadResults) Baseline() string         { return v.r.Baseline }
func (v workloadResults) Configs() []result.Config { return v.configs }
func (v workloadResults) Result(b string, c result.Config) (result.Result, bool) {
	return v.r.Result(b, c)
}
func (v workloadResults) Median(b string, c result.Config) float64 { return v.r.median(b, c) }
func (v workloadResults) Interval(b string, c result.Config) (float64, float64) {
	return v.r.interval(b, c)
}
func (v workloadResults) MatmulPeak(dev result.Device, dtype string) float64 {
	cal, _ := v.r.Calibration(dev)
	return cal.MatmulTFLOPs[dtype]
}

// workloadSections asks every registered workload with configurations in
// the report, in registry order, for its sections.
func (r *Report) workloadSections() []view.Section {
	var out []view.Section
	for _, w := range workload.All() {
		rep, ok := w.(workload.Reporter)
		if !ok {
			continue
		}
		var cfgs []result.Config
		for _, c := range r.Configs {
			if c.Workload == w.Name() {
				cfgs = append(cfgs, c)
			}
		}
		if len(cfgs) > 0 {
			out = append(out, rep.ReportSections(workloadResults{r, cfgs})...)
		}
	}
	return out
}

// sectionTables are the workloads' tables, numbers written by num.
func sectionTables(secs []view.Section, num func(float64) string) []TextTable {
	var out []TextTable
	for _, s := range secs {
		if s.Table == nil {
			continue
		}
		t := TextTable{Name: s.Table.Name, Title: s.Table.Title, Header: s.Table.Header}
		for _, row := range s.Table.Rows {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = c.Text
				if c.IsNum {
					cells[i] = num(c.Num)
				}
			}
			t.Rows = append(t.Rows, cells)
		}
		out = append(out, t)
	}
	return out
}

// sectionCharts draws the workloads' charts of one place.
func (r *Report) sectionCharts(secs []view.Section, at view.Place) ([]func() (*Chart, error), bool) {
	var out []func() (*Chart, error)
	replaces := false
	for _, s := range secs {
		replaces = replaces || s.ReplacesGrid
		if s.Chart != nil && s.Place == at {
			c := *s.Chart
			out = append(out, func() (*Chart, error) { return r.drawChart(c) })
		}
	}
	return out, replaces
}

func (r *Report) drawChart(c view.Chart) (*Chart, error) {
	// The report bounds every figure's panels; the caption counts the rest.
	if n := len(c.Panels); n > maxPanels {
		c.Panels, c.Cut = c.Panels[:maxPanels], c.Cut+n-maxPanels
	}
	var panels []*gplot.Plot
	for _, pn := range c.Panels {
		p, err := r.drawPanel(pn, c.Width)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	if c.Width > 0 && len(panels) == 1 {
		return &Chart{Figure: plot.Single(c.Name, c.Title, panels[0], vg.Length(c.Width)*vg.Inch, vg.Length(c.Height)*vg.Inch),
			Caption: c.Caption}, nil
	}
	return r.multiples(c.Name, c.Title, panels, c.Cut, c.Caption), nil
}

// drawPanel draws one panel; width (inches) fits a grid's columns.
func (r *Report) drawPanel(pn view.Panel, width float64) (*gplot.Plot, error) {
	a := plot.Axes{SharedLegend: true, Title: pn.Title, XLabel: pn.XLabel, YLabel: pn.YLabel, LogX: pn.LogX, LogY: pn.LogY,
		XTicks: pn.XTicks, XTickLabels: pn.XTickLabels}
	switch {
	case pn.Grid != nil:
		g := plot.Grid{Title: pn.Title, XLabel: pn.XLabel, YLabel: pn.YLabel, Rows: pn.Grid.Rows, Cols: pn.Grid.Cols}
		for _, row := range pn.Grid.Cells {
			cells := make([]plot.Cell, len(row))
			for j, c := range row {
				cells[j] = plot.Cell{Ratio: c.Ratio, Text: c.Text}
				if c.Shaded {
					cells[j].Color = color.Gray{Y: 225}
				}
			}
			g.Cells = append(g.Cells, cells)
		}
		if pn.Grid.FitColumns {
			g.FitColumns(vg.Length(width) * vg.Inch)
		}
		return plot.GridPlot(g), nil
	case pn.Bars != nil:
		var groups []plot.BarGroup
		for _, g := range pn.Bars.Groups {
			groups = append(groups, plot.BarGroup{Name: g.Name, Color: r.color(g.Name), Values: g.Values})
		}
		return plot.Bars(a, pn.Bars.Categories, groups)
	}
	var series []plot.Series
	for _, s := range pn.Lines {
		ps := plot.Series{Name: s.Name, Color: r.color(s.Name), X: s.X, Y: s.Y, Lo: s.Lo, Hi: s.Hi, PointsOnly: s.PointsOnly}
		if len(s.Configs) == len(s.X) {
			ps.Hollow, ps.HollowNote = make([]bool, len(s.X)), hollowNote
			for i, c := range s.Configs {
				ps.Hollow[i] = r.notVerified(s.Name, c)
				r.drewHollow = r.drewHollow || ps.Hollow[i] && !math.IsNaN(s.Y[i])
			}
		}
		if s.Marker {
			ps.Shape = slices.Index(r.Backends, s.Name)
		}
		series = append(series, ps)
	}
	p, err := plot.Lines(a, series)
	if err == nil && pn.YFromZero {
		p.Y.Tick.Marker = plainTicks{peak: pn.Peak}
		p.Y.Min, p.Y.Max = 0, pn.YMax
	}
	return p, err
}

// manyShapes is the number of configurations above which a workload whose
// charts aggregate them (view.Section.ReplacesGrid) gets no
// per-configuration heat maps.
const manyShapes = 40

// maxGridRows is the most rows a per-configuration heat map gets when no
// shape aggregate replaces it: a sweep of models by lengths by phases
// (attention's llm suite has 72) must still show which cells ran out of
// memory, at a height a page can scroll through (about 20 inches).
const maxGridRows = 96
