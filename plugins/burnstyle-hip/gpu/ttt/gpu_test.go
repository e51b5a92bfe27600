package ttt_test

import (
	"os"
	"testing"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// TestGPU needs a real GPU: it runs only with XBENCH_REQUIRE_GPU=1 (the
// device machine's script sets it) and then fails, not skips, without one.
func TestGPU(t *testing.T) {
	if os.Getenv("XBENCH_REQUIRE_GPU") != "1" {
		t.Skip("needs a GPU: set XBENCH_REQUIRE_GPU=1 on a machine with libcuda (or HIP) and its run-time compiler")
	}
	d, err := gpu.Open("auto")
	if err != nil {
		t.Fatalf("XBENCH_REQUIRE_GPU=1 but no GPU opened: %v", err)
	}
	defer d.Close()
	t.Logf("%+v, dense %s", d.Info(), d.BLAS())
	for _, typ := range []string{"linear", "mlp"} {
		for _, dt := range []string{"float32", "bfloat16"} {
			for _, inner := range []bool{false, true} {
				cfg := check.Config("tiny", typ, dt, inner, 2, 64)
				o, err := check.Verify(d, cfg, 3, gputtt.Options{})
				if err != nil {
					t.Fatalf("%s %s inner=%v: %v", typ, dt, inner, err)
				}
				if !o.Pass() {
					t.Errorf("%s %s inner=%v: rel L2 %.3g (tol %.g), %d NaN", typ, dt, inner, o.RelL2, o.Tol, o.NaN)
				}
			}
		}
	}
}
