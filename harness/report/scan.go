package report

// The scan workload's analyses (docs/workloads/scan.md), as CSV tables
// beside the report: what flash-semicrf's benchmark users compute by hand.
// Chosen by the presence of the T, K and C parameters, so any workload
// with those axes gets them.

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// scanConfigs are the configurations with T, K and C parameters.
func (r *Report) scanConfigs() []result.Config {
	var out []result.Config
	for _, c := range r.Configs {
		if c.Get("T") != "" && c.Get("K") != "" && c.Get("C") != "" {
			out = append(out, c)
		}
	}
	return out
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// scanTables are the scan tables: one row per (backend, configuration) with
// time, throughput, memory per state-position, the backward/forward ratio,
// the overhead of each semiring against log, and time and memory against
// the baseline; then the crossover points against the baseline.
func (r *Report) scanTables(num func(float64) string) []TextTable {
	cfgs := r.scanConfigs()
	if len(cfgs) == 0 {
		return nil
	}
	t := TextTable{Name: "scan", Title: "Scan: time, throughput, memory per state-position (peak / (batch·T·C)), backward/forward, semiring overhead against log, ratios to " + r.Baseline,
		Header: []string{"backend", "semiring", "phase", "dtype", "batch", "T", "K", "C", "K·C", "median ms", "positions/s",
			"peak memory bytes", "bytes per state-position", "backward/forward", "time / log time", "time ratio to baseline", "memory ratio to baseline"}}
	for _, c := range cfgs {
		states := float64(atoi(c.Get("batch"))) * float64(atoi(c.Get("T"))) * float64(atoi(c.Get("C")))
		for _, b := range r.Backends {
			res, ok := r.Result(b, c)
			if !ok || res.Status != result.StatusOK || res.Stats == nil {
				continue
			}
			med := res.Stats.MedianMs
			bf, sr := nan(), nan()
			if c.Phase == workload.PhaseForward {
				bc := c.Clone()
				bc.Phase = workload.PhaseBackward
				bf = r.median(b, bc) / med
			}
			if c.Get("semiring") != "log" {
				sr = med / r.median(b, c.With("semiring", "log"))
			}
			tr, mr := nan(), nan()
			if base, ok := r.Result(r.Baseline, c); ok && base.Status == result.StatusOK && base.Stats != nil {
				tr = med / base.Stats.MedianMs
				if base.PeakMemoryBytes > 0 && res.PeakMemoryBytes > 0 {
					mr = float64(res.PeakMemoryBytes) / float64(base.PeakMemoryBytes)
				}
			}
			perState := nan()
			if res.PeakMemoryBytes > 0 {
				perState = float64(res.PeakMemoryBytes) / states
			}
			t.Rows = append(t.Rows, []string{b, c.Get("semiring"), c.Phase, c.Dtype(), c.Get("batch"), c.Get("T"), c.Get("K"), c.Get("C"),
				strconv.Itoa(atoi(c.Get("K")) * atoi(c.Get("C"))), num(med), num(res.Throughput), strconv.FormatInt(res.PeakMemoryBytes, 10),
				num(perState), num(bf), num(sr), num(tr), num(mr)})
		}
	}
	return []TextTable{t, r.scanCrossovers(cfgs)}
}

// scanCrossovers: for each backend against the baseline, per (semiring,
// phase, dtype, batch) and T, the K·C from which the backend is faster at
// every larger K·C measured by both ("always" from the smallest, "none"
// when never); and the same along T per K·C.
func (r *Report) scanCrossovers(cfgs []result.Config) TextTable {
	t := TextTable{Name: "scan-crossover", Title: "Scan crossover points against " + r.Baseline + ": the smallest value of the swept axis from which the backend is faster at every larger value measured",
		Header: []string{"backend", "semiring", "phase", "dtype", "batch", "fixed", "swept axis", "crossover", "points"}}
	type group struct{ backend, semiring, phase, dtype, batch, fixed, axis string }
	for _, b := range r.Backends {
		if b == r.Baseline {
			continue
		}
		groups := map[group][]scanPoint{}
		var order []group
		for _, c := range cfgs {
			m, base := r.median(b, c), r.median(r.Baseline, c)
			if math.IsNaN(m) || math.IsNaN(base) {
				continue
			}
			kc := atoi(c.Get("K")) * atoi(c.Get("C"))
			for _, g := range []struct {
				fixed, axis string
				x           int
			}{{"T=" + c.Get("T"), "K·C", kc}, {"K·C=" + strconv.Itoa(kc), "T", atoi(c.Get("T"))}} {
				key := group{b, c.Get("semiring"), c.Phase, c.Dtype(), c.Get("batch"), g.fixed, g.axis}
				if _, ok := groups[key]; !ok {
					order = append(order, key)
				}
				groups[key] = append(groups[key], scanPoint{g.x, m / base})
			}
		}
		for _, key := range order {
			pts := groups[key]
			sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
			t.Rows = append(t.Rows, []string{key.backend, key.semiring, key.phase, key.dtype, key.batch, key.fixed, key.axis,
				crossover(xsRatios(pts)), strconv.Itoa(len(pts))})
		}
	}
	return t
}

// scanPoint is one configuration on a swept axis: its value and the time
// ratio to the baseline.
type scanPoint struct {
	x     int
	ratio float64
}

// xsRatios splits points into their axis values and time ratios.
func xsRatios(pts []scanPoint) ([]int, []float64) {
	xs, rs := make([]int, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i], rs[i] = p.x, p.ratio
	}
	return xs, rs
}

// crossover is the smallest x from which every ratio (time over the
// baseline's, x ascending) is below 1: "always" from the first, "none" when
// the last is not.
func crossover(xs []int, ratios []float64) string {
	for i := range ratios {
		if !slices.ContainsFunc(ratios[i:], func(q float64) bool { return q >= 1 }) {
			if i == 0 {
				return "always"
			}
			return strconv.Itoa(xs[i])
		}
	}
	return "none"
}

func nan() float64 { return math.NaN() }
