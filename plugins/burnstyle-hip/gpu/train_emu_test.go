package gpu_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/check"
)

// The inner-loop backward kernels alone, through the inner-only training
// step (loss sum(out * dout)), against float64 central differences of the
// CPU inner model: every inner parameter and the inputs xq, xk, xv, gate,
// each graded by relative L2. bfloat16 runs the same kernels on bf16
// inputs and parameters, so its bound is the workload's bf16 tolerance.
func TestEmuInnerBackward(t *testing.T) {
	only := os.Getenv("XBENCH_EMU_ONLY") // e.g. mlp: run the cases whose type contains it
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
		{"tiny", "mlp", "float32", 32, 16, gpu.Options{}},
		{"tiny", "mlp", "float32", 32, 8, gpu.Options{}},
		{"tiny", "mlp", "bfloat16", 32, 16, gpu.Options{}},
	}
	if os.Getenv("XBENCH_EMU_FULL") == "1" { // a minute of differences and emulation
		cases = append(cases, struct {
			size, typ, dtype string
			L, K             int
			opt              gpu.Options
		}{"125m", "mlp", "float32", 32, 16, gpu.Options{}})
	} else {
		t.Log("125m mlp with XBENCH_EMU_FULL=1")
	}
	refs := map[string]map[string][]float64{} // dtypes and options share the float32 inputs' reference
	for _, c := range cases {
		if !strings.Contains(c.typ, only) {
			continue
		}
		cfg := check.Config(c.size, c.typ, c.dtype, true, 2, c.L)
		cfg.MiniBatch, cfg.Backward = c.K, true
		sample := 0 // every position of tiny linear; a sample of mlp and f = 64
		if c.typ == "mlp" {
			sample = 64
		}
		if c.size != "tiny" {
			cfg.Batch, sample = 1, 48
		}
		s, w, in, err := check.InnerTrainInputs(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		key := fmt.Sprint(c.size, c.typ, c.L, c.K)
		ref, ok := refs[key]
		if !ok {
			if ref, err = check.InnerGradFD(cfg, s, w, in, sample); err != nil {
				t.Fatal(err)
			}
			refs[key] = ref
		}
		fdTime := time.Since(t0)
		t0 = time.Now()
		got, desc, err := check.RunTrain(d, cfg, w, in, c.opt)
		gpuTime := time.Since(t0)
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
		t.Logf("%s %s %s K=%d cs=%d (%s; differences %.1f s, emulator %.1f s)", c.size, c.typ, c.dtype, c.K,
			c.opt.ClusterSize, desc, fdTime.Seconds(), gpuTime.Seconds())
		for _, o := range outs {
			t.Logf("  %-26s rel L2 %.3g  max abs %.3g", o.Name, o.RelL2, o.MaxAbs)
			if o.NaN > 0 || !(o.RelL2 <= tol) {
				t.Errorf("%s %s %s K=%d: %s rel L2 %.3g (tol %g), %d NaN", c.size, c.typ, c.dtype, c.K, o.Name, o.RelL2, tol, o.NaN)
			}
		}
	}
}
