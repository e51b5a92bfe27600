package burnstylehip

import (
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
)

// On rocm, what is not wired yet is answered with its reason before any
// device is opened: gemm (no hipBLASLt/rocBLAS binding), attention and scan
// (cuda-only run path) and the ttt training step (no BLAS); the ttt forward
// is declared and passes through to the device.
func TestRocmUnsupported(t *testing.T) {
	backward := tinyConfig()
	backward.Phase = "backward"
	for _, tc := range []struct {
		name string
		cfg  result.Config
		want string
	}{
		{"gemm", result.Config{Workload: "gemm", Phase: "forward"}, "hipBLASLt"},
		{"attention", attnConfig(), "attention on rocm"},
		{"scan", result.Config{Workload: "scan", Phase: "forward"}, "scan on rocm"},
		{"ttt backward", backward, "need a BLAS"},
		{"ttt forward", tinyConfig(), ""},
	} {
		got := rocmUnsupported(tc.cfg)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want a reason containing %q", tc.name, got, tc.want)
		}
	}
}

// The cublaslt variant is gemm on cuda only; anything else is answered.
func TestCUBLASLtVariantUnsupported(t *testing.T) {
	n := New()
	gemmCfg := result.Config{Workload: "gemm", Phase: "forward", Params: map[string]string{"dtype": "bfloat16"}}
	for _, tc := range []struct {
		name, device string
		cfg          result.Config
		want         string
	}{
		{"ttt", "cuda", tinyConfig(), "workload"},
		{"cpu", "cpu", gemmCfg, "supported: cuda"},
		{"rocm", "rocm", gemmCfg, "supported: cuda"},
	} {
		if got := n.unsupported("cublaslt", tc.device, tc.cfg); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want it to contain %q", tc.name, got, tc.want)
		}
	}
	if got := n.unsupported("cublaslt", "cuda", gemmCfg); got != "" {
		t.Errorf("gemm bfloat16 on cuda: %q, want supported", got)
	}
}
