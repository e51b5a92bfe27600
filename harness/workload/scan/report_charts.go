package scan

// The scan's figures: time and memory per state-position against T and
// against K·C (log-log, a line per backend), and the time ratio to the
// baseline over T x K·C.

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/view"
)

// group is what a panel holds fixed.
type group struct{ semiring, phase, dtype, batch string }

func (g group) String() string {
	return fmt.Sprintf("%s %s %s b%s", g.semiring, g.phase, g.dtype, g.batch)
}

// groups splits the configurations by semiring, phase, dtype and batch, in
// first-seen order.
func groups(v view.Results) ([]group, map[group][]result.Config) {
	by := map[group][]result.Config{}
	var order []group
	for _, c := range v.Configs() {
		g := group{c.Get("semiring"), c.Phase, c.Dtype(), c.Get("batch")}
		if _, ok := by[g]; !ok {
			order = append(order, g)
		}
		by[g] = append(by[g], c)
	}
	return order, by
}

// A metric drawn against T or K·C.
type metric struct {
	name, ylabel, title, caption string
	// value is backend's value on c with its 95% interval (NaN if none).
	value func(v view.Results, backendName string, c result.Config) (val, lo, hi float64)
}

var timeMetric = metric{name: "time", ylabel: "median ms", title: "time",
	caption: "Median time against %s (log-log), a line per backend with its 95%% interval as a band",
	value: func(v view.Results, b string, c result.Config) (float64, float64, float64) {
		lo, hi := v.Interval(b, c)
		return v.Median(b, c), lo, hi
	}}

// memoryMetric is flash-semicrf's memory measure: peak bytes over the
// state-positions (batch·T·C) the scan holds values for.
var memoryMetric = metric{name: "memory", ylabel: "peak bytes per state-position", title: "memory per state-position",
	caption: "Peak memory over batch·T·C (the state-positions a scan holds a value for) against %s (log-log), a line per backend that reports its peak: a flat line is memory in proportion to T (every position's values kept), a falling one memory that does not grow with T (a streaming scan, or a fixed pool)",
	value: func(v view.Results, b string, c result.Config) (float64, float64, float64) {
		res, ok := v.Result(b, c)
		states := statePositions(c)
		if !ok || res.Status != result.StatusOK || res.PeakMemoryBytes <= 0 || states <= 0 {
			return math.NaN(), math.NaN(), math.NaN()
		}
		return float64(res.PeakMemoryBytes) / states, math.NaN(), math.NaN()
	}}

// metricLines draws m per group against axis (T or K·C), with the other
// held at the value measured most often (ties: the larger).
func metricLines(v view.Results, axis string, m metric) *view.Chart {
	order, by := groups(v)
	if len(order) == 0 {
		return nil
	}
	x := func(c result.Config) int {
		if axis == "T" {
			return atoi(c.Get("T"))
		}
		return kc(c)
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
	var panels []view.Panel
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
		if len(keys) == 0 || len(v.Backends()) == 0 {
			continue
		}
		p := view.Panel{Title: g.String() + ", " + keys[0], XLabel: axis, YLabel: m.ylabel, LogX: true, LogY: true}
		for _, b := range v.Backends() {
			s := view.Series{Name: b}
			type point struct {
				xy [4]float64 // x, value, interval
				c  result.Config
			}
			var pts []point
			for _, c := range by[g] {
				if other(c) == keys[0] {
					if val, lo, hi := m.value(v, b, c); !math.IsNaN(val) {
						pts = append(pts, point{[4]float64{float64(x(c)), val, lo, hi}, c})
					}
				}
			}
			sort.Slice(pts, func(i, j int) bool { return pts[i].xy[0] < pts[j].xy[0] })
			for _, q := range pts {
				pt := q.xy
				s.X, s.Y, s.Configs = append(s.X, pt[0]), append(s.Y, pt[1]), append(s.Configs, q.c)
				s.Lo, s.Hi = append(s.Lo, pt[2]), append(s.Hi, pt[3])
				if !slices.Contains(p.XTicks, pt[0]) {
					p.XTicks = append(p.XTicks, pt[0])
				}
			}
			if len(s.X) > 0 {
				p.Lines = append(p.Lines, s)
			}
		}
		slices.Sort(p.XTicks)
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil
	}
	return &view.Chart{Name: "scan-" + m.name + "-vs-" + map[string]string{"T": "t", "K·C": "kc"}[axis],
		Title: "Scan: " + m.title + " against " + axis, Panels: panels,
		Caption: fmt.Sprintf(m.caption, axis) + ", the other parameters held at the values measured most often (named in each panel; against K·C, T and C are held, so K·C moves with K alone and no line joins two configurations). A missing point: not measured, unsupported or failed there (the scan tables say which)."}
}

// ratioMaps is, per backend and group, the time ratio to the baseline over
// T (rows) x K·C (columns).
func ratioMaps(v view.Results) *view.Chart {
	order, by := groups(v)
	base := v.Baseline()
	if len(order) == 0 || base == "" {
		return nil
	}
	var panels []view.Panel
	for _, g := range order {
		var ts, kcs []int
		for _, c := range by[g] {
			if t := atoi(c.Get("T")); !slices.Contains(ts, t) {
				ts = append(ts, t)
			}
			if k := kc(c); !slices.Contains(kcs, k) {
				kcs = append(kcs, k)
			}
		}
		slices.Sort(ts)
		slices.Sort(kcs)
		for _, b := range v.Backends() {
			if b == base {
				continue
			}
			grid := &view.Grid{}
			for _, k := range kcs {
				grid.Cols = append(grid.Cols, "K·C "+strconv.Itoa(k))
			}
			any := false
			for _, t := range ts {
				grid.Rows = append(grid.Rows, "T "+strconv.Itoa(t))
				row := make([]view.GridCell, len(kcs))
				for j := range row {
					row[j] = view.GridCell{Text: "-"}
				}
				for _, c := range by[g] {
					if atoi(c.Get("T")) != t {
						continue
					}
					j := slices.Index(kcs, kc(c))
					if q := v.Median(b, c) / v.Median(base, c); !math.IsNaN(q) {
						row[j] = view.GridCell{Ratio: q, Text: fmt.Sprintf("%.2fx", q)}
						any = true
					}
				}
				grid.Cells = append(grid.Cells, row)
			}
			if any {
				panels = append(panels, view.Panel{Title: b + " / " + base + ", " + g.String(), Grid: grid})
			}
		}
	}
	if len(panels) == 0 {
		return nil
	}
	return &view.Chart{Name: "scan-ratio-maps", Title: "Scan: time ratio to " + base + " over T x K·C", Panels: panels,
		Caption: "Median time over " + base + "'s on the same configuration (green faster, red slower; log2 colour, full at each map's largest ratio or its power of two above); '-' where either did not run it (with sampling by bucket, each T x K·C bucket has its own configuration)."}
}
