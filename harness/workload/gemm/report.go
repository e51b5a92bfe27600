package gemm

// GEMM's own report sections: a sweep has hundreds of shapes, so instead
// of a per-configuration heat map the report shows the throughput of every
// shape, which backend wins each shape, and the time ratio over the shape
// grid by m (the token count of an LLM shape).

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/view"
)

var _ workload.Reporter = Workload{}

// ReportSections are the three shape aggregates, between the
// per-configuration maps and the roofline.
func (w Workload) ReportSections(v view.Results) []view.Section {
	var out []view.Section
	for _, c := range []*view.Chart{throughputPerShape(w, v), winners(v), ratioOverShapes(v)} {
		if c != nil {
			out = append(out, view.Section{Place: view.AfterGrids, Chart: c, ReplacesGrid: true})
		}
	}
	return out
}

func dtypesIn(v view.Results) []string {
	var out []string
	for _, c := range v.Configs() {
		if !slices.Contains(out, c.Dtype()) {
			out = append(out, c.Dtype())
		}
	}
	slices.Sort(out)
	return out
}

func configsOf(v view.Results, dtype string) []result.Config {
	var out []result.Config
	for _, c := range v.Configs() {
		if c.Dtype() == dtype {
			out = append(out, c)
		}
	}
	return out
}

// throughputPerShape plots every shape's TFLOP/s against its FLOPs, one
// panel per dtype, one series per backend.
func throughputPerShape(w Workload, v view.Results) *view.Chart {
	var panels []view.Panel
	for _, d := range dtypesIn(v) {
		p := view.Panel{Title: d, XLabel: "FLOPs per call", YLabel: "TFLOP/s at the median", LogX: true, LogY: true}
		for _, b := range v.Backends() {
			s := view.Series{Name: b, Marker: true, PointsOnly: true}
			for _, c := range configsOf(v, d) {
				cost, err := w.Cost(c)
				if ms := v.Median(b, c); err == nil && !math.IsNaN(ms) && ms > 0 {
					s.X, s.Y, s.Configs = append(s.X, cost.FLOPs), append(s.Y, cost.FLOPs/(ms/1000)/1e12), append(s.Configs, c)
				}
			}
			p.Lines = append(p.Lines, s)
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil
	}
	return &view.Chart{Name: "throughput-per-shape", Title: "Throughput of every shape", Panels: panels,
		Caption: "Achieved TFLOP/s (the workload's FLOP count over the median) of every shape against its size; small shapes are bound by launch latency, large ones by the device's peak."}
}

// winners counts, per dtype, the shapes on which each backend was fastest.
func winners(v view.Results) *view.Chart {
	ds, backends := dtypesIn(v), v.Backends()
	if len(ds) == 0 {
		return nil
	}
	vals := make([][]float64, len(backends))
	for _, d := range ds {
		count := make([]float64, len(backends))
		for _, c := range configsOf(v, d) {
			best, bi := math.Inf(1), -1
			for i, b := range backends {
				if ms := v.Median(b, c); !math.IsNaN(ms) && ms < best {
					best, bi = ms, i
				}
			}
			if bi >= 0 {
				count[bi]++
			}
		}
		for i := range backends {
			vals[i] = append(vals[i], count[i])
		}
	}
	bars := &view.Bars{Categories: ds}
	for i, b := range backends {
		bars.Groups = append(bars.Groups, view.BarGroup{Name: b, Values: vals[i]})
	}
	return &view.Chart{Name: "shape-winners", Title: "Fastest backend per shape", Width: 7, Height: 4.5,
		Panels:  []view.Panel{{Title: "Fastest backend per shape", YLabel: "shapes won", Bars: bars}},
		Caption: "For each dtype, the number of shapes on which each backend had the lowest median (the CSV tables list the winner of every shape)."}
}

// ratioOverShapes is the time ratio to the baseline over the shape grid:
// rows are the m values, columns backend and dtype, each cell the
// geometric mean of the ratio over the shapes with that m.
func ratioOverShapes(v view.Results) *view.Chart {
	ds, base := dtypesIn(v), v.Baseline()
	if len(ds) == 0 || base == "" {
		return nil
	}
	var ms []int
	for _, c := range v.Configs() {
		if m, err := strconv.Atoi(c.Get("m")); err == nil && !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}
	slices.Sort(ms)
	g := &view.Grid{FitColumns: true}
	type col struct{ b, d string }
	var cols []col
	for _, d := range ds {
		for _, b := range v.Backends() {
			if b != base {
				cols = append(cols, col{b, d})
				g.Cols = append(g.Cols, b+" "+d)
			}
		}
	}
	for _, m := range ms {
		g.Rows = append(g.Rows, strconv.Itoa(m))
		row := make([]view.GridCell, len(cols))
		for j, cl := range cols {
			var sum float64
			n := 0
			for _, c := range configsOf(v, cl.d) {
				if c.Int("m") != m {
					continue
				}
				x, bm := v.Median(cl.b, c), v.Median(base, c)
				if !math.IsNaN(x) && !math.IsNaN(bm) && x > 0 && bm > 0 {
					sum += math.Log2(x / bm)
					n++
				}
			}
			row[j] = view.GridCell{Shaded: true, Text: "-"}
			if n > 0 {
				gm := sum / float64(n)
				row[j] = view.GridCell{Ratio: math.Exp2(gm), Text: fmt.Sprintf("%.2fx", math.Exp2(gm))}
			}
		}
		g.Cells = append(g.Cells, row)
	}
	return &view.Chart{Name: "ratio-over-shapes", Title: "Time ratio over the shape grid",
		Width: math.Max(7, 2.5+1.3*float64(len(cols))), Height: 1.6 + 0.3*float64(len(ms)),
		Panels:  []view.Panel{{Title: "Time ratio to " + base + " by m (geometric mean over n, k)", XLabel: "backend, dtype", YLabel: "m", Grid: g}},
		Caption: "Median time over " + base + "'s median, geometric mean over every shape with that m (the token count of an LLM shape); colour is log2 of the ratio, full at the largest ratio in the map."}
}
