package gpu_test

import (
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/check"
)

// The inner-loop backward kernels alone, through the inner-only training
// step (loss sum(out * dout)), against float64 central differences of the
// CPU inner model: every inner parameter and the inputs xq, xk, xv, gate,
// each graded by relative L2. bfloat16 runs the same kernels on bf16
// inputs and parameters, so its bound is the workload's bf16 tolerance.
func TestEmuInnerBackward(t *testing.T) {
	d := openEmu(t)
	cases := []struct {
		size, typ, dtype string
		L, K             int
		opt              gpu.Options
	}{
		{"tiny", "linear", "float32", 32, 16, gpu.Options{}},
		{"tiny", "linear", "float32", 32, 8, gpu.Options{}},
		{"tiny", "linear", "bfloat16", 32, 16, gpu.Options{}},
		{"tiny", "linear", "float32", 32, 16, gpu.Options{ClusterSize: 1}},
		{"125m", "linear", "float32", 32, 16, gpu.Options{}},
	}
	for _, c := range cases {
		cfg := check.Config(c.size, c.typ, c.dtype, true, 2, c.L)
		cfg.MiniBatch, cfg.Backward = c.K, true
		sample := 0 // every position at tiny; a sample at f = 64
		if c.size != "tiny" {
			cfg.Batch, sample = 1, 48
		}
		s, w, in, err := check.InnerTrainInputs(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := check.InnerGradFD(cfg, s, w, in, sample)
		if err != nil {
			t.Fatal(err)
		}
		got, desc, err := check.RunTrain(d, cfg, w, in, c.opt)
		if err != nil {
			t.Fatalf("%s %s %s K=%d: %v", c.size, c.typ, c.dtype, c.K, err)
		}
		outs, err := check.CompareGrads(got, ref)
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-4
		if c.dtype == "bfloat16" {
			tol = 5e-2
		}
		t.Logf("%s %s %s K=%d cs=%d (%s)", c.size, c.typ, c.dtype, c.K, c.opt.ClusterSize, desc)
		for _, o := range outs {
			t.Logf("  %-26s rel L2 %.3g  max abs %.3g", o.Name, o.RelL2, o.MaxAbs)
			if o.NaN > 0 || !(o.RelL2 <= tol) {
				t.Errorf("%s %s %s K=%d: %s rel L2 %.3g (tol %g), %d NaN", c.size, c.typ, c.dtype, c.K, o.Name, o.RelL2, tol, o.NaN)
			}
		}
	}
}
