package attention

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/view"
)

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

// throughputVsSeqLen draws the workload's throughput against seq_len, one
// line per backend, on one linear axis from zero for every panel: heights
// then compare as fractions of the peak and across panels (forward against
// backward). The caption sums over the panels drawn, so it stops at
// view.MaxPanels as the report does.
func throughputVsSeqLen(w Workload, v view.Results) *view.Chart {
	panels := seqLenPanels(v.Configs())
	if len(panels) == 0 {
		return nil
	}
	var out []view.Panel
	gone := missing{}
	batchVaries, peaks := false, map[string]float64{}
	unit, top := "", 0.0
	for _, pn := range panels[:min(len(panels), view.MaxPanels)] {
		batchVaries = batchVaries || pn.BatchVaries
		p := view.Panel{Title: pn.Title, XLabel: "seq_len (query positions)", LogX: true, YFromZero: true}
		for _, b := range v.Backends() {
			s := view.Series{Name: b, Marker: true}
			for _, c := range pn.Configs {
				res, ok := v.Result(b, c)
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
				tp := w.Throughput(c, res.Stats.MedianMs)
				unit = tp.Unit
				s.X, s.Y, s.Configs = append(s.X, float64(c.Int("seq_len"))), append(s.Y, tp.Value), append(s.Configs, c)
				lo, hi := v.Interval(b, c)
				// rate ∝ 1/time: the slow end of the time is the low rate
				s.Lo, s.Hi = append(s.Lo, tp.Value*res.Stats.MedianMs/hi), append(s.Hi, tp.Value*res.Stats.MedianMs/lo)
				top = math.Max(top, tp.Value)
				// % of peak needs FLOPs and the device's calibrated matmul
				// rate of the dtype, as the summary table's column does.
				cost, err := w.Cost(c)
				if peak := v.MatmulPeak(res.Device, c.Dtype()); err == nil && peak > 0 && cost.FLOPs > 0 {
					peaks[c.Dtype()], p.Peak = peak, peak
				}
			}
			p.Lines = append(p.Lines, s)
		}
		for _, l := range pn.SeqLens {
			p.XTicks = append(p.XTicks, float64(l))
		}
		p.YLabel = unit + " at the median"
		if p.Peak > 0 {
			p.YLabel += " (% of peak)"
		}
		out = append(out, p)
	}
	for i := range out {
		out[i].YMax = 1.05 * top
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
	return &view.Chart{Name: "throughput-vs-seq-len", Title: "Throughput against sequence length", Panels: out,
		Cut: len(panels) - len(out), Caption: caption}
}
