package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/plot"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
	"github.com/xbench/xbench/harness/workload/view"
)

// Chart is one figure with the caption the page prints under it.
type Chart struct {
	plot.Figure
	Caption string
	// PDFPages, when set, are the pages the PDF draws instead of Figure
	// (a heat map too tall for one page, cut into parts of whole rows).
	PDFPages []plot.Figure
}

// maxPanels bounds the small multiples of one figure; a larger sweep is
// cut, and the caption says so. One value for the report and the
// workloads' own charts.
const maxPanels = view.MaxPanels

// Charts chooses and builds every figure the data supports; a figure
// without data (no backward runs, one sequence length) is left out. A
// folder with results on more than one device model gets every figure
// once per model, named and titled by it, so no chart mixes devices.
func (r *Report) Charts() ([]Chart, error) {
	var out []Chart
	for _, v := range r.deviceViews() {
		charts, err := v.charts()
		if err != nil {
			return nil, err
		}
		out = append(out, charts...)
	}
	return out, nil
}

// charts builds one device view's figures, named and titled by its device
// when the folder holds several.
func (r *Report) charts() (out []Chart, err error) {
	r = r.chartView()
	defer func() {
		for i := range out {
			out[i].Caption += r.hiddenNote()
			if c := &out[i]; r.viewDevice != "" {
				c.Name += "-" + slug(r.viewDevice)
				c.Title += " (" + r.viewDevice + ")"
				c.Caption = "Results on " + r.viewDevice + " only. " + c.Caption
			}
		}
	}()
	// The workloads' own charts go where they stood before they moved
	// into the workloads (view.Place), so committed reports keep their order.
	secs := r.workloadSections()
	lead, _ := r.sectionCharts(secs, view.Lead)
	afterGrids, aggregated := r.sectionCharts(secs, view.AfterGrids)
	tail, _ := r.sectionCharts(secs, view.Tail)
	builds := append(lead, r.backwardForward)
	if len(r.Configs) <= manyShapes || !aggregated && len(r.Configs) <= maxGridRows {
		builds = append(builds, r.ratioHeatmap, r.feasibility)
	}
	builds = append(append(append(builds, afterGrids...), r.roofline), tail...)
	for _, build := range builds {
		r.drewHollow = false
		c, err := build()
		if err != nil {
			return nil, err
		}
		if c != nil {
			if r.drewHollow {
				c.Caption += hollowCaption
			}
			out = append(out, *c)
		}
	}
	return out, nil
}

func (r *Report) color(backendName string) color.Color {
	return plot.Color(slices.Index(r.Backends, backendName))
}

// grid lays panels out two to a row.
func grid(panels []*gplot.Plot) [][]*gplot.Plot {
	var rows [][]*gplot.Plot
	for i := 0; i < len(panels); i += 2 {
		rows = append(rows, panels[i:min(i+2, len(panels))])
	}
	return rows
}

func (r *Report) median(b string, c result.Config) float64 {
	if res, ok := r.Result(b, c); ok && res.Status == result.StatusOK && res.Stats != nil {
		return res.Stats.MedianMs
	}
	return math.NaN()
}

// interval is the 95% interval (ms) of backend's median on c, NaN when it
// has none (not drawn, or fewer than six samples).
func (r *Report) interval(b string, c result.Config) (lo, hi float64) {
	if res, ok := r.Result(b, c); ok && res.Status == result.StatusOK && res.Stats != nil && stats.HasCI(*res.Stats) {
		return res.Stats.CI95LowMs, res.Stats.CI95HighMs
	}
	return math.NaN(), math.NaN()
}

// ratioInterval is the Hodges-Lehmann 95% interval of b's time over
// base's on c (compare.RatioCI, the one `xbench compare` prints), NaN when
// either has too few samples.
func (r *Report) ratioInterval(base string, bc result.Config, b string, c result.Config) (lo, hi float64) {
	rb, ok1 := r.Result(base, bc)
	rc, ok2 := r.Result(b, c)
	if ok1 && ok2 && rb.Status == result.StatusOK && rc.Status == result.StatusOK {
		if lo, hi, ok := compare.RatioCI(rb.SamplesMs, rc.SamplesMs); ok {
			return lo, hi
		}
	}
	return math.NaN(), math.NaN()
}

// multiples wraps panels into a two-column figure.
func (r *Report) multiples(name, title string, panels []*gplot.Plot, cut int, caption string) *Chart {
	rows := grid(panels)
	if cut > 0 {
		caption += fmt.Sprintf(" %d more panels are not drawn.", cut)
	}
	w := 11 * vg.Inch
	if len(panels) == 1 {
		w = 6.5 * vg.Inch
	}
	return &Chart{Figure: plot.Figure{Name: name, Title: title, Panels: rows, Width: w, Height: vg.Length(len(rows)) * 3.6 * vg.Inch},
		Caption: caption}
}
