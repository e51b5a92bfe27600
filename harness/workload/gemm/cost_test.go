package gemm

import (
	"math"
	"testing"
)

func TestCost(t *testing.T) {
	const s = 4096.0
	tests := []struct {
		set         map[string]string
		flops, byts float64
	}{
		// A and B in 2 bytes, C in 2 bytes: (2·s² + s²)·2.
		{map[string]string{"m": "4096", "n": "4096", "k": "4096", "dtype": "bfloat16"}, 2 * s * s * s, 6 * s * s},
		{map[string]string{"m": "4096", "n": "4096", "k": "4096", "dtype": "tf32"}, 2 * s * s * s, 12 * s * s},
		// e4m3 reads 1 byte per input and writes bfloat16.
		{map[string]string{"m": "4096", "n": "4096", "k": "4096", "dtype": "float8_e4m3"}, 2 * s * s * s, 4 * s * s},
		// Batched: every term scales with batch.
		{map[string]string{"m": "2", "n": "3", "k": "5", "batch": "8"}, 2 * 8 * 2 * 3 * 5, 8*(2*5+5*3)*4 + 8*2*3*4},
		{map[string]string{"m": "2", "n": "3", "k": "5", "batch": "8", "dtype": "float16", "layout": "tt"}, 2 * 8 * 2 * 3 * 5, 8*(2*5+5*3)*2 + 8*2*3*2},
	}
	w := Workload{}
	for _, tc := range tests {
		cfg := resolve(t, tc.set)
		c, err := w.Cost(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if c.FLOPs != tc.flops || c.Bytes != tc.byts {
			t.Errorf("Cost(%v) = %+v, want FLOPs %g Bytes %g", tc.set, c, tc.flops, tc.byts)
		}
		if w.Rank(cfg) != tc.flops {
			t.Errorf("Rank(%v) = %g, want the FLOPs %g", tc.set, w.Rank(cfg), tc.flops)
		}
	}

	cfg := resolve(t, map[string]string{"m": "4096", "n": "4096", "k": "4096"})
	tp := w.Throughput(cfg, 1) // 2·4096³ FLOPs in one millisecond
	if want := 2 * s * s * s / 1e-3 / 1e12; math.Abs(tp.Value-want) > 1e-9*want || tp.Unit != "TFLOP/s" {
		t.Errorf("Throughput at 1 ms = %+v, want %g TFLOP/s", tp, want)
	}
	if tp := w.Throughput(cfg, 0); tp.Value != 0 {
		t.Errorf("Throughput at 0 ms = %g, want 0", tp.Value)
	}
	if _, err := w.Cost(cfg.With("dtype", "int8")); err == nil {
		t.Error("Cost accepted dtype int8")
	}
}
