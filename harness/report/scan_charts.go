package report

// The scan workload's figures: time against T and against K·C (log-log,
// a line per backend), and the time ratio to the baseline over T x K·C.
// Selected, like the tables in scan.go, by the T, K and C parameters.

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	gplot "gonum.org/v1/plot"

	"github.com/xbench/xbench/harness/plot"
	"github.com/xbench/xbench/harness/result"
)

// scanGroup is what a scan panel holds fixed.
type scanGroup struct{ semiring, phase, dtype, batch string }

func (g scanGroup) String() string {
	return fmt.Sprintf("%s %s %s b%s", g.semiring, g.phase, g.dtype, g.batch)
}

// scanGroups splits the scan configurations by semiring, phase, dtype and
// batch, in first-seen order.
func (r *Report) scanGroups() ([]scanGroup, map[scanGroup][]result.Config) {
	by := map[scanGroup][]result.Config{}
	var order []scanGroup
	for _, c := range r.scanConfigs() {
		g := scanGroup{c.Get("semiring"), c.Phase, c.Dtype(), c.Get("batch")}
		if _, ok := by[g]; !ok {
			order = append(order, g)
		}
		by[g] = append(by[g], c)
	}
	return order, by
}

// scanLines draws, per group, median time against one axis (T or K·C)
// with the other held at the value measured most often (ties: the larger).
func (r *Report) scanLines(axis string) (*Chart, error) { return r.scanMetricLines(axis, scanTime) }

// A scan metric drawn against T or K·C.
type scanMetric struct {
	name, ylabel, title, caption string
	// value is backend's value on c with its 95% interval (NaN if none).
	value func(r *Report, backendName string, c result.Config) (v, lo, hi float64)
}

var scanTime = scanMetric{name: "time", ylabel: "median ms", title: "time",
	caption: "Median time against %s (log-log), a line per backend with its 95%% interval as a band",
	value: func(r *Report, b string, c result.Config) (float64, float64, float64) {
		lo, hi := r.interval(b, c)
		return r.median(b, c), lo, hi
	}}

// scanMemory is flash-semicrf's memory measure: peak bytes over the
// state-positions (batch·T·C) the scan holds values for.
var scanMemory = scanMetric{name: "memory", ylabel: "peak bytes per state-position", title: "memory per state-position",
	caption: "Peak memory over batch·T·C (the state-positions a scan holds a value for) against %s (log-log), a line per backend that reports its peak: a flat line is memory in proportion to T (every position's values kept), a falling one memory that does not grow with T (a streaming scan, or a fixed pool)",
	value: func(r *Report, b string, c result.Config) (float64, float64, float64) {
		res, ok := r.Result(b, c)
		states := float64(atoi(c.Get("batch"))) * float64(atoi(c.Get("T"))) * float64(atoi(c.Get("C")))
		if !ok || res.Status != result.StatusOK || res.PeakMemoryBytes <= 0 || states <= 0 {
			return math.NaN(), math.NaN(), math.NaN()
		}
		v := float64(res.PeakMemoryBytes) / states
		return v, math.NaN(), math.NaN()
	}}

// scanMetricLines draws m per group against axis, as scanLines.
func (r *Report) scanMetricLines(axis string, m scanMetric) (*Chart, error) {
	order, by := r.scanGroups()
	if len(order) == 0 {
		return nil, nil
	}
	x := func(c result.Config) int {
		if axis == "T" {
			return atoi(c.Get("T"))
		}
		return atoi(c.Get("K")) * atoi(c.Get("C"))
	}
	other := func(c result.Config) string {
		if axis == "T" {
			return "K" + c.Get("K") + " C" + c.Get("C")
		}
		// T and C held: K·C then moves with K alone, so a line never
		// joins two configurations of one K·C (K8 C12 and K12 C8 zig-zagged).
		return "T" + c.Get("T") + " C" + c.Get("C")
	}
	// The held values are chosen once for the figure, the ones measured
	// most often over every group, so neighbouring panels (forward and
	// backward, log and max) hold the other axis at the same values; a
	// group that lacks them takes the next most measured it has.
	total := map[string]int{}
	for _, g := range order {
		for _, c := range by[g] {
			total[other(c)]++
		}
	}
	var panels []*gplot.Plot
	for _, g := range order {
		count := map[string]int{}
		for _, c := range by[g] {
			count[other(c)]++
		}
		keys := make([]string, 0, len(count))
		for k := range count {
			if count[k] >= 2 { // one point a line says nothing about the axis
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			if total[keys[i]] != total[keys[j]] {
				return total[keys[i]] > total[keys[j]]
			}
			return keys[i] > keys[j]
		})
		if len(keys) == 0 || len(r.Backends) == 0 {
			continue
		}
		var series []plot.Series
		var ticks []float64
		for _, b := range r.Backends {
			s := plot.Series{Name: b, Color: r.color(b)}
			var pts [][4]float64 // x, median, interval
			for _, c := range by[g] {
				if other(c) == keys[0] {
					if v, lo, hi := m.value(r, b, c); !math.IsNaN(v) {
						pts = append(pts, [4]float64{float64(x(c)), v, lo, hi})
					}
				}
			}
			sort.Slice(pts, func(i, j int) bool { return pts[i][0] < pts[j][0] })
			for _, p := range pts {
				s.X, s.Y = append(s.X, p[0]), append(s.Y, p[1])
				s.Lo, s.Hi = append(s.Lo, p[2]), append(s.Hi, p[3])
				if !slices.Contains(ticks, p[0]) {
					ticks = append(ticks, p[0])
				}
			}
			if len(s.X) > 0 {
				series = append(series, s)
			}
		}
		slices.Sort(ticks)
		p, err := plot.Lines(plot.Axes{SharedLegend: true, Title: g.String() + ", " + keys[0], XLabel: axis, YLabel: m.ylabel, LogX: true, LogY: true, XTicks: ticks}, series)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil, nil
	}
	cut := max(0, len(panels)-maxPanels)
	name := "scan-" + m.name + "-vs-" + map[string]string{"T": "t", "K·C": "kc"}[axis]
	return r.multiples(name, "Scan: "+m.title+" against "+axis, panels[:len(panels)-cut], cut,
		fmt.Sprintf(m.caption, axis)+", the other parameters held at the values measured most often (named in each panel; against K·C, T and C are held, so K·C moves with K alone and no line joins two configurations). A missing point: not measured, unsupported or failed there (the scan tables say which)."), nil
}

// scanRatioMaps is, per backend and group, the time ratio to the baseline
// over T (rows) x K·C (columns).
func (r *Report) scanRatioMaps() (*Chart, error) {
	order, by := r.scanGroups()
	if len(order) == 0 || r.Baseline == "" {
		return nil, nil
	}
	var panels []*gplot.Plot
	for _, g := range order {
		var ts, kcs []int
		for _, c := range by[g] {
			if t := atoi(c.Get("T")); !slices.Contains(ts, t) {
				ts = append(ts, t)
			}
			if kc := atoi(c.Get("K")) * atoi(c.Get("C")); !slices.Contains(kcs, kc) {
				kcs = append(kcs, kc)
			}
		}
		slices.Sort(ts)
		slices.Sort(kcs)
		for _, b := range r.Backends {
			if b == r.Baseline {
				continue
			}
			grid := plot.Grid{Title: b + " / " + r.Baseline + ", " + g.String()}
			for _, kc := range kcs {
				grid.Cols = append(grid.Cols, "K·C "+strconv.Itoa(kc))
			}
			any := false
			for _, t := range ts {
				grid.Rows = append(grid.Rows, "T "+strconv.Itoa(t))
				row := make([]plot.Cell, len(kcs))
				for j := range row {
					row[j] = plot.Cell{Text: "-"}
				}
				for _, c := range by[g] {
					if atoi(c.Get("T")) != t {
						continue
					}
					j := slices.Index(kcs, atoi(c.Get("K"))*atoi(c.Get("C")))
					if q := r.median(b, c) / r.median(r.Baseline, c); !math.IsNaN(q) {
						row[j] = plot.Cell{Ratio: q, Text: fmt.Sprintf("%.2fx", q)}
						any = true
					}
				}
				grid.Cells = append(grid.Cells, row)
			}
			if any {
				panels = append(panels, plot.GridPlot(grid))
			}
		}
	}
	if len(panels) == 0 {
		return nil, nil
	}
	cut := max(0, len(panels)-maxPanels)
	return r.multiples("scan-ratio-maps", "Scan: time ratio to "+r.Baseline+" over T x K·C", panels[:len(panels)-cut], cut,
		"Median time over "+r.Baseline+"'s on the same configuration (green faster, red slower; log2 colour, full at each map's largest ratio or its power of two above); '-' where either did not run it (with sampling by bucket, each T x K·C bucket has its own configuration)."), nil
}
