package report

// Throughput against sequence length for any workload with a seq_len
// parameter (attention today). TTT is left out: it has its own
// time-against-length chart, and its throughput is tokens, not FLOPs.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/plot"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// seqLenPanel is the configurations of one panel, in r.Configs order.
type seqLenPanel struct {
	Title        string
	Configs      []result.Config
	BatchVaries  bool // batch changes with seq_len (a fixed-token suite)
	SeqLens      []int
	workloadName string
}

// seqLenFree are the parameters a panel's configurations may differ in:
// kv_len follows seq_len (its 0 means seq_len), and batch is handled by
// seqLenPanels, since a fixed-token suite lowers it as seq_len grows.
var seqLenFree = []string{"seq_len", "kv_len", "batch"}

// seqLenPanels groups the configurations with a seq_len by workload, phase
// and every parameter but seq_len, kv_len and batch. A group whose lengths
// each come with one batch is one panel (batch follows seq_len, and a
// rate per FLOP stays comparable across batches); a group that ran some
// length at several batches is split by batch, so no panel has two points
// at one length. Panels with fewer than two lengths are dropped.
func seqLenPanels(cfgs []result.Config) []seqLenPanel {
	type key struct{ workload, phase, params string }
	var keys []key
	groups := map[key][]result.Config{}
	for _, c := range cfgs {
		if c.Workload == ttt.Name || c.Get("seq_len") == "" {
			continue
		}
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(c.Params)) {
			if !slices.Contains(seqLenFree, name) {
				parts = append(parts, name+"="+c.Params[name])
			}
		}
		k := key{c.Workload, c.Phase, strings.Join(parts, " ")}
		if _, seen := groups[k]; !seen {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	var out []seqLenPanel
	for _, k := range keys {
		g := groups[k]
		batches := map[int]map[string]bool{} // seq_len -> batches
		for _, c := range g {
			l := c.Int("seq_len")
			if batches[l] == nil {
				batches[l] = map[string]bool{}
			}
			batches[l][c.Get("batch")] = true
		}
		split := false
		for _, b := range batches {
			split = split || len(b) > 1
		}
		sub := [][]result.Config{g}
		if split {
			sub = nil
			index := map[string]int{}
			for _, c := range g {
				i, ok := index[c.Get("batch")]
				if !ok {
					i = len(sub)
					index[c.Get("batch")] = i
					sub = append(sub, nil)
				}
				sub[i] = append(sub[i], c)
			}
		}
		for _, s := range sub {
			p := seqLenPanel{Configs: s, workloadName: k.workload}
			bs := map[string]bool{}
			for _, c := range s {
				if l := c.Int("seq_len"); !slices.Contains(p.SeqLens, l) {
					p.SeqLens = append(p.SeqLens, l)
				}
				bs[c.Get("batch")] = true
			}
			if len(p.SeqLens) < 2 {
				continue
			}
			sort.Ints(p.SeqLens)
			p.BatchVaries = len(bs) > 1
			p.Title = commonLabel(s)
			// The label names only a phase other than the default; a
			// panel beside its backward twin says forward too.
			if !strings.HasSuffix(p.Title, " "+k.phase) {
				p.Title += " " + k.phase
			}
			out = append(out, p)
		}
	}
	return out
}

// commonLabel is the words of the workload's label that every
// configuration shares ("h32/8 d128 causal bfloat16 backward"): the label
// is the workload's own short naming, and what varies is on the x axis.
func commonLabel(cfgs []result.Config) string {
	var words []string
	for i, c := range cfgs {
		ws := strings.Fields(compare.Label(c))
		if i == 0 {
			words = ws
			continue
		}
		words = slices.DeleteFunc(words, func(w string) bool { return !slices.Contains(ws, w) })
	}
	return strings.Join(words, " ")
}

// missing counts the points a chart leaves out, by backend and status.
type missing map[string]map[result.Status]int

func (m missing) add(b string, s result.Status) {
	if m[b] == nil {
		m[b] = map[result.Status]int{}
	}
	m[b][s]++
}

// String is "jax: 6 oom, 7 skipped; burnstyle-hip: 6 unsupported".
func (m missing) String() string {
	var parts []string
	for _, b := range slices.Sorted(maps.Keys(m)) {
		var ss []string
		for _, s := range []result.Status{result.StatusOOM, result.StatusSkipped, result.StatusUnsupported,
			result.StatusFailed, result.StatusTimeout, "not run"} {
			if n := m[b][s]; n > 0 {
				ss = append(ss, fmt.Sprintf("%d %s", n, s))
			}
		}
		parts = append(parts, b+": "+strings.Join(ss, ", "))
	}
	return strings.Join(parts, "; ")
}

func (r *Report) throughputVsSeqLen() (*Chart, error) {
	panels := seqLenPanels(r.Configs)
	if len(panels) == 0 {
		return nil, nil
	}
	var plots []*gplot.Plot
	gone := missing{}
	batchVaries, peaks := false, map[string]float64{}
	unit, top := "", 0.0
	for _, pn := range panels[:min(len(panels), maxPanels)] {
		batchVaries = batchVaries || pn.BatchVaries
		var series []plot.Series
		panelPeak := 0.0 // the calibrated matmul peak of the panel's dtype
		for i, b := range r.Backends {
			s := plot.Series{Name: b, Color: r.color(b), Shape: i}
			for _, c := range pn.Configs {
				res, ok := r.Result(b, c)
				switch {
				case !ok:
					gone.add(b, "not run")
					continue
				case res.Status != result.StatusOK || res.Stats == nil || res.Stats.MedianMs <= 0:
					if res.Status == result.StatusOK {
						res.Status = result.StatusFailed // ok without a time: nothing to draw
					}
					gone.add(b, res.Status)
					continue
				}
				tp := workload.ThroughputOf(c, res.Stats.MedianMs)
				unit = tp.Unit
				s.X, s.Y = append(s.X, float64(c.Int("seq_len"))), append(s.Y, tp.Value)
				lo, hi := r.interval(b, c)
				lo, hi = rateInterval(tp.Value, res.Stats.MedianMs, lo, hi)
				s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
				top = math.Max(top, tp.Value)
				// % of peak needs FLOPs and the device's calibrated matmul
				// rate of the dtype, as the summary table's column does.
				cost, err := workload.CostOf(c)
				cal, found := r.Calibration(res.Device)
				if peak := cal.MatmulTFLOPs[c.Dtype()]; err == nil && found && peak > 0 && cost.FLOPs > 0 {
					peaks[c.Dtype()], panelPeak = peak, peak
				}
			}
			series = append(series, s)
		}
		var ticks []float64
		for _, l := range pn.SeqLens {
			ticks = append(ticks, float64(l))
		}
		ylabel := unit + " at the median"
		if panelPeak > 0 {
			ylabel += " (% of peak)"
		}
		p, err := plot.Lines(plot.Axes{SharedLegend: true, Title: pn.Title, XLabel: "seq_len (query positions)", YLabel: ylabel,
			LogX: true, XTicks: ticks}, series)
		if err != nil {
			return nil, err
		}
		p.Y.Tick.Marker = plainTicks{peak: panelPeak}
		plots = append(plots, p)
	}
	if len(plots) == 0 {
		return nil, nil
	}
	// One linear axis from zero for every panel: heights then compare as
	// fractions of the peak and across panels (forward against backward).
	// The legend is the figure's, above the panels.
	for _, p := range plots {
		p.Y.Min, p.Y.Max = 0, 1.05*top
	}
	caption := fmt.Sprintf("Throughput (%s at the median, from the workload's FLOP count) against seq_len, one line per backend, one panel per configuration of the other parameters and phase.", unit)
	if batchVaries {
		caption += " The batch is not held fixed: the suite lowers it as seq_len grows (batch·seq_len constant), and a rate per FLOP stays comparable across batches."
	}
	if len(peaks) > 0 {
		var ps []string
		for _, d := range slices.Sorted(maps.Keys(peaks)) {
			ps = append(ps, fmt.Sprintf("%s %.4g TFLOP/s", d, peaks[d]))
		}
		caption += " The y axis reads each rate also as percent of the calibrated matmul peak of the panel's dtype (" + strings.Join(ps, ", ") + ")."
	} else {
		caption += " No calibration for this device in the folder, so no percent of peak (run xbench calibrate)."
	}
	if len(gone) > 0 {
		caption += " Left out (no time to draw): " + gone.String() + "."
	}
	return r.multiples("throughput-vs-seq-len", "Throughput against sequence length", plots, len(panels)-len(plots), caption), nil
}

// plainTicks label a linear axis every 1, 2 or 5 times a power of ten,
// about five labels (gonum's default labels three, as "750.00"); with a
// peak, each label also gives its percent of it ("400 (51%)").
type plainTicks struct{ peak float64 }

func (pt plainTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) {
		return gplot.DefaultTicks{}.Ticks(lo, hi)
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/5)))
	step := mag
	for _, f := range []float64{1, 2, 5, 10} {
		if step = f * mag; (hi-lo)/step <= 6 {
			break
		}
	}
	var ts []gplot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		label := strconv.FormatFloat(v, 'g', -1, 64)
		if pt.peak > 0 && v > 0 {
			label += fmt.Sprintf(" (%.0f%%)", 100*v/pt.peak)
		}
		ts = append(ts, gplot.Tick{Value: v, Label: label})
	}
	return ts
}
