package scan

import "testing"

func TestCrossover(t *testing.T) {
	xs := []int{12, 24, 48, 96}
	for _, tc := range []struct {
		ratios []float64
		want   string
	}{
		{[]float64{0.5, 0.6, 0.2, 0.9}, "always"},
		{[]float64{1.5, 1.2, 0.8, 0.5}, "48"},
		{[]float64{1.5, 0.8, 1.1, 0.5}, "96"}, // beats it at 24, loses at 48: the crossover is where it stays ahead
		{[]float64{0.5, 0.8, 0.9, 1.0}, "none"},
	} {
		pts := make([]point, len(xs))
		for i := range xs {
			pts[i] = point{xs[i], tc.ratios[i]}
		}
		if got := crossover(pts); got != tc.want {
			t.Errorf("crossover(%v) = %s, want %s", tc.ratios, got, tc.want)
		}
	}
}
