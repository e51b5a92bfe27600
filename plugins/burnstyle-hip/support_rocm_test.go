package burnstylehip

import (
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
)

// On rocm, what is not wired yet is answered with its reason before any
// device is opened: attention and scan (cuda-only run path) and the ttt
// training step (no BLAS in the ttt engine); gemm (hipBLASLt) and the ttt
// forward are declared and pass through to the device.
func TestRocmUnsupported(t *testing.T) {
	backward := tinyConfig()
	backward.Phase = "backward"
	for _, tc := range []struct {
		name string
		cfg  result.Config
		want string
	}{
		{"gemm", result.Config{Workload: "gemm", Phase: "forward"}, ""},
		{"attention", attnConfig(), "attention on rocm"},
		{"scan", result.Config{Workload: "scan", Phase: "forward"}, "scan on rocm"},
		{"ttt backward", backward, "need a BLAS"},
		{"ttt forward", tinyConfig(), ""},
	} {
		got := deviceUnsupported("rocm", tc.cfg)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want a reason containing %q", tc.name, got, tc.want)
		}
	}
}

// gemm on rocm is declared (hipBLASLt), for every dtype cuda has.
func TestRocmGEMMDeclared(t *testing.T) {
	n := New()
	for _, dt := range []string{"float32", "tf32", "bfloat16", "float16"} {
		cfg := result.Config{Workload: "gemm", Phase: "forward", Params: map[string]string{"dtype": dt}}
		if got := n.unsupported("", "rocm", cfg); got != "" {
			t.Errorf("gemm %s on rocm: %q, want declared", dt, got)
		}
	}
}

// Each variant is its vendor's: cublaslt gemm on cuda only, rocblas gemm on
// rocm only (no tf32: rocBLAS's xf32 is not bound); anything else is
// answered, and so is a variant asked for on the other vendor's GPU.
func TestVendorVariants(t *testing.T) {
	n := New()
	gemmCfg := func(dt string) result.Config {
		return result.Config{Workload: "gemm", Phase: "forward", Params: map[string]string{"dtype": dt}}
	}
	attnCfg := func(dt string) result.Config {
		return result.Config{Workload: "attention", Phase: "forward", Params: map[string]string{"dtype": dt, "head_dim": "128"}}
	}
	attnGradCfg := func(phase string) result.Config {
		c := attnCfg("bfloat16")
		c.Phase = phase
		return c
	}
	for _, tc := range []struct {
		variant, device string
		cfg             result.Config
		want            string
	}{
		{"rocblas", "cuda", gemmCfg("float32"), "supported: rocm"},
		{"rocblas", "cpu", gemmCfg("float32"), "supported: rocm"},
		{"rocblas", "rocm", gemmCfg("tf32"), "dtype tf32 is not supported"},
		{"rocblas", "rocm", tinyConfig(), "workload"},
		{"rocblas", "rocm", gemmCfg("bfloat16"), ""},
		{"nope", "rocm", gemmCfg("float32"), "variants: cublaslt, rocblas, mma-sync, wgmma-overlap"},
		{"mma-sync", "cpu", attnCfg("bfloat16"), "supported: cuda"},
		{"mma-sync", "cuda", attnCfg("float32"), "dtype float32 is not supported"},
		{"mma-sync", "cuda", gemmCfg("bfloat16"), "workload"},
		{"mma-sync", "cuda", attnCfg("float16"), ""},
		{"wgmma-overlap", "cpu", attnCfg("bfloat16"), "supported: cuda"},
		{"wgmma-overlap", "cuda", attnCfg("bfloat16"), ""},
		{"mma-sync", "cuda", attnGradCfg("backward"), ""}, // the mma.sync backward beside the wgmma one
		{"mma-sync", "cuda", attnGradCfg("both"), ""},
		{"wgmma-overlap", "cuda", attnGradCfg("backward"), "phase backward is not supported"}, // a forward schedule
	} {
		got := n.unsupported(tc.variant, tc.device, tc.cfg)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s on %s %s: %q, want %q", tc.variant, tc.device, tc.cfg.Get("dtype"), got, tc.want)
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
