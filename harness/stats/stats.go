// Package stats summarises timing samples. It is the only place numbers are
// summarised, so every backend's result means the same thing.
package stats

import (
	"fmt"
	"math"
	"sort"

	mstats "github.com/montanaflynn/stats"

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

// Summarize computes the summary of samples (milliseconds). The 95%
// interval of the median is distribution-free: it comes from order
// statistics and the binomial distribution, so it assumes nothing about the
// shape of the timing distribution (which is usually skewed).
func Summarize(samples []float64) (result.Stats, error) {
	n := len(samples)
	if n == 0 {
		return result.Stats{}, fmt.Errorf("summarize: no samples")
	}
	for i, s := range samples {
		if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
			return result.Stats{}, fmt.Errorf("summarize: sample %d is %v; samples must be finite and non-negative", i, s)
		}
	}
	data := mstats.Float64Data(append([]float64(nil), samples...))
	sort.Float64s(data)
	median, _ := data.Median()
	mean, _ := data.Mean()
	std := 0.0
	if n > 1 {
		std, _ = data.StandardDeviationSample()
	}
	st := result.Stats{
		MedianMs: median, MeanMs: mean, StdMs: std,
		MinMs: data[0], MaxMs: data[n-1],
		P10Ms: Quantile(data, 0.10), P90Ms: Quantile(data, 0.90),
		SampleCount: n,
	}
	if mean > 0 {
		st.CV = std / mean
	}
	if k, ok := MedianCIIndex(n, 0.95); ok {
		st.CI95LowMs, st.CI95HighMs, st.CIMethod = data[k], data[n-1-k], MethodOrderStatistic
	} else {
		st.CI95LowMs, st.CI95HighMs, st.CIMethod = data[0], data[n-1], MethodMinMax
	}
	return st, nil
}

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

// MedianCIIndex returns the largest k such that [x(k), x(n-1-k)] (0-indexed
// order statistics) covers the median with probability >= level. ok is false
// when even [min, max] falls short (n < 6 for 95%).
func MedianCIIndex(n int, level float64) (k int, ok bool) {
	best := -1
	for k := 0; k < (n+1)/2; k++ {
		if binomCoverage(n, k) >= level {
			best = k
		} else {
			break
		}
	}
	return best, best >= 0
}

// binomCoverage is the probability that [x(k), x(n-1-k)] holds the median:
// at least k+1 samples fall on each side, P(k+1 <= Binomial(n, 1/2) <= n-1-k).
func binomCoverage(n, k int) float64 {
	total := 0.0
	for i := k + 1; i <= n-1-k; i++ {
		total += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
	}
	return total
}

func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
