// Package stats summarises timing samples. It is the only place numbers are
// summarised, so every backend's result means the same thing.
package stats

import (
	"fmt"
	"math"
	"sort"

	mstats "github.com/montanaflynn/stats"
	"golang.org/x/perf/benchmath"

	"github.com/xbench/xbench/harness/result"
)

// CVWarnThreshold is the coefficient of variation above which a result
// carries a warning: the timings are too noisy to quote a median alone.
const CVWarnThreshold = 0.10

// CI methods, recorded with every summary.
const (
	MethodOrderStatistic = "order-statistic binomial"
	MethodMinMax         = "min-max (n<6)"
)

// MinP99Samples is the fewest samples a p99 is reported from: with fewer,
// the 99th percentile is an interpolation between the largest samples.
const MinP99Samples = 100

// Summarize computes the summary of samples (milliseconds). The median and
// its 95% interval come from golang.org/x/perf/benchmath's AssumeNothing
// (the statistics benchstat uses): distribution-free, from order
// statistics and the binomial distribution, so they assume nothing about
// the shape of the timing distribution (which is usually skewed). Below 6
// samples there is no 95% interval: the summary then holds min and max,
// with CIMethod MethodMinMax, and HasCI is false.
func Summarize(samples []float64) (result.Stats, error) {
	if err := Check(samples); err != nil {
		return result.Stats{}, fmt.Errorf("summarize: %w", err)
	}
	n := len(samples)
	data := mstats.Float64Data(append([]float64(nil), samples...))
	sort.Float64s(data)
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(data, &benchmath.DefaultThresholds), 0.95)
	mean, _ := data.Mean()
	std := 0.0
	if n > 1 {
		std, _ = data.StandardDeviationSample()
	}
	st := result.Stats{
		MedianMs: sum.Center, MeanMs: mean, StdMs: std,
		MinMs: data[0], MaxMs: data[n-1],
		P10Ms: Quantile(data, 0.10), P50Ms: Quantile(data, 0.50), P90Ms: Quantile(data, 0.90),
		SampleCount: n,
	}
	if n >= MinP99Samples {
		st.P99Ms = Quantile(data, 0.99)
	}
	if mean > 0 {
		st.CV = std / mean
	}
	if math.IsInf(sum.Lo, 0) || math.IsInf(sum.Hi, 0) {
		st.CI95LowMs, st.CI95HighMs, st.CIMethod = data[0], data[n-1], MethodMinMax
	} else {
		st.CI95LowMs, st.CI95HighMs, st.CIMethod = sum.Lo, sum.Hi, MethodOrderStatistic
	}
	return st, nil
}

// Check says why samples cannot be summarised, or nil: the one statement
// of what timings must be (at least one, each finite and non-negative),
// used when a run finishes and whenever a stored result is read back.
func Check(samples []float64) error {
	if len(samples) == 0 {
		return fmt.Errorf("no samples")
	}
	for i, s := range samples {
		if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
			return fmt.Errorf("sample %d is %v; samples must be finite and non-negative", i, s)
		}
	}
	return nil
}

// HasCI says whether st holds a 95% interval of the median (6 samples or
// more); without one, tables print no interval.
func HasCI(st result.Stats) bool { return st.CIMethod == MethodOrderStatistic }

// Quantile interpolates linearly between order statistics of sorted data
// (numpy's default "linear" method, so the Python contract agrees).
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 1 {
		return sorted[0]
	}
	pos := q * float64(n-1)
	lo := int(math.Floor(pos))
	if lo >= n-1 {
		return sorted[n-1]
	}
	frac := pos - float64(lo)
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}
