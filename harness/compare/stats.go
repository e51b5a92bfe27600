package compare

import (
	"math"
	"sort"
	"sync"

	moremath "github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Alpha is the significance level of every comparison, and 1-Alpha the
// level of every interval, so a ratio whose interval excludes 1 is (up to
// the discreteness of U) one the test calls significant.
const Alpha = 0.05

// PValue is the two-sided Mann-Whitney U test of "A and B come from the
// same distribution". It reuses benchstat's choice (benchmath.AssumeNothing):
// the exact U distribution for small samples (n <= 50, or <= 25 with ties)
// and otherwise the normal approximation with tie and continuity
// correction. Samples that are all equal give p = 1 with a warning, as in
// benchstat.
func PValue(a, b []float64) (p float64, warnings []error) {
	th := benchmath.DefaultThresholds
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(a, &th), benchmath.NewSample(b, &th))
	return c.P, c.Warnings
}

// RatioCI is the distribution-free 1-Alpha confidence interval of the
// ratio B/A under a scale model (B has the distribution of r*A): the
// Hodges-Lehmann/Moses interval of the shift of log B against log A,
// exponentiated. The m*n pairwise differences log b_j - log a_i are sorted
// and the interval is [D(k), D(mn+1-k)] (1-indexed), with k the largest
// integer such that P(U <= k-1) <= Alpha/2 under the null U distribution
// (exact for m, n <= 50, normal approximation beyond). It is the interval
// that inverts the same U test PValue uses, so it needs no resampling and
// no seed. ok is false when the samples are too small for any interval at
// this level (fewer than 4 samples each) or hold non-positive values.
func RatioCI(a, b []float64) (lo, hi float64, ok bool) {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return 0, 0, false
	}
	k := momentIndex(m, n, Alpha)
	if k < 1 {
		return 0, 0, false
	}
	d := make([]float64, 0, m*n)
	for _, x := range a {
		for _, y := range b {
			if x <= 0 || y <= 0 {
				return 0, 0, false
			}
			d = append(d, math.Log(y)-math.Log(x))
		}
	}
	sort.Float64s(d)
	return math.Exp(d[k-1]), math.Exp(d[m*n-k]), true
}

// momentIndex is k of RatioCI: the largest k with P(U <= k-1) <= alpha/2.
func momentIndex(m, n int, alpha float64) int {
	if m <= moremath.MannWhitneyExactLimit && n <= moremath.MannWhitneyExactLimit {
		key := momentKey{m, n, alpha}
		if k, ok := exactMoments.Load(key); ok {
			return k.(int)
		}
		dist := moremath.UDist{N1: m, N2: n}
		k := 0
		for k < m*n/2 && dist.CDF(float64(k)) <= alpha/2 {
			k++
		}
		exactMoments.Store(key, k)
		return k
	}
	mn := float64(m * n)
	z := normalQuantile(1 - alpha/2)
	return int(math.Floor(mn/2 - z*math.Sqrt(mn*float64(m+n+1)/12)))
}

// exactMoments holds momentIndex's exact answers: the exact U distribution
// costs milliseconds a call, and a report asks for the same few sample
// sizes for every one of its rows.
var exactMoments sync.Map // momentKey -> int

type momentKey struct {
	m, n  int
	alpha float64
}

// normalQuantile inverts the standard normal CDF.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// Geomean is the geometric mean of positive values (NaN for none).
func Geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}
