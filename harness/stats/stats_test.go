package stats

import (
	"math"
	"testing"
)

func TestMedianCIIndex(t *testing.T) {
	tests := []struct {
		n      int
		wantK  int
		wantOK bool
	}{
		{1, -1, false}, {5, -1, false}, {6, 0, true}, {10, 1, true}, {20, 5, true}, {100, 39, true},
	}
	for _, tt := range tests {
		k, ok := MedianCIIndex(tt.n, 0.95)
		if k != tt.wantK || ok != tt.wantOK {
			t.Errorf("MedianCIIndex(%d) = %d,%v; want %d,%v", tt.n, k, ok, tt.wantK, tt.wantOK)
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
		{"ci low", s.CI95LowMs, 2}, {"ci high", s.CI95HighMs, 9}, {"cv", s.CV, 3.0276503540974917 / 5.5},
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
