package compare

import (
	"math"
	"testing"

	moremath "github.com/aclements/go-moremath/stats"
)

// TestPValueKnown checks the U test against values published with other
// implementations.
func TestPValueKnown(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		want float64
	}{
		// R, ?wilcox.test: alternative "greater" gives W = 35,
		// p = 0.1272 (exact); two-sided is twice that.
		{"R wilcox.test example", []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			[]float64{1.15, 0.88, 0.90, 0.74, 1.21}, 0.2544},
		// SciPy, scipy.stats.mannwhitneyu docs: U1 = 17, exact p = 1/9.
		{"SciPy mannwhitneyu example", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 0.1111},
		{"identical samples", []float64{1, 2, 3, 4, 5}, []float64{1, 2, 3, 4, 5}, 1},
		{"disjoint n=10", seq(10, 1), seq(10, 100), 2.0 / 184756},
	}
	for _, tt := range tests {
		got, _ := PValue(tt.a, tt.b)
		if math.Abs(got-tt.want) > 5e-5+1e-4*tt.want {
			t.Errorf("%s: p = %.6g, want %.6g", tt.name, got, tt.want)
		}
	}
}

// TestPValueNormalApproximation forces the large-sample path and checks
// it against the same examples' asymptotic values.
func TestPValueNormalApproximation(t *testing.T) {
	defer func(e, te int) { moremath.MannWhitneyExactLimit, moremath.MannWhitneyTiesExactLimit = e, te }(
		moremath.MannWhitneyExactLimit, moremath.MannWhitneyTiesExactLimit)
	moremath.MannWhitneyExactLimit, moremath.MannWhitneyTiesExactLimit = 0, 0

	// SciPy docs: method="asymptotic" (continuity corrected) gives 0.11134688653314041.
	if got, _ := PValue([]float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}); math.Abs(got-0.11134688653314041) > 1e-9 {
		t.Errorf("asymptotic p = %.12g, want 0.11134688653314041", got)
	}
	// With ties: U = 5.5 of 30; tie groups 3, 2, 3 of N = 11, so
	// var = 30/12 * (12 - 54/110), z = (15 - 5.5 - 0.5)/sd. R's
	// wilcox.test(exact = FALSE) agrees: p = 0.09337.
	got, _ := PValue([]float64{1, 2, 2, 3, 4}, []float64{2, 3, 4, 4, 5, 6})
	z := 9 / math.Sqrt(30.0/12*(12-54.0/110))
	if want := math.Erfc(z / math.Sqrt2); math.Abs(got-want) > 1e-12 || math.Abs(got-0.09337) > 5e-5 {
		t.Errorf("tied asymptotic p = %.6g, want %.6g", got, want)
	}
}

// TestMomentIndex checks k against published critical values of U
// (two-sided, alpha 0.05: reject when U <= crit, so k = crit + 1) and, for
// small samples, against the null distribution counted by brute force.
func TestMomentIndex(t *testing.T) {
	for _, tt := range []struct{ m, n, want int }{
		{3, 3, 0}, {4, 4, 1}, {5, 5, 3}, {6, 6, 6}, {8, 8, 14}, {10, 10, 24}, {20, 20, 128},
	} {
		if got := momentIndex(tt.m, tt.n, Alpha); got != tt.want {
			t.Errorf("momentIndex(%d, %d) = %d, want %d", tt.m, tt.n, got, tt.want)
		}
	}
	for _, mn := range [][2]int{{4, 6}, {5, 5}, {6, 7}} {
		if got, want := momentIndex(mn[0], mn[1], Alpha), bruteMomentIndex(mn[0], mn[1], Alpha); got != want {
			t.Errorf("momentIndex(%d, %d) = %d, brute force says %d", mn[0], mn[1], got, want)
		}
	}
}

// bruteMomentIndex enumerates every way to choose which m of m+n ranks
// belong to A and counts how often U <= k-1.
func bruteMomentIndex(m, n int, alpha float64) int {
	counts := make([]float64, m*n+1)
	total := 0.0
	for mask := 0; mask < 1<<(m+n); mask++ {
		if popcount(mask) != m {
			continue
		}
		u, seenB := 0, 0 // U = pairs with a from A ranked above b from B
		for i := 0; i < m+n; i++ {
			if mask&(1<<i) != 0 {
				u += seenB
			} else {
				seenB++
			}
		}
		counts[u]++
		total++
	}
	k, cdf := 0, 0.0
	for {
		cdf += counts[k] / total
		if cdf > alpha/2 {
			return k
		}
		k++
	}
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

func TestRatioCI(t *testing.T) {
	a := []float64{10.1, 9.8, 10.4, 10.0, 9.9, 10.2, 10.3, 9.7, 10.05, 10.15}
	lo, hi, ok := RatioCI(a, a)
	if !ok || lo >= 1 || hi <= 1 || math.Abs(lo*hi-1) > 1e-12 {
		t.Errorf("A vs A: [%v, %v] %v; want an interval symmetric about 1 on the log scale", lo, hi, ok)
	}
	b := scale(a, 1.3)
	lo, hi, ok = RatioCI(a, b)
	if !ok || lo > 1.3 || hi < 1.3 || lo < 1.2 {
		t.Errorf("A vs 1.3A: [%v, %v] %v; want it to hold 1.3 and exclude 1", lo, hi, ok)
	}
	if _, _, ok := RatioCI(a[:3], b[:3]); ok {
		t.Error("3+3 samples cannot give a 95% interval")
	}
	if _, _, ok := RatioCI([]float64{0, 1, 2, 3}, b[:4]); ok {
		t.Error("a zero sample has no log ratio")
	}
}

func TestGeomean(t *testing.T) {
	if g := Geomean([]float64{1, 4, 16}); math.Abs(g-4) > 1e-12 {
		t.Errorf("Geomean = %v, want 4", g)
	}
	if !math.IsNaN(Geomean(nil)) {
		t.Error("Geomean(nil) should be NaN")
	}
}

func seq(n int, start float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = start + float64(i)
	}
	return out
}

func scale(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}
