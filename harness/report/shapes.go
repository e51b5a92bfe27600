package report

// Charts for kernel workloads with many shapes (GEMM): throughput of every
// shape, which backend wins each shape, and the time ratio over the shape
// grid. A per-configuration heat map would be hundreds of rows tall, so
// these aggregate instead.

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/xbench/xbench/harness/plot"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// manyShapes is the number of configurations above which the report
// aggregates by shape instead of drawing one row per configuration.
const manyShapes = 40

// maxGridRows is the most rows a per-configuration heat map gets when no
// shape aggregate replaces it: a sweep of models by lengths by phases
// (attention's llm suite has 72) must still show which cells ran out of
// memory, at a height a page can scroll through (about 20 inches).
const maxGridRows = 96

// shapeWorkloads are the workloads whose configurations are kernel shapes
// with m, n and k parameters.
func (r *Report) shapeConfigs(dtype string) []result.Config {
	var out []result.Config
	for _, c := range r.Configs {
		if c.Get("m") != "" && c.Get("n") != "" && c.Get("k") != "" && c.Dtype() == dtype {
			out = append(out, c)
		}
	}
	return out
}

func (r *Report) shapeDtypes() []string {
	var out []string
	for _, c := range r.Configs {
		if c.Get("m") != "" && !slices.Contains(out, c.Dtype()) {
			out = append(out, c.Dtype())
		}
	}
	slices.Sort(out)
	return out
}

// throughputPerShape plots every shape's TFLOP/s against its FLOPs, one
// panel per dtype, one series per backend.
func (r *Report) throughputPerShape() (*Chart, error) {
	var panels []*gplot.Plot
	for _, d := range r.shapeDtypes() {
		var series []plot.Series
		for _, b := range r.Backends {
			s := plot.Series{Name: b, Color: r.color(b), Shape: slices.Index(r.Backends, b), PointsOnly: true}
			for _, c := range r.shapeConfigs(d) {
				cost, err := workload.CostOf(c)
				if ms := r.median(b, c); err == nil && !math.IsNaN(ms) && ms > 0 {
					s.X, s.Y = append(s.X, cost.FLOPs), append(s.Y, cost.FLOPs/(ms/1000)/1e12)
				}
			}
			series = append(series, s)
		}
		p, err := plot.Lines(plot.Axes{SharedLegend: true, Title: d, XLabel: "FLOPs per call", YLabel: "TFLOP/s at the median", LogX: true, LogY: true}, series)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil, nil
	}
	return r.multiples("throughput-per-shape", "Throughput of every shape", panels, 0,
		"Achieved TFLOP/s (the workload's FLOP count over the median) of every shape against its size; small shapes are bound by launch latency, large ones by the device's peak."), nil
}

// winners counts, per dtype, the shapes on which each backend was fastest.
func (r *Report) winners() (*Chart, error) {
	dtypes := r.shapeDtypes()
	if len(dtypes) == 0 {
		return nil, nil
	}
	vals := make([][]float64, len(r.Backends))
	for _, d := range dtypes {
		count := make([]float64, len(r.Backends))
		for _, c := range r.shapeConfigs(d) {
			best, bi := math.Inf(1), -1
			for i, b := range r.Backends {
				if ms := r.median(b, c); !math.IsNaN(ms) && ms < best {
					best, bi = ms, i
				}
			}
			if bi >= 0 {
				count[bi]++
			}
		}
		for i := range r.Backends {
			vals[i] = append(vals[i], count[i])
		}
	}
	var groups []plot.BarGroup
	for i, b := range r.Backends {
		groups = append(groups, plot.BarGroup{Name: b, Color: r.color(b), Values: vals[i]})
	}
	p, err := plot.Bars(plot.Axes{SharedLegend: true, Title: "Fastest backend per shape", YLabel: "shapes won"}, dtypes, groups)
	if err != nil {
		return nil, err
	}
	return &Chart{Figure: plot.Single("shape-winners", "Fastest backend per shape", p, 7*vg.Inch, 4.5*vg.Inch),
		Caption: "For each dtype, the number of shapes on which each backend had the lowest median (the CSV tables list the winner of every shape)."}, nil
}

// ratioOverShapes is the time ratio to the baseline over the shape grid:
// rows are the m (token count) values, columns backend and dtype, each cell
// the geometric mean of the ratio over the shapes with that m.
func (r *Report) ratioOverShapes() (*Chart, error) {
	dtypes := r.shapeDtypes()
	if len(dtypes) == 0 || r.Baseline == "" {
		return nil, nil
	}
	var ms []int
	for _, c := range r.Configs {
		if m, err := strconv.Atoi(c.Get("m")); err == nil && !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}
	slices.Sort(ms)
	g := plot.Grid{Title: "Time ratio to " + r.Baseline + " by m (geometric mean over n, k)", XLabel: "backend, dtype", YLabel: "m"}
	type col struct{ b, d string }
	var cols []col
	for _, d := range dtypes {
		for _, b := range r.Backends {
			if b != r.Baseline {
				cols = append(cols, col{b, d})
				g.Cols = append(g.Cols, b+" "+d)
			}
		}
	}
	for _, m := range ms {
		g.Rows = append(g.Rows, strconv.Itoa(m))
		row := make([]plot.Cell, len(cols))
		for j, cl := range cols {
			var sum float64
			n := 0
			for _, c := range r.shapeConfigs(cl.d) {
				if c.Int("m") != m {
					continue
				}
				x, base := r.median(cl.b, c), r.median(r.Baseline, c)
				if !math.IsNaN(x) && !math.IsNaN(base) && x > 0 && base > 0 {
					sum += math.Log2(x / base)
					n++
				}
			}
			row[j] = plot.Cell{Color: color.Gray{Y: 225}, Text: "-"}
			if n > 0 {
				gm := sum / float64(n)
				row[j] = plot.Cell{Ratio: math.Exp2(gm), Text: fmt.Sprintf("%.2fx", math.Exp2(gm))}
			}
		}
		g.Cells = append(g.Cells, row)
	}
	w := vg.Length(math.Max(7, 2.5+1.3*float64(len(cols)))) * vg.Inch
	h := vg.Length(1.6+0.3*float64(len(ms))) * vg.Inch
	g.FitColumns(w)
	return &Chart{Figure: plot.Single("ratio-over-shapes", "Time ratio over the shape grid", plot.GridPlot(g), w, h),
		Caption: "Median time over " + r.Baseline + "'s median, geometric mean over every shape with that m (the token count of an LLM shape); colour is log2 of the ratio, full at the largest ratio in the map."}, nil
}
