package scan

// The scan's own report sections (docs/workloads/scan.md): the analyses
// flash-semicrf's benchmark users compute by hand, as CSV tables beside the
// report (and folded in the page), and the figures of time and memory
// against T and K·C (report_charts.go).

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/view"
)

var _ workload.Reporter = Workload{}

// ReportSections are the analysis and crossover tables, and the figures,
// which go after every generic chart.
func (Workload) ReportSections(v view.Results) []view.Section {
	main, cross := analysisTable(v), crossoverTable(v)
	out := []view.Section{{Table: &main}, {Table: &cross}}
	for _, c := range []*view.Chart{
		metricLines(v, "T", timeMetric), metricLines(v, "K·C", timeMetric),
		metricLines(v, "T", memoryMetric), metricLines(v, "K·C", memoryMetric),
		ratioMaps(v),
	} {
		if c != nil {
			out = append(out, view.Section{Place: view.Tail, Chart: c})
		}
	}
	return out
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// statePositions is flash-semicrf's memory denominator: the batch·T·C
// positions a scan holds a value for.
func statePositions(c result.Config) float64 {
	return float64(atoi(c.Get("batch"))) * float64(atoi(c.Get("T"))) * float64(atoi(c.Get("C")))
}

func kc(c result.Config) int { return atoi(c.Get("K")) * atoi(c.Get("C")) }

// analysisTable has one row per (backend, configuration) with time,
// throughput, memory per state-position, the backward/forward ratio, the
// overhead of each semiring against log, and time and memory against the
// baseline.
func analysisTable(v view.Results) view.Table {
	base := v.Baseline()
	t := view.Table{Name: "scan", Title: "Scan: time, throughput, memory per state-position (peak / (batch·T·C)), backward/forward, semiring overhead against log, ratios to " + base,
		Header: []string{"backend", "semiring", "phase", "dtype", "batch", "T", "K", "C", "K·C", "median ms", "positions/s",
			"peak memory bytes", "bytes per state-position", "backward/forward", "time / log time", "time ratio to baseline", "memory ratio to baseline"}}
	for _, c := range v.Configs() {
		for _, b := range v.Backends() {
			res, ok := v.Result(b, c)
			if !ok || res.Status != result.StatusOK || res.Stats == nil {
				continue
			}
			med := res.Stats.MedianMs
			bf, sr := math.NaN(), math.NaN()
			if c.Phase == workload.PhaseForward {
				bc := c.Clone()
				bc.Phase = workload.PhaseBackward
				bf = v.Median(b, bc) / med
			}
			if c.Get("semiring") != "log" {
				sr = med / v.Median(b, c.With("semiring", "log"))
			}
			tr, mr := math.NaN(), math.NaN()
			if bres, ok := v.Result(base, c); ok && bres.Status == result.StatusOK && bres.Stats != nil {
				tr = med / bres.Stats.MedianMs
				if bres.PeakMemoryBytes > 0 && res.PeakMemoryBytes > 0 {
					mr = float64(res.PeakMemoryBytes) / float64(bres.PeakMemoryBytes)
				}
			}
			perState := math.NaN()
			if res.PeakMemoryBytes > 0 {
				perState = float64(res.PeakMemoryBytes) / statePositions(c)
			}
			row := []view.Cell{}
			for _, s := range []string{b, c.Get("semiring"), c.Phase, c.Dtype(), c.Get("batch"), c.Get("T"), c.Get("K"), c.Get("C"), strconv.Itoa(kc(c))} {
				row = append(row, view.Text(s))
			}
			row = append(row, view.Num(med), view.Num(res.Throughput), view.Text(strconv.FormatInt(res.PeakMemoryBytes, 10)),
				view.Num(perState), view.Num(bf), view.Num(sr), view.Num(tr), view.Num(mr))
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// crossoverTable: for each backend against the baseline, per (semiring,
// phase, dtype, batch) and T, the K·C from which the backend is faster at
// every larger K·C measured by both ("always" from the smallest, "none"
// when never); and the same along T per K·C.
func crossoverTable(v view.Results) view.Table {
	base := v.Baseline()
	t := view.Table{Name: "scan-crossover", Title: "Scan crossover points against " + base + ": the smallest value of the swept axis from which the backend is faster at every larger value measured",
		Header: []string{"backend", "semiring", "phase", "dtype", "batch", "fixed", "swept axis", "crossover", "points"}}
	type group struct{ backend, semiring, phase, dtype, batch, fixed, axis string }
	for _, b := range v.Backends() {
		if b == base {
			continue
		}
		groups := map[group][]point{}
		var order []group
		for _, c := range v.Configs() {
			m, bm := v.Median(b, c), v.Median(base, c)
			if math.IsNaN(m) || math.IsNaN(bm) {
				continue
			}
			for _, g := range []struct {
				fixed, axis string
				x           int
			}{{"T=" + c.Get("T"), "K·C", kc(c)}, {"K·C=" + strconv.Itoa(kc(c)), "T", atoi(c.Get("T"))}} {
				key := group{b, c.Get("semiring"), c.Phase, c.Dtype(), c.Get("batch"), g.fixed, g.axis}
				if _, ok := groups[key]; !ok {
					order = append(order, key)
				}
				groups[key] = append(groups[key], point{g.x, m / bm})
			}
		}
		for _, key := range order {
			pts := groups[key]
			sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
			row := []view.Cell{}
			for _, s := range []string{key.backend, key.semiring, key.phase, key.dtype, key.batch, key.fixed, key.axis,
				crossover(pts), strconv.Itoa(len(pts))} {
				row = append(row, view.Text(s))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// point is one configuration on a swept axis: its value and the time
// ratio to the baseline.
type point struct {
	x     int
	ratio float64
}

// crossover is the smallest x from which every ratio (time over the
// baseline's, x ascending) is below 1: "always" from the first, "none" when
// the last is not.
func crossover(pts []point) string {
	for i := range pts {
		if !slices.ContainsFunc(pts[i:], func(p point) bool { return p.ratio >= 1 }) {
			if i == 0 {
				return "always"
			}
			return strconv.Itoa(pts[i].x)
		}
	}
	return "none"
}
