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
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/harness/workload/view"
)

// Chart is one figure with the caption the page prints under it.
type Chart struct {
	plot.Figure
	Caption string
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
	builds := append(append([]func() (*Chart, error){r.timeVsSeqLen, r.throughputVsSize}, lead...), r.backwardForward)
	if len(r.Configs) <= manyShapes || !aggregated && len(r.Configs) <= maxGridRows {
		builds = append(builds, r.ratioHeatmap, r.feasibility)
	}
	builds = append(append(append(builds, afterGrids...), r.roofline), tail...)
	for _, build := range builds {
		c, err := build()
		if err != nil {
			return nil, err
		}
		if c != nil {
			out = append(out, *c)
		}
	}
	return out, nil
}

func (r *Report) color(backendName string) color.Color {
	return plot.Color(slices.Index(r.Backends, backendName))
}

// facets groups TTT configurations by their typed view with the swept
// field cleared (the TTT charts sweep model size and sequence length).
func facets(cfgs []result.Config, clear func(*ttt.Config)) ([]ttt.Config, map[ttt.Config][]result.Config) {
	var keys []ttt.Config
	groups := map[ttt.Config][]result.Config{}
	for _, c := range cfgs {
		if c.Workload != ttt.Name {
			continue
		}
		k := ttt.From(c)
		k.Warmup, k.Repeats = 0, 0
		clear(&k)
		if _, seen := groups[k]; !seen {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	return keys, groups
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

// rateInterval turns a time interval into the interval of a rate at the
// median (rate ∝ 1/time): the slow end of the time is the low rate.
func rateInterval(rate, median, lo, hi float64) (float64, float64) {
	return rate * median / hi, rate * median / lo
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

func (r *Report) timeVsSeqLen() (*Chart, error) {
	keys, groups := facets(r.Configs, func(c *ttt.Config) { c.SeqLen = 0 })
	var panels []*gplot.Plot
	cut := 0
	for _, k := range keys {
		cfgs := groups[k]
		if len(cfgs) < 2 {
			continue
		}
		if len(panels) == maxPanels {
			cut++
			continue
		}
		var ticks []float64
		for _, c := range cfgs {
			ticks = append(ticks, float64(ttt.From(c).SeqLen))
		}
		var series []plot.Series
		for _, b := range r.Backends {
			s := plot.Series{Name: b, Color: r.color(b), Shape: slices.Index(r.Backends, b)}
			for _, c := range cfgs {
				s.X, s.Y = append(s.X, float64(ttt.From(c).SeqLen)), append(s.Y, r.median(b, c))
				lo, hi := r.interval(b, c)
				s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
			}
			series = append(series, s)
		}
		p, err := plot.Lines(plot.Axes{SharedLegend: true, Title: facetLabel(k, "seq"), XLabel: "sequence length (tokens)", YLabel: "median time (ms)",
			LogX: true, LogY: true, XTicks: ticks}, series)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil, nil
	}
	caption := "Median time per call against sequence length, log-log, the band its 95% interval; a missing point did not finish (see the feasibility map)."
	return r.multiples("time-vs-seq-len", "Time against sequence length", panels, cut, caption), nil
}

func (r *Report) throughputVsSize() (*Chart, error) {
	keys, groups := facets(r.Configs, func(c *ttt.Config) { c.ModelSize, c.SeqLen = "", 0 })
	var panels []*gplot.Plot
	cut := 0
	for _, k := range keys {
		// One sequence length per panel: the one with the most finished
		// runs (ties: the longest), so sizes are compared like for like.
		count := map[int]int{}
		sizes := map[int]map[string]bool{}
		for _, rc := range groups[k] {
			c := ttt.From(rc)
			if sizes[c.SeqLen] == nil {
				sizes[c.SeqLen] = map[string]bool{}
			}
			sizes[c.SeqLen][c.ModelSize] = true
			for _, b := range r.Backends {
				if !math.IsNaN(r.median(b, rc)) {
					count[c.SeqLen]++
				}
			}
		}
		best := 0
		for l, n := range count {
			if len(sizes[l]) >= 2 && (best == 0 || n > count[best] || n == count[best] && l > best) {
				best = l
			}
		}
		if best == 0 {
			continue
		}
		if len(panels) == maxPanels {
			cut++
			continue
		}
		var cfgs []result.Config
		for _, c := range groups[k] {
			if ttt.From(c).SeqLen == best {
				cfgs = append(cfgs, c)
			}
		}
		var ticks []float64
		var labels []string
		params := func(rc result.Config) float64 {
			c := ttt.From(rc)
			s, _ := ttt.LookupSize(c.ModelSize)
			return float64(ttt.NumParams(s, c.TTTType, c.MiniBatch, c.Backbone)) / 1e6
		}
		for _, c := range cfgs {
			ticks, labels = append(ticks, params(c)), append(labels, ttt.From(c).ModelSize)
		}
		var series []plot.Series
		for _, b := range r.Backends {
			s := plot.Series{Name: b, Color: r.color(b), Shape: slices.Index(r.Backends, b)}
			for _, c := range cfgs {
				tps, lo, hi := math.NaN(), math.NaN(), math.NaN()
				if res, ok := r.Result(b, c); ok && res.Status == result.StatusOK {
					tps = res.Throughput
					if tlo, thi := r.interval(b, c); res.Stats != nil {
						lo, hi = rateInterval(tps, res.Stats.MedianMs, tlo, thi)
					}
				}
				s.X, s.Y = append(s.X, params(c)), append(s.Y, tps)
				s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
			}
			series = append(series, s)
		}
		k.SeqLen = best
		p, err := plot.Lines(plot.Axes{SharedLegend: true, Title: facetLabel(k, "size"), XLabel: "model size (million parameters)", YLabel: "tokens/s",
			LogX: true, LogY: true, XTicks: ticks, XTickLabels: labels}, series)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil, nil
	}
	caption := "Throughput (tokens per second at the median) against model size, at one sequence length per panel; the band is its 95% interval."
	return r.multiples("throughput-vs-size", "Throughput against model size", panels, cut, caption), nil
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

// facetLabel names a panel by the fields its configurations share.
func facetLabel(c ttt.Config, swept string) string {
	s := ""
	if swept != "size" {
		s = c.ModelSize + " "
	}
	s += fmt.Sprintf("%s %s %s b%d K%d", c.TTTType, c.Phase(), c.Dtype, c.Batch, c.MiniBatch)
	if swept == "size" {
		s += fmt.Sprintf(" L%d", c.SeqLen)
	}
	if c.Backbone != "" && c.Backbone != "transformer" {
		s += " " + c.Backbone
	}
	return s
}
