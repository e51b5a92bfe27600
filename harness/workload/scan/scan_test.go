package scan

import (
	"errors"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

func config(t *testing.T, phase string, params map[string]string) result.Config {
	t.Helper()
	cfg, err := workload.Resolve(Workload{}, phase, params, 3, 10)
	if err != nil {
		t.Fatalf("resolve %v: %v", params, err)
	}
	return cfg
}

func TestCheckRefuses(t *testing.T) {
	for _, tc := range []struct {
		phase  string
		params map[string]string
		flag   string
	}{
		{"forward", map[string]string{"T": "4", "K": "5"}, "--K --T"},
		{"backward", map[string]string{"semiring": "entropy"}, "--semiring --phase"},
		{"both", map[string]string{"semiring": "entropy"}, "--semiring --phase"},
		{"forward", map[string]string{"T": "1048576", "C": "1024", "batch": "65536"}, "--batch --T --C"},
	} {
		_, err := workload.Resolve(Workload{}, tc.phase, tc.params, 3, 10)
		var ve *workload.ValueError
		if !errors.As(err, &ve) || ve.Flag != tc.flag {
			t.Errorf("%s %v: error %v, want a ValueError on %s", tc.phase, tc.params, err, tc.flag)
		}
	}
	if _, err := workload.Resolve(Workload{}, "backward", map[string]string{"semiring": "max"}, 3, 10); err != nil {
		t.Errorf("max backward refused: %v", err)
	}
}

func TestLabelLengthsAndCost(t *testing.T) {
	cfg := config(t, "forward", map[string]string{"T": "10", "K": "3", "C": "2", "batch": "4"})
	if got := (Workload{}).Label(cfg); got != "b4 T10 K3 C2 log float32" {
		t.Errorf("label %q", got)
	}
	s := ShapeOf(cfg)
	if got := s.Lengths(); len(got) != 4 || got[0] != 10 || got[1] != 9 || got[2] != 8 || got[3] != 7 {
		t.Errorf("lengths %v, want [10 9 8 7] (T - b·T // 2·batch)", got)
	}
	c, err := (Workload{}).Cost(cfg)
	if err != nil || c.FLOPs != 4*34*3*2*2 {
		t.Errorf("cost %+v %v, want FLOPs 4·Σlengths·K·C² = %d", c, err, 4*34*3*2*2)
	}
	if tp := (Workload{}).Throughput(cfg, 1); tp.Unit != "positions/s" || tp.Value != 34000 {
		t.Errorf("throughput %+v, want 34000 positions/s at 1 ms", tp)
	}
	bwd := config(t, "both", map[string]string{"T": "10", "K": "3", "C": "2", "batch": "4"})
	if cb, _ := (Workload{}).Cost(bwd); cb.FLOPs != 3*c.FLOPs {
		t.Errorf("both costs %v, want 3x forward %v", cb.FLOPs, c.FLOPs)
	}
}

func TestFixturesAndReferences(t *testing.T) {
	w := Workload{}
	for _, dt := range []string{"float32", "float64"} {
		cfg := config(t, "backward", map[string]string{"T": "12", "K": "3", "C": "3", "batch": "3", "dtype": dt})
		fx, err := w.Fixtures(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		cum, _ := fx.Inputs["cum_scores"].Float64s()
		if len(cum) != 3*13*3 || cum[0] != 0 || cum[13*3] != 0 {
			t.Fatalf("%s cum_scores: %d values, position 0 must be 0", dt, len(cum))
		}
		// zero-centred per row and label: the last position's sum is ~0
		for c := 0; c < 3; c++ {
			if x := cum[12*3+c]; x > 1e-5 || x < -1e-5 {
				t.Errorf("%s cum_scores[0, T, %d] = %v, want 0 (centred scores)", dt, c, x)
			}
		}
		ref, err := w.References(cfg, fx)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range w.Outputs(cfg) {
			if _, ok := ref[name]; !ok {
				t.Errorf("%s: reference lacks %s", dt, name)
			}
		}
		// the log gradient of cum_scores sums to zero over positions, per row and label
		d, _ := ref["d_cum_scores"].Float64s()
		for b := 0; b < 3; b++ {
			var s float64
			for i := 0; i < 13*3; i++ {
				s += d[b*13*3+i]
			}
			if s > 1e-9 || s < -1e-9 {
				t.Errorf("%s row %d: d_cum_scores sums to %v, want 0", dt, b, s)
			}
		}
	}
}

func TestToleranceGrowsWithTAndIsCapped(t *testing.T) {
	w := Workload{}
	tol := func(T string, phase, sr string) float64 {
		return w.Tolerance(config(t, phase, map[string]string{"T": T, "K": "4", "semiring": sr}))
	}
	if a, b := tol("64", "forward", "log"), tol("1024", "forward", "log"); a != 2e-5 || b != 8*a {
		t.Errorf("forward tolerance T=64 %v, T=1024 %v: want 2e-5 and 8x", a, b)
	}
	if a := tol("1048576", "backward", "log"); a != 50*5e-4 {
		t.Errorf("capped backward tolerance %v, want %v", a, 50*5e-4)
	}
	if e, l := tol("64", "forward", "entropy"), tol("64", "forward", "log"); e <= l {
		t.Errorf("entropy tolerance %v not above log's %v", e, l)
	}
}

func TestGridSuiteAndBuckets(t *testing.T) {
	w := Workload{}
	grid, err := w.Suite("grid")
	if err != nil || len(grid) != 120 {
		t.Fatalf("grid: %d shapes, %v; want 120", len(grid), err)
	}
	buckets := map[string]int{}
	for _, p := range grid {
		buckets[w.Bucket(config(t, "forward", p))]++
	}
	if len(buckets) >= len(grid) || len(buckets) < 5 {
		t.Errorf("%d buckets for %d shapes", len(buckets), len(grid))
	}
	if got := w.Bucket(config(t, "forward", map[string]string{"T": "1000", "K": "5", "C": "5"})); got != "T1024 KC32 b4 log float32 forward" {
		t.Errorf("bucket %q, want T1024 KC32 b4 log float32 forward", got)
	}
	if _, err := w.Suite("nope"); err == nil || !strings.Contains(err.Error(), "grid") {
		t.Errorf("unknown suite: %v", err)
	}
}
