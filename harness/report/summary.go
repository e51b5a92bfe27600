package report

import (
	"math"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
	"github.com/xbench/xbench/harness/verify"
	"github.com/xbench/xbench/harness/workload"
)

// Row is one backend on one configuration in the summary table. Numbers
// that do not apply are NaN.
type Row struct {
	Backend    string
	Status     result.Status
	Message    string
	MedianMs   float64
	CILo, CIHi float64
	Throughput float64
	Unit       string
	PeakMemory int64
	Ratio      float64 // median / the baseline's median on the same device model: below 1 is faster
	// RatioLo and RatioHi are the ratio's 95% Hodges-Lehmann interval
	// (compare.RatioCI, as xbench compare prints it), NaN without one.
	RatioLo, RatioHi float64
	Verified         string  // verify verdict, "" when never verified
	VerifiedOn       string  // the configuration the verdict comes from
	TFLOPs           float64 // achieved, the workload's FLOPs over the median
	PctPeak          float64 // TFLOPs over the calibrated matmul peak of the dtype
	Correct          bool    // ok and verified pass: nothing else counts as correct
	NotTimed         bool    // ok, but its time is not a performance number (result.IsPerformance): no ratio, rate or score
	IsBaseline       bool
	Warnings         []string
	Cost             workload.Cost
	Calibration      bool
}

// Verdicts of a row that are not a verify record's (Row.Verdict).
const (
	VerdictNotFinished = "did not finish"
	VerdictNotVerified = "not verified"
)

// Verdict is the one classification of a row for fast_p and the page:
// VerdictNotFinished, VerdictNotVerified, verify.Pass (correct), or the
// failing verdict of its record (incorrect).
func (x Row) Verdict() string {
	switch {
	case x.Status != result.StatusOK:
		return VerdictNotFinished
	case x.Verified == "":
		return VerdictNotVerified
	}
	return x.Verified
}

// Table is the summary of one configuration.
type Table struct {
	Config result.Config
	Label  string
	Rows   []Row
}

// Tables summarises every configuration, backends in name order.
func (r *Report) Tables() []Table {
	var out []Table
	for _, c := range r.Configs {
		t := Table{Config: c, Label: r.label(c)}
		for _, b := range r.Backends {
			res, ok := r.Result(b, c)
			if !ok {
				continue
			}
			row := r.row(res)
			// The series name it is listed under (a chartView names series
			// by how far they were verified).
			row.Backend, row.IsBaseline = b, b == r.baselineFor(res.Device.Model())
			base, hasBase := r.Result(r.baselineFor(res.Device.Model()), c)
			if hasBase && base.Stats != nil && res.Stats != nil && base.Stats.MedianMs > 0 && !row.NotTimed && base.IsPerformance() {
				row.Ratio = res.Stats.MedianMs / base.Stats.MedianMs
				if lo, hi, ok := compare.RatioCI(base.SamplesMs, res.SamplesMs); ok && b != r.baselineFor(res.Device.Model()) {
					row.RatioLo, row.RatioHi = lo, hi
				}
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, t)
	}
	return out
}

func (r *Report) row(res result.Result) Row {
	nan := math.NaN()
	row := Row{Backend: r.Series(res), Status: res.Status, Message: res.Message, MedianMs: nan, CILo: nan, CIHi: nan,
		Throughput: nan, PeakMemory: res.PeakMemoryBytes, Ratio: nan, RatioLo: nan, RatioHi: nan, TFLOPs: nan, PctPeak: nan,
		IsBaseline: r.Series(res) == r.baselineFor(res.Device.Model()), Warnings: res.Warnings}
	if v, from, ok := r.verdictOf(res); ok {
		row.Verified, row.VerifiedOn = v, compare.Label(from)
	}
	row.Correct = res.Status == result.StatusOK && row.Verified == verify.Pass
	row.NotTimed = res.Status == result.StatusOK && !res.IsPerformance()
	if res.Stats == nil || res.Stats.MedianMs <= 0 {
		return row
	}
	row.MedianMs, row.Throughput, row.Unit = res.Stats.MedianMs, res.Throughput, res.ThroughputUnit
	if stats.HasCI(*res.Stats) { // below 6 samples there is no 95% interval
		row.CILo, row.CIHi = res.Stats.CI95LowMs, res.Stats.CI95HighMs
	}
	if row.NotTimed {
		return row // its time is shown, as measured, but never rated
	}
	// A workload whose cost is unknown (problem: arbitrary PyTorch) reports
	// zero FLOPs: no rate, no percent of peak, no roofline point.
	if cost, err := workload.CostOf(res.Config); err == nil && cost.FLOPs > 0 {
		row.Cost = cost
		row.TFLOPs = cost.FLOPs / (res.Stats.MedianMs / 1000) / 1e12
		if cal, ok := r.Calibration(res.Device); ok {
			if peak := cal.MatmulTFLOPs[res.Config.Dtype()]; peak > 0 {
				row.PctPeak, row.Calibration = 100*row.TFLOPs/peak, true
			}
		}
	}
	return row
}
