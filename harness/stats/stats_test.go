package stats

import (
	"math"
	"testing"
)

// TestMedianCI: the interval is benchmath's (order statistics of the
// binomial), absent below 6 samples, and widens no further than min-max.
func TestMedianCI(t *testing.T) {
	tests := []struct {
		n      int
		lo, hi float64 // for samples 1..n
		ok     bool
	}{
		{1, 1, 1, false}, {5, 1, 5, false}, {6, 1, 6, true}, {10, 2, 9, true}, {20, 6, 15, true}, {100, 40, 60, true},
	}
	for _, tt := range tests {
		xs := make([]float64, tt.n)
		for i := range xs {
			xs[tt.n-1-i] = float64(i + 1) // unsorted input
		}
		s, err := Summarize(xs)
		if err != nil {
			t.Fatal(err)
		}
		if s.CI95LowMs != tt.lo || s.CI95HighMs != tt.hi || HasCI(s) != tt.ok {
			t.Errorf("n=%d: interval %v-%v has CI %v; want %v-%v %v", tt.n, s.CI95LowMs, s.CI95HighMs, HasCI(s), tt.lo, tt.hi, tt.ok)
		}
		if wantP99 := tt.n >= MinP99Samples; (s.P99Ms != 0) != wantP99 {
			t.Errorf("n=%d: p99 %v, want one only from %d samples", tt.n, s.P99Ms, MinP99Samples)
		}
	}
}

func TestSummarize(t *testing.T) {
	s, err := Summarize([]float64{10, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"median", s.MedianMs, 5.5}, {"mean", s.MeanMs, 5.5}, {"min", s.MinMs, 1}, {"max", s.MaxMs, 10},
		{"p10", s.P10Ms, 1.9}, {"p90", s.P90Ms, 9.1}, {"std", s.StdMs, 3.0276503540974917},
		{"ci low", s.CI95LowMs, 2}, {"ci high", s.CI95HighMs, 9}, {"cv", s.CV, 3.0276503540974917 / 5.5}, {"p50", s.P50Ms, 5.5},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.CIMethod != MethodOrderStatistic || s.SampleCount != 10 {
		t.Errorf("method %q n %d", s.CIMethod, s.SampleCount)
	}
}

func TestSummarizeSmallAndBad(t *testing.T) {
	s, err := Summarize([]float64{3, 1, 2})
	if err != nil || s.CIMethod != MethodMinMax || s.CI95LowMs != 1 || s.CI95HighMs != 3 || s.MedianMs != 2 {
		t.Errorf("small sample summary %+v err %v", s, err)
	}
	for _, bad := range [][]float64{nil, {1, math.NaN()}, {-1, 2}, {math.Inf(1)}} {
		if _, err := Summarize(bad); err == nil {
			t.Errorf("Summarize(%v) accepted bad samples", bad)
		}
	}
	one, err := Summarize([]float64{4})
	if err != nil || one.StdMs != 0 || one.CV != 0 {
		t.Errorf("one sample: %+v %v", one, err)
	}
}

func TestP99(t *testing.T) {
	xs := make([]float64, 200)
	for i := range xs {
		xs[i] = float64(i)
	}
	s, err := Summarize(xs)
	if err != nil {
		t.Fatal(err)
	}
	// numpy.percentile(range(200), 99) = 197.01
	if math.Abs(s.P99Ms-197.01) > 1e-9 || s.P50Ms != 99.5 || s.MedianMs != 99.5 {
		t.Errorf("p99 %v p50 %v median %v", s.P99Ms, s.P50Ms, s.MedianMs)
	}
}
